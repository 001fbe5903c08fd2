//! `lock` and `tryLock`: attempt, subscribe, wait on the latch, attempt again.
//!
//! This follows doc 004's `tryLock(waitTime, leaseTime, unit)` and
//! `lock(leaseTime)`: one attempt; if the lock is held and time remains,
//! subscribe to the lock's channel; then loop: attempt; if held, wait on the
//! client's latch for that lock for `min(ttl, remaining)` (or `remaining`
//! when the holder has no TTL; `lock()` waits for a message then), woken
//! early by an unlock message. Remaining wait is the call's wait minus the
//! time elapsed since the call began, measured with the driver's `now`.

use crate::Value;

use super::command::{self, AcquireReply};
use super::request::Owner;
use super::spin::Spin;
use super::{CallKind, CallState, Caller, Hold, LockClient, Purpose};
use crate::kind::{Waits, Words};
use crate::{
    CallOutcome, FencingToken, LockError, LockName, Millis, Switch, ThreadId, TimerId,
    TransportError,
};

/// How long an acquiring call may wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wait {
    /// `tryLock()`: one attempt, no subscription.
    Once,
    /// `tryLock(wait, ...)`.
    For(Millis),
    /// `lock(...)`.
    Forever,
    /// `lockInterruptibly(...)`.
    Interruptibly,
}

impl Wait {
    /// How a kind's scripts see this wait.
    pub(super) fn waits(self) -> Waits {
        match self {
            Wait::Once => Waits::Once,
            Wait::For(wait) => Waits::For(wait),
            Wait::Forever | Wait::Interruptibly => Waits::Unbounded,
        }
    }
}

/// Where an acquiring call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// The acquire script is in flight.
    Attempting,
    /// Waiting for the subscription; the timer ends a bounded wait.
    Subscribing { timer: Option<TimerId> },
    /// Waiting on the latch, or for an async call with its listener
    /// registered; the timer ends the wait (TTL or remaining time).
    Latch { timer: Option<TimerId> },
    /// An async call found the latch without a permit and is about to
    /// register its listener (the step before 3.28.0 could lose a message
    /// in: `listener-rechecks-latch`).
    Registering,
    /// 3.20.0+: the acquire failed for too few synced replicas and its
    /// rollback (the unlock script) is in flight.
    RollingBack,
    /// 3.20.1+: after the rollback, the acquire is tried again at the timer.
    NoSyncPause { timer: TimerId },
    /// A spin lock's waiter sleeps its back-off until the timer.
    BackOff { timer: TimerId },
}

/// An acquiring call's state.
#[derive(Debug, Clone)]
pub(super) struct Acquiring {
    pub(super) lease: Option<Millis>,
    pub(super) wait: Wait,
    pub(super) started: Millis,
    /// Whether this thread holds a reference on the channel's subscription.
    pub(super) subscribed: bool,
    pub(super) phase: Phase,
    /// `lockAsync` / `tryLockAsync`: waits by a listener on the lock's
    /// channel, not on the latch, and ignores interrupts.
    pub(super) listens: bool,
    /// `RFencedLock`'s token methods: the kind's token script, its pair
    /// reply, and no NoSync rollback or retry.
    pub(super) token: bool,
    /// A spin lock's loop (`None` for every kind that subscribes).
    pub(super) spin: Option<Spin>,
}

impl LockClient {
    pub(super) fn start_acquire(
        &mut self,
        now: Millis,
        thread: ThreadId,
        lock: LockName,
        lease: Option<Millis>,
        wait: Wait,
        listens: bool,
    ) {
        self.start_acquiring(now, thread, lock, lease, wait, (listens, false));
    }

    /// [`Self::start_acquire`], `token` for `RFencedLock`'s token methods.
    pub(super) fn start_acquiring(
        &mut self,
        now: Millis,
        thread: ThreadId,
        lock: LockName,
        lease: Option<Millis>,
        wait: Wait,
        (listens, token): (bool, bool),
    ) {
        let spin = lock
            .kind()
            .polls()
            .then(|| Spin::new(self.config.spin_back_off, now));
        let acquiring = Acquiring {
            lease,
            wait,
            started: now,
            subscribed: false,
            phase: Phase::Attempting,
            listens,
            token,
            spin,
        };
        self.calls.insert(
            Caller::new(thread, lock.clone()),
            CallState {
                lock,
                kind: CallKind::Acquire(acquiring),
            },
        );
        self.attempt(now, thread);
    }

