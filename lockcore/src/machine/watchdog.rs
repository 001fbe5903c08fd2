//! The watchdog: keeps a lock taken without a lease alive, per profile.
//!
//! This file holds the renewal entries shared by all profiles, the dispatch
//! to each profile's bookkeeping, and the `redisson` profile itself (doc 004
//! `scheduleExpirationRenewal` / `renewExpiration` /
//! `cancelExpirationRenewal`). `redisson-legacy` lives in `legacy.rs`,
//! `redisson-batched` in `batched.rs`, and `fenced` reuses this profile's
//! timers with its own reply handling in `fence.rs`.

use crate::Value;
use crate::kind::{Waits, Words};
use tracing::error;

use super::request::Owner;
use super::{Event, LockClient, Purpose, TimerKind, command};
use crate::{Era, LockError, LockName, Millis, Switch, ThreadId, TimerId, TransportError, VecMap};

/// Redisson's `ExpirationEntry` (`LockEntry` from 3.44): the client's
/// threads holding one lock with the watchdog, with their hold counts, in
/// the order the renewal picks them, and the pending renewal timer.
#[derive(Debug, Clone, Default)]
pub(super) struct RenewalEntry {
    counts: Vec<(ThreadId, u64)>,
    /// The renewal renews for the first; how threads enter and leave it
    /// depends on the release ([`Queueing`]).
    queue: Vec<ThreadId>,
    pub(super) timer: Option<TimerId>,
}

/// How an entry orders its threads, by release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Queueing {
    /// To 3.36: a `LinkedHashMap` of counts; each thread once.
    Distinct,
    /// 3.37.0 to 3.45.x (`thread-queue`): one queue place per hold, and the
    /// last unlock of a thread removes only one of them, so a re-entrant
    /// holder leaves a stale head behind (#6144).
    PerHold,
    /// 3.46.0 (`queue-cleared-on-unlock`): the last unlock removes all.
    PerHoldCleared,
}

impl RenewalEntry {
    pub(super) fn with_thread(thread: ThreadId, timer: Option<TimerId>) -> Self {
        RenewalEntry {
            counts: vec![(thread, 1)],
            queue: vec![thread],
            timer,
        }
    }

    /// `addThreadId`: one hold more.
    pub(super) fn add(&mut self, thread: ThreadId, queueing: Queueing) {
        match self.counts.iter_mut().find(|(t, _)| *t == thread) {
            Some((_, count)) => *count += 1,
            None => self.counts.push((thread, 1)),
        }
        if queueing != Queueing::Distinct || !self.queue.contains(&thread) {
            self.queue.push(thread);
        }
    }

    /// `removeThreadId`: one hold fewer (nothing for a thread without a
    /// count); returns whether the queue is empty (`hasNoThreads`).
    pub(super) fn remove(&mut self, thread: ThreadId, queueing: Queueing) -> bool {
        if let Some(i) = self.counts.iter().position(|(t, _)| *t == thread) {
            self.counts[i].1 -= 1;
            if self.counts[i].1 == 0 {
                self.counts.remove(i);
                match queueing {
                    // `threadsQueue.remove(threadId)`: the first only.
                    Queueing::PerHold => {
                        if let Some(at) = self.queue.iter().position(|t| *t == thread) {
                            self.queue.remove(at);
                        }
                    }
                    Queueing::Distinct | Queueing::PerHoldCleared => {
                        self.queue.retain(|t| *t != thread)
                    }
                }
            }
        }
        self.queue.is_empty()
    }

    /// `getFirstThreadId`: whom the renewal renews for.
    pub(super) fn first_thread(&self) -> Option<ThreadId> {
        self.queue.first().copied()
    }

    /// The threads with a hold, by id: `ReadLockTask`'s snapshot of
    /// `threadId2lockName` (4.4+).
    pub(super) fn threads_by_id(&self) -> Vec<ThreadId> {
        let mut threads: Vec<ThreadId> = self.counts.iter().map(|(t, _)| *t).collect();
        threads.sort();
        threads
    }

