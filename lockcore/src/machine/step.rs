//! Callbacks in steps: where two of one client's callbacks can interleave.
//!
//! Redisson runs a command's callbacks on whichever Netty thread completes
//! it, so the callbacks of two replies can run at the same time, and
//! whatever one does in several steps another can come between. The
//! machine handles one input at a time. With interleaving on
//! ([`LockClient::interleave`]), at such a point it stops the callback,
//! hands the driver an [`Output::Step`], and goes on when the driver calls
//! [`LockClient::resume`]; a driver that first delivers other inputs plays
//! the race. With it off (the default) the callback runs on at once, in
//! Redisson's usual order, and no step is ever emitted.
//!
//! The points modelled:
//! - `cancelExpirationRenewal` before 4.4.0 (`atomic-renewal-map`, commit
//!   dc4cdf096, #6844): it took the thread off the lock's entry, found it
//!   empty, and only then removed the entry from the map; a thread that
//!   joined the entry in between lost its renewal with it.
//! - the arm after an acquire whose thread was interrupted (#7272): the
//!   acquire's callback and the thread's unlock's callback are not
//!   ordered, so the cancel can run first and the arm outlive the unlock.
//! - the batched renewal round before 3.45.1 (`round-skips-removed-lock`,
//!   #6472): it read the renewal map's keys and then looked each entry
//!   up; an unlock in between made the lookup null and the round threw.
//! - an async acquire that found the latch without a permit, before it
//!   registers its listener (`lockAsync`, `tryLockAsync`; before 3.28.0,
//!   `listener-rechecks-latch`, #5761): an unlock message handled in
//!   between found no listener to run.

use super::{LockClient, Output};
use crate::{CallOutcome, LockError, LockName, Millis, StepId, ThreadId};

/// The rest of a paused callback.
#[derive(Debug, Clone)]
pub(super) enum Continuation {
    /// Remove the lock's renewal entry, whoever joined it since; then
    /// answer the unlock whose callback this is, if it is still owed
    /// (`unlockAsync0` completes its future only after
    /// `cancelExpirationRenewal` returned, so the unlocking thread itself
    /// cannot come between).
    RemoveEntry(LockName, Option<Box<Answer>>),
    /// Arm the watchdog for the thread (`scheduleExpirationRenewal`).
    Arm(LockName, ThreadId),
    /// Look up the entries of the locks a batched round read, and renew.
    Round(Vec<LockName>),
    /// Register an async call's listener, with its wait (ms; none: until
    /// a message).
    Listen(ThreadId, Option<i64>),
}

/// A call's answer, held back until a paused callback has finished.
pub(super) type Answer = (super::Caller, Result<CallOutcome, LockError>);

impl LockClient {
    /// Stops the callback here for the driver to resume, or, with
    /// interleaving off, goes on at once. The step, when it stopped.
    pub(super) fn pause_callback(&mut self, now: Millis, rest: Continuation) -> Option<StepId> {
        if !self.interleaving {
            self.continue_with(now, rest);
            return None;
        }
        let step = StepId(self.next_step);
        self.next_step += 1;
        self.steps.insert(step, rest);
        self.push(Output::Step { step });
        Some(step)
    }

    /// Answers `answer`'s call once the removal paused at `step` has run.
    pub(super) fn answer_after(&mut self, step: StepId, answer: Answer) {
        match self.steps.get_mut(&step) {
            Some(Continuation::RemoveEntry(_, owed)) => *owed = Some(Box::new(answer)),
            _ => self.finish_call(&answer.0, answer.1),
        }
    }

    pub(super) fn run_step(&mut self, now: Millis, step: StepId) {
        if let Some(rest) = self.steps.remove(&step) {
            self.continue_with(now, rest);
        }
    }