    pub(super) fn acquiring(&mut self, thread: ThreadId) -> Option<(&LockName, &mut Acquiring)> {
        match self.call_of_mut(thread) {
            Some(CallState {
                lock,
                kind: CallKind::Acquire(acquiring),
            }) => Some((&*lock, acquiring)),
            _ => None,
        }
    }

    /// Sends the acquire script for `thread`'s call.
    pub(super) fn attempt(&mut self, now: Millis, thread: ThreadId) {
        let Some((lock, acquiring)) = self.acquiring(thread) else {
            return;
        };
        acquiring.phase = Phase::Attempting;
        if let Some(spin) = acquiring.spin.as_mut() {
            spin.attempt(now);
        }
        let waits = acquiring.wait.waits();
        let (asked, token) = (acquiring.lease, acquiring.token);
        let lock = lock.clone();
        let command = self.acquire_command(now, (&lock, thread), asked, (waits, token));
        let owner = Owner::Call(Caller::new(thread, lock.clone()));
        self.send(now, lock, Purpose::Acquire, command, owner);
    }

    /// `thread`'s acquire script of `lock`, with the lease it asked
    /// (`None`: the watchdog's), as a call that `waits` sends it (`token`:
    /// `RFencedLock`'s token methods).
    pub(super) fn acquire_command(
        &mut self,
        now: Millis,
        (lock, thread): (&LockName, ThreadId),
        asked: Option<Millis>,
        (waits, token): (Waits, bool),
    ) -> super::Command {
        let lease = asked.unwrap_or_else(|| self.watchdog_lease(lock));
        let lease = self.wire.number(lease.0);
        let field = self.wire.field(&self.uuid, thread);
        let words = Words {
            switches: &self.switches,
            lock: &self.wire.lock(lock),
            thread_field: field,
            lease,
            now,
            waits,
            thread_wait: self.config.fair_lock_wait_timeout,
        };
        match token {
            // `call` refuses the token methods on a kind without them.
            true => lock.kind().acquire_token(&words),
            false => None,
        }
        .unwrap_or_else(|| lock.kind().acquire(&words))
    }

    /// The wait left, in ms (`None`: unbounded); zero or less means spent.
    pub(super) fn remaining(now: Millis, acquiring: &Acquiring) -> Option<i64> {
        match acquiring.wait {
            Wait::Forever | Wait::Interruptibly => None,
            Wait::Once => Some(0),
            Wait::For(wait) => Some(wait.0 as i64 - now.minus(acquiring.started).0 as i64),
        }
    }

    pub(super) fn on_acquire_reply(
        &mut self,
        now: Millis,
        thread: ThreadId,
        reply: Result<Value, TransportError>,
        sent_at: Millis,
    ) {
        let fencing = self.switches.has(Switch::Fencing);
        let Some((lock, acquiring)) = self.acquiring(thread) else {
            return;
        };
        if acquiring.phase != Phase::Attempting {
            return;
        }
        let lock = lock.clone();
        let lease = acquiring.lease;
        let (wait, subscribed, token) = (acquiring.wait, acquiring.subscribed, acquiring.token);
        // The token methods call their own `tryAcquireAsync`, which no
        // `handleNoSync` and no `ServiceManager.execute` wrap.
        if let Err(error) = &reply
            && !token
            && super::no_sync::no_sync(&reply)
            && self.acquire_not_synced(now, thread, error)
        {
            return;
        }
        // Redisson's retry wrapper counts per attempt of the loop.
        self.no_sync_tries
            .remove(&Caller::new(thread, lock.clone()));
        let parsed = reply
            .map_err(LockError::from)
            .and_then(|value| match token {
                true => command::parse_token_acquire(&value),
                false => command::parse_acquire(fencing, &value),
            });
        if matches!(parsed, Err(LockError::Transport(TransportError::Timeout)))
            && matches!(wait, Wait::For(_))
            && subscribed
        {
            self.reach(super::Sometimes::TryLockWaitTimedOut);
        }
        match parsed {
            // 4.7.0 (`trylock-timeout-false`, #5019): a timed-out attempt
            // of tryLock's wait loop (after the subscription) returns false.
            Err(LockError::Transport(TransportError::Timeout))
                if !token
                    && self.switches.has(Switch::TryLockTimeoutFalse)
                    && matches!(wait, Wait::For(_))
                    && subscribed =>
            {
                self.give_up(now, thread)
            }
            Err(error) => self.finish(thread, Err(error)),
            Ok(AcquireReply::Acquired(token)) => {
                let too_late = self.spin_taken_too_late(now, thread);
                self.on_acquired(now, thread, &lock, lease, token, sent_at);
                if too_late {
                    self.give_up(now, thread);
                } else {
                    self.finish(thread, Ok(CallOutcome::Acquired { token }));
                }
            }
            Ok(AcquireReply::Held(ttl)) => self.on_held(now, thread, ttl),
        }
    }

