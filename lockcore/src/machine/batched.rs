//! `redisson-batched`: one renewal chain per client (Redisson 3.44+).
//!
//! When the first watchdog lock registers, a single timer T/3 ahead; when it
//! fires, the round renews every held watchdog lock (in lock-name order) in
//! one EVAL per chunk of `lockWatchdogBatchSize` (100) locks, chunk after
//! chunk; when the last has answered (or one failed), the next round is
//! set T/3 later if any entry remains. A 0 takes that thread's hold off
//! that lock's entry; an error is logged and every entry kept, so the next
//! round retries them. The last entry removed stops the chain
//! (`RenewalTask.stop()`), even with a round out: the next lock starts a
//! chain of its own at once.

use std::collections::VecDeque;

use bytes::Bytes;
use tracing::warn;

use super::command;
use super::request::Owner;
use super::step::Continuation;
use super::watchdog::Chain;
use super::{Event, LockClient, Purpose, TimerKind};
use crate::{LockError, LockName, Millis, Switch, ThreadId, TransportError, Value};

/// How many distinct slots `locks` hash to (none outside cluster mode).
pub(super) fn held_slots<'a>(
    locks: impl Iterator<Item = &'a LockName>,
    slot: impl Fn(&LockName) -> Option<u16>,
) -> usize {
    let mut slots: Vec<u16> = locks.filter_map(slot).collect();
    slots.sort_unstable();
    slots.dedup();
    slots.len()
}

impl LockClient {
    pub(super) fn batched_schedule(&mut self, now: Millis, lock: &LockName, thread: ThreadId) {
        let queueing = self.queueing();
        self.watchdog
            .entries
            .get_or_default(lock.clone())
            .add(thread, queueing);
        self.grow_slot_table();
        if self.renews_slots_apart() {
            self.slot_chain_add(now, lock);
        } else if self.watchdog.chain == Chain::Idle {
            self.start_next_round(now);
        }
    }

    fn start_next_round(&mut self, now: Millis) {
        let at = now.plus(self.config.renewal_interval());
        let timer = self.set_timer(at, TimerKind::BatchRound);
        self.watchdog.chain = Chain::Waiting(timer);
    }

    pub(super) fn on_batch_timer(&mut self, now: Millis) {
        // Every release pauses here, so that turning the fix on changes
        // only what a missing entry does, not when the round goes out.
        self.watchdog.chain = Chain::Reading;
        let mut locks: Vec<LockName> = self.watchdog.entries.keys().cloned().collect();
        // `renewSlots`: slot after slot, as `slot2names.values()` walks
        // them (see `SlotTable`), name order within a slot.
        let table = self.watchdog.slot_table;
        locks.sort_by_key(|lock| self.renewal_slot(lock).map(|s| table.place(s)));
        self.pause_callback(now, Continuation::Round(locks));
    }

    /// The slot a round groups `lock` under: `Some` in cluster mode (from
    /// 3.44.0, `isClusterSetup()`), or behind a cluster proxy with PR
    /// #7114's real slots (`renewal-by-slot`); outside cluster mode every
    /// release's own grouping puts all keys in slot 0, one group.
    pub(super) fn renewal_slot(&self, lock: &LockName) -> Option<u16> {
        (self.config.cluster_shards > 0
            || (self.config.cluster_proxy && self.switches.has(Switch::RenewalBySlot)))
        .then(|| crate::calc_slot(lock.as_str()))
    }

    /// `slot2names` took a slot (`RenewalTask.addSlotName`).
    fn grow_slot_table(&mut self) {
        let held = held_slots(self.watchdog.entries.keys(), |l| self.renewal_slot(l));
        self.watchdog.slot_table.hold(held);
    }

    /// The round looks up the entries of `locks`, the keys it read, and
    /// renews each entry's first thread, one chunk of
    /// `lockWatchdogBatchSize` locks per EVAL, the next chunk once the
    /// previous one answered (`LockTask.renew`, 3.44.0 to 4.7.0). An entry
    /// gone since (unlocked meanwhile) is skipped from 3.45.1; before, the
    /// lookup threw and the chain stopped (#6472).
    pub(super) fn batched_round(&mut self, now: Millis, locks: Vec<LockName>) {
        if self.watchdog.chain != Chain::Reading {
            // The map emptied while the round was paused: the chain
            // stopped, and a lock taken since started a chain of its own.
            return;
        }
        self.send_chunk(now, locks.into(), true);
    }

