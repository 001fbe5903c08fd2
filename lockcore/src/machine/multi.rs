//! `RedissonMultiLock` and `RedissonRedLock`: one acquire over several
//! locks, made of the constituents' own calls.
//!
//! Read at tags redisson-3.8.2, 3.11.0, 3.16.0, 3.17.0, 3.27.1 and 4.7.0
//! (`RedissonMultiLock.java`, `RedissonRedLock.java`). The blocking
//! `tryLock(waitTime, leaseTime)`:
//!
//! - Each constituent in order is taken by the calling thread with its
//!   own `tryLock()` (no wait and no lease) or `tryLock(min(lockWaitTime,
//!   remainTime), newLeaseTime)`: `newLeaseTime` is twice the wait when a
//!   lease is asked (the lease itself without a wait), else the
//!   watchdog's; `lockWaitTime` is the wait (a red lock's:
//!   `max(remain / n, 1)`).
//! - A constituent whose `tryLock` timed out on the wire is unlocked
//!   (`unlockInner`), since its acquire may have run (3.8.2, #1606); any
//!   failure, an interrupt included (`catch (Exception e)`), counts as
//!   not taken.
//! - Not taken, with no failure left to spend (a multi-lock has none; a
//!   red lock its minority): the taken ones are unlocked; with no wait
//!   the call answers false, else it starts again from the first lock.
//!   A red lock that has failed exactly its minority stops and holds.
//! - After each constituent the wait left shrinks by the time spent;
//!   spent, the taken ones are unlocked and the call answers false.
//! - Done, with a lease: each taken lock's key expires after the lease
//!   (`expireAsync`, joined in order).
//!
//! `unlockInner` sends every unlock at once and waits for all, ignoring
//! their errors. `lock()` and `lockInterruptibly()` loop `tryLock(wait,
//! lease)` with a wait of 1 500 ms per lock, or one drawn from the lease;
//! an interrupt does not end them (the constituent's exception is caught).
//! `unlock()` of a multi-lock sends every unlock at once and throws the
//! first error in lock order (to 3.27.1), or unlocks one lock after
//! another and stops at the first error (3.27.2); a red lock's is
//! `unlockInner`.
//!
//! Each constituent call is an ordinary call of the thread (its own
//! renewal, latch and retries); its answer comes back here instead of
//! to the driver, and the driver sees one [`Output::Return`] for the
//! whole call, named by the first lock.

use rand::RngExt;

mod release;

use release::{joined, unlocked};

use super::{Caller, LockClient, Output};
use crate::{
    Call, CallOutcome, LockError, LockName, Millis, MultiKind, MultiLock, Switch, ThreadId,
    TransportError,
};

/// A thread's multi-lock call in flight.
#[derive(Debug)]
pub(super) struct MultiCall {
    multi: MultiLock,
    /// `lock()` / `lockInterruptibly()`: tries again until taken, with
    /// this lease.
    repeat: Option<Option<Millis>>,
    /// Before 3.17.0 (#4050): the wait of every round, drawn once.
    round_wait: Option<Millis>,
    attempt: Attempt,
    stage: Stage,
}

/// One `tryLock(waitTime, leaseTime)`: Redisson's local variables.
#[derive(Debug, Clone)]
struct Attempt {
    wait: Option<Millis>,
    lease: Option<Millis>,
    /// The lease each constituent is asked for (`None`: the watchdog's).
    new_lease: Option<Millis>,
    /// The wait left (`None`: Java's -1, no wait).
    remain: Option<i64>,
    /// When `remain` was last brought up to date.
    time: Millis,
    lock_wait: Option<i64>,
    failed_limit: usize,
    acquired: Vec<usize>,
    next: usize,
}

