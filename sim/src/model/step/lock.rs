//! `lock`: the blocking acquire.

use lockcore::Call;
use serde::{Deserialize, Serialize};

use super::{Invalid, Kind, lease, millis};

/// `lock()` or `lock(lease)`: waits as long as it takes.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    /// The lease in ms; none starts the watchdog.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
    pub lease_ms: Option<u64>,
}

impl Kind for Lock {
    fn check(&self) -> Result<(), Invalid> {
        lease(self.lease_ms)
    }

    fn call(&self) -> Option<Call> {
        Some(Call::Lock {
            lease: millis(self.lease_ms),
        })
    }
}
