//! `no-sync-message-lengthened` (Redisson 3.25.0, commit 279cb9b3c).
//!
//! 3.25.0 lengthened the text of the "too few replicas" failure to "None
//! of slaves were synced. Try to increase slavesSyncTimeout setting or
//! set checkLockSyncedSlaves = false." (`CommandAsyncService.syncedEval`,
//! line 906 at the tag), while the acquire's rollback
//! (`CommandAsyncService`, lines 858 and 861) and the retry wrapper
//! (`ServiceManager.execute`, line 447) still compared the message with
//! "None of slaves were synced" by `equals`. So from 3.25.0 to 3.46.x
//! neither matched: no rollback and no retry ran, and the caller got the
//! error while the script's effect stayed on the primary, as before
//! 3.20.0. 3.47.0 matches by type (`no-synced-slaves-exception`).
//! locksim's own finding in Redisson's source, not reported upstream. A
//! change that brought a defect: it fixes nothing.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "no-sync-message-lengthened",
    since: Some(Version::new(3, 25, 0)),
    upstream: "commit 279cb9b3c",
    summary: "the no-synced-replicas failure's text grows a hint, and the rollback and retry, which still compare it with the old text, no longer run",
    fixes: false,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::Harness;
    use crate::{Call, LockError, ThreadId, TransportError, Value};

    /// 3.25.0: the acquire whose WAIT counts none fails at once with the
    /// long text, nothing rolled back (3.24.3 sends the rollback's unlock).
    #[test]
    fn from_3_25_0_a_not_synced_acquire_is_neither_rolled_back_nor_retried() {
        let mut h = Harness::with_replicas("3.25.0", 1);
        h.call(ThreadId(1), "l", Call::TryLock { wait: None, lease: None }).unwrap();
        let (acquire, _) = h.expect_send();
        let (wait, _) = h.expect_send();
        h.reply(acquire, Value::Nil);
        h.reply(wait, Value::Int(0));
        assert_eq!(
            h.expect_return(ThreadId(1)),
            Err(LockError::Transport(TransportError::NoSyncedReplicas(
                "None of slaves were synced. Try to increase slavesSyncTimeout setting or set checkLockSyncedSlaves = false.".into()
            )))
        );
        h.expect_quiet();

        let mut h = Harness::with_replicas("3.24.3", 1);
        h.call(ThreadId(1), "l", Call::TryLock { wait: None, lease: None }).unwrap();
        let (acquire, _) = h.expect_send();
        let (wait, _) = h.expect_send();
        h.reply(acquire, Value::Nil);
        h.reply(wait, Value::Int(0));
        h.expect_rolled_back(ThreadId(1));
        let (_, rollback) = h.expect_send();
        assert_eq!(rollback[0], "EVAL", "the rollback's unlock script");
    }
}
