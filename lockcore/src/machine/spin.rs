//! A spin lock's wait: sleep the back-off, attempt again (no pub/sub).
//!
//! `RedissonSpinLock` (REDISSON-FAMILY.md §4): after a first attempt finds
//! the lock held, a call takes a fresh `BackOffPolicy` and loops: sleep
//! the policy's next period, attempt. `lock()` loops for ever;
//! `tryLock(wait)` gives up when, after an attempt, the wait is spent.
//! The synchronous API sleeps the thread (`Thread.sleep`, exact); the
//! async one schedules the next attempt on the client's timer
//! (`newTimeout`, on the wheel).
//!
//! How the wait is measured, by release:
//! - the blocking `tryLock(wait)` subtracts the time since each sleep
//!   began, so the whole call is counted (the same as measuring from its
//!   start in virtual time, where nothing happens between the check and
//!   the next sleep);
//! - `tryLockAsync(wait)` before 3.22.1 took a new start time before
//!   each attempt and subtracted only that attempt's round trip, so the
//!   sleeps were never counted and the call waited far longer than asked
//!   (#5002); 3.22.1 (`spin-wait-from-start`, PR #5099, commit
//!   295dec1a2) measures from the call's start;
//! - before 3.17.1 the blocking `tryLock(wait)` checked the wait after
//!   an attempt even when that attempt had taken the lock, and answered
//!   false while holding it (#4197); 3.17.1 (`spin-last-spin-true`,
//!   commit 428f3cebb) answers true first.

use rand_chacha::ChaCha8Rng;

use super::acquire::{Acquiring, Phase, Wait};
use super::{LockClient, TimerKind};
use crate::back_off::BackOffPolicy;
use crate::{BackOff, Millis, Switch, ThreadId};

/// A spin-lock acquire's loop.
#[derive(Debug, Clone)]
pub(super) struct Spin {
    /// The call's own policy (`backOff.create()`).
    policy: BackOffPolicy,
    /// `tryLockAsync` before 3.22.1: the round trips counted so far.
    spent: u64,
    /// When the attempt in flight was sent.
    sent: Millis,
    /// Whether an attempt after a sleep has been made.
    spun: bool,
}

impl Spin {
    pub(super) fn new(back_off: BackOff, now: Millis) -> Self {
        Spin {
            policy: BackOffPolicy::new(back_off),
            spent: 0,
            sent: now,
            spun: false,
        }
    }

    /// An attempt goes out at `now`.
    pub(super) fn attempt(&mut self, now: Millis) {
        self.sent = now;
    }
}

impl LockClient {
    /// The wait a spin-lock call has spent, in ms, as its release counts
    /// it, once the attempt sent last has answered (at `now`); counts that
    /// attempt's round trip where only round trips are counted.
    fn spin_spent(switches: &crate::release::SwitchReads, now: Millis, a: &mut Acquiring) -> u64 {
        let since_start = now.minus(a.started).0;
        let Some(spin) = a.spin.as_mut() else {
            return since_start;
        };
        if a.listens && matches!(a.wait, Wait::For(_)) && !switches.has(Switch::SpinWaitFromStart) {
            spin.spent += now.minus(spin.sent).0;
            return spin.spent;
        }
        since_start
    }

