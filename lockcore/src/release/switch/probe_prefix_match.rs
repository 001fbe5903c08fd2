//! `probe-prefix-match` (Redisson 3.48.0, commit d0676f1fc).
//!
//! For Valkey Serverless, 3.48.0 takes a probe error as refusing a command
//! when it starts with "ERR unknown command" and its upper case contains
//! the name, tried in the order WAIT, WAITAOF. The text refusing `WAITAOF`
//! contains "WAIT", so on a server without WAITAOF (Redis 6.2, 7.0, 7.1)
//! WAIT is the name removed: the client believes it lacks WAIT, and every
//! lock script, which asks for WAIT, goes bare. A failover then loses a
//! lock no `WAIT` ever waited for, as before 3.16.7, until 3.52.0 tries
//! WAITAOF first (`probe-reads-causes`): a change that brought a defect.
//! It also fixed one, by the same mechanism, not by timing: with the
//! primary's AOF on, 3.46.0-3.47.x followed every lock script with a
//! `WAITAOF` that such a server refuses, so every call failed although
//! its script ran (#6618, history scenario
//! `waitaof-refused-fails-every-lock-6618`); a bare script sends none.
//! So it is a fix attribution may name.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "probe-prefix-match",
    since: Some(Version::new(3, 48, 0)),
    upstream: "commit d0676f1fc",
    summary: "the probe matches a command name anywhere in an \"ERR unknown command\" text, WAIT first, so a refused WAITAOF is read as no WAIT and lock scripts go unsynced",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use super::super::wait_probe::tests::{REFUSED_6_2, REFUSED_7_0, answer_probe, client, next_sync};
    use crate::{Call, ThreadId, Value};

    /// On Redis 7.0 and 6.2, 3.47.0 follows later scripts with `WAIT`;
    /// 3.48.0 reads the refused WAITAOF as no WAIT and sends them bare.
    #[test]
    fn from_3_48_0_scripts_go_unsynced_without_waitaof() {
        for refused in [REFUSED_7_0, REFUSED_6_2] {
            for (version, synced) in [("3.47.0", true), ("3.48.0", false)] {
                let mut h = client(version, false);
                answer_probe(&mut h, Value::Error(refused.into()));
                let (script, sync) = next_sync(&mut h);
                assert!(sync.is_none(), "{version}: the probing script goes bare");
                h.reply(script, Value::Nil);
                h.expect_return(ThreadId(1)).unwrap();
                h.call(ThreadId(2), "m", Call::TryLock { wait: None, lease: None }).unwrap();
                let (_, sync) = next_sync(&mut h);
                assert_eq!(sync.is_some(), synced, "{version} {refused}");
            }
        }
    }

    /// With the primary's AOF on, 3.47.0 follows later scripts with a
    /// `WAITAOF` the server refuses (#6618); 3.48.0 sends them bare.
    #[test]
    fn from_3_48_0_a_refused_waitaof_no_longer_follows_scripts() {
        for refused in [REFUSED_7_0, REFUSED_6_2] {
            for (version, waitaof) in [("3.47.0", true), ("3.48.0", false)] {
                let mut h = client(version, true);
                answer_probe(&mut h, Value::Error(refused.into()));
                let (script, _) = next_sync(&mut h);
                h.reply(script, Value::Nil);
                h.expect_return(ThreadId(1)).unwrap();
                h.call(ThreadId(2), "m", Call::TryLock { wait: None, lease: None }).unwrap();
                let (_, sync) = next_sync(&mut h);
                let words = sync.map(|(_, words)| words);
                assert_eq!(
                    words.as_deref().and_then(|w| w.first()).map(String::as_str) == Some("WAITAOF"),
                    waitaof,
                    "{version} {refused}: {words:?}"
                );
            }
        }
    }
}
