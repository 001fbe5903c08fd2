//! `red-lock-wait-floor` (Redisson 3.6.3 and 2.11.3, #1292, commit
//! d095634e6).
//!
//! The red lock's share of the wait has a floor of 1 ms, not 1 000 ms:
//! with a short wait, the 1 000 ms floor made each lock's `tryLock` wait
//! longer than the whole call could ("RedissonRedLock.tryLock doesn't
//! work for some wait time values").

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "red-lock-wait-floor",
    since: Some(Version::new(3, 6, 3)),
    upstream: "#1292 (commit d095634e6)",
    summary: "a red lock's share of the wait is at least 1 ms (before, from 3.5.7: at least 1 000 ms)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::multi_harness::red_lock_wait_of_first;

    /// `tryLock(1 500)` of a red lock over three locks: 1 000 ms each
    /// before 3.6.3, 500 ms after.
    #[test]
    fn the_share_has_a_floor_of_1_ms_from_3_6_3() {
        assert_eq!(red_lock_wait_of_first("3.6.2", 1_500), Some(1_000));
        assert_eq!(red_lock_wait_of_first("3.6.3", 1_500), Some(500));
        assert_eq!(red_lock_wait_of_first("3.6.3", 2), Some(1));
    }
}
