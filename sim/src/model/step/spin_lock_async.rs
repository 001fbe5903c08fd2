//! `spin-lock-async`: `RSpinLock.lockAsync`.

use lockcore::{Call, LockKind};
use serde::{Deserialize, Serialize};

use super::{Invalid, Kind, lease, millis};

/// `spinLock.lockAsync()` or `lockAsync(lease)`: the loop of `spin-lock`
/// with each sleep a task on the client's timer (`newTimeout`, on its
/// wheel); an `interrupt` does not reach it.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct SpinLockAsync {
    /// The lease in ms; none starts the watchdog.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
    pub lease_ms: Option<u64>,
}

impl Kind for SpinLockAsync {
    fn check(&self) -> Result<(), Invalid> {
        lease(self.lease_ms)
    }

    fn call(&self) -> Option<Call> {
        Some(Call::LockAsync {
            lease: millis(self.lease_ms),
        })
    }

    fn object(&self) -> Option<LockKind> {
        Some(LockKind::Spin)
    }
}