    fn continue_with(&mut self, now: Millis, rest: Continuation) {
        match rest {
            Continuation::RemoveEntry(lock, owed) => {
                self.remove_entry(&lock, "unlocked");
                if let Some(answer) = owed {
                    let (caller, result) = *answer;
                    self.finish_call(&caller, result);
                }
            }
            Continuation::Arm(lock, thread) => self.schedule_renewal(now, &lock, thread),
            Continuation::Round(locks) => self.batched_round(now, locks),
            Continuation::Listen(thread, wait_for) => self.listen(now, thread, wait_for),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{Harness, release};
    use crate::Value;
    use crate::{Call, CallOutcome, Purpose, ThreadId};

    const T1: ThreadId = ThreadId(1);
    const T2: ThreadId = ThreadId(2);

    /// #6844: t1 holds; t1's unlock callback pauses after finding the
    /// entry empty; t2's acquire callback joins the entry; t1's
    /// callback goes on and removes it. Before 4.4.0 t2 is never renewed.
    fn t2_renewed_after_race(version: &str) -> bool {
        let mut h = Harness::short(release(version));
        h.m.interleave(true);
        h.hold_steps = true;
        h.acquire(T1, "l");
        h.call(T1, "l", Call::Unlock).unwrap();
        let unlock = h.expect(Purpose::Unlock);
        h.call(T2, "l", Call::Lock { lease: None }).unwrap();
        let acquire = h.expect(Purpose::Acquire);
        h.reply(unlock, Value::Int(1));
        let paused = h.take_steps();
        h.reply(acquire, Value::Nil);
        assert!(matches!(
            h.returned(T2),
            Some(Ok(CallOutcome::Acquired { .. }))
        ));
        for step in paused {
            h.resume(step);
        }
        h.advance(1_500);
        // A batched round pauses too (`round-skips-removed-lock`).
        for step in h.take_steps() {
            h.resume(step);
        }
        h.sends().contains(&Purpose::Renew)
    }

    #[test]
    fn before_4_4_0_a_cancel_removes_the_entry_a_sibling_just_joined() {
        assert!(!t2_renewed_after_race("4.3.1"));
        assert!(t2_renewed_after_race("4.4.0"));
        assert!(!t2_renewed_after_race("3.23.4"));
    }

    /// `unlockAsync0` (3.44.0, `RedissonBaseLock`) completes the unlock's
    /// future only after `cancelExpirationRenewal` returned: a thread whose
    /// cancel is paused is answered when it goes on, so its own next lock
    /// cannot join the entry the cancel is about to remove (3.44.0 seed
    /// 1906 of the two-lock generator: it did, and lost its renewal).
    #[test]
    fn an_unlock_answers_after_its_paused_cancel() {
        let mut h = Harness::short(release("4.3.1"));
        h.m.interleave(true);
        h.hold_steps = true;
        h.acquire(T1, "l");
        h.call(T1, "l", Call::Unlock).unwrap();
        let unlock = h.expect(Purpose::Unlock);
        h.reply(unlock, Value::Int(1));
        let paused = h.take_steps();
        assert_eq!(paused.len(), 1);
        assert!(h.m.is_busy(T1), "answered before its cancel ran");
        h.resume(paused[0]);
        assert!(matches!(
            h.expect_event(),
            crate::Event::RenewalStopped { .. }
        ));
        assert_eq!(
            h.until_return(T1).1,
            Ok(CallOutcome::Unlocked { released: true })
        );
    }

    /// With interleaving off, no step is emitted: the cancel runs through.
    #[test]
    fn without_interleaving_the_order_is_redissons() {
        let mut h = Harness::short(release("4.3.1"));
        h.acquire(T1, "l");
        h.call(T1, "l", Call::Unlock).unwrap();
        let unlock = h.expect(Purpose::Unlock);
        h.reply(unlock, Value::Int(1));
        assert!(matches!(
            h.expect_event(),
            crate::Event::RenewalStopped { .. }
        ));
        assert!(h.m.steps.is_empty());
    }
}
