//! The multi-lock's endings: `unlockInner` (every unlock at once, all
//! awaited), `unlock()` of the whole lock, and a leased acquire's
//! `expireAsync` of each lock it took.

use super::super::request::Owner;
use super::super::{LockClient, Purpose};
use super::{Attempt, MultiCall, Stage, Then};
use crate::{
    Call, CallOutcome, LockError, LockName, Millis, MultiKind, MultiLock, Switch, ThreadId,
    TransportError, Value,
};

impl LockClient {
    /// Every constituent answered: with a lease, each taken key expires
    /// after it (`expireAsync`, joined); then true.
    pub(super) fn multi_taken(&mut self, now: Millis, thread: ThreadId) {
        let Some(state) = self.multis.get_mut(&thread) else {
            return;
        };
        let Some(lease) = state.attempt.lease else {
            self.multi_return(thread, Ok(CallOutcome::Acquired { token: None }));
            return;
        };
        let locks: Vec<LockName> = (state.attempt.acquired.iter())
            .map(|&i| state.multi.locks()[i].clone())
            .collect();
        state.stage = Stage::Expiring(vec![None; locks.len()]);
        if locks.is_empty() {
            self.multi_return(thread, Ok(CallOutcome::Acquired { token: None }));
            return;
        }
        for (i, lock) in locks.into_iter().enumerate() {
            let command =
                super::super::command::expire(&self.switches, &self.wire.lock(&lock), lease);
            self.send(
                now,
                lock,
                Purpose::Expire,
                command,
                Owner::MultiExpire(thread, i),
            );
        }
    }

    /// `unlockInner(locks)`: every unlock at once; `then` once all
    /// answered, whatever they answered.
    pub(super) fn release(
        &mut self,
        now: Millis,
        thread: ThreadId,
        locks: Vec<LockName>,
        then: Then,
    ) {
        if let Some(state) = self.multis.get_mut(&thread) {
            state.stage = Stage::Releasing(locks.clone(), then);
        }
        if locks.is_empty() {
            self.after_release(now, thread, then);
            return;
        }
        for lock in locks {
            self.constituent_call(now, thread, lock, Call::Unlock);
        }
    }

    /// `unlock()` of the multi-lock.
    pub(super) fn start_multi_unlock(&mut self, now: Millis, thread: ThreadId, multi: &MultiLock) {
        let locks = multi.locks().to_vec();
        let in_order =
            multi.kind() == MultiKind::Multi && self.switches.has(Switch::MultiUnlockInOrder);
        let stage = match (multi.kind(), in_order) {
            (MultiKind::Red, _) => Stage::Releasing(locks.clone(), Then::Unlocked),
            (_, true) => Stage::UnlockingInOrder(0),
            (_, false) => Stage::UnlockingAll(vec![None; locks.len()]),
        };
        let state = MultiCall {
            multi: multi.clone(),
            repeat: None,
            round_wait: None,
            attempt: Attempt::unused(now),
            stage,
        };
        self.multis.insert(thread, state);
        match in_order {
            true => self.constituent_call(now, thread, locks[0].clone(), Call::Unlock),
            false => locks
                .into_iter()
                .for_each(|lock| self.constituent_call(now, thread, lock, Call::Unlock)),
        }
    }

    /// The `expireAsync` of taken lock `i` answered.
    pub(in crate::machine) fn on_multi_expired(
        &mut self,
        thread: ThreadId,
        i: usize,
        reply: Result<Value, TransportError>,
    ) {
        let Some(Stage::Expiring(answers)) = self.multis.get_mut(&thread).map(|s| &mut s.stage)
        else {
            return;
        };
        if let Some(answer) = answers.get_mut(i) {
            *answer = Some(reply.map(|_| ()).map_err(LockError::from));
        }
        if let Some(joined) = joined(answers) {
            let result = joined.map(|()| CallOutcome::Acquired { token: None });
            self.multi_return(thread, result);
        }
    }
}

/// `unlock()`'s answer: every lock released as far as the caller knows.
pub(super) fn unlocked() -> Result<CallOutcome, LockError> {
    Ok(CallOutcome::Unlocked { released: true })
}

/// Futures joined in order, once every one answered: the first error in
/// order, or success. Java's `join` throws at the first failed future in
/// order without waiting for the ones after it, which go on in the
/// background; here the call answers once they too have, so a thread
/// never has a call of its multi-lock in flight after the multi-lock's
/// own returned (a modelling limit: the throw comes later by the slowest
/// answer's delay).
pub(super) fn joined(answers: &[Option<Result<(), LockError>>]) -> Option<Result<(), LockError>> {
    if answers.iter().any(Option::is_none) {
        return None;
    }
    answers
        .iter()
        .flatten()
        .find_map(|answer| answer.clone().err())
        .map_or(Some(Ok(())), |error| Some(Err(error)))
}
