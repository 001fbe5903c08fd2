//! Who a call in flight belongs to: a thread, on one lock.
//!
//! A Java thread blocked in an `RLock` method makes one call at a time,
//! and most of the machine finds a call by its thread. But
//! `RedissonMultiLock` sends every constituent's `unlockAsync(threadId)`
//! at once (`unlockInner`, `unlockInnerAsync`, read at tag 4.7.0), so a
//! thread can have one unlock in flight per lock: a call is keyed by
//! both. An acquire, a query and a force-unlock are still the thread's
//! only call ([`LockClient::call`](crate::LockClient::call) refuses a
//! busy thread, and a multi-lock takes its locks one after another).

use super::{CallKind, CallState, LockClient, Output};
use crate::{CallOutcome, LockError};
use crate::{LockName, ThreadId};

/// A thread's call on a lock.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Caller {
    /// The calling thread (its hash field is `<uuid>:<thread>`).
    pub(crate) thread: ThreadId,
    /// The lock it calls on.
    pub(crate) lock: LockName,
}

impl Caller {
    /// `thread`'s call on `lock`.
    pub(crate) fn new(thread: ThreadId, lock: LockName) -> Caller {
        Caller { thread, lock }
    }
}

impl LockClient {
    /// `thread`'s call in flight (see [`Self::caller_of`]).
    pub(super) fn call_of(&self, thread: ThreadId) -> Option<&CallState> {
        self.calls
            .iter()
            .find(|(c, _)| c.thread == thread)
            .map(|(_, s)| s)
    }

    /// `thread`'s call in flight, to change.
    pub(super) fn call_of_mut(&mut self, thread: ThreadId) -> Option<&mut CallState> {
        let caller = self.caller_of(thread)?;
        self.calls.get_mut(&caller)
    }

    /// `thread`'s call in flight: its only one, except while a multi-lock
    /// unlocks its locks at once (then the first by lock).
    pub(super) fn caller_of(&self, thread: ThreadId) -> Option<Caller> {
        self.calls.keys().find(|c| c.thread == thread).cloned()
    }

    /// Ends `thread`'s call with `result` (an acquire, a query or a
    /// force-unlock: the thread's only call).
    pub(super) fn finish(&mut self, thread: ThreadId, result: Result<CallOutcome, LockError>) {
        if let Some(caller) = self.caller_of(thread) {
            self.finish_call(&caller, result);
        }
    }

    /// Ends `caller`'s call with `result`.
    pub(super) fn finish_call(&mut self, caller: &Caller, result: Result<CallOutcome, LockError>) {
        let Some(state) = self.calls.remove(caller) else {
            return;
        };
        let thread = caller.thread;
        self.no_sync_tries.remove(caller);
        if let CallKind::Acquire(acquiring) | CallKind::AcquireFailed(acquiring) = &state.kind {
            self.leave_acquire(thread, &state.lock, acquiring);
        }
        if self.keeps_for_multi(caller, &result) {
            return;
        }
        self.push(Output::Return {
            thread,
            lock: state.lock,
            result,
        });
    }
}
