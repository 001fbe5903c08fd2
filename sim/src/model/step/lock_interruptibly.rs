//! `lock-interruptibly`: the acquire an interrupt ends.

use lockcore::Call;
use serde::{Deserialize, Serialize};

use super::{Invalid, Kind, lease, millis};

/// `lockInterruptibly()` or `lockInterruptibly(lease)`: like `lock`, but an `interrupt` fault ends it wherever it waits.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct LockInterruptibly {
    /// The lease in ms; none starts the watchdog.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
    pub lease_ms: Option<u64>,
}

impl Kind for LockInterruptibly {
    fn check(&self) -> Result<(), Invalid> {
        lease(self.lease_ms)
    }

    fn call(&self) -> Option<Call> {
        Some(Call::LockInterruptibly {
            lease: millis(self.lease_ms),
        })
    }
}
