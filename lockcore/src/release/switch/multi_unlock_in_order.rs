//! `multi-unlock-in-order` (Redisson 3.27.2, #3243, commit 0f05a859f).
//!
//! A multi-lock's `unlock()` calls each lock's `unlock()` in order
//! (`locks.forEach(Lock::unlock)`): the first that throws ends it, and
//! the locks after it stay held (renewed by their watchdog). Before, it
//! sent every unlock at once and threw the first error in lock order
//! (locksim answers once every unlock has, see `multi/release.rs`), every
//! lock unlocked or not. Not a fix. A red lock's `unlock()` is
//! `unlockInner` in every release.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "multi-unlock-in-order",
    since: Some(Version::new(3, 27, 2)),
    upstream: "#3243 (commit 0f05a859f)",
    summary: "a multi-lock's unlock() unlocks one lock after another and stops at the first error (before: all at once)",
    fixes: false,
};

#[cfg(test)]
mod tests {
    use crate::machine::multi_harness::unlock_sends;

    /// `unlock()` of a multi-lock over three locks whose first unlock
    /// fails: how many unlocks are sent.
    #[test]
    fn unlock_stops_at_the_first_error_from_3_27_2() {
        assert_eq!(unlock_sends("3.27.1"), 3);
        assert_eq!(unlock_sends("3.27.2"), 1);
    }
}
