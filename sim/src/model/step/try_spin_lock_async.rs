//! `try-spin-lock-async`: `RSpinLock.tryLockAsync`.

use lockcore::{Call, LockKind};
use serde::{Deserialize, Serialize};

use super::{Invalid, Kind, lease, millis, wait_or_lease};

/// `spinLock.tryLockAsync()`, `tryLockAsync(wait)` or `tryLockAsync(wait,
/// lease)`: `try-spin-lock` with each sleep a task on the client's timer.
/// Before 3.22.1 its wait counted the attempts' round trips only, not the
/// sleeps, so it tried far longer than asked (#5002).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct TrySpinLockAsync {
    /// How long to keep trying, in ms; none tries once.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
    pub wait_ms: Option<u64>,
    /// The lease in ms; none starts the watchdog.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
    pub lease_ms: Option<u64>,
}

impl Kind for TrySpinLockAsync {
    fn check(&self) -> Result<(), Invalid> {
        lease(self.lease_ms)?;
        wait_or_lease("wait_ms", self.wait_ms)
    }

    fn call(&self) -> Option<Call> {
        Some(Call::TryLockAsync {
            wait: millis(self.wait_ms),
            lease: millis(self.lease_ms),
        })
    }

    fn object(&self) -> Option<LockKind> {
        Some(LockKind::Spin)
    }
}