    /// Whether `thread` has a hold here (a stale head has none).
    pub(super) fn holds(&self, thread: ThreadId) -> bool {
        self.counts.iter().any(|(t, _)| *t == thread)
    }
}

/// The client's renewal state (Redisson's `EXPIRATION_RENEWAL_MAP`, scoped
/// to this client).
#[derive(Debug, Clone, Default)]
pub(super) struct Watchdog {
    pub(super) entries: VecMap<LockName, RenewalEntry>,
    /// `redisson-batched`: the single chain.
    pub(super) chain: Chain,
    /// The last round's number (see [`Chain::Round`]).
    pub(super) rounds: u64,
    /// 3.44+: the read locks' own chain.
    pub(super) read: super::read_task::ReadLockTask,
    /// 3.44+ in cluster mode: the length of `slot2names`'s table, whose
    /// bins order a round's slots (0 before its first slot).
    pub(super) slot_table: super::slot_table::SlotTable,
    /// `slots-renewed-apart`: each slot's own chain.
    pub(super) slot_chains: super::slots_apart::SlotChains,
}

/// The `redisson-batched` chain's state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) enum Chain {
    /// No round pending.
    #[default]
    Idle,
    /// The next round starts when this timer fires.
    Waiting(TimerId),
    /// A chunk of the round is out; these keys, read with the others, are
    /// looked up for the next chunk once it has answered. The round's
    /// number goes out with each chunk: a chunk of a round the chain
    /// stopped under (its map emptied: `RenewalTask.stop()` clears
    /// `running`, and the next lock starts a chain of its own at once)
    /// answers for its locks, but does not go on with the new chain.
    /// Redisson's stopped round carries on with its own chunks and, when
    /// a new chain runs, sets a second timer; the model keeps one chain.
    Round(Vec<LockName>, u64),
    /// A round has read the renewal map's keys and is paused before it
    /// looks their entries up (a callback step).
    Reading,
    /// A round threw (3.44.0 and 3.45.0, #6472): nothing sets the next
    /// one, and a new lock does not start one, until the map empties.
    Broken,
}

impl LockClient {
    /// How this release's renewal entries order their threads.
    pub(super) fn queueing(&self) -> Queueing {
        if !self.switches.has(Switch::ThreadQueue) {
            Queueing::Distinct
        } else if self.switches.has(Switch::QueueClearedOnUnlock) {
            Queueing::PerHoldCleared
        } else {
            Queueing::PerHold
        }
    }

    /// `scheduleExpirationRenewal(threadId)` after a watchdog acquisition.
    pub(super) fn schedule_renewal(&mut self, now: Millis, lock: &LockName, thread: ThreadId) {
        if self.renews_in_read_task(lock) {
            self.read_task_add(now, lock, thread);
            return;
        }
        match self.switches.bookkeeping() {
            Era::RedissonLegacy => self.legacy_schedule(now, lock, thread),
            Era::RedissonBatched => self.batched_schedule(now, lock, thread),
            Era::Redisson | Era::Fenced => {
                // An entry left behind by a renewal that stopped (before
                // `renewal-error-removes-entry` / `-zero-removes-entry`)
                // is joined like a live one: no timer starts (#3194, #3712).
                let queueing = self.queueing();
                if let Some(entry) = self.watchdog.entries.get_mut(lock) {
                    entry.add(thread, queueing);
                } else {
                    self.watchdog
                        .entries
                        .insert(lock.clone(), RenewalEntry::with_thread(thread, None));
                    self.renew_expiration(now, lock);
                }
            }
        }
    }

    /// `renewExpiration()`: a renewal T/3 from now, if the entry still exists.
    /// Like Redisson, the new timer replaces the entry's timer without
    /// cancelling the old one (normally the one that just fired).
    pub(super) fn renew_expiration(&mut self, now: Millis, lock: &LockName) {
        if !self.watchdog.entries.contains_key(lock) {
            return;
        }
        let at = now.plus(Millis(self.watchdog_lease(lock).0 / 3));
        let timer = self.set_timer(at, TimerKind::Renewal(lock.clone()));
        if let Some(entry) = self.watchdog.entries.get_mut(lock) {
            entry.timer = Some(timer);
        }
    }

