//! A cluster's slot moving between masters (`slot-migration`), as the
//! fast engine's masters carry it out: `CLUSTER SETSLOT` on each, run as
//! another Redis client would (the engines route and redirect as a node
//! does), and fake-redis's `MIGRATE` of the slot's keys.

use bytes::Bytes;
use lockcore::LockName;

use crate::engines::fast::execution::deliver;
use crate::engines::fast::server::ConnKind;
use crate::engines::fast::world::World;
use crate::model::history::ServerCause;

/// One slot's move: from which master to which, and whether it is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SlotMove {
    pub(crate) slot: u16,
    pub(crate) from: u16,
    pub(crate) to: u16,
    pub(crate) done: bool,
}

/// The master a move has given `key` to: the new one once the move is
/// over, or while it holds the key (written there after an `ASK`);
/// `None` when no move concerns it.
pub(crate) fn serving(world: &World<'_>, key: &str) -> Option<u16> {
    let slot = lockcore::calc_slot(key);
    let m = world.moves.iter().find(|m| m.slot == slot)?;
    let there = m.done || world.redis[usize::from(m.to)].server.holds(world.now, key);
    Some(if there { m.to } else { m.from })
}

impl World<'_> {
    /// `lock`'s slot starts moving to master `to`: `IMPORTING` there,
    /// `MIGRATING` on its master.
    pub(crate) fn start_slot_move(&mut self, lock: &LockName, to: u16) {
        let slot = lockcore::calc_slot(lock.as_str());
        let from = self.shard_of(lock.as_str());
        let (Some(from_id), Some(to_id)) = (self.node_id(from), self.node_id(to)) else {
            return;
        };
        self.moves.push(SlotMove {
            slot,
            from,
            to,
            done: false,
        });
        self.set_slot(to, &[b"IMPORTING", from_id.as_bytes()], slot);
        self.set_slot(from, &[b"MIGRATING", to_id.as_bytes()], slot);
    }

    /// The keys of `lock`'s slot move to their new master with their TTLs,
    /// and every master gives the slot to it (`SETSLOT NODE`).
    pub(crate) fn end_slot_move(&mut self, lock: &LockName) {
        let slot = lockcore::calc_slot(lock.as_str());
        let Some(i) = self.moves.iter().position(|m| m.slot == slot && !m.done) else {
            return;
        };
        let SlotMove { from, to, .. } = self.moves[i];
        let Some(to_id) = self.node_id(to) else {
            return;
        };
        let (a, b) = (usize::from(from), usize::from(to));
        let now = self.now;
        self.redis[a].server.set_time(now);
        self.redis[b].server.set_time(now);
        let (low, high) = self.redis.split_at_mut(a.max(b));
        let (src, dst) = if a < b {
            (&mut low[a], &mut high[0])
        } else {
            (&mut high[0], &mut low[b])
        };
        src.server
            .primary_mut()
            .migrate_slot(slot, dst.server.primary_mut());
        self.moves[i].done = true;
        for master in 0..self.redis.len() as u16 {
            self.set_slot(master, &[b"NODE", to_id.as_bytes()], slot);
        }
        self.replicate();
        // The key is as it was, on another master: a view that changed
        // now changed by expiry alone.
        self.observe(lock, ServerCause::Expiry);
    }

    fn node_id(&self, master: u16) -> Option<String> {
        self.redis.get(usize::from(master))?.server.node_id()
    }

    /// `CLUSTER SETSLOT <slot> <words...>` on `master`, as another client
    /// of Redis; what Redis did meanwhile for blocked clients goes out.
    fn set_slot(&mut self, master: u16, words: &[&[u8]], slot: u16) {
        let mut args = vec![
            Bytes::from_static(b"CLUSTER"),
            Bytes::from_static(b"SETSLOT"),
            Bytes::from(slot.to_string()),
        ];
        args.extend(words.iter().map(|w| Bytes::copy_from_slice(w)));
        let now = self.now;
        let resp = self.redis[usize::from(master)].server.execute(
            now,
            (u32::MAX, 0),
            ConnKind::Command,
            &args,
        );
        deliver(self, master, resp.deliveries);
    }
}
