//! `lock-async`: the acquire that waits by a listener.

use lockcore::Call;
use serde::{Deserialize, Serialize};

use super::{Invalid, Kind, lease, millis};

/// `lockAsync()` or `lockAsync(lease)`: waits for a held lock by a listener on its channel, which an interrupt does not reach.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct LockAsync {
    /// The lease in ms; none starts the watchdog.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
    pub lease_ms: Option<u64>,
}

impl Kind for LockAsync {
    fn check(&self) -> Result<(), Invalid> {
        lease(self.lease_ms)
    }

    fn call(&self) -> Option<Call> {
        Some(Call::LockAsync {
            lease: millis(self.lease_ms),
        })
    }
}
