//! `try-spin-lock`: the acquire of an `RSpinLock` that gives up.

use lockcore::{Call, LockKind};
use serde::{Deserialize, Serialize};

use super::{Invalid, Kind, lease, millis, wait_or_lease};

/// `spinLock.tryLock()`, `tryLock(wait)` or `tryLock(wait, lease)`: a
/// failure skips the rest of the enclosing block. Without a wait it
/// attempts once; with one it sleeps its back-off between attempts until
/// an attempt answers with the wait spent (before 3.17.1 even an attempt
/// that took the lock then answers false, #4197).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct TrySpinLock {
    /// How long to keep trying, in ms; none tries once.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
    pub wait_ms: Option<u64>,
    /// The lease in ms; none starts the watchdog.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
    pub lease_ms: Option<u64>,
}

impl Kind for TrySpinLock {
    fn check(&self) -> Result<(), Invalid> {
        lease(self.lease_ms)?;
        wait_or_lease("wait_ms", self.wait_ms)
    }

    fn call(&self) -> Option<Call> {
        Some(Call::TryLock {
            wait: millis(self.wait_ms),
            lease: millis(self.lease_ms),
        })
    }

    fn object(&self) -> Option<LockKind> {
        Some(LockKind::Spin)
    }
}