    /// Records a successful acquisition: the hold, the watchdog when no
    /// lease was given, the `fenced` deadline.
    fn on_acquired(
        &mut self,
        now: Millis,
        thread: ThreadId,
        lock: &LockName,
        lease: Option<Millis>,
        token: Option<FencingToken>,
        sent_at: Millis,
    ) {
        let hold = self.holds.entry((lock.clone(), thread)).or_insert(Hold {
            count: 0,
            lease,
            token,
            lease_reset: false,
        });
        hold.count += 1;
        hold.lease = lease;
        hold.lease_reset = false;
        if let Some(lease) = lease {
            self.instance_leases.insert(lock.clone(), lease);
        }
        if token.is_some() {
            hold.token = token;
        }
        if lease.is_none() {
            self.schedule_renewal(now, lock, thread);
        }
        if self.switches.has(Switch::Fencing) {
            let lease = lease.unwrap_or(self.config.watchdog_timeout);
            self.arm_deadline(lock, sent_at.plus(lease));
        }
    }

    /// `tryLock(wait)` gives up: Redisson's `acquireFailed` first (the
    /// fair lock's removes the thread from its queue and timeout set; the
    /// call answers once it has), then false. `tryLock()`, which never
    /// queues, and `RLock` (an empty override) answer false at once.
    pub(super) fn give_up(&mut self, now: Millis, thread: ThreadId) {
        let Some((lock, acquiring)) = self.acquiring(thread) else {
            return;
        };
        let (lock, waits) = (lock.clone(), acquiring.wait.waits());
        if !matches!(waits, Waits::For(_)) {
            self.finish(thread, Ok(CallOutcome::NotAcquired));
            return;
        }
        let (thread_field, lease) = (self.wire.field(&self.uuid, thread), self.wire.number(0));
        let words = Words {
            switches: &self.switches,
            lock: &self.wire.lock(&lock),
            thread_field,
            lease,
            now,
            waits,
            thread_wait: self.config.fair_lock_wait_timeout,
        };
        let Some(command) = lock.kind().acquire_failed(&words) else {
            self.finish(thread, Ok(CallOutcome::NotAcquired));
            return;
        };
        let caller = Caller::new(thread, lock.clone());
        self.no_sync_tries.remove(&caller);
        if let Some(CallState {
            kind: CallKind::Acquire(mut acquiring),
            ..
        }) = self.calls.remove(&caller)
        {
            if let Phase::Subscribing { timer: Some(timer) }
            | Phase::Latch { timer: Some(timer) }
            | Phase::NoSyncPause { timer }
            | Phase::BackOff { timer } = acquiring.phase
            {
                self.cancel_timer(timer);
            }
            acquiring.phase = Phase::Attempting;
            self.calls.insert(
                caller.clone(),
                CallState {
                    lock: lock.clone(),
                    kind: CallKind::AcquireFailed(acquiring),
                },
            );
        }
        let owner = Owner::Call(caller);
        self.send(now, lock, Purpose::AcquireFailed, command, owner);
    }

