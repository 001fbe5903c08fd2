//! `try-lock-async`: the acquire that gives up, waiting by a listener.

use lockcore::Call;
use serde::{Deserialize, Serialize};

use super::{Invalid, Kind, lease, millis, wait_or_lease};

/// `tryLockAsync()`, `tryLockAsync(wait)` or `tryLockAsync(wait, lease)`: `try-lock` waiting by a listener, as `lock-async` does.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct TryLockAsync {
    /// How long to keep trying, in ms; none tries once.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
    pub wait_ms: Option<u64>,
    /// The lease in ms; none starts the watchdog.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
    pub lease_ms: Option<u64>,
}

impl Kind for TryLockAsync {
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
}
