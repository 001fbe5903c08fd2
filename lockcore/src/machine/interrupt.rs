//! `Thread.interrupt()` of a thread whose acquiring call is in flight.
//!
//! (`lockAsync` and `tryLockAsync` block no thread, so an interrupt does
//! not reach them.)
//!
//! Redisson's synchronous calls wait on a future. An interrupt ends the
//! wait: `tryLock` and `lockInterruptibly` throw `InterruptedException`,
//! and any synchronous round trip (`CommandAsyncService.get`: the attempt
//! of `lock()` too, and its subscription) throws a `RedisException`
//! wrapping it. Only `lock()` waiting on the latch waits again
//! (`RedissonLock.lock`, 4.7.0: `acquireUninterruptibly`, or the `catch`
//! that retries `tryAcquire(ttl)`).
//!
//! The acquire script, once sent, runs on Redis whatever the thread does.
//! What its late reply does is where the releases differ:
//! - to 3.16.2 the reply's callback arms the watchdog for a thread that
//!   gave up: the lock is renewed for ever with no holder (#2714);
//! - 3.16.3 (`interrupt-cancels-acquire`, PR #3826) cancels the future
//!   the thread waited on, which is the acquire's own, so the callback
//!   never runs: the key lives out its first lease and expires;
//! - 3.20.1 (`acquire-retry-wrapper`, commit 65320f76f for #4822) wraps
//!   the acquire in `ServiceManager.execute`, whose result is a new
//!   future: the cancel no longer reaches the callback, and the watchdog
//!   is armed again (reported as #5358; with an `unlock()` after the
//!   interrupt, it is #7272, still open in 4.7.0);
//! - `interrupted-acquire-unlocks` (PR #7277, unmerged) drops the watchdog
//!   of an acquire whose caller is gone and unlocks.

use crate::Value;

use super::acquire::{Phase, Wait};
use super::command::{self, AcquireReply};
use super::request::Owner;
use super::{CallKind, Caller, LockClient, Purpose};
use crate::{LockError, LockName, Millis, Switch, ThreadId, TransportError};

/// An acquire script still on the wire after its thread was interrupted.
#[derive(Debug, Clone)]
pub(crate) struct Abandoned {
    pub(super) lock: LockName,
    pub(super) thread: ThreadId,
    pub(super) lease: Option<Millis>,
    /// How the call waited (the fair lock's script says so).
    pub(super) waits: crate::kind::Waits,
    /// `RFencedLock`'s token methods: their own script, no rollback.
    pub(super) token: bool,
    /// Its tries again for too few synced replicas so far (3.20.1+).
    pub(super) tries: u32,
}

impl LockClient {
    pub(super) fn handle_interrupt(&mut self, now: Millis, thread: ThreadId) -> bool {
        let Some(state) = self.call_of(thread) else {
            return false;
        };
        let CallKind::Acquire(acquiring) = &state.kind else {
            return false;
        };
        // An async call's future waits for no thread: the interrupt does
        // not reach it.
        if acquiring.listens
            || acquiring.wait == Wait::Forever && matches!(acquiring.phase, Phase::Latch { .. })
        {
            return false;
        }
        let abandoned = Abandoned {
            lock: state.lock.clone(),
            thread,
            lease: acquiring.lease,
            waits: acquiring.wait.waits(),
            token: acquiring.token,
            tries: self
                .no_sync_tries
                .get(&Caller::new(thread, state.lock.clone()))
                .copied()
                .unwrap_or(0),
        };
        match acquiring.phase {
            Phase::Attempting => self.abandon_attempt(now, abandoned),
            Phase::RollingBack => self.abandon_rollback(abandoned),
            Phase::NoSyncPause { timer } => self.abandon_pause(timer, abandoned),
            _ => {}
        }
        self.finish(thread, Err(LockError::Interrupted));
        true
    }

