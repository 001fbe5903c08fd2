//! `red-lock-wait-share` (Redisson 3.5.7 and 2.10.7, #1175, commit
//! 27ade0529).
//!
//! `RedissonRedLock` overrides `calcLockWaitTime`: each lock is tried for
//! `max(remainTime / n, 1000)` ms, not the whole wait, so one lock held
//! elsewhere no longer spends the wait the others need ("RedissonRedLock
//! couldn't be locked in some cases"). Before, a red lock waited on each
//! lock as a multi-lock does.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "red-lock-wait-share",
    since: Some(Version::new(3, 5, 7)),
    upstream: "#1175 (commit 27ade0529)",
    summary: "a red lock tries each lock for its share of the wait, at least 1 000 ms (before: the whole wait, as a multi-lock)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::multi_harness::red_lock_wait_of_first;

    /// `tryLock(3 000)` of a red lock over three locks.
    #[test]
    fn each_lock_gets_a_share_of_the_wait_from_3_5_7() {
        assert_eq!(red_lock_wait_of_first("3.5.6", 3_000), Some(3_000));
        assert_eq!(red_lock_wait_of_first("3.5.7", 3_000), Some(1_000));
        assert_eq!(red_lock_wait_of_first("3.5.7", 1_500), Some(1_000));
    }
}
