//! Waiting for a held lock: the subscription, the latch, and the retries.
//!
//! Doc 004's loop, after a first attempt found the lock held: subscribe to
//! the lock's channel (bounded by the remaining wait for `tryLock`); then
//! attempt again; if still held, wait on the latch for `min(ttl, remaining)`
//! (`remaining` when the holder has no TTL; `lock()` then waits for a
//! message), woken early by an unlock message; check the remaining wait;
//! attempt again. `lockAsync` and `tryLockAsync` take a waiting permit the
//! same way but otherwise wait by a listener the unlock message runs.

use super::acquire::Phase;
use super::step::Continuation;
use super::{CallKind, CallState, LockClient, TimerKind};
use crate::{Millis, Switch, ThreadId, TimerId};

impl LockClient {
    /// The lock is held by another: give up, subscribe, or wait on the latch.
    pub(super) fn on_held(&mut self, now: Millis, thread: ThreadId, ttl: i64) {
        let Some((lock, acquiring)) = self.acquiring(thread) else {
            return;
        };
        if lock.kind().polls() {
            self.spin_held(now, thread);
            return;
        }
        let lock = lock.clone();
        let listens = acquiring.listens;
        let remaining = Self::remaining(now, acquiring);
        if remaining.is_some_and(|r| r <= 0) {
            self.give_up(now, thread);
            return;
        }
        if !acquiring.subscribed {
            acquiring.subscribed = true;
            if remaining.is_some() {
                self.event(super::Event::WaitBegan {
                    lock: lock.clone(),
                    thread,
                });
            }
            let channel = self.wait_channel(&lock, thread);
            if self.join(now, &lock, &channel) {
                self.attempt(now, thread);
            } else {
                let timer = remaining.map(|r| self.set_wait_timer(now, thread, r, listens));
                if let Some((_, acquiring)) = self.acquiring(thread) {
                    acquiring.phase = Phase::Subscribing { timer };
                }
            }
            return;
        }
        let wait_for = match remaining {
            None if ttl >= 0 => Some(ttl),
            None => None,
            Some(r) if ttl >= 0 && ttl < r => Some(ttl),
            Some(r) => Some(r),
        };
        let channel = self.wait_channel(&lock, thread);
        let channel = channel.as_ref();
        if listens {
            if self.latch_take(channel) {
                self.attempt(now, thread);
            } else if let Some((_, acquiring)) = self.acquiring(thread) {
                acquiring.phase = Phase::Registering;
                let rest = Continuation::Listen(thread, wait_for);
                self.pause_callback(now, rest);
            }
            return;
        }
        if self.latch_acquire(channel, thread) {
            // A permit was waiting: the latch returns at once.
            self.attempt(now, thread);
            return;
        }
        self.wait_on_latch(now, thread, wait_for, false);
    }

    /// Sets the wait's timer (`wait_for` ms, none: wait for a message).
    fn wait_on_latch(
        &mut self,
        now: Millis,
        thread: ThreadId,
        wait_for: Option<i64>,
        listens: bool,
    ) {
        let timer = wait_for.map(|w| self.set_wait_timer(now, thread, w, listens));
        if let Some((_, acquiring)) = self.acquiring(thread) {
            acquiring.phase = Phase::Latch { timer };
        }
    }

    /// The timer of a wait of `ms`. An async call's timeout is a task on
    /// Redisson's wheel (`ServiceManager.newTimeout`), so it fires at the
    /// end of a tick. A blocking call waits in the JDK, exactly:
    /// `RedissonLock.tryLock` waits with `subscribeFuture.get(time)` and
    /// `getLatch().tryAcquire(ttl or time)`, and `lock` with
    /// `tryAcquire(ttl)` (every release from 3.8.0 to 4.7.0; lines 131-142
    /// and 246-298 of RedissonLock.java at 4.7.0). On the wheel, a blocked waiter whose
    /// time ran out still waited up to a tick longer, took the permit an
    /// unlock message left for another waiter of its client, and gave up
    /// with it: a lost wakeup Redisson does not have.
    fn set_wait_timer(&mut self, now: Millis, thread: ThreadId, ms: i64, listens: bool) -> TimerId {
        let at = now.plus(Millis(ms as u64));
        if listens {
            self.set_timer(at, TimerKind::Wait(thread))
        } else {
            self.set_exact_timer(at, TimerKind::Wait(thread))
        }
    }

