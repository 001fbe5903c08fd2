//! `unlock` and `forceUnlock`.
//!
//! Unlock sends the unlock script with the lease the thread acquired with
//! (Redisson's `internalLockLeaseTime`) and, when it completes however it
//! completes, first cancels the thread's renewal (doc 004 `unlockAsync`:
//! `cancelExpirationRenewal(threadId)` in `onComplete`), then maps the reply.

use crate::Value;

use super::request::Owner;
use super::{CallKind, CallState, Caller, Hold, LockClient, Purpose, command};
use crate::kind::{Waits, Words};
use crate::{CallOutcome, LockError, LockName, Millis, Switch, ThreadId, TransportError};

impl LockClient {
    pub(super) fn start_unlock(&mut self, now: Millis, thread: ThreadId, lock: LockName) {
        let (command, latch) = self.unlock_command(now, thread, &lock, None);
        let caller = Caller::new(thread, lock.clone());
        self.calls.insert(
            caller.clone(),
            CallState {
                lock: lock.clone(),
                kind: CallKind::Unlock(latch),
            },
        );
        self.send(now, lock, Purpose::Unlock, command, Owner::Call(caller));
    }

    /// The release's unlock script for `thread`, with the latch key of
    /// this unlock (3.24+). A hold that remains is re-armed with the lease
    /// of the thread's latest acquisition (Redisson's
    /// `internalLockLeaseTime`): its hold's (unless a count-down reset it,
    /// 3.19.2 to 3.27.1), or the one its acquire in flight asked for.
    /// `latch`: keep this latch key (a retry of 3.52+) instead of a new one.
    pub(super) fn unlock_command(
        &mut self,
        now: Millis,
        thread: ThreadId,
        lock: &LockName,
        latch: Option<String>,
    ) -> (super::Command, Option<String>) {
        let pending = match self.calls.get(&Caller::new(thread, lock.clone())) {
            Some(CallState {
                kind: CallKind::Acquire(acquiring),
                ..
            }) => Some(acquiring.lease),
            _ => None,
        };
        let lease = pending
            .unwrap_or_else(|| {
                self.holds
                    .get(&(lock.clone(), thread))
                    .and_then(Hold::unlock_lease)
            })
            .unwrap_or(self.config.watchdog_timeout);
        let latch = latch.or_else(|| {
            self.switches.has(Switch::UnlockLatch).then(|| {
                self.unlocks += 1;
                lock.unlock_latch(&self.latch_id())
            })
        });
        let lease = self.wire.number(lease.0);
        let field = self.wire.field(&self.uuid, thread);
        let latched = match &latch {
            Some(latch) => {
                let ttl = self.latch_ttl();
                Some((latch, self.wire.signed(ttl)))
            }
            None => None,
        };
        let words = Words {
            switches: &self.switches,
            lock: &self.wire.lock(lock),
            thread_field: field,
            lease,
            now,
            waits: Waits::Unbounded,
            thread_wait: self.config.fair_lock_wait_timeout,
        };
        let command = lock.kind().unlock(
            &words,
            latched.as_ref().map(|(l, t)| (l.as_str(), t.clone())),
        );
        (command, latch)
    }

    /// Redisson's `generateId()` is 16 random bytes in hex; the machine
    /// draws no randomness, so the id is the client's uuid (itself drawn
    /// from the seed by the simulator) and the unlock's number, 32 hex
    /// digits: unique per unlock call and the same for its resends.
    /// Built by hand: `format!` with padding cost a thousand instructions
    /// an unlock, a hundredth of an explored seed.
    fn latch_id(&self) -> String {
        let hex = || self.uuid.bytes().filter(u8::is_ascii_hexdigit).take(16);
        let mut id = String::with_capacity(32);
        id.extend(std::iter::repeat_n('0', 16 - hex().count()));
        id.extend(hex().map(char::from));
        id.extend((0..16).rev().map(|i| {
            let digit = (self.unlocks >> (4 * i)) & 0xf;
            char::from_digit(digit as u32, 16).unwrap_or('0')
        }));
        id
    }

    /// `(timeout + retryDelay.calcDelay(retryAttempts)) * retryAttempts`
    /// in the release's Java arithmetic ([`crate::Config::latch_ttl`]):
    /// the latch outlives every resend of its unlock (random from 3.48),
    /// unless the product wraps to a TTL Redis refuses (#7089).
    fn latch_ttl(&mut self) -> i64 {
        let pause = self.retry_pause(self.config.retry_attempts);
        let switches = &self.switches;
        self.config.latch_ttl_with(pause, |s| switches.has(s))
    }

    /// An unlock's `WAIT` synced too few replicas: noted, and noted apart
    /// when the thread held the lock more than once (a count-down).
    fn reach_not_synced(&mut self, lock: &LockName, thread: ThreadId) {
        self.reach(super::Sometimes::UnlockNotSynced);
        let key = (lock.clone(), thread);
        if self.holds.get(&key).is_some_and(|hold| hold.count > 1) {
            self.reach(super::Sometimes::CountDownUnlockNotSynced);
        }
    }