    /// The interrupted thread's acquire, in flight or waiting to be resent,
    /// is either cancelled (its reply and resends come to nothing) or left
    /// to run its callback.
    fn abandon_attempt(&mut self, _now: Millis, abandoned: Abandoned) {
        let thread = abandoned.thread;
        // The wrapper asked first: from 3.20.1 its retry future is what an
        // interrupt reaches, and it cancels nothing, so 3.16.3's cancel is
        // never consulted there (and a run under it never reads it, which
        // attribution and `locksim mutants` rely on).
        // A spin lock's acquire is outside the wrapper in every release:
        // the cancel reaches the future its renewal callback hangs on.
        let wrapped = abandoned.lock.kind().acquire_retried();
        let cancels = (!wrapped || !self.switches.has(Switch::AcquireRetryWrapper))
            && self.switches.has(Switch::InterruptCancelsAcquire);
        let mine = |owner: &Owner| owner.is_call_of(thread);
        let in_flight: Vec<_> = self
            .requests
            .iter()
            .filter(|(_, p)| mine(&p.owner))
            .map(|(r, _)| *r)
            .collect();
        let resending: Vec<_> = self
            .retrying
            .iter()
            .filter(|(_, p)| mine(&p.owner))
            .map(|(t, _)| *t)
            .collect();
        // Scripts waiting for the probe, `INFO` or a batch's load: stages of the call's
        // chained future, so the cancel reaches them as it reaches one
        // on the wire.
        let staged = |owner: &mut Owner| {
            if !owner.is_call_of(thread) {
                return (true, false);
            }
            if cancels {
                // Its stage's replies then find no script.
                return (false, true);
            }
            owner.abandon(abandoned.clone());
            (true, true)
        };
        let probed = retain_staged(&mut self.probes, |p| staged(&mut p.held.owner))
            | retain_staged(&mut self.asking, |held| staged(&mut held.owner))
            | retain_staged(&mut self.loading, |held| staged(&mut held.owner));
        if !in_flight.is_empty() || !resending.is_empty() || probed {
            self.reach(super::Sometimes::AcquireAbandoned);
        }
        for request in in_flight {
            if cancels {
                if let Some(pending) = self.requests.remove(&request) {
                    self.cancel_timer(pending.timeout);
                    self.forget_sync(&pending);
                }
            } else if let Some(pending) = self.requests.get_mut(&request) {
                pending.owner.abandon(abandoned.clone());
            }
        }
        for timer in resending {
            if cancels {
                self.retrying.remove(&timer);
                self.cancel_timer(timer);
            } else if let Some(pending) = self.retrying.get_mut(&timer) {
                pending.owner.abandon(abandoned.clone());
            }
        }
    }

    /// The reply to an abandoned acquire: Redisson's `thenApply` after
    /// `tryLockInnerAsync` runs as if the thread still waited.
    pub(super) fn on_abandoned_reply(
        &mut self,
        now: Millis,
        abandoned: Abandoned,
        reply: Result<Value, TransportError>,
    ) {
        if super::no_sync::no_sync(&reply) && self.abandoned_not_synced(now, &abandoned) {
            return;
        }
        let fencing = self.switches.has(Switch::Fencing);
        let acquired = reply
            .map_err(LockError::from)
            .and_then(|value| command::parse_acquire(fencing, &value));
        if !matches!(acquired, Ok(AcquireReply::Acquired(_))) {
            return;
        }
        self.reach(super::Sometimes::AbandonedAcquireTookLock);
        let Abandoned {
            lock,
            thread,
            lease,
            ..
        } = abandoned;
        if self.switches.has(Switch::InterruptedAcquireUnlocks) {
            let (command, _latch) = self.unlock_command(now, thread, &lock, None);
            self.send(now, lock, Purpose::Unlock, command, Owner::Nobody);
        } else if lease.is_none() {
            // `scheduleExpirationRenewal(threadId)`, unordered with the
            // thread's later unlock (#7272); with a lease the callback only
            // records it, and the key expires with it.
            self.pause_callback(now, super::step::Continuation::Arm(lock, thread));
        }
    }
}