    /// The renewal task: renew for the entry's first thread.
    pub(super) fn on_renewal_timer(&mut self, now: Millis, lock: LockName) {
        let Some(thread) = self
            .watchdog
            .entries
            .get(&lock)
            .and_then(RenewalEntry::first_thread)
        else {
            return;
        };
        self.send_renew(now, lock, thread);
    }

    pub(super) fn send_renew(&mut self, now: Millis, lock: LockName, thread: ThreadId) {
        let field = self.wire.field(&self.uuid, thread);
        self.send_renew_as(now, lock, thread, field);
    }

    /// A renewal for `thread` that checks `field` (the thread's own, or
    /// what a release sends for a thread without one).
    pub(super) fn send_renew_as(
        &mut self,
        now: Millis,
        lock: LockName,
        thread: ThreadId,
        field: bytes::Bytes,
    ) {
        let lease = self.wire.number(self.watchdog_lease(&lock).0);
        let words = Words {
            switches: &self.switches,
            lock: &self.wire.lock(&lock),
            thread_field: field,
            lease,
            now,
            waits: Waits::Unbounded,
            thread_wait: self.config.fair_lock_wait_timeout,
        };
        let command = lock.kind().renew(&words);
        let owner = Owner::Renew(lock.clone(), thread);
        self.send(now, lock, Purpose::Renew, command, owner);
    }

    pub(super) fn on_renew_reply(
        &mut self,
        now: Millis,
        lock: LockName,
        thread: ThreadId,
        reply: Result<Value, TransportError>,
        sent_at: Millis,
    ) {
        let parsed = reply
            .map_err(LockError::from)
            .and_then(|value| command::parse_renew(&value));
        self.reach_renewed(&parsed);
        match self.switches.bookkeeping() {
            Era::RedissonLegacy => self.legacy_renewed(now, lock, thread, parsed),
            Era::RedissonBatched => self.batched_renewed(now, lock, thread, parsed),
            Era::Fenced => self.fenced_renewed(now, lock, parsed, sent_at),
            Era::Redisson => self.entry_renewed(now, lock, parsed),
        }
    }

    /// A renewal's answer other than 1: noted.
    pub(super) fn reach_renewed(&mut self, parsed: &Result<bool, LockError>) {
        match parsed {
            Ok(true) => {}
            Ok(false) => self.reach(super::Sometimes::RenewalFoundLockGone),
            Err(_) => self.reach(super::Sometimes::RenewalFailed),
        }
    }

    /// `renewExpiration`'s reply handling, by release.
    fn entry_renewed(&mut self, now: Millis, lock: LockName, parsed: Result<bool, LockError>) {
        match parsed {
            Ok(true) => {
                self.event(Event::Renewed { lock: lock.clone() });
                self.renew_expiration(now, &lock);
            }
            // 3.10.5 to 3.12.4: `renewExpiration()` whatever `res` was.
            Ok(false) if !self.switches.has(Switch::RenewalZeroStops) => {
                self.renew_expiration(now, &lock);
            }
            Ok(false) if self.switches.has(Switch::RenewalZeroRemovesEntry) => {
                self.remove_entry(&lock, "not-held");
            }
            Ok(false) => self.keep_stale_entry(&lock, "not-held"),
            Err(e) => {
                error!(lock = %lock, error = %e, "can't update lock expiration; renewal stops");
                let reason = format!("error: {e}");
                if self.switches.has(Switch::RenewalErrorRemovesEntry) {
                    self.remove_entry(&lock, &reason);
                } else {
                    self.keep_stale_entry(&lock, &reason);
                }
            }
        }
    }

    /// The chain stops but the entry stays in the map: a later hold of the
    /// lock on this client joins it and is never renewed.
    fn keep_stale_entry(&mut self, lock: &LockName, reason: &str) {
        if let Some(entry) = self.watchdog.entries.get_mut(lock) {
            entry.timer = None;
            self.event(Event::RenewalStopped {
                lock: lock.clone(),
                reason: format!("{reason}; entry kept"),
            });
        }
    }

