//! `fair-wait-from-try-lock` (Redisson 3.13.3, #2883, commit a6bbb11bf,
//! "RFairLock.tryLock() method doesn't apply waitTimeout parameter").
//!
//! Up to 3.13.2 every fair-lock waiter's deadline added the constructor's
//! `threadWaitTime`, 5 000 ms, whatever the call waited: a `lock()` or a
//! `tryLock(wait)` longer than 5 s behind a busy queue saw its entry
//! purged as stale while it still waited. From 3.13.3 `tryLock(wait)`'s
//! wait is the one added (in the acquire and in `acquireFailed`), and the
//! default is 300 000 ms (`60000*5`) (read at tags redisson-3.13.2 and
//! redisson-3.13.3). 3.17.1 (#4033, 9a4b9f263) takes the wait only when it
//! is above 0 instead of when it is not -1; a zero wait is refused by the
//! machine (`InvalidWait`), so no modelled call tells the two apart.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "fair-wait-from-try-lock",
    since: Some(Version::new(3, 13, 3)),
    upstream: "#2883",
    summary: "a fair-lock waiter's deadline adds tryLock's wait, or 300 000 ms, instead of a fixed 5 000 ms",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, LockKind, Millis, ThreadId};

    fn wait_sent(version: &str, call: Call) -> String {
        let mut h = Harness::new(release(version));
        h.call_kind(ThreadId(1), "l", LockKind::Fair, call).unwrap();
        h.expect_send().1[8].clone()
    }

    #[test]
    fn try_lock_waits_its_own_wait_from_3_13_3() {
        let wait = Call::TryLock {
            wait: Some(Millis(2_000)),
            lease: None,
        };
        let lock = Call::Lock { lease: None };
        assert_eq!(wait_sent("3.13.2", wait.clone()), "5000");
        assert_eq!(wait_sent("3.13.2", lock.clone()), "5000");
        assert_eq!(wait_sent("3.13.3", wait), "2000");
        assert_eq!(wait_sent("3.13.3", lock), "300000");
    }
}