    /// Builds the next chunk from `keys` and sends it; `first`: the round's
    /// first chunk, built on the timer's thread, where a throw escapes
    /// `RenewalTask.run` and nothing sets the next round. A later chunk is
    /// built in the previous one's callback, where a throw only fails the
    /// round's future: logged, and the next round is set.
    fn send_chunk(&mut self, now: Millis, mut keys: VecDeque<LockName>, first: bool) {
        // `renew(iter)` starts with `if (!iter.hasNext())`: every key read
        // has gone out, and the round is over.
        if keys.is_empty() {
            self.round_done(now);
            return;
        }
        let size = self.config.watchdog_batch_size.max(1) as usize;
        let mut chunk: Vec<(LockName, ThreadId, Bytes)> = Vec::new();
        let slot = keys.front().and_then(|lock| self.renewal_slot(lock));
        while chunk.len() < size {
            // A slot's last chunk ends at the next slot's first key.
            if keys
                .front()
                .is_some_and(|lock| self.renewal_slot(lock) != slot)
            {
                break;
            }
            let Some(lock) = keys.pop_front() else {
                break;
            };
            let Some(entry) = self.watchdog.entries.get(&lock) else {
                self.reach(super::Sometimes::RoundSkippedLock);
                if self.switches.has(Switch::RoundSkipsRemovedLock) {
                    continue;
                }
                warn!(lock = %lock, "the renewal round looked up a removed lock");
                self.round_threw(now, "NullPointerException", first);
                return;
            };
            if let Some(thread) = entry.first_thread() {
                let holds = entry.holds(thread);
                let field = self.renew_field(&lock, thread, holds);
                chunk.push((lock, thread, field));
            }
        }
        if chunk.is_empty() {
            // Keys were left, but none had a thread to renew: before
            // 3.46.0 `keys.get(0)` of the empty chunk threw (#6506).
            self.reach(super::Sometimes::RoundEmptyChunk);
            if !self.switches.has(Switch::EmptyChunkCompletes) {
                self.round_threw(now, "IndexOutOfBoundsException", first);
            } else if keys.is_empty() {
                self.round_done(now);
            } else {
                // The slot's `renew` completed at once, and `renewSlots`
                // goes on to the next slot on the same stack.
                self.send_chunk(now, keys, first);
            }
            return;
        }
        let round = match self.watchdog.chain {
            Chain::Round(_, round) => round,
            _ => {
                self.watchdog.rounds += 1;
                self.watchdog.rounds
            }
        };
        self.watchdog.chain = Chain::Round(keys.into(), round);
        self.send_renew_chunk(now, chunk, round);
    }

    /// The field a renewal of `lock` for its entry's first thread checks
    /// (`holds`: whether the entry still counts the thread's holds).
    pub(super) fn renew_field(&mut self, lock: &LockName, thread: ThreadId, holds: bool) -> Bytes {
        if holds {
            // The write lock's `LockTask` entry renews `<uuid>:<tid>:write`.
            lock.kind().field(&self.wire.field(&self.uuid, thread))
        } else {
            // A stale head (`thread-queue`): `LockEntry.getLockName`
            // has forgotten it and returns null, which Redisson's
            // `CommandEncoder` sends as an empty argument (3.45.1).
            Bytes::new()
        }
    }

    /// Sends one chunk of round `round`.
    pub(super) fn send_renew_chunk(
        &mut self,
        now: Millis,
        chunk: Vec<(LockName, ThreadId, Bytes)>,
        round: u64,
    ) {
        let lease = self.wire.number(self.config.watchdog_timeout.0);
        let words: Vec<(Bytes, Bytes)> = chunk
            .iter()
            .map(|(lock, _, field)| (self.wire.lock(lock).key.clone(), field.clone()))
            .collect();
        let command = command::renew_batch(&words, lease);
        // Redisson routes the chunk by its first key (`syncedEval(firstName, ...)`).
        let routed = chunk[0].0.clone();
        let owner = Owner::RenewChunk(chunk.into_iter().map(|(l, t, _)| (l, t)).collect(), round);
        self.send(now, routed, Purpose::Renew, command, owner);
    }