    pub(super) fn on_unlock_reply(
        &mut self,
        now: Millis,
        caller: &Caller,
        reply: Result<Value, TransportError>,
        sent_at: Millis,
    ) {
        let thread = caller.thread;
        let Some((lock, latch)) = self.calls.get(caller).map(|call| {
            let latch = match &call.kind {
                CallKind::Unlock(latch) => latch.clone(),
                _ => None,
            };
            (call.lock.clone(), latch)
        }) else {
            return;
        };
        // `unlockInnerAsync(threadId)`: once the script answered, the latch
        // is deleted, fire and forget.
        if let (Some(latch), Ok(value)) = (&latch, &reply)
            && !matches!(value, Value::Error(_))
        {
            let command = command::del(latch);
            self.send(now, lock.clone(), Purpose::Cleanup, command, Owner::Nobody);
        }
        let parsed = reply
            .map_err(LockError::from)
            .and_then(|value| command::parse_unlock(&value));
        if matches!(
            parsed,
            Err(LockError::Transport(TransportError::NoSyncedReplicas(_)))
        ) {
            self.reach_not_synced(&lock, thread);
        }
        let paused = self.renewal_on_unlock(now, &lock, thread, &parsed);
        if matches!(
            parsed,
            Err(LockError::Transport(TransportError::NoSyncedReplicas(_)))
        ) && self.unlock_not_synced(now, caller)
        {
            return;
        }
        let key = (lock.clone(), thread);
        let result = match parsed {
            Ok(None) => {
                self.holds.remove(&key);
                Err(LockError::NotLockedByCurrentThread {
                    uuid: self.uuid.clone(),
                    thread,
                })
            }
            Ok(Some(false)) => {
                let mut lease = self.config.watchdog_timeout;
                // `cancelExpirationRenewal` after a count-down: from 3.19.2
                // it resets `internalLockLeaseTime`, until 3.27.2 even when
                // the lock is still held (#5623).
                let resets = self.switches.has(Switch::UnlockResetsLease)
                    && !self.switches.has(Switch::CountDownKeepsLease);
                if let Some(hold) = self.holds.get_mut(&key) {
                    hold.count = hold.count.saturating_sub(1).max(1);
                    lease = hold.unlock_lease().unwrap_or(lease);
                    hold.lease_reset |= resets;
                }
                // The script re-armed the key's expiry with that lease.
                self.rearm_deadline(&lock, sent_at.plus(lease));
                Ok(CallOutcome::Unlocked { released: false })
            }
            Ok(Some(true)) => {
                self.holds.remove(&key);
                Ok(CallOutcome::Unlocked { released: true })
            }
            Err(error) => Err(error),
        };
        if !self.holds.keys().any(|(l, _)| *l == lock) {
            self.drop_fence(&lock);
        }
        match paused {
            Some(step) => self.answer_after(step, (caller.clone(), result)),
            None => self.finish_call(caller, result),
        }
    }

    pub(super) fn start_force_unlock(&mut self, now: Millis, thread: ThreadId, lock: LockName) {
        // Redisson's forceUnlockAsync cancels renewal before it sends.
        self.cancel_renewal_all(&lock, "force-unlocked");
        let field = self.wire.field(&self.uuid, thread);
        let lease = self.wire.number(self.config.watchdog_timeout.0);
        let words = Words {
            switches: &self.switches,
            lock: &self.wire.lock(&lock),
            thread_field: field,
            lease,
            now,
            waits: Waits::Unbounded,
            thread_wait: self.config.fair_lock_wait_timeout,
        };
        let command = lock.kind().force_unlock(&words);
        let caller = Caller::new(thread, lock.clone());
        self.calls.insert(
            caller.clone(),
            CallState {
                lock: lock.clone(),
                kind: CallKind::ForceUnlock,
            },
        );
        let owner = Owner::Call(caller);
        self.send(now, lock, Purpose::ForceUnlock, command, owner);
    }