#[derive(Debug)]
enum Stage {
    /// Constituent `i`'s `tryLock` is in flight.
    Acquiring(usize),
    /// `unlockInner`: these unlocks are in flight; then `then`.
    Releasing(Vec<LockName>, Then),
    /// `expireAsync` of each taken lock, joined in order: each one's
    /// answer once it came.
    Expiring(Vec<Option<Result<(), LockError>>>),
    /// `unlock()` from 3.27.2: lock `i`'s, then the next.
    UnlockingInOrder(usize),
    /// `unlock()` to 3.27.1: every unlock at once, each one's answer.
    UnlockingAll(Vec<Option<Result<(), LockError>>>),
}

/// What follows an `unlockInner`.
#[derive(Debug, Clone, Copy)]
enum Then {
    /// A timed-out constituent was unlocked: go on as not taken.
    NotTaken,
    /// No failure left: answer false without a wait, else start again.
    Restart,
    /// The wait is spent: answer false.
    GiveUp,
    /// A red lock's `unlock()` is done.
    Unlocked,
}

impl LockClient {
    /// Starts `call` of `thread` on the multi-lock `multi`: `lock()`,
    /// `lockInterruptibly()`, `tryLock()`, `tryLock(wait)`,
    /// `tryLock(wait, lease)` (the watchdog's for `None`) or `unlock()`.
    /// Its result arrives as one [`Output::Return`] naming the first
    /// lock. Refused at once, with nothing sent: a busy thread, a zero
    /// wait or lease, another call (the async forms, the queries,
    /// `forceUnlock`: [`LockError::Unmodelled`]), and a constituent the
    /// release does not model.
    pub fn call_multi(
        &mut self,
        now: Millis,
        thread: ThreadId,
        multi: &MultiLock,
        call: Call,
    ) -> Result<(), LockError> {
        if self.is_busy(thread) {
            return Err(LockError::ThreadBusy(thread));
        }
        let lease = call.lease();
        super::check_lease(lease)?;
        for lock in multi.locks() {
            let kind = lock.kind();
            let refused = kind.too_old(self.config.release);
            if let Some(why) = refused.or_else(|| kind.unmodelled(&self.switches, lease.is_none()))
            {
                return Err(LockError::Unmodelled(why));
            }
        }
        if lease.is_some()
            && multi
                .locks()
                .iter()
                .any(|l| l.kind() != crate::LockKind::Lock)
        {
            // Each kind's `expireAsync` covers its own keys (the fair
            // lock's queue and timeout set, the fenced lock's token).
            return Err(LockError::Unmodelled(
                "a leased multi-lock acquire over locks other than RLock",
            ));
        }
        let (repeat, attempt) = match call {
            Call::Lock { lease } | Call::LockInterruptibly { lease } => (Some(lease), None),
            Call::TryLock { wait, lease } => {
                if wait == Some(Millis(0)) {
                    return Err(LockError::InvalidWait(0));
                }
                if wait.is_none()
                    && lease.is_some()
                    && !self.switches.has(Switch::MultiTryLockLease)
                {
                    return Err(LockError::Unmodelled(
                        "a multi-lock's tryLock(-1, lease) before 3.11.1 (#2172: each lock is asked for a lease of -2 ms)",
                    ));
                }
                (None, Some(self.multi_attempt(now, multi, wait, lease)))
            }
            Call::Unlock => {
                self.start_multi_unlock(now, thread, multi);
                self.settle(now);
                return Ok(());
            }
            _ => {
                return Err(LockError::Unmodelled(
                    "a multi-lock's async methods, queries and forceUnlock",
                ));
            }
        };
        let mut state = MultiCall {
            multi: multi.clone(),
            repeat,
            round_wait: None,
            attempt: Attempt::unused(now),
            stage: Stage::Acquiring(0),
        };
        state.attempt = match attempt {
            Some(attempt) => attempt,
            None => self.next_round(now, &mut state),
        };
        self.multis.insert(thread, state);
        self.multi_step(now, thread);
        self.settle(now);
        Ok(())
    }

