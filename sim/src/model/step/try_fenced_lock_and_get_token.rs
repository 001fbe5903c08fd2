//! `try-fenced-lock-and-get-token`: `RFencedLock.tryLockAndGetToken`.

use lockcore::{Call, LockKind};
use serde::{Deserialize, Serialize};

use super::{Invalid, Kind, lease, millis, wait_or_lease};

/// `fencedLock.tryLockAndGetToken(wait, lease, unit)` (or its async
/// form, the same call): the acquire that returns the fencing token, or
/// gives up when its wait is spent (Java's null: a failure skips the rest
/// of the enclosing block). Without `wait_ms` it is Redisson's
/// `tryLockAndGetToken()`, which passes a wait of -1 and so waits as long
/// as it takes (RedissonFencedLock at redisson-3.19.0 to redisson-4.7.0).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct TryFencedLockAndGetToken {
    /// How long to keep trying, in ms; none waits as long as it takes.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
    pub wait_ms: Option<u64>,
    /// The lease in ms; none starts the watchdog.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
    pub lease_ms: Option<u64>,
}

impl Kind for TryFencedLockAndGetToken {
    fn check(&self) -> Result<(), Invalid> {
        lease(self.lease_ms)?;
        wait_or_lease("wait_ms", self.wait_ms)
    }

    fn call(&self) -> Option<Call> {
        let (wait, lease) = (millis(self.wait_ms), millis(self.lease_ms));
        Some(Call::TryLockAndGetToken { wait, lease })
    }

    fn object(&self) -> Option<LockKind> {
        Some(LockKind::Fenced)
    }
}
