//! `no-sync-retry` (Redisson 3.20.1, #4822, commit 65320f76f).
//!
//! From 3.20.1 an acquire (after its rollback) or an unlock that fails for
//! too few synced replicas is tried again, `retryInterval` apart, up to
//! `retryAttempts` times, before the caller gets the error. An unlock
//! attempt that ran on the primary has released the lock, so its retry
//! finds it gone; with the unlock latch (3.24+) the retry draws a new
//! latch id until 3.52.0 and misses the latch (#6651). See
//! `machine/no_sync.rs`.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "no-sync-retry",
    since: Some(Version::new(3, 20, 1)),
    upstream: "#4822",
    summary: "an acquire or unlock that fails for too few synced replicas is tried again, retryInterval apart, up to retryAttempts times",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::Harness;
    use crate::{Call, CallOutcome, LockError, Purpose, ThreadId, TransportError, Value};

    /// 3.20.1: the acquire whose WAIT counts none is rolled back and sent
    /// again 1.5 s later; when that one syncs, tryLock succeeds. After
    /// three retries that all fail, the caller gets the error.
    #[test]
    fn from_3_20_1_a_not_synced_acquire_is_tried_again() {
        let mut h = Harness::with_replicas("3.20.1", 1);
        h.call(ThreadId(1), "l", Call::TryLock { wait: None, lease: None }).unwrap();
        for round in 0..4 {
            let (acquire, purpose, _) = h.expect_send_purpose();
            assert_eq!(purpose, Purpose::Acquire, "round {round}");
            let (wait, _) = h.expect_send();
            h.reply(acquire, Value::Nil);
            h.reply(wait, Value::Int(if round == 2 { 1 } else { 0 }));
            if round == 2 {
                assert_eq!(
                    h.expect_return(ThreadId(1)),
                    Ok(CallOutcome::Acquired { token: None })
                );
                return;
            }
            h.expect_rolled_back(ThreadId(1));
            let (unlock, _) = h.expect_send();
            let (wait, _) = h.expect_send();
            h.reply(unlock, Value::Int(1));
            h.reply(wait, Value::Int(0));
            h.expect_quiet();
            h.advance(1_500);
        }
        unreachable!("the third acquire synced");
    }

    /// Retries are bounded: four failed attempts (the first and three
    /// retries), then the error.
    #[test]
    fn the_acquire_gives_up_after_its_retries() {
        let mut h = Harness::with_replicas("3.20.1", 1);
        h.call(ThreadId(1), "l", Call::TryLock { wait: None, lease: None }).unwrap();
        for _ in 0..4 {
            let (acquire, _) = h.expect_send();
            let (wait, _) = h.expect_send();
            h.reply(acquire, Value::Nil);
            h.reply(wait, Value::Int(0));
            h.expect_rolled_back(ThreadId(1));
            let (unlock, _) = h.expect_send();
            let (wait, _) = h.expect_send();
            h.reply(unlock, Value::Int(1));
            h.reply(wait, Value::Int(0));
            h.advance(1_500);
        }
        assert_eq!(
            h.expect_return(ThreadId(1)),
            Err(LockError::Transport(TransportError::NoSyncedReplicas(
                "None of slaves were synced".into()
            )))
        );
    }
}
