//! The `RLock` instance's lease (`internalLockLeaseTime`).
//!
//! Redisson keeps, per `RLock` object, the lease of its last `lock(lease)`.
//! From 3.14.0 (`watchdog-lease-from-instance`) a `lock()` without a lease
//! sends that field, and the watchdog renews with it, until 3.19.2
//! (`unlock-resets-lease`, #4818) resets it on every unlock. locksim keeps
//! one instance per lock name per client.

use super::LockClient;
use crate::{LockName, Millis, Switch};

impl LockClient {
    /// The lease a watchdog hold of `lock` is taken and renewed with.
    pub(super) fn watchdog_lease(&self, lock: &LockName) -> Millis {
        let leaks = self.switches.has(Switch::WatchdogLeaseFromInstance)
            && !self.switches.has(Switch::UnlockResetsLease);
        match self.instance_leases.get(lock) {
            Some(lease) if leaks => *lease,
            _ => self.config.watchdog_timeout,
        }
    }
}
