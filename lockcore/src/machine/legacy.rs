//! `redisson-legacy`: the renewal bookkeeping of docs 001 and 003.
//!
//! `scheduleExpirationRenewal(threadId)` returns if the lock already has an
//! entry; else it creates a task T/3 ahead that renews for the captured
//! thread and puts `(thread, task)` in the map. When the renewal completes,
//! however it completes, the entry is removed first; then an error is
//! logged and renewal stops, 1 schedules again, 0 stops. Unlock cancels (only
//! when it released the lock) by removing the entry and cancelling its task.
//!
//! The real bug is kept: a renewal that ran before the unlock but whose reply
//! is handled after the unlock completed finds no entry, and its 1
//! schedules a fresh renewal for a lock no longer held.

use tracing::error;

use super::watchdog::RenewalEntry;
use super::{Event, LockClient, TimerKind};
use crate::{LockError, LockName, Millis, ThreadId};

impl LockClient {
    pub(super) fn legacy_schedule(&mut self, now: Millis, lock: &LockName, thread: ThreadId) {
        if self.watchdog.entries.contains_key(lock) {
            return;
        }
        let at = now.plus(self.config.renewal_interval());
        let timer = self.set_timer(at, TimerKind::LegacyRenewal(lock.clone(), thread));
        self.watchdog
            .entries
            .insert(lock.clone(), RenewalEntry::with_thread(thread, Some(timer)));
    }

    /// The task fires: renew for the thread it captured, entry or not.
    pub(super) fn on_legacy_timer(&mut self, now: Millis, lock: LockName, thread: ThreadId) {
        self.send_renew(now, lock, thread);
    }

    pub(super) fn legacy_renewed(
        &mut self,
        now: Millis,
        lock: LockName,
        thread: ThreadId,
        parsed: Result<bool, LockError>,
    ) {
        // `expirationRenewalMap.remove(getEntryName())`: no task is cancelled.
        self.watchdog.entries.remove(&lock);
        match parsed {
            Ok(true) => {
                self.event(Event::Renewed { lock: lock.clone() });
                self.legacy_schedule(now, &lock, thread);
            }
            Ok(false) => self.event(Event::RenewalStopped {
                lock,
                reason: "not-held".to_owned(),
            }),
            Err(e) => {
                error!(lock = %lock, error = %e, "can't update lock expiration; renewal stops");
                self.event(Event::RenewalStopped {
                    lock,
                    reason: format!("error: {e}"),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::Harness;
    use crate::Value;
    use crate::{Call, CallOutcome, Era, Event, LockName, Millis, Purpose, ThreadId};

    const T1: ThreadId = ThreadId(1);

    fn lock() -> LockName {
        LockName::new("l").unwrap()
    }

    /// Docs 001/003: each renewal completes by removing the entry and, on
    /// 1, registering it again, with a new task T/3 after the reply.
    #[test]
    fn entry_is_removed_and_registered_again() {
        let mut h = Harness::short(Era::RedissonLegacy);
        h.acquire(T1, "l");
        assert_eq!(h.next_timer_at(), Some(Millis(1_000)));
        h.advance(1_000);
        let (req, command) = h.expect_send();
        assert_eq!(&command[2..], ["1", "l", "3000", "uuid-a:1"]);
        assert!(h.m.watchdog.entries.contains_key(&lock()));
        h.advance(5);
        h.reply(req, Value::Int(1));
        assert_eq!(h.expect_event(), Event::Renewed { lock: lock() });
        assert_eq!(h.next_timer_at(), Some(Millis(2_005)));
        assert!(h.m.watchdog.entries.contains_key(&lock()));
    }

    /// The real bug of the legacy bookkeeping: a renewal that ran before
    /// the unlock but whose reply is handled after the unlock completed
    /// registers a fresh renewal, and a renewal command goes out for a
    /// lock the client released. The simulator's renewal-after-unlock
    /// checker must catch this; under `redisson` the same script sends
    /// nothing (see watchdog.rs).
    #[test]
    fn renewal_after_unlock_race() {
        let mut h = Harness::short(Era::RedissonLegacy);
        h.acquire(T1, "l");
        let renew = h.renewal_due();
        h.call(T1, "l", Call::Unlock).unwrap();
        let unlock = h.expect(Purpose::Unlock);
        h.reply(unlock, Value::Int(1));
        assert!(matches!(h.expect_event(), Event::RenewalStopped { .. }));
        assert_eq!(
            h.expect_return(T1),
            Ok(CallOutcome::Unlocked { released: true })
        );
        h.reply(renew, Value::Int(1));
        assert_eq!(h.expect_event(), Event::Renewed { lock: lock() });
        let late = h.renewal_due();
        h.reply(late, Value::Int(0));
        assert!(matches!(h.expect_event(), Event::RenewalStopped { .. }));
        assert!(h.timers.is_empty());
    }

    /// Doc 001: unlock cancels renewal only when it released the lock; a
    /// partial unlock of a re-entrant hold keeps renewing.
    #[test]
    fn partial_unlock_keeps_renewing() {
        let mut h = Harness::short(Era::RedissonLegacy);
        h.acquire(T1, "l");
        h.acquire(T1, "l");
        h.call(T1, "l", Call::Unlock).unwrap();
        let req = h.expect(Purpose::Unlock);
        h.reply(req, Value::Int(0));
        assert_eq!(
            h.expect_return(T1),
            Ok(CallOutcome::Unlocked { released: false })
        );
        let _ = h.renewal_due();
    }

    /// An error stops renewal (the entry was already removed).
    #[test]
    fn error_stops() {
        let mut h = Harness::short(Era::RedissonLegacy);
        h.acquire(T1, "l");
        let req = h.renewal_due();
        h.reply(req, Value::Error("LOADING Redis is loading".into()));
        assert_eq!(
            h.expect_event(),
            Event::RenewalStopped {
                lock: lock(),
                reason: "error: transport error: LOADING Redis is loading".into()
            }
        );
        assert!(h.timers.is_empty());
        assert!(h.m.watchdog.entries.is_empty());
    }
}