    /// The lock is held by another: give up when the wait is spent, else
    /// sleep the back-off.
    pub(super) fn spin_held(&mut self, now: Millis, thread: ThreadId) {
        let Some(caller) = self.caller_of(thread) else {
            return;
        };
        let switches = &self.switches;
        let Some(state) = self.calls.get_mut(&caller) else {
            return;
        };
        let super::CallKind::Acquire(a) = &mut state.kind else {
            return;
        };
        let spent = Self::spin_spent(switches, now, a);
        let over = match a.wait {
            Wait::Forever | Wait::Interruptibly => false,
            Wait::Once => true,
            Wait::For(wait) => spent >= wait.0,
        };
        if over {
            self.give_up(now, thread);
            return;
        }
        let listens = a.listens;
        let timed = matches!(a.wait, Wait::For(_));
        let Some(spin) = a.spin.as_mut() else {
            return;
        };
        // The first attempt found it held: the loop of sleeps begins.
        let began = timed && !spin.spun;
        let sleep = spin.policy.next_sleep(&mut self.spin_rng);
        let at = now.plus(sleep);
        if began {
            let lock = self.call_of(thread).map(|c| c.lock.clone());
            if let Some(lock) = lock {
                self.event(super::Event::WaitBegan { lock, thread });
            }
        }
        let timer = if listens {
            self.set_timer(at, TimerKind::Wait(thread))
        } else {
            self.set_exact_timer(at, TimerKind::Wait(thread))
        };
        if let Some((_, a)) = self.acquiring(thread) {
            a.phase = Phase::BackOff { timer };
            if let Some(spin) = a.spin.as_mut() {
                spin.spun = true;
            }
        }
    }

    /// Before 3.17.1, whether a blocking `tryLock(wait)` whose attempt
    /// after a sleep has just taken the lock answers false (its wait was
    /// spent by then, #4197). The hold stays, with its renewal when it
    /// has no lease: the attempt's own callback scheduled it.
    pub(super) fn spin_taken_too_late(&mut self, now: Millis, thread: ThreadId) -> bool {
        let Some((_, a)) = self.acquiring(thread) else {
            return false;
        };
        let Wait::For(wait) = a.wait else {
            return false;
        };
        let spun = a.spin.as_ref().is_some_and(|s| s.spun);
        if a.listens || !spun || now.minus(a.started).0 < wait.0 {
            return false;
        }
        !self.switches.has(Switch::SpinLastSpinTrue)
    }

    /// The back-off's sleep is over: attempt again.
    pub(super) fn spin_wake(&mut self, now: Millis, thread: ThreadId) {
        if let Some((_, a)) = self.acquiring(thread) {
            a.phase = Phase::Attempting;
        }
        self.attempt(now, thread);
    }
}

/// The client's stream of back-off draws.
pub(super) fn spin_rng(seed: u64) -> ChaCha8Rng {
    use rand::SeedableRng;
    // A stream apart from the jitter's, so a spin lock's sleeps never move
    // another draw of the client.
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(1);
    rng
}

#[cfg(test)]
mod tests {
    use super::super::harness::{Harness, release};
    use crate::{
        BackOff, Call, CallOutcome, Config, LockError, LockKind, Millis, Purpose, ThreadId,
        TransportError, Value,
    };

    const T1: ThreadId = ThreadId(1);

    fn spin(back_off: BackOff) -> Harness {
        let config = Config::builder()
            .release(release("4.7.0"))
            .spin_back_off(back_off)
            .build()
            .unwrap();
        Harness::with_config(config)
    }

    /// `lock()` on a held spin lock never subscribes: it attempts again
    /// after 1, 2, then 4 or 5 ms (the exponential back-off), and takes
    /// the lock on the attempt after the holder's key is gone. A waiter
    /// that subscribed would send SUBSCRIBE after the first reply.
    #[test]
    fn lock_polls_with_the_exponential_back_off() {
        let mut h = spin(BackOff::Exponential);
        h.call_kind(T1, "l", LockKind::Spin, Call::Lock { lease: None })
            .unwrap();
        let mut attempts = vec![h.now.0];
        for _ in 0..3 {
            let req = h.expect(Purpose::Acquire);
            h.reply(req, Value::Int(20_000));
            h.expect_quiet();
            let at = h.next_timer_at().unwrap();
            h.advance_to(at);
            attempts.push(h.now.0);
        }
        assert_eq!(&attempts[..3], [0, 1, 3], "{attempts:?}");
        assert!(matches!(attempts[3], 7 | 8), "{attempts:?}");
        let req = h.expect(Purpose::Acquire);
        h.reply(req, Value::Nil);
        h.expect_acquired(T1);
    }