    /// A `tryLock(wait, lease)` of `multi` starting at `now`.
    fn multi_attempt(
        &self,
        now: Millis,
        multi: &MultiLock,
        wait: Option<Millis>,
        lease: Option<Millis>,
    ) -> Attempt {
        let new_lease = lease.map(|lease| match wait {
            Some(wait) => Millis(wait.0.saturating_mul(2)),
            None => lease,
        });
        let remain = wait.map(|w| w.0 as i64);
        Attempt {
            wait,
            lease,
            new_lease,
            remain,
            time: now,
            lock_wait: remain.map(|r| self.lock_wait_time(multi, r)),
            failed_limit: multi.failed_locks_limit(),
            acquired: Vec::new(),
            next: 0,
        }
    }

    /// `calcLockWaitTime(remainTime)`: the whole wait for a multi-lock;
    /// a red lock's share of it, at least 1 ms (3.6.3, #1292; 1 000 ms
    /// from 3.5.7, #1175; the whole wait before).
    fn lock_wait_time(&self, multi: &MultiLock, remain: i64) -> i64 {
        let n = multi.locks().len() as i64;
        match multi.kind() {
            MultiKind::Red if self.switches.has(Switch::RedLockWaitFloor) => (remain / n).max(1),
            MultiKind::Red if self.switches.has(Switch::RedLockWaitShare) => {
                (remain / n).max(self.config.fixed(1_000).0 as i64)
            }
            _ => remain,
        }
    }

    /// The next round of `lock()` / `lockInterruptibly()`: `tryLock`
    /// with 1 500 ms per lock, or with a wait drawn from the lease (each
    /// round from 3.17.0, #4050; once, and at least 2 000 ms, before).
    fn next_round(&mut self, now: Millis, state: &mut MultiCall) -> Attempt {
        let lease = state.repeat.flatten();
        let base = self.config.fixed(1_500).0 * state.multi.locks().len() as u64;
        let wait = match (lease, state.round_wait) {
            (None, _) => Millis(base),
            (Some(_), Some(wait)) => wait,
            (Some(lease), None) => {
                let each_round = self.switches.has(Switch::MultiWaitEachRound);
                let wait = match lease.0 {
                    l if !each_round && l <= self.config.fixed(2_000).0 => {
                        self.config.fixed(2_000).0
                    }
                    l if l <= base => self.multi_rng.random_range(l / 2..l.max(1)),
                    l => self.multi_rng.random_range(base..l),
                };
                if !each_round {
                    state.round_wait = Some(Millis(wait));
                }
                Millis(wait)
            }
        };
        // A drawn wait of 0 (a lease of 1 ms) is `tryLock(0, lease)`:
        // no wait, as from 3.17.1 (#4033).
        let wait = Some(wait).filter(|w| w.0 > 0);
        self.multi_attempt(now, &state.multi, wait, lease)
    }

    /// The loop's head: the next constituent, or the end of the acquire.
    fn multi_step(&mut self, now: Millis, thread: ThreadId) {
        let Some(state) = self.multis.get_mut(&thread) else {
            return;
        };
        let a = &mut state.attempt;
        if a.next >= state.multi.locks().len() {
            self.multi_taken(now, thread);
            return;
        }
        let i = a.next;
        a.next += 1;
        state.stage = Stage::Acquiring(i);
        let call = match (a.wait, a.lease) {
            (None, None) => Call::TryLock {
                wait: None,
                lease: None,
            },
            _ => {
                let wait = match (a.lock_wait, a.remain) {
                    (Some(w), Some(r)) => Some(w.min(r)),
                    _ => None,
                };
                Call::TryLock {
                    // Redisson's `tryLock(w <= 0, lease)` tries once.
                    wait: wait.filter(|w| *w > 0).map(|w| Millis(w as u64)),
                    lease: a.new_lease,
                }
            }
        };
        let lock = state.multi.locks()[i].clone();
        self.constituent_call(now, thread, lock, call);
    }