    /// An async call registers its listener (`RedissonLockEntry.addListener`)
    /// and sets its timer. From 3.28.0 (`listener-rechecks-latch`, #5761)
    /// it then takes a permit an unlock message left meanwhile and runs the
    /// first listener; before, such a message had found no listener to run
    /// and the call slept its TTL (or for ever) with the lock free.
    pub(super) fn listen(&mut self, now: Millis, thread: ThreadId, wait_for: Option<i64>) {
        let Some((lock, acquiring)) = self.acquiring(thread) else {
            return;
        };
        if acquiring.phase != Phase::Registering {
            return;
        }
        let lock = lock.clone();
        let channel = self.wait_channel(&lock, thread);
        let channel = channel.as_ref();
        self.add_listener(channel, thread);
        self.reach(super::Sometimes::ListenerRegistered);
        self.wait_on_latch(now, thread, wait_for, true);
        if self.switches.has(Switch::ListenerRechecksLatch) && self.latch_take(channel) {
            self.run_listener(now, channel);
        }
    }

    /// A wait ended by its timer: the subscription took too long, or the
    /// latch wait (TTL or remaining time) ran out.
    pub(super) fn on_wait_timer(&mut self, now: Millis, thread: ThreadId) {
        let Some((lock, acquiring)) = self.acquiring(thread) else {
            return;
        };
        match acquiring.phase {
            Phase::Subscribing { .. } => self.give_up(now, thread),
            Phase::Latch { .. } => {
                let lock = lock.clone();
                acquiring.phase = Phase::Attempting;
                let channel = self.wait_channel(&lock, thread);
                self.latch_forget(&channel, thread);
                self.retry_if_time_left(now, thread);
            }
            Phase::BackOff { .. } => self.spin_wake(now, thread),
            Phase::Attempting
            | Phase::Registering
            | Phase::RollingBack
            | Phase::NoSyncPause { .. } => {}
        }
    }

    /// An unlock message released the latch for `thread`.
    pub(super) fn wake(&mut self, now: Millis, thread: ThreadId) {
        let Some((_, acquiring)) = self.acquiring(thread) else {
            return;
        };
        if let Phase::Latch { timer } = acquiring.phase {
            acquiring.phase = Phase::Attempting;
            if let Some(timer) = timer {
                self.cancel_timer(timer);
            }
            self.retry_if_time_left(now, thread);
        }
    }

    /// The channel's subscription is confirmed.
    pub(super) fn subscribed(&mut self, now: Millis, thread: ThreadId) {
        let Some((_, acquiring)) = self.acquiring(thread) else {
            return;
        };
        if let Phase::Subscribing { timer } = acquiring.phase {
            acquiring.phase = Phase::Attempting;
            if let Some(timer) = timer {
                self.cancel_timer(timer);
            }
            self.retry_if_time_left(now, thread);
        }
    }

    /// Whether `thread` waits for the subscription of `channel`.
    pub(super) fn is_subscribing(&self, thread: ThreadId, channel: &str) -> bool {
        matches!(
            self.call_of(thread),
            Some(CallState { lock, kind: CallKind::Acquire(a) })
                if matches!(a.phase, Phase::Subscribing { .. })
                    && self.wait_channel(lock, thread) == channel
        )
    }