    /// The round threw `exception`: a lookup of a removed entry (3.44.0
    /// and 3.45.0, #6472) or an empty chunk (to 3.45.x, #6506).
    fn round_threw(&mut self, now: Millis, exception: &str, first: bool) {
        if !first {
            warn!("renewal round threw {exception}; the next round retries");
            self.round_done(now);
            return;
        }
        warn!("renewal round threw {exception}; no lock of this client is renewed again");
        self.watchdog.chain = Chain::Broken;
        // The entries stay in the map, but nothing renews them.
        let held: Vec<LockName> = self.watchdog.entries.keys().cloned().collect();
        for lock in held {
            self.event(Event::RenewalStopped {
                lock,
                reason: "round-threw".to_owned(),
            });
        }
    }

    /// The round is over: the next one T/3 later, if any entry remains
    /// (`RenewalTask.run`'s `whenComplete`; `schedule()` does nothing once
    /// the map emptied and `stop()` ran).
    fn round_done(&mut self, now: Millis) {
        if self.watchdog.entries.is_empty() {
            self.watchdog.chain = Chain::Idle;
        } else {
            self.start_next_round(now);
        }
    }

    /// A chunk's reply: each lock renewed or not, then the next chunk. An
    /// error (or a reply the decoder refuses) is logged and ends the round,
    /// every entry kept, so the next round retries them.
    pub(super) fn chunk_renewed(
        &mut self,
        now: Millis,
        (chunk, round): (Vec<(LockName, ThreadId)>, u64),
        reply: Result<Value, TransportError>,
    ) {
        if self.renews_slots_apart() {
            self.slot_chunk_renewed(now, (chunk, round), reply);
            return;
        }
        let locks = chunk.iter().map(|(l, _)| l);
        let ours = matches!(self.watchdog.chain, Chain::Round(_, r) if r == round);
        let Some(renewed) = self.chunk_reply(locks, reply) else {
            if ours {
                self.round_done(now);
            }
            return;
        };
        for ((lock, thread), renewed) in chunk.into_iter().zip(renewed) {
            self.reach_renewed(&Ok(renewed));
            self.batched_renewed(now, lock, thread, Ok(renewed));
        }
        if let Chain::Round(rest, r) = &mut self.watchdog.chain
            && *r == round
        {
            let rest = std::mem::take(rest);
            self.send_chunk(now, rest.into(), false);
        }
    }