    /// Unlock completed: `cancelExpirationRenewal(threadId)` as the
    /// release does it. `reply`: the unlock script's answer (`Some(true)`
    /// released, `Some(false)` still held, `None` not held) or the error.
    /// The step the removal of the entry paused at, if it did: the unlock
    /// answers only after it.
    pub(super) fn renewal_on_unlock(
        &mut self,
        now: Millis,
        lock: &LockName,
        thread: ThreadId,
        reply: &Result<Option<bool>, LockError>,
    ) -> Option<crate::StepId> {
        match reply {
            Ok(None) => self.reach(super::Sometimes::UnlockFoundLockGone),
            Err(_) => self.reach(super::Sometimes::UnlockFailed),
            Ok(Some(_)) => {}
        }
        let cancels = match reply {
            Ok(Some(true)) => true,
            // Doc 001 (to 3.8.0): `if (opStatus) cancelExpirationRenewal();`
            Err(_) => self.switches.has(Switch::UnlockErrorCancels),
            // A re-entrant hold counted down: one count off the entry.
            Ok(Some(false)) => self.switches.has(Switch::ExpirationEntry),
            Ok(None) => self.switches.has(Switch::NilUnlockCancels),
        };
        if !cancels {
            return None;
        }
        if self.switches.bookkeeping() == Era::RedissonLegacy {
            // No per-thread counts before `expiration-entry`: the entry goes.
            self.remove_entry(lock, "unlocked");
            return None;
        }
        let write;
        let lock = if self.renews_in_read_task(lock) {
            // `RedissonReadLock.cancelExpirationRenewal`: its own entry,
            // then `super`'s cancel in `LockTask` under the raw name K,
            // which there is the write lock's entry.
            self.read_task_cancel(lock, Some(thread), "unlocked");
            write = lock.with_kind(crate::LockKind::Write);
            &write
        } else {
            lock
        };
        let queueing = self.queueing();
        let entry = self.watchdog.entries.get_mut(lock)?;
        if !entry.remove(thread, queueing) {
            return None;
        }
        // The entry is empty; before 4.4.0 the map loses it in a second
        // step, which another callback can come before (#6844). Without
        // interleaving nothing can, and the switch is not asked (see
        // `LockClient::switches_read`).
        if self.interleaving {
            self.reach(super::Sometimes::RenewalMapRace);
        }
        if self.interleaving && !self.switches.has(Switch::AtomicRenewalMap) {
            let rest = super::step::Continuation::RemoveEntry(lock.clone(), None);
            self.pause_callback(now, rest)
        } else {
            self.remove_entry(lock, "unlocked");
            None
        }
    }

    /// `cancelExpirationRenewal(null)`: the whole entry goes; a 3.44+
    /// read lock's in `ReadLockTask` and, under K, `LockTask`'s (the write
    /// lock's).
    pub(super) fn cancel_renewal_all(&mut self, lock: &LockName, reason: &str) {
        if self.renews_in_read_task(lock) {
            self.read_task_cancel(lock, None, reason);
            self.remove_entry(&lock.with_kind(crate::LockKind::Write), reason);
        } else {
            self.remove_entry(lock, reason);
        }
    }