/// Keeps the entries of `table` for which `staged` says keep (its first
/// part); whether it said any was the call's (its second).
fn retain_staged<T>(
    table: &mut crate::VecMap<u64, T>,
    mut staged: impl FnMut(&mut T) -> (bool, bool),
) -> bool {
    let mut found = false;
    table.retain(|_, item| {
        let (keep, mine) = staged(item);
        found |= mine;
        keep
    });
    found
}

#[cfg(test)]
mod tests {
    use super::super::harness::{Harness, release};
    use crate::Value;
    use crate::{Call, LockError, Purpose, ThreadId};

    const T1: ThreadId = ThreadId(1);

    /// `lockInterruptibly()` interrupted while its acquire is on the wire;
    /// the script then takes the lock on Redis. Returns whether a renewal
    /// follows within two watchdog periods, and what was sent instead.
    fn late_acquire_after_interrupt(version: &str) -> (bool, Vec<Purpose>) {
        let mut h = Harness::short(release(version));
        h.call(T1, "l", Call::LockInterruptibly { lease: None })
            .unwrap();
        let req = h.expect(Purpose::Acquire);
        assert!(h.m.interrupt(h.now, T1));
        assert_eq!(h.expect_return(T1), Err(LockError::Interrupted));
        assert!(!h.m.is_busy(T1));
        h.reply(req, Value::Nil);
        let sent = h.sends();
        h.advance(2_000);
        (h.sends().contains(&Purpose::Renew), sent)
    }

    /// #2714: to 3.16.2 the late reply arms the watchdog of a thread that
    /// gave up; 3.16.3 cancels it; 3.20.1's retry wrapper brings it back
    /// (#5358, and #7272 with an unlock after the interrupt); PR #7277
    /// unlocks instead.
    #[test]
    fn an_interrupted_acquire_arms_the_watchdog_by_release() {
        assert_eq!(late_acquire_after_interrupt("3.16.2"), (true, vec![]));
        assert_eq!(late_acquire_after_interrupt("3.16.3"), (false, vec![]));
        assert_eq!(late_acquire_after_interrupt("3.20.0"), (false, vec![]));
        assert_eq!(late_acquire_after_interrupt("3.20.1"), (true, vec![]));
        assert_eq!(late_acquire_after_interrupt("4.7.0"), (true, vec![]));
        assert_eq!(
            late_acquire_after_interrupt("4.7.0 +interrupted-acquire-unlocks"),
            (false, vec![Purpose::Unlock])
        );
    }

    /// #7272 as reported: after the interrupt the thread's `unlock()` is
    /// answered first (nil: its acquire had not run yet; in Redisson the
    /// two go out on different pooled connections), and its cancel finds
    /// nothing to stop; then the acquire's reply arms the watchdog, which
    /// renews for ever. With PR #7277's fix the late success is unlocked.
    #[test]
    fn issue_7272_the_cancel_runs_before_the_arm() {
        for (text, renewed) in [
            ("4.7.0", true),
            ("4.7.0 +interrupted-acquire-unlocks", false),
        ] {
            let mut h = Harness::short(release(text));
            h.call(T1, "l", Call::LockInterruptibly { lease: None })
                .unwrap();
            let acquire = h.expect(Purpose::Acquire);
            h.m.interrupt(h.now, T1);
            assert_eq!(h.expect_return(T1), Err(LockError::Interrupted));
            h.call(T1, "l", Call::Unlock).unwrap();
            let unlock = h.expect(Purpose::Unlock);
            h.reply(unlock, Value::Nil);
            assert!(matches!(
                h.expect_return(T1),
                Err(LockError::NotLockedByCurrentThread { .. })
            ));
            h.reply(acquire, Value::Nil);
            let _ = h.sends();
            // Unanswered, each renewal times out and the next round follows.
            h.advance(3_500);
            let renewals = h.sends().iter().filter(|&&p| p == Purpose::Renew).count();
            assert_eq!(renewals >= 3, renewed, "{text}: {renewals}");
        }
    }