    /// A chunk's reply as one answer per lock of `locks`; `None`: an error
    /// (or a reply the decoder refuses), noted and logged, which ends the
    /// round (`LockTask` and `ReadLockTask` alike).
    pub(super) fn chunk_reply<'a>(
        &mut self,
        locks: impl ExactSizeIterator<Item = &'a LockName>,
        reply: Result<Value, TransportError>,
    ) -> Option<Vec<bool>> {
        let count = locks.len();
        let parsed = reply
            .map_err(LockError::from)
            .and_then(|value| command::parse_renew_batch(&value, count));
        match parsed {
            Ok(renewed) => Some(renewed),
            Err(e) => {
                self.reach(super::Sometimes::RenewalFailed);
                let locks: Vec<&str> = locks.map(LockName::as_str).collect();
                warn!(locks = ?locks, error = %e, "can't update locks expiration; the next round retries");
                None
            }
        }
    }

    pub(super) fn batched_renewed(
        &mut self,
        _now: Millis,
        lock: LockName,
        thread: ThreadId,
        parsed: Result<bool, LockError>,
    ) {
        match parsed {
            Ok(true) => self.event(Event::Renewed { lock }),
            // `LockTask.renew`: `cancelExpirationRenewal(key, threadId)`
            // takes one hold of the renewed thread off the entry; the entry
            // goes only when no thread is left (3.44.0, #6303).
            // A stale head (`thread-queue`) has no count to take: the
            // entry stays, and every round renews it in vain (#6144).
            Ok(false) => {
                let queueing = self.queueing();
                let empty = self
                    .watchdog
                    .entries
                    .get_mut(&lock)
                    .is_some_and(|entry| entry.remove(thread, queueing));
                if empty {
                    self.remove_entry(&lock, "not-held");
                }
            }
            Err(e) => {
                warn!(lock = %lock, error = %e, "renewal failed; the next round retries");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::Harness;
    use crate::Value;
    use crate::{Call, Era, Event, LockName, Millis, Purpose, ThreadId, TransportError};

    fn name(s: &str) -> LockName {
        LockName::new(s).unwrap()
    }

    /// Runs to the next round and returns its (first) chunk.
    fn next_round(h: &mut Harness) -> (crate::RequestId, Vec<String>) {
        if let Some(at) = h.next_timer_at() {
            h.advance_to(at);
        }
        h.expect_send()
    }

    fn ints(values: &[i64]) -> Value {
        Value::Array(values.iter().map(|&n| Value::Int(n)).collect())
    }

    /// Redisson 3.44+: one chain per client. Two watchdog locks get one
    /// timer; each round renews both in one EVAL of `LockTask.renew`'s
    /// script, keys in lock-name order, `ARGV[1]` the lease and then one
    /// field per key; an error keeps both entries and the next round
    /// renews them again (where `redisson` would have stopped for good);
    /// a 0 for one lock takes only that lock's hold off.
    #[test]
    fn one_chain_renews_all_and_survives_errors() {
        let mut h = Harness::short(Era::RedissonBatched);
        h.acquire(ThreadId(2), "b");
        h.acquire(ThreadId(1), "a");
        assert_eq!(h.timers.len(), 1, "one chain timer: {:?}", h.timers);
        h.advance(1_000);
        let (round, command) = h.expect_send();
        assert_eq!(command[0], "EVAL");
        assert!(command[1].starts_with("local result = {} for i = 1, #KEYS"));
        assert_eq!(
            &command[2..],
            ["2", "a", "b", "3000", "uuid-a:1", "uuid-a:2"]
        );
        h.expect_quiet();
        h.fail(round, TransportError::Connection("blip".into()));
        h.expect_quiet();
        assert_eq!(h.next_timer_at(), Some(Millis(2_000)));
        let round = h.renewal_due();
        h.expect_quiet();
        h.reply(round, ints(&[1, 0]));
        assert_eq!(h.expect_event(), Event::Renewed { lock: name("a") });
        assert_eq!(
            h.expect_event(),
            Event::RenewalStopped {
                lock: name("b"),
                reason: "not-held".into()
            }
        );
        let (round, command) = next_round(&mut h);
        assert_eq!(&command[2..], ["1", "a", "3000", "uuid-a:1"]);
        h.reply(round, ints(&[1]));
        assert_eq!(h.expect_event(), Event::Renewed { lock: name("a") });
    }

    /// A batched client with `lockWatchdogBatchSize` 2 whose threads 1 to 3
    /// hold "a", "b" and "c".
    fn three_locks_in_chunks_of_two() -> Harness {
        let config = crate::Config::builder()
            .era(Era::RedissonBatched)
            .watchdog_timeout(3_000)
            .watchdog_batch_size(2)
            .build()
            .unwrap();
        let mut h = Harness::with_config(config);
        for (t, lock) in [(1, "a"), (2, "b"), (3, "c")] {
            h.acquire(ThreadId(t), lock);
        }
        h
    }

    /// `lockWatchdogBatchSize` locks per EVAL: with 2, three locks go out
    /// as two chunks, the second only once the first answered, and the
    /// next round T/3 after the last chunk answered.
    #[test]
    fn a_round_sends_its_chunks_one_after_the_other() {
        let mut h = three_locks_in_chunks_of_two();
        h.advance(1_000);
        let (first, command) = h.expect_send();
        assert_eq!(&command[2..5], ["2", "a", "b"]);
        h.expect_quiet();
        h.advance(50);
        h.reply(first, ints(&[1, 1]));
        let _ = (h.expect_event(), h.expect_event());
        let (second, command) = h.expect_send();
        assert_eq!(&command[2..], ["1", "c", "3000", "uuid-a:3"]);
        h.advance(50);
        h.reply(second, ints(&[1]));
        assert_eq!(h.expect_event(), Event::Renewed { lock: name("c") });
        assert_eq!(h.next_timer_at(), Some(Millis(2_100)));
    }

    /// An error on the first chunk ends the round: the second chunk is not
    /// sent, and the next round renews all three again from the first.
    #[test]
    fn a_failed_chunk_ends_the_round() {
        let mut h = three_locks_in_chunks_of_two();
        h.advance(1_000);
        let (first, _) = h.expect_send();
        h.reply(first, Value::Error("ERR boom".into()));
        h.expect_quiet();
        let (_, command) = next_round(&mut h);
        assert_eq!(&command[2..5], ["2", "a", "b"]);
    }

    /// A reply the decoder refuses (not a list of numbers) fails the
    /// round as an error does: nothing is cancelled.
    #[test]
    fn a_reply_that_is_no_list_keeps_every_entry() {
        let mut h = Harness::short(Era::RedissonBatched);
        h.acquire(ThreadId(1), "a");
        let round = h.renewal_due();
        h.reply(round, Value::Int(0));
        h.expect_quiet();
        let round = h.renewal_due();
        h.reply(round, ints(&[1]));
        assert_eq!(h.expect_event(), Event::Renewed { lock: name("a") });
    }

    /// Generated seed 39 (sim, `redisson-batched`): a round's renewal times
    /// out, the lock is unlocked while the resend waits, and the resend
    /// still goes out after the unlock returned. That is Redisson's
    /// behaviour (unlock removes the lock from the chain's set and cancels
    /// no command in flight; the command layer resends a timed-out command
    /// on its own), so the resend says it is attempt 1 of a renewal first
    /// sent while the lock was held. What must not happen, and would show
    /// here as a further Send, is the chain renewing the removed lock: its
    /// reply (0) removes nothing and reports nothing, and no round follows.
    #[test]
    fn resend_after_unlock_is_the_last_renewal() {
        let config = crate::Config::builder()
            .era(Era::RedissonBatched)
            .watchdog_timeout(3_000)
            .response_timeout(100)
            .retry_attempts(1)
            .retry_interval(50)
            .build()
            .unwrap();
        let mut h = Harness::with_config(config);
        h.acquire(ThreadId(1), "a");
        h.advance(1_000);
        let (_, purpose, attempt) = h.expect_attempt();
        assert_eq!((purpose, attempt), (Purpose::Renew, 0));
        h.advance(100);
        h.expect_quiet();
        h.call(ThreadId(1), "a", Call::Unlock).unwrap();
        let unlock = h.expect(Purpose::Unlock);
        h.reply(unlock, Value::Int(1));
        assert_eq!(
            h.expect_event(),
            Event::RenewalStopped {
                lock: name("a"),
                reason: "unlocked".into()
            }
        );
        h.expect_return(ThreadId(1)).unwrap();
        h.advance(50);
        let (resend, purpose, attempt) = h.expect_attempt();
        assert_eq!((purpose, attempt), (Purpose::Renew, 1));
        h.reply(resend, ints(&[0]));
        h.expect_quiet();
        assert!(h.timers.is_empty(), "timers left: {:?}", h.timers);
        h.advance(10_000);
        h.expect_quiet();
    }

    /// 4.7.0 seed 35552: the last unlock stops the chain while a round's
    /// renewal is out unanswered (`RenewalTask.stop()` clears `running`,
    /// read at tag redisson-4.7.0); a lock taken then starts a chain of
    /// its own, T/3 ahead, instead of waiting for that renewal's timeout,
    /// and the stopped round's late reply does not go on with it.
    #[test]
    fn a_lock_after_the_chain_stopped_does_not_wait_for_its_round() {
        let config = crate::Config::builder()
            .era(Era::RedissonBatched)
            .watchdog_timeout(3_000)
            .response_timeout(3_000)
            .build()
            .unwrap();
        let mut h = Harness::with_config(config);
        h.acquire(ThreadId(1), "a");
        let (stale, _) = next_round(&mut h);
        unlock_now(&mut h, ThreadId(1), "a");
        assert!(matches!(h.expect_event(), Event::RenewalStopped { .. }));
        h.expect_return(ThreadId(1)).unwrap();
        let relocked = h.now;
        h.acquire(ThreadId(1), "a");
        let first = relocked.plus(h.m.config().renewal_interval());
        assert_eq!(h.next_timer_at(), Some(first));
        let (fresh, _) = next_round(&mut h);
        h.reply(stale, ints(&[1]));
        assert!(matches!(h.expect_event(), Event::Renewed { .. }));
        h.expect_quiet();
        h.reply(fresh, ints(&[1]));
        assert!(matches!(h.expect_event(), Event::Renewed { .. }));
        let next = h.now.plus(h.m.config().renewal_interval());
        assert_eq!(h.next_timer_at(), Some(next));
    }

    /// The chain stops when the last watchdog lock is unlocked: its timer
    /// is cancelled and nothing more is sent.
    #[test]
    fn chain_stops_when_no_entry_remains() {
        let mut h = Harness::short(Era::RedissonBatched);
        h.acquire(ThreadId(1), "a");
        h.call(ThreadId(1), "a", Call::Unlock).unwrap();
        let req = h.expect(Purpose::Unlock);
        h.reply(req, Value::Int(1));
        assert!(matches!(h.expect_event(), Event::RenewalStopped { .. }));
        h.expect_return(ThreadId(1)).unwrap();
        assert!(h.timers.is_empty());
        h.advance(10_000);
        h.expect_quiet();
        // A new lock starts a new chain.
        h.acquire(ThreadId(1), "a");
        assert_eq!(h.next_timer_at(), Some(Millis(11_000)));
    }

    /// #6472: t1 holds "a", t2 holds "b" on one client; the round reads
    /// both keys and pauses (before 3.45.1); t2's unlock of "b" answers
    /// meanwhile and its cancel removes the entry; then the round goes
    /// on. The harness, and the renewals answered so far.
    fn race(version: &str) -> (Harness, usize) {
        let mut h = Harness::short(super::super::harness::release(version));
        h.m.interleave(true);
        h.hold_steps = true;
        h.acquire(ThreadId(1), "a");
        h.acquire(ThreadId(2), "b");
        h.advance(1_000);
        let paused = h.take_steps();
        assert_eq!(paused.len(), 1, "the round pauses once");
        let renewals = renew_all(&mut h);
        unlock_now(&mut h, ThreadId(2), "b");
        // The unlock's cancel (paused too before 4.4.0) runs first.
        for step in h.take_steps().into_iter().chain(paused) {
            h.resume(step);
        }
        assert!(matches!(h.returned(ThreadId(2)), Some(Ok(_))));
        (h, renewals)
    }

    /// `thread` unlocks `lock` and Redis answers; its cancel pauses
    /// (before 4.4.0), and the unlock answers once it has gone on.
    fn unlock_now(h: &mut Harness, thread: ThreadId, lock: &str) {
        h.call(thread, lock, Call::Unlock).unwrap();
        let unlock = h.expect(Purpose::Unlock);
        h.reply(unlock, Value::Int(1));
    }

    /// Answers 1 to every renewal sent so far: how many.
    fn renew_all(h: &mut Harness) -> usize {
        let mut renewals = 0;
        while let Some(output) = h.next() {
            if let crate::Output::Send {
                request,
                purpose: Purpose::Renew,
                command,
                ..
            } = output
            {
                renewals += 1;
                let keys: usize = std::str::from_utf8(&command[2]).unwrap().parse().unwrap();
                h.reply(request, ints(&vec![1; keys]));
            }
        }
        renewals
    }

    /// The round of 3.45.0 finds "b" gone and throws: it renews nothing,
    /// now or later, though t1 still holds "a". 3.45.1 skips "b" and
    /// renews "a" every round.
    #[test]
    fn before_3_45_1_an_unlock_during_the_round_stops_every_renewal() {
        let renewals_of_a = |version| {
            let (mut h, mut renewals) = race(version);
            for _ in 0..5 {
                renewals += renew_all(&mut h);
                h.advance(1_000);
                for step in h.take_steps() {
                    h.resume(step);
                }
            }
            renewals
        };
        assert_eq!(renewals_of_a("3.45.0"), 0);
        assert_eq!(renewals_of_a("3.44.0"), 0);
        assert!(renewals_of_a("3.45.1") >= 5);
    }

    /// The chain a round broke starts again once the map has emptied:
    /// t1 unlocks "a" too, and a new lock is renewed.
    #[test]
    fn a_broken_chain_restarts_when_the_map_empties() {
        let (mut h, _) = race("3.45.0");
        assert!(!h.sends().contains(&Purpose::Renew));
        assert!(!h.has_timers(), "no round is set");
        unlock_now(&mut h, ThreadId(1), "a");
        for step in h.take_steps() {
            h.resume(step);
        }
        let _ = h.sends();
        h.m.interleave(false);
        h.acquire(ThreadId(1), "c");
        h.advance(1_000);
        assert!(h.sends().contains(&Purpose::Renew));
    }
}
