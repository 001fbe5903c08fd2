//! `spin-lock`: the blocking acquire of an `RSpinLock`.

use lockcore::{Call, LockKind};
use serde::{Deserialize, Serialize};

use super::{Invalid, Kind, lease, millis};

/// `spinLock.lock()` or `lock(lease)`: attempts, sleeps its back-off and
/// attempts again as long as it takes (no pub/sub). An `interrupt` that
/// finds it asleep ends it. The thread's lock steps are then all on its
/// spin lock.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct SpinLock {
    /// The lease in ms; none starts the watchdog.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
    pub lease_ms: Option<u64>,
}

impl Kind for SpinLock {
    fn check(&self) -> Result<(), Invalid> {
        lease(self.lease_ms)
    }

    fn call(&self) -> Option<Call> {
        Some(Call::Lock {
            lease: millis(self.lease_ms),
        })
    }

    fn object(&self) -> Option<LockKind> {
        Some(LockKind::Spin)
    }
}
