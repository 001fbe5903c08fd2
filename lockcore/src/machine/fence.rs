//! `fenced`: lease deadlines, lease-lost signals and persistent renewal.
//!
//! Beyond Redisson. The client tracks, per lock, the deadline by which the
//! key must have expired unless renewed: the send time of the last
//! successful acquire or renewal plus its lease (measured from when the
//! command was sent, so it is never later than Redis's own expiry). A timer
//! at the deadline emits [`Event::LeaseLost`] if no renewal moved it; a
//! renewal answering 0 does the same at once. Renewal runs like
//! `redisson`'s, but an error is retried after `min(retry_interval, T/3)`
//! for as long as the deadline is ahead.

use tracing::warn;

use super::{Event, LockClient, TimerKind};
use crate::{LockError, LockName, Millis, TimerId};

/// A held lock's deadline and the timer that watches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Fence {
    deadline: Millis,
    timer: TimerId,
}

impl LockClient {
    /// Sets (or moves) `lock`'s deadline. A deadline already past still
    /// gets a timer: the driver fires it at once and the lease is lost.
    pub(super) fn arm_deadline(&mut self, lock: &LockName, deadline: Millis) {
        if let Some(old) = self.fences.remove(lock) {
            self.cancel_timer(old.timer);
        }
        // The timer wheel fires up to a tick late; the lease-lost signal
        // must come by the deadline, so it is asked for a tick early.
        let early = Millis(deadline.0.saturating_sub(self.config.timer_tick.0));
        let timer = self.set_timer(early, TimerKind::LeaseDeadline(lock.clone()));
        self.fences.insert(lock.clone(), Fence { deadline, timer });
    }

    /// Moves the deadline of a lock that has one (`fenced` only).
    pub(super) fn rearm_deadline(&mut self, lock: &LockName, deadline: Millis) {
        if self.fences.contains_key(lock) {
            self.arm_deadline(lock, deadline);
        }
    }

    /// Forgets `lock`'s deadline (released).
    pub(super) fn drop_fence(&mut self, lock: &LockName) {
        if let Some(fence) = self.fences.remove(lock) {
            self.cancel_timer(fence.timer);
        }
    }

    pub(super) fn on_lease_deadline(&mut self, _now: Millis, lock: LockName) {
        self.lease_lost(&lock);
    }

    /// The lease of `lock` is gone: stop renewing, forget the holds, tell
    /// the holders.
    pub(super) fn lease_lost(&mut self, lock: &LockName) {
        self.drop_fence(lock);
        self.remove_entry(lock, "lease-lost");
        let threads: Vec<_> = self
            .holds
            .keys()
            .filter(|(l, _)| l == lock)
            .map(|(_, t)| *t)
            .collect();
        self.holds.retain(|(l, _), _| l != lock);
        self.event(Event::LeaseLost {
            lock: lock.clone(),
            threads,
        });
    }

