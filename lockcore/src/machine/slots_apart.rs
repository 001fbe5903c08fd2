//! `slots-renewed-apart` (locksim's proposal): in cluster mode each slot
//! renews its locks on a chain of its own, as if each slot had its own
//! `RenewalTask`: a round of the slot's chunks, one after another, and
//! the slot's next round a third of the watchdog timeout after its last
//! chunk answered (or failed). A master that does not answer holds and
//! fails only its own slots' rounds. See the switch's documentation for
//! the defect of every release's one chain over all slots.

use std::collections::BTreeMap;

use bytes::Bytes;

use super::{LockClient, TimerKind};
use crate::{LockName, Millis, Switch, ThreadId, TimerId, TransportError, Value};

/// One slot's chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum SlotChain {
    /// Its next round starts when this timer fires.
    Waiting(TimerId),
    /// A chunk of round `.1` is out; these keys go in its next chunks.
    Round(Vec<LockName>, u64),
}

/// The chains of the slots that have entries (or a chunk still out).
pub(super) type SlotChains = BTreeMap<u16, SlotChain>;

impl LockClient {
    /// Whether this client renews each slot on a chain of its own, or is
    /// several instances, one per independent master, each with its own
    /// `RenewalTask` (one chain over the master's locks, all of slot 0 in
    /// single-server mode).
    pub(super) fn renews_slots_apart(&self) -> bool {
        self.config.masters > 0
            || (self.config.cluster_shards > 0 && self.switches.has(Switch::SlotsRenewedApart))
    }

    /// The chain `lock` renews on: its slot's, or its master's.
    fn chain_of(&self, lock: &LockName) -> u16 {
        if self.config.masters > 0 {
            return self.config.placement.master_of(lock.as_str()).0;
        }
        crate::calc_slot(lock.as_str())
    }

    /// A lock of `slot` took an entry: the slot's chain starts if it has
    /// none.
    pub(super) fn slot_chain_add(&mut self, now: Millis, lock: &LockName) {
        let slot = self.chain_of(lock);
        if !self.watchdog.slot_chains.contains_key(&slot) {
            self.slot_wait(now, slot);
        }
    }

    fn slot_wait(&mut self, now: Millis, slot: u16) {
        let at = now.plus(self.config.renewal_interval());
        let timer = self.set_timer(at, TimerKind::SlotRound(slot));
        self.watchdog
            .slot_chains
            .insert(slot, SlotChain::Waiting(timer));
    }

    /// The slot's round: its entries' keys, in name order, a chunk at a
    /// time.
    pub(super) fn on_slot_round_timer(&mut self, now: Millis, slot: u16) {
        let keys: Vec<LockName> = (self.watchdog.entries.keys())
            .filter(|lock| self.chain_of(lock) == slot)
            .cloned()
            .collect();
        self.watchdog.rounds += 1;
        let round = self.watchdog.rounds;
        self.send_slot_chunk(now, slot, keys, round);
    }

    /// Sends the next chunk of `keys`; none left with a thread to renew:
    /// the slot's round is over.
    fn send_slot_chunk(&mut self, now: Millis, slot: u16, keys: Vec<LockName>, round: u64) {
        let size = self.config.watchdog_batch_size.max(1) as usize;
        let mut chunk: Vec<(LockName, ThreadId, Bytes)> = Vec::new();
        let mut keys = keys.into_iter();
        for lock in keys.by_ref() {
            // A removed entry, or one without a thread, is skipped.
            let entry = self.watchdog.entries.get(&lock);
            let Some(thread) = entry.and_then(|e| e.first_thread()) else {
                continue;
            };
            let holds = entry.is_some_and(|e| e.holds(thread));
            let field = self.renew_field(&lock, thread, holds);
            chunk.push((lock, thread, field));
            if chunk.len() == size {
                break;
            }
        }
        if chunk.is_empty() {
            self.slot_round_done(now, slot);
            return;
        }
        let rest = SlotChain::Round(keys.collect(), round);
        self.watchdog.slot_chains.insert(slot, rest);
        self.send_renew_chunk(now, chunk, round);
    }

    /// The slot's round is over: its next one T/3 later, if the slot
    /// still has entries.
    fn slot_round_done(&mut self, now: Millis, slot: u16) {
        if self.slot_has_entries(slot) {
            self.slot_wait(now, slot);
        } else {
            self.watchdog.slot_chains.remove(&slot);
        }
    }

    fn slot_has_entries(&self, slot: u16) -> bool {
        (self.watchdog.entries.keys()).any(|lock| self.chain_of(lock) == slot)
    }

    /// A chunk answered: its locks, then the slot's next chunk; an error
    /// ends the slot's round. A chunk of a round its slot's chain no
    /// longer runs (the chain stopped with the slot's last entry, and a
    /// new one started) answers for its locks alone.
    pub(super) fn slot_chunk_renewed(
        &mut self,
        now: Millis,
        (chunk, round): (Vec<(LockName, ThreadId)>, u64),
        reply: Result<Value, TransportError>,
    ) {
        let Some(slot) = chunk.first().map(|(l, _)| self.chain_of(l)) else {
            return;
        };
        let locks = chunk.iter().map(|(l, _)| l);
        let renewed = self.chunk_reply(locks, reply);
        if let Some(renewed) = &renewed {
            for ((lock, thread), renewed) in chunk.into_iter().zip(renewed) {
                self.reach_renewed(&Ok(*renewed));
                self.batched_renewed(now, lock, thread, Ok(*renewed));
            }
        }
        let rest = match self.watchdog.slot_chains.get_mut(&slot) {
            Some(SlotChain::Round(rest, r)) if *r == round => std::mem::take(rest),
            _ => return,
        };
        if renewed.is_some() {
            self.send_slot_chunk(now, slot, rest, round);
        } else {
            self.slot_round_done(now, slot);
        }
    }

    /// `lock`'s entry went: its slot's chain stops if it was the slot's
    /// last (a round out still answers for its locks).
    pub(super) fn slot_chain_removed(&mut self, lock: &LockName) {
        let slot = self.chain_of(lock);
        if self.slot_has_entries(slot) {
            return;
        }
        if let Some(SlotChain::Waiting(timer)) = self.watchdog.slot_chains.remove(&slot) {
            self.cancel_timer(timer);
        }
    }
}
