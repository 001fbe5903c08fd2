//! `no-sync-rollback` (Redisson 3.20.0, #4822, commit ec2e41ab3).
//!
//! From 3.16.7 an acquire whose `WAIT` counts too few replicas fails,
//! although the primary ran it: a thread told it failed keeps the key
//! (30 s, unrenewed), and a caller that tries again re-enters and counts
//! up. #4822: after a failover only one node could ever take the lock.
//! 3.20.0 rolls the acquire back with the thread's unlock script before
//! the error reaches the caller. See `machine/no_sync.rs`.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "no-sync-rollback",
    since: Some(Version::new(3, 20, 0)),
    upstream: "#4822",
    summary: "an acquire that fails for too few synced replicas is rolled back by the thread's unlock script before the caller gets the error (before: the key stayed with a thread told it failed)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::Harness;
    use crate::{Call, LockError, Purpose, ThreadId, TransportError, Value};

    /// `tryLock()` whose WAIT counts none: 3.19.0 throws at once; 3.20.0
    /// first sends the unlock script, then throws.
    #[test]
    fn from_3_20_0_a_not_synced_acquire_is_rolled_back() {
        let none = || {
            Err(LockError::Transport(TransportError::NoSyncedReplicas(
                "None of slaves were synced".into(),
            )))
        };
        for (release, rolls_back) in [("3.19.0", false), ("3.20.0", true)] {
            let mut h = Harness::with_replicas(release, 1);
            h.call(ThreadId(1), "l", Call::TryLock { wait: None, lease: None }).unwrap();
            let (acquire, _) = h.expect_send();
            let (wait, _) = h.expect_send();
            h.reply(acquire, Value::Nil);
            h.reply(wait, Value::Int(0));
            if rolls_back {
                h.expect_rolled_back(ThreadId(1));
                let (unlock, purpose, _) = h.expect_send_purpose();
                assert_eq!(purpose, Purpose::Unlock);
                let (wait, _) = h.expect_send();
                h.expect_quiet();
                h.reply(unlock, Value::Int(1));
                h.reply(wait, Value::Int(0));
            }
            assert_eq!(h.expect_return(ThreadId(1)), none(), "{release}");
        }
    }
}