    pub(super) fn on_force_unlock_reply(
        &mut self,
        thread: ThreadId,
        reply: Result<Value, TransportError>,
    ) {
        let Some(lock) = self.call_of(thread).map(|call| call.lock.clone()) else {
            return;
        };
        let result = reply
            .map_err(LockError::from)
            .and_then(|value| command::parse_force_unlock(&value));
        if result == Ok(true) {
            if self.fences.contains_key(&lock) {
                // `fenced` promises its holders a signal when the lock is
                // gone; a sibling thread's forceUnlock is such a moment.
                self.lease_lost(&lock);
            } else {
                self.holds.retain(|(l, _), _| *l != lock);
            }
        }
        self.finish(thread, result.map(CallOutcome::Bool));
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{Harness, lock_with_lease};
    use crate::Value;
    use crate::{
        Call, CallOutcome, Era, Event, LockError, LockName, Millis, Purpose, ThreadId,
        TransportError,
    };

    const T1: ThreadId = ThreadId(1);

    fn stopped(reason: &str) -> Event {
        Event::RenewalStopped {
            lock: LockName::new("l").unwrap(),
            reason: reason.to_owned(),
        }
    }

    /// Re-entrancy (doc 004): two holds need two unlocks. The first
    /// decrements (reply 0, Unlocked{released:false}) and the watchdog keeps
    /// renewing; the second releases and stops the watchdog. A client that
    /// cancelled renewal on the first unlock would leave the remaining hold
    /// unrenewed.
    #[test]
    fn reentrant_unlock_needs_two_unlocks() {
        let mut h = Harness::new(Era::Redisson);
        h.acquire(T1, "l");
        h.acquire(T1, "l");
        h.call(T1, "l", Call::Unlock).unwrap();
        let (req, command) = h.expect_send();
        assert_eq!(
            &command[2..],
            [
                "2",
                "l",
                "redisson_lock__channel:{l}",
                "0",
                "30000",
                "uuid-a:1",
                "PUBLISH"
            ]
        );
        h.reply(req, Value::Int(0));
        assert_eq!(
            h.expect_return(T1),
            Ok(CallOutcome::Unlocked { released: false })
        );
        assert_eq!(
            h.next_timer_at(),
            Some(Millis(10_000)),
            "renewal still scheduled"
        );
        h.call(T1, "l", Call::Unlock).unwrap();
        let req = h.expect(Purpose::Unlock);
        h.reply(req, Value::Int(1));
        assert_eq!(h.expect_event(), stopped("unlocked"));
        assert_eq!(
            h.expect_return(T1),
            Ok(CallOutcome::Unlocked { released: true })
        );
        assert!(h.timers.is_empty());
    }

    /// Unlocking a lock the thread does not hold gives Redisson's
    /// IllegalMonitorStateException text, exactly (doc 001/004).
    #[test]
    fn unlock_not_held_has_redisson_text() {
        let mut h = Harness::new(Era::Redisson);
        h.call(ThreadId(7), "l", Call::Unlock).unwrap();
        let req = h.expect(Purpose::Unlock);
        h.reply(req, Value::Nil);
        let error = h.expect_return(ThreadId(7)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "attempt to unlock lock, not locked by current thread by node id: uuid-a thread-id: 7"
        );
    }

    /// Unlock sends the lease the lock was acquired with (Redisson's
    /// internalLockLeaseTime) so a partial unlock re-arms that lease.
    #[test]
    fn unlock_sends_the_acquire_lease() {
        let mut h = Harness::new(Era::Redisson);
        h.call(T1, "l", lock_with_lease(700)).unwrap();
        let req = h.expect(Purpose::Acquire);
        h.reply(req, Value::Nil);
        h.expect_return(T1).unwrap();
        h.call(T1, "l", Call::Unlock).unwrap();
        let (_, command) = h.expect_send();
        assert_eq!(command[6], "700");
    }

    /// An unlock that fails on the wire still cancels the renewal first
    /// (doc 004: onComplete cancels whatever the outcome); the caller gets
    /// the transport error.
    #[test]
    fn failed_unlock_cancels_renewal() {
        let mut h = Harness::new(Era::Redisson);
        h.acquire(T1, "l");
        h.call(T1, "l", Call::Unlock).unwrap();
        let req = h.expect(Purpose::Unlock);
        h.fail(req, TransportError::Connection("reset".into()));
        assert_eq!(h.expect_event(), stopped("unlocked"));
        assert_eq!(
            h.expect_return(T1),
            Err(LockError::Transport(TransportError::Connection(
                "reset".into()
            )))
        );
        assert!(h.timers.is_empty());
    }

    /// forceUnlock cancels the renewal before sending and reports whether
    /// a key was deleted.
    #[test]
    fn force_unlock() {
        let mut h = Harness::new(Era::Redisson);
        h.acquire(T1, "l");
        h.call(ThreadId(9), "l", Call::ForceUnlock).unwrap();
        assert_eq!(h.expect_event(), stopped("force-unlocked"));
        let (req, command) = h.expect_send();
        let args = ["2", "l", "redisson_lock__channel:{l}", "0", "PUBLISH"];
        assert_eq!(&command[2..], args);
        h.reply(req, Value::Int(1));
        assert_eq!(h.expect_return(ThreadId(9)), Ok(CallOutcome::Bool(true)));
        assert!(h.timers.is_empty());
        h.call(ThreadId(9), "l", Call::ForceUnlock).unwrap();
        let req = h.expect(Purpose::ForceUnlock);
        h.reply(req, Value::Int(0));
        assert_eq!(h.expect_return(ThreadId(9)), Ok(CallOutcome::Bool(false)));
    }

    /// A reply of the wrong shape to unlock is UnexpectedReply, not a panic.
    #[test]
    fn unlock_wrong_shape() {
        let mut h = Harness::new(Era::Redisson);
        h.call(T1, "l", Call::Unlock).unwrap();
        let req = h.expect(Purpose::Unlock);
        h.reply(req, Value::bulk("what"));
        assert!(matches!(
            h.expect_return(T1),
            Err(LockError::UnexpectedReply(_))
        ));
    }
}
