//! `no-synced-replicas-only` (Redisson 3.17.5, commit 12af11867).
//!
//! 3.16.7 to 3.17.4 fail a lock script whose `WAIT` counted fewer replicas
//! than the client knows of ("Only 0 of 1", "Only 2 of 17 slaves were
//! synced", #4646). From 3.17.5 it fails only when none was synced: "None
//! of slaves were synced".

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "no-synced-replicas-only",
    since: Some(Version::new(3, 17, 5)),
    upstream: "#4646",
    summary: "a lock script fails for its WAIT only when no replica was synced (\"None of slaves were synced\"), not when some were",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::Harness;
    use crate::{Call, CallOutcome, LockError, ThreadId, TransportError, Value};

    /// Two replicas, one synced: 3.17.4 fails the acquire, 3.17.5 does
    /// not; none synced fails both, with their own texts.
    #[test]
    fn only_no_synced_replica_fails_from_3_17_5() {
        let run = |release: &str, synced: i64| {
            let mut h = Harness::with_replicas(release, 2);
            h.call(ThreadId(1), "l", Call::TryLock { wait: None, lease: None }).unwrap();
            let (acquire, _) = h.expect_send();
            let (wait, _) = h.expect_send();
            h.reply(acquire, Value::Nil);
            h.reply(wait, Value::Int(synced));
            h.expect_return(ThreadId(1))
        };
        let failed = |text: &str| {
            Err(LockError::Transport(TransportError::NoSyncedReplicas(
                text.into(),
            )))
        };
        assert_eq!(run("3.17.4", 1), failed("Only 1 of 2 slaves were synced"));
        assert_eq!(run("3.17.5", 1), Ok(CallOutcome::Acquired { token: None }));
        assert_eq!(run("3.17.5", 0), failed("None of slaves were synced"));
    }
}
