//! `ReadLockTask`: the read lock's own renewal chain (Redisson 3.44+,
//! `read-lock-task`).
//!
//! From 3.44.0 (#6303, 597d604a3) `RedissonReadLock.scheduleExpirationRenewal`
//! registers with `ReadLockTask`, not with `LockTask`: its own map (one
//! `ReadLockEntry` per K), its own running flag and its own T/3 chain, so a
//! client that holds write and read locks runs both chains at once. Each
//! entry keeps `threadId2counter` and `threadsQueue` (a [`RenewalEntry`])
//! and, per thread with a count, `threadId2lockName` and
//! `threadId2keyPrefix`; those two are put on the first hold and removed
//! with the count, so a thread has them exactly when it has a count, and
//! the model derives them (`<uuid>:<tid>` and `{K}`) rather than storing
//! them.
//!
//! A round renews the entries in chunks of `lockWatchdogBatchSize`, one
//! EVAL per chunk whose `KEYS` are pairs (K, `{K}`), the next chunk once the
//! previous answered; an error ends the round (logged, the next round T/3
//! later retries). What each release sends and what a 0 cancels:
//! - 3.44.0 to 3.52.x: the entry's first thread's lockName, and for a
//!   first thread with no count left (a stale queue place, PR #7251) a null
//!   lockName and key prefix, which Redisson's encoder sends as empty
//!   words. The script's inner loop reuses `i` (PR #6883): a count of 2 or
//!   more fails the chunk after K's PEXPIRE ran.
//! - 4.0.0 (`read-renew-loop-fixed`, PR #6883): the loop fixed; an entry
//!   whose first thread has no key prefix is skipped.
//! - 4.4.0 (`read-renew-own-names`, PR #7098): every lockName of the entry
//!   (a snapshot of `threadId2lockName`); a 0 cancels each of them.
//! - 4.7.0 (`read-entry-clears-queue`, PR #7251): a thread's last cancel
//!   removes all its queue places, so no stale head is left.
//!
//! Slot grouping (#6867, 4.0.0) acts only with a cluster config, and the
//! trampoline (#6962, 4.2.0) sends the same chunks in the same order: a
//! single Redis sees neither.

use std::collections::VecDeque;

use bytes::Bytes;

use super::request::Owner;
use super::watchdog::{Chain, Queueing, RenewalEntry};
use super::{Event, LockClient, Purpose, TimerKind, command};
use crate::script::LockScript;
use crate::{LockName, Millis, Switch, ThreadId, TransportError, Value, VecMap};

/// The client's `ReadLockTask`: its entries by read lock, and its chain.
#[derive(Debug, Clone, Default)]
pub(super) struct ReadLockTask {
    entries: VecMap<LockName, RenewalEntry>,
    chain: Chain,
    /// The last round's number (see [`Chain::Round`]).
    rounds: u64,
    /// Its own `slot2names`'s table (it is a `RenewalTask` of its own).
    slot_table: super::slot_table::SlotTable,
}

/// One lock of a chunk: the read lock and the threads a 0 cancels.
pub(super) type ReadChunk = Vec<(LockName, Vec<ThreadId>)>;

impl LockClient {
    /// Whether this read lock renews through `ReadLockTask`.
    pub(super) fn renews_in_read_task(&self, lock: &LockName) -> bool {
        lock.kind() == crate::LockKind::Read && self.switches.has(Switch::ReadLockTask)
    }

    /// `ReadLockEntry.removeThreadId`: one queue place before 4.7.0.
    fn read_queueing(&self) -> Queueing {
        if self.switches.has(Switch::ReadEntryClearsQueue) {
            Queueing::PerHoldCleared
        } else {
            Queueing::PerHold
        }
    }

    /// `ReadLockTask.add`: the entry's counter and queue take the hold; a
    /// new entry starts the chain if it is not running.
    pub(super) fn read_task_add(&mut self, now: Millis, lock: &LockName, thread: ThreadId) {
        let queueing = self.read_queueing();
        let task = &mut self.watchdog.read;
        task.entries
            .get_or_default(lock.clone())
            .add(thread, queueing);
        let held =
            super::batched::held_slots(self.watchdog.read.entries.keys(), |l| self.renewal_slot(l));
        self.watchdog.read.slot_table.hold(held);
        if self.watchdog.read.chain == Chain::Idle {
            self.start_read_round(now);
        }
    }

    fn start_read_round(&mut self, now: Millis) {
        let at = now.plus(self.config.renewal_interval());
        let timer = self.set_timer(at, TimerKind::ReadRound);
        self.watchdog.read.chain = Chain::Waiting(timer);
    }

    /// `ReadLockTask.cancelExpirationRenewal(K, thread)`; `None`: every
    /// thread (`forceUnlock`). The entry goes once its queue is empty, and
    /// the chain stops with the last entry.
    pub(super) fn read_task_cancel(
        &mut self,
        lock: &LockName,
        thread: Option<ThreadId>,
        reason: &str,
    ) {
        let queueing = self.read_queueing();
        let task = &mut self.watchdog.read;
        let Some(entry) = task.entries.get_mut(lock) else {
            return;
        };
        let empty = thread.is_none_or(|thread| entry.remove(thread, queueing));
        if !empty {
            return;
        }
        task.entries.remove(lock);
        // `RenewalTask.stop()`: a round out still answers, but the next
        // lock starts a chain without waiting for it.
        if task.entries.is_empty() {
            if let Chain::Waiting(timer) = task.chain {
                self.cancel_timer(timer);
            }
            self.watchdog.read.chain = Chain::Idle;
        }
        self.event(Event::RenewalStopped {
            lock: lock.clone(),
            reason: reason.to_owned(),
        });
    }

