//! `wait-probe` (Redisson 3.46.0, commit 4de934766).
//!
//! From 3.46.0 a client probes `WAIT 0 0` and `WAITAOF 0 0 0` before its
//! first lock script that waits for replicas, and reads the errors as
//! REDISSON-FAMILY.md §6.2's first row says: a name in single quotes is
//! unsupported, and when the first error starts with "ERR unknown
//! command" that script goes bare. Later scripts are followed by `WAITAOF
//! 1 <replicas> <timeout>` whenever `INFO` says `aof_enabled:1`, whatever
//! the probe found: on a server without WAITAOF (Redis 6.2, 7.0, 7.1)
//! every lock script then fails with its unknown-command error (#6775,
//! #6618), although it ran. See `machine/probe.rs`.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "wait-probe",
    since: Some(Version::new(3, 46, 0)),
    upstream: "commit 4de934766",
    summary: "before the first synced lock script, probe WAIT 0 0 and WAITAOF 0 0 0 and parse the errors; with the primary's AOF on, follow scripts with WAITAOF 1 instead of WAIT",
    fixes: false,
};

#[cfg(test)]
pub(crate) mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, CallOutcome, Config, LockError, Purpose, ThreadId, TransportError, Value};

    /// `WAITAOF 0 0 0` refused by Redis 7.0 and 6.2 (fake-redis's
    /// `version.rs` cites the Redis source).
    pub(crate) const REFUSED_7_0: &str =
        "ERR unknown command 'WAITAOF', with args beginning with: '0' '0' '0' ";
    pub(crate) const REFUSED_6_2: &str =
        "ERR unknown command `WAITAOF`, with args beginning with: `0`, `0`, `0`, ";

    /// A client of `version` with one replica, the primary's AOF `aof`,
    /// whose thread 1 calls `tryLock()`.
    pub(crate) fn client(version: &str, aof: bool) -> Harness {
        let mut h = Harness::with_config(
            Config::builder()
                .release(release(version))
                .replicas(1)
                .build()
                .unwrap(),
        );
        h.aof_enabled = aof;
        h.call(ThreadId(1), "l", Call::TryLock { wait: None, lease: None }).unwrap();
        h
    }

    /// Answers the probe, WAITAOF's part with `waitaof`.
    pub(crate) fn answer_probe(h: &mut Harness, waitaof: Value) {
        let (wait, purpose, command) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::Probe);
        assert_eq!(command, ["WAIT", "0", "0"]);
        let (aof, purpose, command) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::Probe);
        assert_eq!(command, ["WAITAOF", "0", "0", "0"]);
        h.reply(wait, Value::Int(0));
        h.reply(aof, waitaof);
    }

    /// Thread `t` calls `tryLock()` on `lock`; the words of the sync
    /// after its script (`None`: bare), with both requests.
    pub(crate) fn next_sync(h: &mut Harness) -> (crate::RequestId, Option<(crate::RequestId, Vec<String>)>) {
        let (script, purpose, _) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::Acquire);
        match h.next() {
            Some(crate::Output::Send { request, command, .. }) => (
                script,
                Some((
                    request,
                    command.iter().map(|b| String::from_utf8_lossy(b).into_owned()).collect(),
                )),
            ),
            _ => (script, None),
        }
    }

    /// 3.45.1 probes `WAIT 0 0` alone (`jvm-wait-probe`) and never sends
    /// WAITAOF; 3.46.0 probes both, before its first lock script. On a 7.2
    /// server (both supported) with AOF on, the script goes with `WAITAOF
    /// 1 1 1000`, whose second element is the synced count: a replica
    /// without AOF syncs none, and the call fails.
    #[test]
    fn from_3_46_0_the_first_script_waits_for_the_probe() {
        let mut h = client("3.45.1", true);
        h.probed();
        let (_, sync) = next_sync(&mut h);
        assert_eq!(sync.map(|s| s.1), Some(vec!["WAIT".into(), "1".into(), "1000".into()]));

        let mut h = client("3.46.0", true);
        answer_probe(&mut h, Value::Array(vec![Value::Int(1), Value::Int(0)]));
        let (script, sync) = next_sync(&mut h);
        let (wait, words) = sync.expect("synced");
        assert_eq!(words, ["WAITAOF", "1", "1", "1000"]);
        h.reply(script, Value::Nil);
        h.reply(wait, Value::Array(vec![Value::Int(1), Value::Int(0)]));
        assert!(matches!(
            h.expect_return(ThreadId(1)),
            Err(LockError::Transport(TransportError::NoSyncedReplicas(_)))
        ));
        // No second probe.
        h.call(ThreadId(2), "m", Call::TryLock { wait: None, lease: None }).unwrap();
        let (_, sync) = next_sync(&mut h);
        assert!(sync.is_some());
    }

    /// On Redis 7.0 with AOF on, 3.46.0 sends its first script bare (the
    /// error starts "ERR unknown command"), then every later one with
    /// `WAITAOF`, which the server refuses: the script ran, the call
    /// fails with the refusal (#6775).
    #[test]
    fn on_7_0_with_aof_every_later_script_fails() {
        let mut h = client("3.46.0", true);
        answer_probe(&mut h, Value::Error(REFUSED_7_0.into()));
        let (script, sync) = next_sync(&mut h);
        assert!(sync.is_none(), "bare");
        h.reply(script, Value::Nil);
        assert_eq!(h.expect_return(ThreadId(1)), Ok(CallOutcome::Acquired { token: None }));
        h.call(ThreadId(2), "m", Call::TryLock { wait: None, lease: None }).unwrap();
        let (script, sync) = next_sync(&mut h);
        let (wait, words) = sync.expect("synced");
        assert_eq!(words, ["WAITAOF", "1", "1", "1000"]);
        let refused = "ERR unknown command 'WAITAOF', with args beginning with: '1' '1' '1000' ";
        h.reply(script, Value::Nil);
        h.reply(wait, Value::Error(refused.into()));
        assert_eq!(
            h.expect_return(ThreadId(2)),
            Err(LockError::Transport(TransportError::Redis(refused.into())))
        );
    }

    /// 3.52.0 on Redis 7.2: the AOF the client read with its count
    /// decides its sync, and is kept with the count: a primary that
    /// turns AOF on is not seen while the count is cached.
    #[test]
    fn the_aof_is_kept_with_the_count() {
        let mut h = client("3.52.0", false);
        answer_probe(&mut h, Value::Array(vec![Value::Int(1), Value::Int(0)]));
        let (script, sync) = next_sync(&mut h);
        let (wait, words) = sync.expect("a sync");
        assert_eq!(words, ["WAIT", "1", "1000"]);
        h.reply(script, Value::Nil);
        h.reply(wait, Value::Int(1));
        h.expect_acquired(ThreadId(1));
        h.aof_enabled = true;
        h.call(
            ThreadId(2),
            "l",
            Call::TryLock {
                wait: None,
                lease: None,
            },
        )
        .unwrap();
        let (_, sync) = next_sync(&mut h);
        assert_eq!(sync.map(|s| s.1).unwrap_or_default(), ["WAIT", "1", "1000"]);
        assert_eq!(h.infos.len(), 1, "the count and AOF were cached");
    }
}