    /// Cleans up after an acquiring call ends (Redisson's `finally {
    /// unsubscribe(...) }`).
    pub(super) fn leave_acquire(
        &mut self,
        thread: ThreadId,
        lock: &LockName,
        acquiring: &Acquiring,
    ) {
        match acquiring.phase {
            Phase::Subscribing { timer: Some(timer) }
            | Phase::Latch { timer: Some(timer) }
            | Phase::NoSyncPause { timer }
            | Phase::BackOff { timer } => self.cancel_timer(timer),
            _ => {}
        }
        if acquiring.subscribed {
            let channel = self.wait_channel(lock, thread);
            self.leave(thread, &channel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{Harness, lock_with_lease};
    use crate::Value;
    use crate::{
        Call, CallOutcome, Era, FencingToken, LockError, LockName, Millis, Purpose, ThreadId,
    };

    const T1: ThreadId = ThreadId(1);
    const T2: ThreadId = ThreadId(2);

    /// `tryLock()` makes one attempt and never subscribes: when the lock is
    /// held it returns NotAcquired straight away.
    #[test]
    fn try_lock_once_does_not_subscribe() {
        let mut h = Harness::new(Era::Redisson);
        h.call(
            T1,
            "l",
            Call::TryLock {
                wait: None,
                lease: None,
            },
        )
        .unwrap();
        let req = h.expect(Purpose::Acquire);
        h.reply(req, Value::Int(5_000));
        assert_eq!(h.expect_return(T1), Ok(CallOutcome::NotAcquired));
        h.expect_quiet();
        assert!(h.timers.is_empty());
    }

    /// Invalid arguments and a busy thread are refused at once; nothing is
    /// sent.
    #[test]
    fn bad_input_is_refused() {
        let mut h = Harness::new(Era::Redisson);
        let zero = Some(Millis(0));
        assert_eq!(
            h.call(T1, "l", Call::Lock { lease: zero }),
            Err(LockError::InvalidLease(0))
        );
        assert_eq!(
            h.call(
                T1,
                "l",
                Call::TryLock {
                    wait: zero,
                    lease: None
                }
            ),
            Err(LockError::InvalidWait(0))
        );
        assert_eq!(
            h.call(
                T1,
                "l",
                Call::TryLock {
                    wait: Some(Millis(5)),
                    lease: zero
                }
            ),
            Err(LockError::InvalidLease(0))
        );
        h.expect_quiet();
        h.call(T1, "l", Call::Lock { lease: None }).unwrap();
        let _ = h.expect(Purpose::Acquire);
        assert_eq!(
            h.call(T1, "other", Call::Unlock),
            Err(LockError::ThreadBusy(T1))
        );
        assert_eq!(
            LockError::ThreadBusy(T1).to_string(),
            "thread 1 already has a call in progress"
        );
        h.expect_quiet();
    }

    /// An explicit lease is sent as ARGV[1]; no watchdog timer is set.
    #[test]
    fn explicit_lease_has_no_watchdog() {
        let mut h = Harness::new(Era::Redisson);
        h.call(T1, "l", lock_with_lease(700)).unwrap();
        let (req, command) = h.expect_send();
        assert_eq!(&command[3..], ["l", "700", "uuid-a:1"]);
        h.reply(req, Value::Nil);
        h.expect_acquired(T1);
        assert!(h.timers.is_empty());
    }

    /// `fenced`: acquisition returns the script's token, and `token()`
    /// reports it while held.
    #[test]
    fn fenced_acquire_returns_the_token() {
        let mut h = Harness::new(Era::Fenced);
        let lock = LockName::new("l").unwrap();
        h.call(T1, "l", Call::Lock { lease: None }).unwrap();
        let req = h.expect(Purpose::Acquire);
        h.reply(req, Value::Array(vec![Value::Int(1), Value::Int(42)]));
        assert_eq!(
            h.expect_return(T1),
            Ok(CallOutcome::Acquired {
                token: Some(FencingToken(42))
            })
        );
        assert_eq!(h.m.token(T1, &lock), Some(FencingToken(42)));
        assert_eq!(h.m.token(T2, &lock), None);
    }
}
