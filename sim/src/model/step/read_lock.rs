//! `read-lock`: the blocking acquire of an `RReadWriteLock`'s read lock.

use lockcore::{Call, LockKind};
use serde::{Deserialize, Serialize};

use super::{Invalid, Kind, lease, millis};

/// `readWriteLock.readLock().lock()` or `lock(lease)` (`lockAsync` with
/// `async`): waits as long as it takes. The thread's lock steps are then
/// all on its read lock.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct ReadLock {
    /// The lease in ms; none starts the watchdog.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
    pub lease_ms: Option<u64>,
    /// `lockAsync`: waits by a listener on its channel, not on the latch.
    #[serde(default, rename = "async")]
    pub is_async: bool,
}

impl Kind for ReadLock {
    fn check(&self) -> Result<(), Invalid> {
        lease(self.lease_ms)
    }

    fn call(&self) -> Option<Call> {
        let lease = millis(self.lease_ms);
        Some(if self.is_async {
            Call::LockAsync { lease }
        } else {
            Call::Lock { lease }
        })
    }

    fn object(&self) -> Option<LockKind> {
        Some(LockKind::Read)
    }
}
