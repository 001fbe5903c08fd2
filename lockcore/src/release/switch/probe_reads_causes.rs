//! `probe-reads-causes` (Redisson 3.52.0, #6775, commit e50b735a2).
//!
//! 3.52.0 tries WAITAOF before WAIT when matching the probe's errors (so a
//! refused WAITAOF no longer reads as no WAIT), fails the call only when
//! nothing matched, sends the script bare only when neither command is
//! supported, and follows scripts with WAITAOF only when the probe found
//! it: on a server without WAITAOF and with AOF on, lock scripts go with
//! `WAIT` again instead of failing with "ERR unknown command 'WAITAOF'"
//! (#6775, #6618). See `machine/probe.rs`.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "probe-reads-causes",
    since: Some(Version::new(3, 52, 0)),
    upstream: "#6775",
    summary: "the probe tries WAITAOF first, sends bare only when neither command is supported, and WAITAOF follows scripts only when supported",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use super::super::wait_probe::tests::{REFUSED_7_0, answer_probe, client, next_sync};
    use crate::{Call, ThreadId, Value};

    /// Redis 7.0 with AOF on: 3.52.0 sends even the probing script with
    /// `WAIT 1 1000`; 3.51.0 sent it bare, and the later ones too, having
    /// read the server as one without `WAIT` (its `SyncProbed` event).
    #[test]
    fn from_3_52_0_a_server_without_waitaof_gets_wait() {
        let mut h = client("3.52.0", true);
        answer_probe(&mut h, Value::Error(REFUSED_7_0.into()));
        let (script, sync) = next_sync(&mut h);
        assert_eq!(sync.map(|s| s.1), Some(vec!["WAIT".into(), "1".into(), "1000".into()]));
        h.reply(script, Value::Nil);
        assert_eq!(h.probe_readings, [(true, Some(false))]);

        let mut h = client("3.51.0", true);
        answer_probe(&mut h, Value::Error(REFUSED_7_0.into()));
        let (script, sync) = next_sync(&mut h);
        assert!(sync.is_none());
        h.reply(script, Value::Nil);
        assert_eq!(h.probe_readings, [(false, Some(true))]);
        h.expect_return(ThreadId(1)).unwrap();
        h.call(ThreadId(2), "m", Call::TryLock { wait: None, lease: None }).unwrap();
        assert!(next_sync(&mut h).1.is_none());
    }
}