    /// The blocking `tryLock(wait 100)` under the constant back-off gives
    /// up on the first reply at or past 100 ms: attempts at 0, 64 and 128.
    #[test]
    fn try_lock_gives_up_once_the_wait_is_spent() {
        let mut h = spin(BackOff::Constant);
        let call = Call::TryLock {
            wait: Some(Millis(100)),
            lease: None,
        };
        h.call_kind(T1, "l", LockKind::Spin, call).unwrap();
        for at in [0, 64, 128] {
            let req = h.expect(Purpose::Acquire);
            assert_eq!(h.now.0, at);
            h.reply(req, Value::Int(20_000));
            h.advance(64);
        }
        assert_eq!(h.expect_return(T1), Ok(CallOutcome::NotAcquired));
        assert!(h.timers.is_empty(), "{:?}", h.timers);
    }

    /// An interrupt while a blocking `lock()` sleeps its back-off ends the
    /// call (`Thread.sleep` throws; `lock()` rethrows it as an
    /// `IllegalStateException`), unlike `RLock.lock()` on its latch.
    #[test]
    fn an_interrupt_ends_the_sleep_of_lock() {
        let mut h = spin(BackOff::Constant);
        h.call_kind(T1, "l", LockKind::Spin, Call::Lock { lease: None })
            .unwrap();
        let req = h.expect(Purpose::Acquire);
        h.reply(req, Value::Int(20_000));
        assert!(h.m.interrupt(h.now, T1));
        assert_eq!(h.expect_return(T1), Err(LockError::Interrupted));
        assert!(h.timers.is_empty(), "{:?}", h.timers);
    }

    /// With replicas, an acquire whose `WAIT` counted none is rolled back
    /// (3.20.0+) but not tried again: the spin lock's acquire is outside
    /// the retry wrapper, so the caller gets the error.
    #[test]
    fn a_not_synced_acquire_is_rolled_back_and_not_retried() {
        let mut h = Harness::with_replicas("3.20.1", 1);
        h.call_kind(T1, "l", LockKind::Spin, Call::Lock { lease: None })
            .unwrap();
        let (acquire, _) = h.expect_send();
        let (wait, _) = h.expect_send();
        h.reply(acquire, Value::Nil);
        h.reply(wait, Value::Int(0));
        h.expect_rolled_back(T1);
        let (unlock, purpose, _) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::Unlock);
        let (wait, _) = h.expect_send();
        h.reply(unlock, Value::Int(1));
        h.reply(wait, Value::Int(0));
        let none = TransportError::NoSyncedReplicas("None of slaves were synced".into());
        assert_eq!(h.expect_return(T1), Err(LockError::Transport(none)));
        h.advance(10_000);
        h.expect_quiet();
    }

    /// An interrupt while the acquire is on the wire, which then takes the
    /// lock: from 3.20.1 `RLock`'s acquire is inside the retry wrapper and
    /// its watchdog is armed anyway (#5358); the spin lock's is not, so
    /// the cancel reaches its callback and nothing renews.
    #[test]
    fn an_interrupted_acquire_arms_no_watchdog_from_3_16_3() {
        let renewed = |kind: LockKind| {
            let mut h = Harness::short(release("4.7.0"));
            h.call_kind(T1, "l", kind, Call::Lock { lease: None })
                .unwrap();
            let request = h.expect(Purpose::Acquire);
            assert!(h.m.interrupt(h.now, T1));
            assert_eq!(h.expect_return(T1), Err(LockError::Interrupted));
            h.reply(request, Value::Nil);
            h.advance(1_500);
            h.sends().contains(&Purpose::Renew)
        };
        assert!(renewed(LockKind::Lock));
        assert!(!renewed(LockKind::Spin));
    }
}
