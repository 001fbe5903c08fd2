//! `unlock-resets-lease` (Redisson 3.19.2, #4818, commit 8a54ce8f6).
//!
//! An `RLock` keeps the lease of its last `lock(lease)` in
//! `internalLockLeaseTime`, which a later `lock()` on the same instance
//! used as its lease (#4818: the watchdog lock took the previous lease).
//! 3.19.2 resets it to the watchdog timeout in `cancelExpirationRenewal`,
//! which every unlock calls, whatever its outcome. That also resets it
//! after an unlock that only counted a re-entrant hold down, so the next
//! unlock re-arms the key with the watchdog timeout instead of the hold's
//! lease, until `count-down-keeps-lease` (3.27.2, #5623).
//!
//! locksim models both: the leak (see `watchdog-lease-from-instance`,
//! which brought it in 3.14.0) and the reset after a count-down.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "unlock-resets-lease",
    since: Some(Version::new(3, 19, 2)),
    upstream: "#4818",
    summary: "every unlock resets the instance's lease to the watchdog timeout, so a later lock() no longer takes the lease of a lock(lease) (#4818); even an unlock that only counts a re-entrant hold down does, so the next unlock re-arms the key with it (until 3.27.2)",
    // It fixes #4818's leak (and brings #5623).
    fixes: true,
};

#[cfg(test)]
pub(super) mod tests {
    use crate::Value;
    use crate::machine::harness::{Harness, lock_with_lease, release};
    use crate::{CallOutcome, Purpose, ThreadId};

    const T1: ThreadId = ThreadId(1);

    /// Thread 1 takes the lock three times with a 10 s lease (watchdog
    /// timeout 30 s) and unlocks twice: the lease each unlock script is
    /// sent with, which it re-arms the still-held key with.
    pub(crate) fn unlock_leases_after_leased_holds(version: &str) -> Vec<String> {
        let mut h = Harness::new(release(version));
        for _ in 0..3 {
            h.call(T1, "l", lock_with_lease(10_000)).unwrap();
            let acquire = h.expect(Purpose::Acquire);
            h.reply(acquire, Value::Nil);
            assert!(matches!(h.expect_return(T1), Ok(CallOutcome::Acquired { .. })));
        }
        let mut leases = Vec::new();
        for _ in 0..2 {
            h.call(T1, "l", crate::Call::Unlock).unwrap();
            let (unlock, command) = h.expect_send();
            // EVAL script numkeys KEYS... ARGV[1] (the message) ARGV[2].
            let keys: usize = command[2].parse().unwrap();
            leases.push(command[3 + keys + 1].clone());
            h.reply(unlock, Value::Int(0));
            assert_eq!(
                h.expect_return(T1),
                Ok(CallOutcome::Unlocked { released: false })
            );
        }
        leases
    }

    /// To 3.19.1 both unlocks re-arm with the hold's 10 s; from 3.19.2 the
    /// first one's reset makes the second re-arm with 30 s.
    #[test]
    fn from_3_19_2_a_count_down_resets_the_lease_of_the_next_unlock() {
        assert_eq!(unlock_leases_after_leased_holds("3.19.1"), ["10000", "10000"]);
        assert_eq!(unlock_leases_after_leased_holds("3.19.2"), ["10000", "30000"]);
        assert_eq!(unlock_leases_after_leased_holds("3.27.1"), ["10000", "30000"]);
    }
}