    /// The chain's timer: a round over every entry, in lock-name order.
    /// In cluster mode, or behind a cluster proxy with `renewal-by-slot`,
    /// slot after slot (`RenewalTask.renewSlots`, which `ReadLockTask`
    /// inherits).
    pub(super) fn on_read_round_timer(&mut self, now: Millis) {
        let mut locks: Vec<LockName> = self.watchdog.read.entries.keys().cloned().collect();
        let table = self.watchdog.read.slot_table;
        locks.sort_by_key(|lock| self.renewal_slot(lock).map(|s| table.place(s)));
        self.send_read_chunk(now, locks.into());
    }

    /// Builds the next chunk from `keys` and sends it; none left: the
    /// round is over.
    fn send_read_chunk(&mut self, now: Millis, mut keys: VecDeque<LockName>) {
        let size = self.config.watchdog_batch_size.max(1) as usize;
        let mut chunk: Vec<(LockName, Bytes, Vec<Bytes>, Vec<ThreadId>)> = Vec::new();
        let slot = keys.front().and_then(|lock| self.renewal_slot(lock));
        while chunk.len() < size {
            if keys
                .front()
                .is_some_and(|lock| self.renewal_slot(lock) != slot)
            {
                break;
            }
            let Some(lock) = keys.pop_front() else {
                break;
            };
            if let Some(part) = self.read_chunk_part(&lock) {
                chunk.push(part);
            }
        }
        if chunk.is_empty() {
            self.read_round_done(now);
            return;
        }
        let task = &mut self.watchdog.read;
        let round = match task.chain {
            Chain::Round(_, round) => round,
            _ => {
                task.rounds += 1;
                task.rounds
            }
        };
        task.chain = Chain::Round(keys.into(), round);
        let script = self.read_batch_script();
        let counted = script == LockScript::ReadRenewBatchOwn;
        let mut words = Vec::with_capacity(chunk.len() * 2);
        let mut args = vec![self.wire.number(self.config.watchdog_timeout.0)];
        for (lock, prefix, names, _) in &chunk {
            words.push(self.wire.lock(lock).key.clone());
            words.push(prefix.clone());
            if counted {
                args.push(self.wire.number(names.len() as u64));
            }
            args.extend(names.iter().cloned());
        }
        let routed = chunk[0].0.clone();
        let chunk = chunk.into_iter().map(|(l, _, _, t)| (l, t)).collect();
        let owner = Owner::ReadRenewChunk(chunk, round);
        let command = command::eval_words(script, words, args);
        self.send(now, routed, Purpose::Renew, command, owner);
    }

    fn read_batch_script(&self) -> LockScript {
        if self.switches.has(Switch::ReadRenewOwnNames) {
            LockScript::ReadRenewBatchOwn
        } else if self.switches.has(Switch::ReadRenewLoopFixed) {
            LockScript::ReadRenewBatch
        } else {
            LockScript::ReadRenewBatchShadowed
        }
    }

    /// What `lock`'s entry puts in the chunk: its key prefix, the
    /// lockNames sent and the threads a 0 cancels; `None`: skipped.
    fn read_chunk_part(
        &mut self,
        lock: &LockName,
    ) -> Option<(LockName, Bytes, Vec<Bytes>, Vec<ThreadId>)> {
        let entry = self.watchdog.read.entries.get(lock)?;
        let first = entry.first_thread()?;
        // A stale head (PR #7251) has no key prefix or lockName left.
        let alive = entry.holds(first);
        if !alive && self.switches.has(Switch::ReadRenewLoopFixed) {
            return None;
        }
        // `new LinkedHashMap<>(entry.threadId2lockName)` (4.4+): a
        // `ConcurrentHashMap` of small `Long` ids iterates them in
        // ascending order. Before, the first thread alone.
        let threads = if self.switches.has(Switch::ReadRenewOwnNames) {
            entry.threads_by_id()
        } else {
            vec![first]
        };
        let prefix = if alive {
            self.wire.lock(lock).prefix.clone()
        } else {
            Bytes::new()
        };
        let names = threads
            .iter()
            .map(|&t| {
                if t == first && !alive {
                    Bytes::new()
                } else {
                    self.wire.field(&self.uuid, t)
                }
            })
            .collect();
        Some((lock.clone(), prefix, names, threads))
    }

    /// `RenewalTask.run`'s `whenComplete`: the next round T/3 later while
    /// an entry is left.
    fn read_round_done(&mut self, now: Millis) {
        if self.watchdog.read.entries.is_empty() {
            self.watchdog.read.chain = Chain::Idle;
        } else {
            self.start_read_round(now);
        }
    }

    /// A chunk's reply: each lock renewed, or its threads cancelled; then
    /// the next chunk. An error (the 3.44 script's, too) ends the round
    /// with every entry kept.
    pub(super) fn read_chunk_renewed(
        &mut self,
        now: Millis,
        (chunk, round): (ReadChunk, u64),
        reply: Result<Value, TransportError>,
    ) {
        let locks = chunk.iter().map(|(l, _)| l);
        let ours = matches!(self.watchdog.read.chain, Chain::Round(_, r) if r == round);
        let Some(renewed) = self.chunk_reply(locks, reply) else {
            if ours {
                self.read_round_done(now);
            }
            return;
        };
        for ((lock, threads), renewed) in chunk.into_iter().zip(renewed) {
            self.reach_renewed(&Ok(renewed));
            if renewed {
                self.event(Event::Renewed { lock });
                continue;
            }
            for thread in threads {
                self.read_task_cancel(&lock, Some(thread), "not-held");
            }
        }
        if let Chain::Round(rest, r) = &mut self.watchdog.read.chain
            && *r == round
        {
            let rest = std::mem::take(rest);
            self.send_read_chunk(now, rest.into());
        }
    }
}