    /// With a replica, 4.7.0's first lock script waits for the probe
    /// (`WAIT 0 0`, `WAITAOF 0 0 0`), a stage of the same chained future:
    /// an interrupt there abandons the script as one on the wire. It goes
    /// out once the probe answers, and its reply runs the acquire's
    /// callback (#5358) instead of answering the thread's next call. In
    /// explore seed 5574 (4.7.0) that reply answered the thread's
    /// `unlock()`, which threw "not locked by current thread" with the
    /// lock held.
    #[test]
    fn an_interrupt_during_the_probe_abandons_the_script() {
        let mut h = Harness::with_replicas("4.7.0", 1);
        let wait = Some(crate::Millis(10_000));
        h.call(T1, "l", Call::TryLock { wait, lease: None })
            .unwrap();
        let probe = [h.expect(Purpose::Probe), h.expect(Purpose::Probe)];
        assert!(h.m.interrupt(h.now, T1));
        assert_eq!(h.expect_return(T1), Err(LockError::Interrupted));
        h.reply(probe[0], Value::Int(0));
        h.reply(probe[1], Value::Array(vec![Value::Int(0), Value::Int(0)]));
        let acquire = h.expect(Purpose::Acquire);
        let acquire_sync = h.expect(Purpose::Sync);
        h.call(T1, "l", Call::Unlock).unwrap();
        let unlock = h.expect(Purpose::Unlock);
        let unlock_sync = h.expect(Purpose::Sync);
        h.reply(acquire, Value::Nil);
        h.reply(acquire_sync, Value::Int(1));
        assert_eq!(
            h.returned(T1),
            None,
            "the acquire's reply answered the unlock"
        );
        h.reply(unlock, Value::Int(1));
        h.reply(unlock_sync, Value::Int(1));
        assert!(matches!(
            h.returned(T1),
            Some(Ok(crate::CallOutcome::Unlocked { .. }))
        ));
    }

    /// `lock()` waiting on the latch ignores an interrupt; in its round
    /// trips, and `lockInterruptibly` everywhere, it ends the call and
    /// leaves the channel.
    #[test]
    fn lock_waits_on_through_an_interrupt_lock_interruptibly_does_not() {
        for (call, ends) in [
            (Call::Lock { lease: None }, false),
            (Call::LockInterruptibly { lease: None }, true),
        ] {
            let mut h = Harness::short(release("3.23.4"));
            h.call(T1, "l", call).unwrap();
            let second = h.held_then_subscribed(5_000);
            h.reply(second, Value::Int(5_000));
            assert_eq!(h.m.interrupt(h.now, T1), ends);
            assert_eq!(h.m.is_busy(T1), !ends);
            if ends {
                assert_eq!(h.expect_unsubscribe(), "redisson_lock__channel:{l}");
                assert_eq!(h.expect_return(T1), Err(LockError::Interrupted));
            }
        }
        let mut h = Harness::short(release("3.23.4"));
        h.call(T1, "l", Call::Lock { lease: None }).unwrap();
        let _ = h.expect(Purpose::Acquire);
        assert!(h.m.interrupt(h.now, T1));
        assert_eq!(h.expect_return(T1), Err(LockError::Interrupted));
    }

    /// A thread with no call, or with an unlock in flight, is not affected.
    #[test]
    fn only_acquiring_calls_are_interrupted() {
        let mut h = Harness::short(release("4.7.0"));
        assert!(!h.m.interrupt(h.now, T1));
        h.acquire(T1, "l");
        h.call(T1, "l", Call::Unlock).unwrap();
        let _ = h.expect(Purpose::Unlock);
        assert!(!h.m.interrupt(h.now, T1));
        assert!(h.m.is_busy(T1));
    }
}
