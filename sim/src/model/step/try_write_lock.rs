//! `try-write-lock`: the acquire of an `RReadWriteLock`'s write lock that
//! gives up.

use lockcore::{Call, LockKind};
use serde::{Deserialize, Serialize};

use super::{Invalid, Kind, lease, millis, wait_or_lease};

/// `readWriteLock.writeLock().tryLock()`, `tryLock(wait)` or
/// `tryLock(wait, lease)` (`tryLockAsync` with `async`): a failure skips
/// the rest of the enclosing block.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct TryWriteLock {
    /// How long to keep trying, in ms; none tries once.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
    pub wait_ms: Option<u64>,
    /// The lease in ms; none starts the watchdog.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
    pub lease_ms: Option<u64>,
    /// `tryLockAsync`: waits by a listener on its channel, not on the
    /// latch.
    #[serde(default, rename = "async")]
    pub is_async: bool,
}

impl Kind for TryWriteLock {
    fn check(&self) -> Result<(), Invalid> {
        lease(self.lease_ms)?;
        wait_or_lease("wait_ms", self.wait_ms)
    }

    fn call(&self) -> Option<Call> {
        let (wait, lease) = (millis(self.wait_ms), millis(self.lease_ms));
        Some(if self.is_async {
            Call::TryLockAsync { wait, lease }
        } else {
            Call::TryLock { wait, lease }
        })
    }

    fn object(&self) -> Option<LockKind> {
        Some(LockKind::Write)
    }
}