    /// The multi-lock call of `thread` makes `call` on `lock`, told to
    /// the driver ([`Output::Constituent`]).
    pub(super) fn constituent_call(
        &mut self,
        now: Millis,
        thread: ThreadId,
        lock: LockName,
        call: Call,
    ) {
        self.push(Output::Constituent {
            thread,
            lock: lock.clone(),
            call: call.clone(),
        });
        if let Err(error) = self.start_call(now, thread, lock.clone(), call) {
            self.push(Output::ConstituentReturn {
                thread,
                lock: lock.clone(),
                result: Err(error.clone()),
            });
            self.multi_results
                .push_back((Caller::new(thread, lock), Err(error)));
        }
    }

    /// The taken locks' names.
    fn taken(&self, thread: ThreadId) -> Vec<LockName> {
        self.multis.get(&thread).map_or_else(Vec::new, |state| {
            let locks = state.multi.locks();
            state
                .attempt
                .acquired
                .iter()
                .map(|&i| locks[i].clone())
                .collect()
        })
    }

    /// Constituent `i` answered its `tryLock`.
    fn constituent_answered(
        &mut self,
        now: Millis,
        thread: ThreadId,
        result: Result<CallOutcome, LockError>,
    ) {
        let Some(Stage::Acquiring(i)) = self.multis.get(&thread).map(|s| &s.stage) else {
            return;
        };
        let i = *i;
        let unlocks = match &result {
            Err(LockError::Transport(TransportError::Timeout)) => {
                self.switches.has(Switch::MultiTimeoutUnlocks)
            }
            // 3.8.2 to 3.9.x caught `RedisConnectionClosedException` too.
            Err(LockError::Transport(TransportError::Connection(_))) => {
                self.switches.has(Switch::MultiTimeoutUnlocks)
                    && !self.switches.has(Switch::ConnectionClosedRemoved)
            }
            _ => false,
        };
        if unlocks {
            let lock = self.multis[&thread].multi.locks()[i].clone();
            self.release(now, thread, vec![lock], Then::NotTaken);
            return;
        }
        let taken = matches!(result, Ok(CallOutcome::Acquired { .. }));
        self.after_constituent(now, thread, i, taken);
    }

    /// The loop's body after constituent `i`, taken or not.
    fn after_constituent(&mut self, now: Millis, thread: ThreadId, i: usize, taken: bool) {
        let Some(state) = self.multis.get_mut(&thread) else {
            return;
        };
        let n = state.multi.locks().len();
        let limit = state.multi.failed_locks_limit();
        let a = &mut state.attempt;
        if taken {
            a.acquired.push(i);
        } else if n - a.acquired.len() == limit {
            self.multi_taken(now, thread);
            return;
        } else if a.failed_limit == 0 {
            let taken = self.taken(thread);
            self.release(now, thread, taken, Then::Restart);
            return;
        } else {
            a.failed_limit -= 1;
        }
        self.check_remain(now, thread);
    }

    /// After a constituent: the wait left shrinks; spent, the taken locks
    /// are unlocked and the call answers false.
    fn check_remain(&mut self, now: Millis, thread: ThreadId) {
        let Some(state) = self.multis.get_mut(&thread) else {
            return;
        };
        let a = &mut state.attempt;
        if let Some(remain) = a.remain.as_mut()
            && *remain > 0
        {
            *remain -= now.minus(a.time).0 as i64;
            a.time = now;
            if *remain <= 0 {
                let taken = self.taken(thread);
                self.release(now, thread, taken, Then::GiveUp);
                return;
            }
        }
        self.multi_step(now, thread);
    }

    fn after_release(&mut self, now: Millis, thread: ThreadId, then: Then) {
        let Some(state) = self.multis.get_mut(&thread) else {
            return;
        };
        match then {
            Then::NotTaken => {
                let i = state.attempt.next.saturating_sub(1);
                self.after_constituent(now, thread, i, false);
            }
            Then::Restart => {
                if state.attempt.wait.is_none() {
                    self.multi_failed(now, thread);
                    return;
                }
                let a = &mut state.attempt;
                a.failed_limit = state.multi.failed_locks_limit();
                a.acquired.clear();
                a.next = 0;
                self.check_remain(now, thread);
            }
            Then::GiveUp => self.multi_failed(now, thread),
            Then::Unlocked => self.multi_return(thread, unlocked()),
        }
    }

