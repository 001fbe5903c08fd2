//! `fenced-lock-and-get-token`: `RFencedLock.lockAndGetToken`, the
//! blocking acquire that returns the fencing token.

use lockcore::{Call, LockKind};
use serde::{Deserialize, Serialize};

use super::{Invalid, Kind, lease, millis};

/// `fencedLock.lockAndGetToken()` or `lockAndGetToken(lease, unit)`
/// (`lockAndGetTokenAsync(lease, unit)` with `async`): waits as long as it
/// takes, and the token it returns is the thread's from then on (its
/// writes carry it). As in Redisson's source (RedissonFencedLock at
/// redisson-3.19.0 to redisson-4.7.0), the blocking form with a lease
/// calls `lockAndGetTokenAsync()` and drops the lease, so the watchdog
/// keeps that hold; only the async form passes it on.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct FencedLockAndGetToken {
    /// The lease in ms; none starts the watchdog (as does any lease of
    /// the blocking form).
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
    pub lease_ms: Option<u64>,
    /// `lockAndGetTokenAsync`: the only form that keeps its lease.
    // Left out when false, so the step reads back as `lock` / `try-lock`
    // when a drawn lock type is undone.
    #[serde(default, rename = "async", skip_serializing_if = "std::ops::Not::not")]
    pub is_async: bool,
}

impl Kind for FencedLockAndGetToken {
    fn check(&self) -> Result<(), Invalid> {
        lease(self.lease_ms)
    }

    fn call(&self) -> Option<Call> {
        let lease = if self.is_async {
            millis(self.lease_ms)
        } else {
            None
        };
        Some(Call::TryLockAndGetToken { wait: None, lease })
    }

    fn object(&self) -> Option<LockKind> {
        Some(LockKind::Fenced)
    }
}
