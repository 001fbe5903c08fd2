//! What a thread asks of the lock, and what it gets back.

use serde::{Deserialize, Serialize};

use crate::{FencingToken, Millis};

/// One API call of a thread on one lock (Redisson's `RLock` methods).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "call")]
pub enum Call {
    /// `lock()` / `lock(lease)`: wait as long as it takes.
    Lock {
        /// `None`: the watchdog keeps the lock alive.
        lease: Option<Millis>,
    },
    /// `lockInterruptibly()` / `lockInterruptibly(lease)`: like `lock`,
    /// but an interrupt also ends its wait on the latch.
    LockInterruptibly {
        /// `None`: the watchdog keeps the lock alive.
        lease: Option<Millis>,
    },
    /// `tryLock()` (one attempt, `wait: None`), `tryLock(wait)` and
    /// `tryLock(wait, lease)`.
    TryLock {
        /// How long to keep trying; `None` tries once.
        wait: Option<Millis>,
        /// `None`: the watchdog keeps the lock alive.
        lease: Option<Millis>,
    },
    /// `lockAsync()` / `lockAsync(lease)`: like `lock`, but nothing
    /// blocks: a held lock is waited for by a listener on the lock's
    /// channel, not on the latch, and an interrupt of the calling thread
    /// does not reach it (Redisson's `RedissonLock.lockAsync`).
    LockAsync {
        /// `None`: the watchdog keeps the lock alive.
        lease: Option<Millis>,
    },
    /// `tryLockAsync()`, `tryLockAsync(wait)` and `tryLockAsync(wait,
    /// lease)`: `tryLock` waiting by a listener, as `lockAsync` does.
    TryLockAsync {
        /// How long to keep trying; `None` tries once.
        wait: Option<Millis>,
        /// `None`: the watchdog keeps the lock alive.
        lease: Option<Millis>,
    },
    /// `RFencedLock.tryLockAndGetTokenAsync(wait, lease)`, which every
    /// token-returning method runs: the acquire that answers the fencing
    /// token, from a listener-based loop of its own that neither the
    /// retry wrapper nor the NoSync rollback wraps (RedissonFencedLock at
    /// redisson-4.7.0). Java's entry points map onto it as Redisson's
    /// source has them: `lockAndGetToken()` and `tryLockAndGetToken()`
    /// both pass wait -1 (unbounded: the no-argument `tryLockAndGetToken`
    /// waits as long as it takes), and the blocking
    /// `lockAndGetToken(lease, unit)` drops its lease (it calls
    /// `lockAndGetTokenAsync()`), so the watchdog keeps that hold.
    TryLockAndGetToken {
        /// How long to keep trying; `None` (Java's -1): unbounded.
        wait: Option<Millis>,
        /// `None`: the watchdog keeps the lock alive.
        lease: Option<Millis>,
    },
    /// `RFencedLock.getToken()`: the token key's value (`GET`), the last
    /// token handed out by anyone; 0 when there is none.
    GetToken,
    /// `unlock()`.
    Unlock,
    /// `forceUnlock()`: delete the lock whoever holds it.
    ForceUnlock,
    /// `isLocked()`.
    IsLocked,
    /// `isHeldByThread(threadId)` for the calling thread.
    IsHeldByThread,
    /// `getHoldCount()` for the calling thread.
    HoldCount,
    /// `remainTimeToLive()`: the key's PTTL (-2 absent, -1 no expiry).
    RemainTtl,
}

impl Call {
    /// Whether it takes the lock (`lock`, `lockInterruptibly`, `tryLock`).
    pub fn is_acquire(&self) -> bool {
        matches!(
            self,
            Call::Lock { .. }
                | Call::LockInterruptibly { .. }
                | Call::TryLock { .. }
                | Call::LockAsync { .. }
                | Call::TryLockAsync { .. }
                | Call::TryLockAndGetToken { .. }
        )
    }

    /// Whether it waits by a listener rather than on the latch
    /// (`lockAsync`, `tryLockAsync`, the fenced lock's token methods).
    pub fn is_async(&self) -> bool {
        matches!(
            self,
            Call::LockAsync { .. } | Call::TryLockAsync { .. } | Call::TryLockAndGetToken { .. }
        )
    }

    /// Whether it waits for a held lock (every acquire but `tryLock()`).
    pub fn waits(&self) -> bool {
        self.is_acquire()
            && !matches!(
                self,
                Call::TryLock { wait: None, .. } | Call::TryLockAsync { wait: None, .. }
            )
    }

    /// The lease an acquire asks for (`None`: the watchdog's, or not an
    /// acquire).
    pub fn lease(&self) -> Option<Millis> {
        match self {
            Call::Lock { lease }
            | Call::LockInterruptibly { lease }
            | Call::TryLock { lease, .. }
            | Call::LockAsync { lease }
            | Call::TryLockAsync { lease, .. }
            | Call::TryLockAndGetToken { lease, .. } => *lease,
            _ => None,
        }
    }
}

/// The successful result of a [`Call`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "outcome")]
pub enum CallOutcome {
    /// `lock` / `tryLock` acquired (or re-entered) the lock. `token` is set
    /// under the `fenced` profile, and by `RFencedLock`'s token methods.
    Acquired {
        /// The fencing token of this acquisition (`fenced`, or
        /// [`Call::TryLockAndGetToken`]).
        token: Option<FencingToken>,
    },
    /// `tryLock` gave up: the wait ran out.
    NotAcquired,
    /// `unlock` succeeded; `released` is false when the hold count only
    /// went down (a re-entrant hold remains).
    Unlocked {
        /// Whether the key was deleted and the unlock message published.
        released: bool,
    },
    /// The answer of a query or of `forceUnlock`.
    Bool(bool),
    /// `getHoldCount()`.
    Count(u64),
    /// `remainTimeToLive()` in ms: -2 when the key is absent, -1 when it has
    /// no expiry.
    Ttl(i64),
}
