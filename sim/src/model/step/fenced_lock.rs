//! `fenced-lock`: the blocking acquire of Redisson's `RFencedLock`.

use lockcore::{Call, LockKind};
use serde::{Deserialize, Serialize};

use super::{Invalid, Kind, lease, millis};

/// `fencedLock.lock()` or `lock(lease)` (`lockAsync` with `async`):
/// `RLock`'s wait, with a script that also `INCR`s the lock's token key
/// `redisson_lock_token:{K}` (the token is not returned; see
/// `fenced-lock-and-get-token`). The thread's lock steps are then all on
/// its fenced lock. Not locksim's own `fenced` profile.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct FencedLock {
    /// The lease in ms; none starts the watchdog.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
    pub lease_ms: Option<u64>,
    /// `lockAsync`: waits by a listener on its channel, not on the latch.
    // Left out when false, so the step reads back as `lock` / `try-lock`
    // when a drawn lock type is undone.
    #[serde(default, rename = "async", skip_serializing_if = "std::ops::Not::not")]
    pub is_async: bool,
}

impl Kind for FencedLock {
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
        Some(LockKind::Fenced)
    }
}