    /// The `tryLock` answered false: the call's answer, or the next round
    /// of `lock()`.
    fn multi_failed(&mut self, now: Millis, thread: ThreadId) {
        let Some(mut state) = self.multis.remove(&thread) else {
            return;
        };
        if state.repeat.is_none() {
            self.multis.insert(thread, state);
            self.multi_return(thread, Ok(CallOutcome::NotAcquired));
            return;
        }
        state.attempt = self.next_round(now, &mut state);
        self.multis.insert(thread, state);
        self.multi_step(now, thread);
    }

    /// A constituent call of `caller` answered.
    fn multi_answered(
        &mut self,
        now: Millis,
        caller: Caller,
        result: Result<CallOutcome, LockError>,
    ) {
        let thread = caller.thread;
        let Some(state) = self.multis.get_mut(&thread) else {
            return;
        };
        let index = state.multi.locks().iter().position(|l| *l == caller.lock);
        let n = state.multi.locks().len();
        match &mut state.stage {
            Stage::Acquiring(i) if Some(*i) == index => {
                self.constituent_answered(now, thread, result)
            }
            Stage::Releasing(pending, then) => {
                let then = *then;
                pending.retain(|l| *l != caller.lock);
                if pending.is_empty() {
                    self.after_release(now, thread, then);
                }
            }
            Stage::UnlockingInOrder(i) if Some(*i) == index => {
                let next = *i + 1;
                match result {
                    Err(error) => self.multi_return(thread, Err(error)),
                    Ok(_) if next == n => self.multi_return(thread, unlocked()),
                    Ok(_) => {
                        state.stage = Stage::UnlockingInOrder(next);
                        let lock = state.multi.locks()[next].clone();
                        self.constituent_call(now, thread, lock, Call::Unlock);
                    }
                }
            }
            Stage::UnlockingAll(answers) => {
                if let Some(i) = index {
                    answers[i] = Some(result.map(|_| ()));
                }
                if let Some(joined) = joined(answers) {
                    self.multi_return(thread, joined.and_then(|()| unlocked()));
                }
            }
            _ => {}
        }
    }

    /// Ends `thread`'s multi-lock call.
    fn multi_return(&mut self, thread: ThreadId, result: Result<CallOutcome, LockError>) {
        let Some(state) = self.multis.remove(&thread) else {
            return;
        };
        let lock = state.multi.locks()[0].clone();
        self.push(Output::Return {
            thread,
            lock,
            result,
        });
    }

    /// Whether `caller`'s answer belongs to a multi-lock call (then it is
    /// kept for [`Self::settle`], not returned).
    pub(super) fn keeps_for_multi(
        &mut self,
        caller: &Caller,
        result: &Result<CallOutcome, LockError>,
    ) -> bool {
        if !self.multis.contains_key(&caller.thread) {
            return false;
        }
        self.push(Output::ConstituentReturn {
            thread: caller.thread,
            lock: caller.lock.clone(),
            result: result.clone(),
        });
        self.multi_results
            .push_back((caller.clone(), result.clone()));
        true
    }

    /// Hands the constituents' answers of this input to their multi-lock
    /// calls, which may make more calls: each input's last step.
    pub(super) fn settle(&mut self, now: Millis) {
        while let Some((caller, result)) = self.multi_results.pop_front() {
            self.multi_answered(now, caller, result);
        }
    }
}

impl Attempt {
    /// No `tryLock` (an `unlock()`, or before the first round).
    fn unused(now: Millis) -> Attempt {
        Attempt {
            wait: None,
            lease: None,
            new_lease: None,
            remain: None,
            time: now,
            lock_wait: None,
            failed_limit: 0,
            acquired: Vec::new(),
            next: 0,
        }
    }
}

/// The stream of a multi-lock's drawn waits: the config's jitter seed,
/// on a stream of its own (the retry pauses draw stream 0).
pub(super) fn multi_rng(seed: u64) -> rand_chacha::ChaCha8Rng {
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(1);
    rng
}