    /// Removes `lock`'s entry, cancels its timer and reports why; returns
    /// whether there was one.
    pub(super) fn remove_entry(&mut self, lock: &LockName, reason: &str) -> bool {
        let Some(entry) = self.watchdog.entries.remove(lock) else {
            return false;
        };
        if let Some(timer) = entry.timer {
            self.cancel_timer(timer);
        }
        self.event(Event::RenewalStopped {
            lock: lock.clone(),
            reason: reason.to_owned(),
        });
        // The last entry gone stops the chain (`RenewalTask.stop()`); a
        // round out still answers, a paused one finds nothing to do, and
        // the next lock starts a chain without waiting for either (4.7.0
        // seed 35552: a lock taken while the round's renewal was lost to
        // a drop waited for its timeout, and expired unrenewed).
        if self.renews_slots_apart() {
            self.slot_chain_removed(lock);
        }
        if self.watchdog.entries.is_empty() {
            if let Chain::Waiting(timer) = self.watchdog.chain {
                self.cancel_timer(timer);
            }
            self.watchdog.chain = Chain::Idle;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::Harness;
    use crate::Value;
    use crate::{Call, Era, Event, LockName, Millis, Purpose, ThreadId, TransportError};

    const T1: ThreadId = ThreadId(1);

    fn lock() -> LockName {
        LockName::new("l").unwrap()
    }

    /// Doc 002/004: with no lease the key gets the watchdog timeout and is
    /// renewed every T/3 (1 000 ms of 3 000), each renewal scheduled T/3
    /// after the previous one answered, carrying T and the thread's field.
    #[test]
    fn renews_every_third_of_the_timeout() {
        let mut h = Harness::short(Era::Redisson);
        h.acquire(T1, "l");
        assert_eq!(h.next_timer_at(), Some(Millis(1_000)));
        for round in 1..=3u64 {
            h.advance_to(Millis(round * 1_000 + (round - 1) * 10));
            let (req, purpose, command) = h.expect_send_purpose();
            assert_eq!(purpose, Purpose::Renew);
            assert_eq!(&command[2..], ["1", "l", "3000", "uuid-a:1"]);
            h.advance(10);
            h.reply(req, Value::Int(1));
            assert_eq!(h.expect_event(), Event::Renewed { lock: lock() });
            assert_eq!(h.next_timer_at(), Some(Millis(round * 1_010 + 1_000)));
        }
    }

    /// A renewal answering 0 (the key is no longer ours) cancels renewal:
    /// no timer remains.
    #[test]
    fn zero_stops_renewal() {
        let mut h = Harness::short(Era::Redisson);
        h.acquire(T1, "l");
        let req = h.renewal_due();
        h.reply(req, Value::Int(0));
        assert_eq!(
            h.expect_event(),
            Event::RenewalStopped {
                lock: lock(),
                reason: "not-held".into()
            }
        );
        assert!(h.timers.is_empty());
        h.advance(10_000);
        h.expect_quiet();
    }

    /// Doc 002's finding: a renewal that fails (here it times out) drops
    /// the entry and renewal stops for good, though the thread still
    /// believes it holds the lock. A watchdog that retried would send
    /// another renewal in the next 10 s.
    #[test]
    fn error_stops_renewal_for_good() {
        let mut h = Harness::short(Era::Redisson);
        h.acquire(T1, "l");
        let _req = h.renewal_due();
        h.advance(100);
        assert_eq!(
            h.expect_event(),
            Event::RenewalStopped {
                lock: lock(),
                reason: "error: transport error: timed out waiting for a reply".into()
            }
        );
        h.advance(10_000);
        h.expect_quiet();
        // Unlock later still works and finds no renewal to cancel.
        h.call(T1, "l", Call::Unlock).unwrap();
        let req = h.expect(Purpose::Unlock);
        h.reply(req, Value::Int(1));
        assert!(h.expect_return(T1).is_ok());
    }

    /// The race that breaks `redisson-legacy` does not break `redisson`:
    /// the renewal reply handled after the unlock finds no entry and
    /// schedules nothing, so no renewal is sent after the unlock.
    #[test]
    fn renewal_reply_after_unlock_schedules_nothing() {
        let mut h = Harness::short(Era::Redisson);
        h.acquire(T1, "l");
        let renew = h.renewal_due();
        h.call(T1, "l", Call::Unlock).unwrap();
        let unlock = h.expect(Purpose::Unlock);
        h.reply(unlock, Value::Int(1));
        let _ = h.expect_event();
        h.expect_return(T1).unwrap();
        h.reply(renew, Value::Int(1));
        assert_eq!(h.expect_event(), Event::Renewed { lock: lock() });
        h.advance(10_000);
        h.expect_quiet();
    }

    /// A connection error during renewal is logged and stops renewal too.
    #[test]
    fn connection_error_stops_renewal() {
        let mut h = Harness::short(Era::Redisson);
        h.acquire(T1, "l");
        let req = h.renewal_due();
        h.fail(req, TransportError::Connection("gone".into()));
        assert!(matches!(h.expect_event(), Event::RenewalStopped { .. }));
        assert!(h.timers.is_empty());
    }
}
