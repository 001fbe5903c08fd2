//! `spin-lock-interruptibly`: `RSpinLock.lockInterruptibly`.

use lockcore::{Call, LockKind};
use serde::{Deserialize, Serialize};

use super::{Invalid, Kind, lease, millis};

/// `spinLock.lockInterruptibly()` or `lockInterruptibly(lease)`: the
/// loop of `spin-lock`, throwing `InterruptedException` where that one
/// throws `IllegalStateException`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct SpinLockInterruptibly {
    /// The lease in ms; none starts the watchdog.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
    pub lease_ms: Option<u64>,
}

impl Kind for SpinLockInterruptibly {
    fn check(&self) -> Result<(), Invalid> {
        lease(self.lease_ms)
    }

    fn call(&self) -> Option<Call> {
        Some(Call::LockInterruptibly {
            lease: millis(self.lease_ms),
        })
    }

    fn object(&self) -> Option<LockKind> {
        Some(LockKind::Spin)
    }
}
