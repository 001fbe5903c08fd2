//! [`RMultiLock`]: a handle on a [`MultiLock`] of a [`RedissonClient`],
//! as Redisson's `RedissonMultiLock` and `RedissonRedLock` objects.

use std::sync::Arc;

use super::{RedissonClient, Shared};
use crate::{Call, CallOutcome, LockError, LockName, MultiKind, MultiLock, ThreadId, Transport};

impl<T: Transport> RedissonClient<T> {
    /// A handle on a multi-lock of `kind` over `locks`, taken in this
    /// order (`getMultiLock(locks...)`, `new RedissonRedLock(locks...)`).
    pub fn multi_lock(
        &self,
        kind: MultiKind,
        locks: Vec<LockName>,
    ) -> Result<RMultiLock<T>, LockError> {
        Ok(RMultiLock {
            shared: Arc::clone(&self.shared),
            multi: MultiLock::new(kind, locks)?,
        })
    }
}

/// A handle on one multi-lock of a [`RedissonClient`]: its constituents
/// are the client's own locks (one client, one Redis). Every method takes
/// the calling thread, which must not be in another call.
pub struct RMultiLock<T: Transport> {
    shared: Arc<Shared<T>>,
    multi: MultiLock,
}

impl<T: Transport> std::fmt::Debug for RMultiLock<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RMultiLock")
            .field("multi", &self.multi)
            .finish_non_exhaustive()
    }
}

impl<T: Transport> RMultiLock<T> {
    /// The multi-lock.
    pub fn multi(&self) -> &MultiLock {
        &self.multi
    }

    /// `lock()`, `lockInterruptibly()`, `tryLock(...)` or `unlock()`, as
    /// [`LockClient::call_multi`](crate::LockClient::call_multi) takes
    /// them.
    pub async fn call(&self, thread: ThreadId, call: Call) -> Result<CallOutcome, LockError> {
        let multi = &self.multi;
        (self.shared)
            .run(thread, |machine, now| {
                machine.call_multi(now, thread, multi, call)
            })
            .await
    }

    /// `lock()`: takes every lock (a red lock: a majority), trying again
    /// until it does; each lock's watchdog keeps it.
    pub async fn lock(&self, thread: ThreadId) -> Result<(), LockError> {
        match self.call(thread, Call::Lock { lease: None }).await? {
            CallOutcome::Acquired { .. } => Ok(()),
            other => Err(super::unexpected(other)),
        }
    }

    /// `tryLock(wait)`: true when taken within `wait` ms.
    pub async fn try_lock(&self, thread: ThreadId, wait: u64) -> Result<bool, LockError> {
        let call = Call::TryLock {
            wait: Some(crate::Millis(wait)),
            lease: None,
        };
        match self.call(thread, call).await? {
            CallOutcome::Acquired { .. } => Ok(true),
            CallOutcome::NotAcquired => Ok(false),
            other => Err(super::unexpected(other)),
        }
    }

    /// `unlock()`.
    pub async fn unlock(&self, thread: ThreadId) -> Result<(), LockError> {
        self.call(thread, Call::Unlock).await.map(|_| ())
    }
}
