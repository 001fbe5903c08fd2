//! `batch-failure-fails-commands` (Redisson 3.13.0, #2790, commit
//! 1abb29e27).
//!
//! From 3.12.5 (`lock-script-batch`) to 3.12.x a lock script whose batch
//! failed was never answered: `CommandBatchService` failed the batch's
//! promise and left its commands' promises pending, so `tryLock` with
//! Redis down hung past its wait, an `unlock` never returned (and never
//! cancelled the renewal), and a renewal's chain silently stopped. 3.13.0
//! fails every command of a failed batch with the batch's error.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "batch-failure-fails-commands",
    since: Some(Version::new(3, 13, 0)),
    upstream: "#2790",
    summary: "a lock script whose batch fails (connection error, timeout after its retries) fails with the batch's error (3.12.5 to 3.12.x: it was never answered, so the call hung)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, LockError, Purpose, ThreadId, TransportError};

    /// `tryLock(5 s)` with Redis down: its acquire fails with a
    /// connection error. 3.12.4 (no batch) and 3.13.0 throw it; 3.12.5's
    /// batch swallows it and the call never returns (Redisson's own test
    /// for #2790, `testRedisFailed`).
    fn answered(version: &str) -> Option<Result<crate::CallOutcome, LockError>> {
        let mut h = Harness::short(release(version));
        let call = Call::TryLock {
            wait: Some(crate::Millis(5_000)),
            lease: Some(crate::Millis(10_000)),
        };
        h.call(ThreadId(1), "l", call).unwrap();
        let acquire = h.expect(Purpose::Acquire);
        h.fail(acquire, TransportError::Connection("refused".into()));
        h.advance(60_000);
        h.returned(ThreadId(1))
    }

    #[test]
    fn from_3_12_5_to_3_13_0_a_failed_batch_hangs_the_call() {
        assert!(matches!(answered("3.12.4"), Some(Err(_))));
        assert_eq!(answered("3.12.5"), None);
        assert_eq!(answered("3.12.6"), None);
        assert!(matches!(answered("3.13.0"), Some(Err(_))));
    }
}
