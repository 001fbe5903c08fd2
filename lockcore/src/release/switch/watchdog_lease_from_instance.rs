//! `watchdog-lease-from-instance` (Redisson 3.14.0, commit 2b3ae3905).
//!
//! A "refactoring" made `lock()` and `tryLock(wait)` without a lease send
//! the `RLock` instance's `internalLockLeaseTime` instead of the
//! configured `lockWatchdogTimeout`. That field holds the lease of the
//! instance's last `lock(lease)` (set as its acquire succeeds), and the
//! watchdog renews with it too (`pexpire` and every third of it), so an
//! application that takes `lock(2 s)` once and later `lock()` on the same
//! instance gets a watchdog lock whose key lives 2 s, not 30 s: a pause
//! the watchdog was meant to cover loses it (#4818). 3.19.2
//! (`unlock-resets-lease`) resets the field to the watchdog timeout on
//! every unlock.
//!
//! locksim keeps one `RLock` per lock name per client (an application
//! that keeps its `RLock`s, shared by its threads). What is left of the
//! field from 3.19.2 on, between a `lock(lease)` and its unlock, is not
//! modelled.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "watchdog-lease-from-instance",
    since: Some(Version::new(3, 14, 0)),
    upstream: "commit 2b3ae3905",
    summary: "a lock() without a lease takes the RLock instance's lease, the one of its last lock(lease), and the watchdog renews with it (brought #4818, fixed by unlock-resets-lease in 3.19.2)",
    fixes: false,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, lock_with_lease, release};
    use crate::{Call, Purpose, ThreadId, Value};

    const T1: ThreadId = ThreadId(1);

    /// `lock(700 ms)`, unlock, then `lock()` on the same RLock: the
    /// acquire's lease argument and the first renewal, by release.
    fn watchdog_lease_after_a_leased_hold(version: &str) -> (String, u64) {
        let mut h = Harness::short(release(version));
        h.call(T1, "l", lock_with_lease(700)).unwrap();
        let acquire = h.expect(Purpose::Acquire);
        h.reply(acquire, Value::Nil);
        h.expect_return(T1).unwrap();
        h.call(T1, "l", Call::Unlock).unwrap();
        let unlock = h.expect(Purpose::Unlock);
        h.reply(unlock, Value::Int(1));
        let _ = h.sends();
        let start = h.now.0;
        h.call(T1, "l", Call::Lock { lease: None }).unwrap();
        let (acquire, command) = h.expect_send();
        h.reply(acquire, Value::Nil);
        h.expect_return(T1).unwrap();
        let renew = h.renewal_due();
        h.reply(renew, Value::Int(1));
        (command[4].clone(), h.now.0 - start)
    }

    /// #4818: from 3.14.0 to 3.19.1 the watchdog lock takes the 700 ms
    /// lease and is renewed every 233 ms; 3.13.6 and 3.19.2 use the 3 s
    /// watchdog timeout, renewed every second.
    #[test]
    fn from_3_14_0_to_3_19_2_a_later_lock_takes_the_previous_lease() {
        assert_eq!(watchdog_lease_after_a_leased_hold("3.13.6").0, "3000");
        let (lease, first_renewal) = watchdog_lease_after_a_leased_hold("3.19.1");
        assert_eq!(lease, "700");
        assert!(first_renewal < 1_000, "{first_renewal}");
        let (lease, first_renewal) = watchdog_lease_after_a_leased_hold("3.19.2");
        assert_eq!(lease, "3000");
        assert!(first_renewal >= 1_000, "{first_renewal}");
    }
}
