//! `count-down-keeps-lease` (Redisson 3.27.2, #5623, commit 94d73b870).
//!
//! "Multiple locking of RLock reset remainTimeToLive to config default":
//! from 3.19.2 (`unlock-resets-lease`) every unlock reset the instance's
//! `internalLockLeaseTime` to the watchdog timeout, so after one unlock of
//! a re-entrant `lock(lease)` hold the next unlock re-armed the still-held
//! key with the watchdog timeout: shorter than the lease, the key expired
//! while its holder worked. 3.27.2 resets it only when the unlock
//! released the lock or found it gone (`unlockResult == null || true`).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "count-down-keeps-lease",
    since: Some(Version::new(3, 27, 2)),
    upstream: "#5623",
    summary: "an unlock that only counts a re-entrant hold down keeps the instance's lease, so the next unlock re-arms the key with the hold's lease, not the watchdog timeout",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use super::super::unlock_resets_lease::tests::unlock_leases_after_leased_holds;

    /// From 3.27.2 both unlocks re-arm with the hold's 10 s again.
    #[test]
    fn from_3_27_2_a_count_down_keeps_the_lease() {
        assert_eq!(unlock_leases_after_leased_holds("3.27.2"), ["10000", "10000"]);
        assert_eq!(unlock_leases_after_leased_holds("4.7.0"), ["10000", "10000"]);
    }
}