    fn retry_if_time_left(&mut self, now: Millis, thread: ThreadId) {
        let Some((_, acquiring)) = self.acquiring(thread) else {
            return;
        };
        if Self::remaining(now, acquiring).is_some_and(|r| r <= 0) {
            self.give_up(now, thread);
        } else {
            self.attempt(now, thread);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::Harness;
    use crate::Value;
    use crate::{Call, CallOutcome, Era, LockError, LockName, Millis, Purpose, ThreadId};

    const T2: ThreadId = ThreadId(2);
    const T3: ThreadId = ThreadId(3);

    fn try_wait(wait: u64) -> Call {
        Call::TryLock {
            wait: Some(Millis(wait)),
            lease: None,
        }
    }

    /// Doc 004 tryLock: held -> subscribe -> attempt -> wait on the latch
    /// for min(ttl, remaining); an unlock message wakes the waiter before
    /// the TTL runs out and its next attempt wins. A waiter that ignored
    /// messages would only attempt again at t = 4 000.
    #[test]
    fn waiter_is_woken_by_the_unlock_message() {
        let mut h = Harness::new(Era::Redisson);
        h.call(T2, "l", try_wait(10_000)).unwrap();
        let req = h.held_then_subscribed(5_000);
        h.reply(req, Value::Int(4_000));
        h.expect_quiet();
        assert_eq!(h.next_timer_at(), Some(Millis(4_000)));
        h.advance(100);
        h.message("l", "0");
        let req = h.expect(Purpose::Acquire);
        assert_eq!(h.now, Millis(100));
        h.reply(req, Value::Nil);
        assert_eq!(
            h.expect_unsubscribe(),
            LockName::new("l").unwrap().channel()
        );
        assert_eq!(
            h.expect_return(T2),
            Ok(CallOutcome::Acquired { token: None })
        );
    }

    /// On a 100 ms wheel, a blocking `tryLock` still wakes at the TTL it
    /// read (the JDK times `Semaphore.tryAcquire`), while `tryLockAsync`'s
    /// timeout is a wheel task and fires at the end of its tick. With the
    /// blocking wait on the wheel, audit seed 4360 of Redisson 3.45.0 on
    /// Sentinel showed a lost wakeup Redisson does not have.
    #[test]
    fn blocking_waits_are_exact_and_async_timeouts_on_the_wheel() {
        for (call, wakes_at) in [
            (try_wait(10_000), 3_050),
            (
                Call::TryLockAsync {
                    wait: Some(Millis(10_000)),
                    lease: None,
                },
                3_100,
            ),
        ] {
            let config = crate::Config::builder()
                .release(Era::Redisson.into())
                .timer_tick(100)
                .build()
                .unwrap();
            let mut h = Harness::with_config(config);
            h.call(T2, "l", call.clone()).unwrap();
            let req = h.held_then_subscribed(5_000);
            h.advance(50);
            h.reply(req, Value::Int(3_000));
            h.expect_quiet();
            assert_eq!(h.next_timer_at(), Some(Millis(wakes_at)), "{call:?}");
        }
    }

    /// Without a message the waiter sleeps exactly the holder's TTL and
    /// attempts again then (the holder's key has expired).
    #[test]
    fn waiter_retries_when_the_ttl_runs_out() {
        let mut h = Harness::new(Era::Redisson);
        h.call(T2, "l", try_wait(10_000)).unwrap();
        let req = h.held_then_subscribed(5_000);
        h.reply(req, Value::Int(3_000));
        h.advance(2_999);
        h.expect_quiet();
        h.advance(1);
        let req = h.expect(Purpose::Acquire);
        assert_eq!(h.now, Millis(3_000));
        h.reply(req, Value::Nil);
        h.expect_unsubscribe();
        h.expect_acquired(T2);
    }

    /// The wait is measured from the call's start: with 1 000 ms to wait
    /// and a holder with 30 s left, the waiter sleeps 1 000 ms and gives up,
    /// unsubscribing. A waiter that slept the TTL would wait 30 s.
    #[test]
    fn wait_runs_out() {
        let mut h = Harness::new(Era::Redisson);
        h.call(T2, "l", try_wait(1_000)).unwrap();
        let req = h.expect(Purpose::Acquire);
        h.advance(200);
        h.reply(req, Value::Int(30_000));
        let sub = h.expect_subscribe();
        h.reply(sub, Value::Int(1));
        let req = h.expect(Purpose::Acquire);
        h.reply(req, Value::Int(29_800));
        assert_eq!(h.next_timer_at(), Some(Millis(1_000)));
        h.advance(800);
        h.expect_unsubscribe();
        assert_eq!(h.expect_return(T2), Ok(CallOutcome::NotAcquired));
        assert!(h.timers.is_empty());
        // The wait loop began once, with the first attempt's `held`.
        assert_eq!(h.waits_began, [T2]);
    }

    /// Only a timed wait reports its loop's start (the checkers tell a
    /// `tryLock`'s first attempt from its loop by it): `lock()` does not.
    #[test]
    fn only_a_timed_wait_reports_its_loop() {
        let mut h = Harness::new(Era::Redisson);
        h.call(T2, "l", Call::Lock { lease: None }).unwrap();
        let req = h.expect(Purpose::Acquire);
        h.reply(req, Value::Int(30_000));
        let _ = h.expect_subscribe();
        assert!(h.waits_began.is_empty());
    }

    /// A subscription that is not confirmed within the wait ends the call
    /// with NotAcquired (doc 004: `subscribeFuture.await(time)` false).
    #[test]
    fn subscription_slower_than_the_wait() {
        let mut h = Harness::new(Era::Redisson);
        h.call(T2, "l", try_wait(500)).unwrap();
        let req = h.expect(Purpose::Acquire);
        h.reply(req, Value::Int(30_000));
        let sub = h.expect_subscribe();
        h.advance(500);
        h.expect_unsubscribe();
        assert_eq!(h.expect_return(T2), Ok(CallOutcome::NotAcquired));
        // The late confirmation changes nothing.
        h.reply(sub, Value::Int(1));
        h.expect_quiet();
    }

    /// `lock()` against a holder without expiry (PTTL -1) sets no timer and
    /// waits for the unlock message.
    #[test]
    fn lock_waits_for_a_message_when_the_holder_has_no_ttl() {
        let mut h = Harness::new(Era::Redisson);
        h.call(T2, "l", Call::Lock { lease: None }).unwrap();
        let req = h.held_then_subscribed(-1);
        h.reply(req, Value::Int(-1));
        assert!(h.timers.is_empty(), "no wait timer: {:?}", h.timers);
        h.advance(1_000_000);
        h.expect_quiet();
        h.message("l", "0");
        let req = h.expect(Purpose::Acquire);
        h.reply(req, Value::Nil);
        h.expect_unsubscribe();
        h.expect_acquired(T2);
    }

    /// A message that arrives while the waiter's attempt is in flight leaves
    /// a permit, so the waiter's next latch wait returns at once instead of
    /// sleeping the TTL (no lost wake-up).
    #[test]
    fn message_during_an_attempt_is_not_lost() {
        let mut h = Harness::new(Era::Redisson);
        h.call(T2, "l", try_wait(10_000)).unwrap();
        let req = h.held_then_subscribed(5_000);
        h.message("l", "0");
        h.reply(req, Value::Int(5_000));
        let _again = h.expect(Purpose::Acquire);
        assert_eq!(h.now, Millis(0));
    }

    /// Two threads of one client waiting for one lock share one
    /// subscription; a message wakes one of them (the first to wait); the
    /// channel is unsubscribed only when the last leaves.
    #[test]
    fn waiters_share_the_subscription_and_one_message_wakes_one() {
        let mut h = Harness::new(Era::Redisson);
        h.call(T2, "l", Call::Lock { lease: None }).unwrap();
        let r2 = h.expect(Purpose::Acquire);
        h.call(T3, "l", Call::Lock { lease: None }).unwrap();
        let r3 = h.expect(Purpose::Acquire);
        h.reply(r2, Value::Int(9_000));
        let sub = h.expect_subscribe();
        h.reply(r3, Value::Int(9_000));
        h.expect_quiet();
        h.reply(sub, Value::Int(1));
        let a2 = h.expect(Purpose::Acquire);
        let a3 = h.expect(Purpose::Acquire);
        h.reply(a2, Value::Int(8_000));
        h.reply(a3, Value::Int(8_000));
        h.message("l", "0");
        let (again, command) = h.expect_send();
        assert_eq!(command.last().map(String::as_str), Some("uuid-a:2"));
        h.expect_quiet();
        h.reply(again, Value::Nil);
        h.expect_acquired(T2);
        h.expect_quiet();
        h.message("l", "0");
        let again = h.expect(Purpose::Acquire);
        h.reply(again, Value::Nil);
        h.expect_unsubscribe();
        h.expect_acquired(T3);
    }

    /// A transport error during an attempt ends the call with that error
    /// and leaves the subscription.
    #[test]
    fn transport_error_while_waiting() {
        let mut h = Harness::new(Era::Redisson);
        h.call(T2, "l", Call::Lock { lease: None }).unwrap();
        let req = h.held_then_subscribed(100);
        h.fail(req, crate::TransportError::Connection("down".into()));
        h.expect_unsubscribe();
        assert!(matches!(h.expect_return(T2), Err(LockError::Transport(_))));
    }
}
