//! `lock-waits-for-replicas` (Redisson 3.16.7, #3994, commit e2b3973c3).
//!
//! From 3.12.5 the lock's scripts went out as batches that also sent
//! `WAIT` when replicas existed, but nobody read its count: the script's
//! reply was its caller's at once. 3.16.7 answers the caller only once the
//! whole batch has, and fails a script whose `WAIT` counted fewer replicas
//! than the client knows of, although it ran on the primary: an acquire
//! then leaves the key to a thread told it failed, and a renewal that fails
//! so stops the watchdog as any failed renewal does (3.14.0 to 3.43.x:
//! for good, so a replica more than `slavesSyncTimeout` behind loses the
//! lock of a live holder; #4305 reports the log line). See
//! `machine/sync.rs`.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "lock-waits-for-replicas",
    since: Some(Version::new(3, 16, 7)),
    upstream: "#3994",
    summary: "with replicas, each lock script is followed by WAIT <replicas> 1000 and answers after it; too few replicas synced fails the script (\"Only X of Y slaves were synced\"), although it ran",
    fixes: false,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::Harness;
    use crate::{Call, CallOutcome, LockError, Purpose, ThreadId, TransportError, Value};

    /// 3.16.7 with one replica: the acquire goes out with `WAIT 1 1000`
    /// after it, answers only when the `WAIT` does, and fails with
    /// Redisson's text when the `WAIT` counted 0, though the script
    /// acquired. 3.16.6 sends no `WAIT` and answers at once.
    #[test]
    fn the_acquire_answers_after_its_wait() {
        let mut h = Harness::with_replicas("3.16.6", 1);
        h.call(ThreadId(1), "l", Call::TryLock { wait: None, lease: None }).unwrap();
        let (acquire, purpose, _) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::Acquire);
        h.reply(acquire, Value::Nil);
        assert_eq!(h.expect_return(ThreadId(1)), Ok(CallOutcome::Acquired { token: None }));

        for (synced, outcome) in [
            (1, Ok(CallOutcome::Acquired { token: None })),
            (
                0,
                Err(LockError::Transport(TransportError::NoSyncedReplicas(
                    "Only 0 of 1 slaves were synced".into(),
                ))),
            ),
        ] {
            let mut h = Harness::with_replicas("3.16.7", 1);
            h.call(ThreadId(1), "l", Call::TryLock { wait: None, lease: None }).unwrap();
            let (acquire, purpose, _) = h.expect_send_purpose();
            assert_eq!(purpose, Purpose::Acquire);
            let (wait, command) = h.expect_send();
            assert_eq!(command, ["WAIT", "1", "1000"]);
            h.reply(acquire, Value::Nil);
            h.expect_quiet();
            h.reply(wait, Value::Int(synced));
            assert_eq!(h.expect_return(ThreadId(1)), outcome);
        }
    }

    /// The batch's timeout is the response timeout plus the sync timeout:
    /// a WAIT that blocks for its whole second does not time the script
    /// out.
    #[test]
    fn the_batch_gets_the_sync_timeout_on_top() {
        let mut h = Harness::with_replicas("3.16.7", 1);
        h.call(ThreadId(1), "l", Call::TryLock { wait: None, lease: None }).unwrap();
        let (acquire, _) = h.expect_send();
        let (wait, _) = h.expect_send();
        h.reply(acquire, Value::Nil);
        h.advance(3_999);
        h.expect_quiet();
        h.reply(wait, Value::Int(1));
        assert_eq!(h.expect_return(ThreadId(1)), Ok(CallOutcome::Acquired { token: None }));
    }
}
