//! `multi-try-lock-lease` (Redisson 3.11.1, #2172, commit d7b029327).
//!
//! A multi-lock's `tryLock(-1, lease)` (no wait, a lease) asks each lock
//! for the lease, and answers false when one is held. Before, each lock
//! was asked for twice the wait, -2 ms: the acquire script's `PEXPIRE`
//! with a negative time deletes the key it has just written, so the
//! multi-lock was "held" by every thread that asked. locksim refuses that
//! call before 3.11.1 rather than send a negative lease.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "multi-try-lock-lease",
    since: Some(Version::new(3, 11, 1)),
    upstream: "#2172 (commit d7b029327)",
    summary: "a multi-lock's tryLock without a wait asks each lock for the lease (before: for -2 ms, which deletes the key at once; refused as not modelled)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::multi_harness::try_lock_lease_refused;

    #[test]
    fn try_lock_with_a_lease_and_no_wait_is_modelled_from_3_11_1() {
        assert!(try_lock_lease_refused("3.11.0"));
        assert!(!try_lock_lease_refused("3.11.1"));
    }
}
