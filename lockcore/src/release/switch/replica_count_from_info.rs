//! `replica-count-from-info` (Redisson 3.18.1, #4621, commit 95ec3ee70).
//!
//! Until 3.18.0 a synced lock script's `WAIT` asked for the replicas the
//! client knew of; with one of them down it waited out
//! `slavesSyncTimeout` every time, and with the only one down every lock
//! operation failed "None of slaves were synced" after it ran (#4621).
//! From 3.18.1 each synced script first asks `INFO REPLICATION` and waits
//! for its `connected_slaves`; with none connected the script goes without
//! `WAIT`. See `machine/replica_count.rs`.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "replica-count-from-info",
    since: Some(Version::new(3, 18, 1)),
    upstream: "#4621",
    summary: "a synced lock script's WAIT asks for INFO's connected_slaves, read before the script, not for the replicas the client knows",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, CallOutcome, Config, LockError, Purpose, ThreadId, TransportError, Value};

    /// One replica configured, none connected: 3.18.0 waits for it and
    /// fails the acquire after it ran; 3.18.1 reads `connected_slaves:0`
    /// and sends the script without `WAIT`.
    #[test]
    fn from_3_18_1_a_replica_that_is_down_is_not_waited_for() {
        let config = |v: &str| Config::builder().release(release(v)).replicas(1).build().unwrap();
        let mut h = Harness::with_config(config("3.18.0"));
        h.call(ThreadId(1), "l", Call::TryLock { wait: None, lease: None }).unwrap();
        let (script, purpose, _) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::Acquire);
        let (wait, words) = h.expect_send();
        assert_eq!(words, ["WAIT", "1", "1000"]);
        h.reply(script, Value::Nil);
        h.reply(wait, Value::Int(0));
        assert!(matches!(
            h.expect_return(ThreadId(1)),
            Err(LockError::Transport(TransportError::NoSyncedReplicas(_)))
        ));

        let mut h = Harness::with_config(config("3.18.1"));
        h.connected_replicas = Some(0);
        h.call(ThreadId(1), "l", Call::TryLock { wait: None, lease: None }).unwrap();
        let (script, purpose, _) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::Acquire);
        assert!(h.next().is_none(), "no WAIT");
        h.reply(script, Value::Nil);
        assert_eq!(h.expect_return(ThreadId(1)), Ok(CallOutcome::Acquired { token: None }));
        assert_eq!(h.infos, ["INFO REPLICATION"]);
    }
}