    pub(super) fn fenced_renewed(
        &mut self,
        now: Millis,
        lock: LockName,
        parsed: Result<bool, LockError>,
        sent_at: Millis,
    ) {
        match parsed {
            Ok(true) => {
                self.event(Event::Renewed { lock: lock.clone() });
                self.rearm_deadline(&lock, sent_at.plus(self.config.watchdog_timeout));
                self.renew_expiration(now, &lock);
            }
            Ok(false) => {
                self.remove_entry(&lock, "not-held");
                if self.fences.contains_key(&lock) {
                    self.lease_lost(&lock);
                }
            }
            Err(e) => {
                if !self.watchdog.entries.contains_key(&lock) {
                    warn!(lock = %lock, error = %e, "renewal failed after renewal stopped");
                    return;
                }
                match self.fences.get(&lock).map(|f| f.deadline) {
                    Some(deadline) if now < deadline => {
                        warn!(lock = %lock, error = %e, "renewal failed; retrying before the lease ends");
                        let pause = self
                            .config
                            .retry_interval
                            .min(self.config.renewal_interval());
                        let timer =
                            self.set_timer(now.plus(pause), TimerKind::Renewal(lock.clone()));
                        if let Some(entry) = self.watchdog.entries.get_mut(&lock) {
                            entry.timer = Some(timer);
                        }
                    }
                    Some(_) => self.lease_lost(&lock),
                    None => {
                        self.remove_entry(&lock, &format!("error: {e}"));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::{Harness, lock_with_lease};
    use crate::Value;
    use crate::{
        Call, CallOutcome, Config, Era, Event, FencingToken, LockName, Millis, Purpose, ThreadId,
        TransportError,
    };

    const T1: ThreadId = ThreadId(1);

    fn lock() -> LockName {
        LockName::new("l").unwrap()
    }

    fn lost() -> Event {
        Event::LeaseLost {
            lock: lock(),
            threads: vec![T1],
        }
    }

    /// Renewal failures are retried every min(retry_interval, T/3) while
    /// the lease may still be alive; when the deadline (send time of the
    /// acquire + T = 3 000) passes without a successful renewal the holder
    /// gets LeaseLost and renewal stops. `redisson` would have stopped after
    /// the first error and never told the holder.
    #[test]
    fn retries_until_the_deadline_then_lease_lost() {
        let config = Config::builder()
            .era(Era::Fenced)
            .watchdog_timeout(3_000)
            .response_timeout(100)
            .retry_attempts(0)
            .retry_interval(400)
            .build()
            .unwrap();
        let mut h = Harness::with_config(config);
        h.acquire(T1, "l");
        let mut sends = Vec::new();
        while let Some(at) = h.next_timer_at() {
            h.advance_to(at);
            match h.next() {
                Some(crate::Output::Send {
                    request,
                    purpose: Purpose::Renew,
                    ..
                }) => {
                    sends.push(h.now.0);
                    h.fail(request, TransportError::Connection("down".into()));
                }
                Some(crate::Output::Event(event)) => {
                    assert_eq!(
                        event,
                        Event::RenewalStopped {
                            lock: lock(),
                            reason: "lease-lost".into()
                        }
                    );
                    assert_eq!(h.expect_event(), lost());
                    break;
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(sends, [1_000, 1_400, 1_800, 2_200, 2_600]);
        assert_eq!(h.now, Millis(3_000));
        assert_eq!(h.m.token(T1, &lock()), None);
        assert!(h.timers.is_empty());
    }

    /// A successful renewal moves the deadline to its send time + T.
    #[test]
    fn renewal_moves_the_deadline() {
        let mut h = Harness::short(Era::Fenced);
        h.acquire(T1, "l");
        let req = h.renewal_due();
        h.advance(50);
        h.reply(req, Value::Int(1));
        assert_eq!(h.expect_event(), Event::Renewed { lock: lock() });
        let mut at: Vec<Millis> = h.timers.values().copied().collect();
        at.sort();
        assert_eq!(at, [Millis(2_050), Millis(4_000)]);
    }

    /// A renewal answering 0 means the key is gone: LeaseLost at once.
    #[test]
    fn zero_means_lease_lost() {
        let mut h = Harness::short(Era::Fenced);
        h.acquire(T1, "l");
        let req = h.renewal_due();
        h.reply(req, Value::Int(0));
        assert!(matches!(h.expect_event(), Event::RenewalStopped { .. }));
        assert_eq!(h.expect_event(), lost());
        assert!(h.timers.is_empty());
    }

    /// With an explicit lease there is no renewal, and the holder is told
    /// when the lease (from the acquire's send time) ends.
    #[test]
    fn explicit_lease_ends_with_lease_lost() {
        let mut h = Harness::short(Era::Fenced);
        h.call(T1, "l", lock_with_lease(700)).unwrap();
        let req = h.expect(Purpose::Acquire);
        h.advance(20);
        h.reply(req, Value::Array(vec![Value::Int(1), Value::Int(5)]));
        assert_eq!(
            h.expect_return(T1),
            Ok(CallOutcome::Acquired {
                token: Some(FencingToken(5))
            })
        );
        h.advance(679);
        h.expect_quiet();
        h.advance(1);
        assert_eq!(h.expect_event(), lost());
    }

    /// A sibling's forceUnlock deletes the key the holder relies on: the
    /// holder gets LeaseLost at once (found by exploration, seed 438:
    /// without it the holder went on believing it held the lock while
    /// other clients acquired it).
    #[test]
    fn sibling_force_unlock_is_lease_lost() {
        let mut h = Harness::short(Era::Fenced);
        h.acquire(T1, "l");
        h.call(ThreadId(2), "l", Call::ForceUnlock).unwrap();
        assert!(matches!(h.expect_event(), Event::RenewalStopped { .. }));
        let req = h.expect(Purpose::ForceUnlock);
        h.reply(req, Value::Int(1));
        assert_eq!(h.expect_event(), lost());
        assert_eq!(h.expect_return(ThreadId(2)), Ok(CallOutcome::Bool(true)));
        assert!(h.timers.is_empty());
        assert_eq!(h.m.token(T1, &lock()), None);
    }

    /// Releasing the lock forgets the deadline: no LeaseLost later.
    #[test]
    fn unlock_clears_the_deadline() {
        let mut h = Harness::short(Era::Fenced);
        h.acquire(T1, "l");
        h.call(T1, "l", Call::Unlock).unwrap();
        let req = h.expect(Purpose::Unlock);
        h.reply(req, Value::Int(1));
        let _ = h.expect_event();
        h.expect_return(T1).unwrap();
        assert!(h.timers.is_empty());
        assert_eq!(h.m.token(T1, &lock()), None);
        h.advance(10_000);
        h.expect_quiet();
    }
}
