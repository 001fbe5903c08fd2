//! Channel subscriptions: who hears a `PUBLISH`, in which order.

use std::collections::BTreeMap;

use bytes::Bytes;
use indexmap::IndexSet;

use crate::ConnId;

/// Subscriptions, both ways round. Subscribers of a channel are kept in
/// subscription order, which is the order Redis delivers a message in.
#[derive(Debug, Default)]
pub(crate) struct PubSub {
    by_channel: BTreeMap<Bytes, IndexSet<ConnId>>,
    by_conn: BTreeMap<ConnId, IndexSet<Bytes>>,
}

impl PubSub {
    /// Subscribes `conn` to `channel`; the connection's subscription count.
    pub(crate) fn subscribe(&mut self, conn: ConnId, channel: &Bytes) -> usize {
        self.by_channel
            .entry(channel.clone())
            .or_default()
            .insert(conn);
        let mine = self.by_conn.entry(conn).or_default();
        mine.insert(channel.clone());
        mine.len()
    }

    /// Unsubscribes `conn` from `channel`; the connection's remaining count.
    pub(crate) fn unsubscribe(&mut self, conn: ConnId, channel: &[u8]) -> usize {
        if let Some(subs) = self.by_channel.get_mut(channel) {
            subs.shift_remove(&conn);
            if subs.is_empty() {
                self.by_channel.remove(channel);
            }
        }
        let left = match self.by_conn.get_mut(&conn) {
            Some(mine) => {
                mine.shift_remove(channel);
                mine.len()
            }
            None => 0,
        };
        if left == 0 {
            self.by_conn.remove(&conn);
        }
        left
    }

    /// The channels `conn` listens to, in subscription order.
    pub(crate) fn channels_of(&self, conn: ConnId) -> Vec<Bytes> {
        self.by_conn
            .get(&conn)
            .map(|c| c.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// How many channels `conn` listens to.
    pub(crate) fn count(&self, conn: ConnId) -> usize {
        self.by_conn.get(&conn).map_or(0, IndexSet::len)
    }

    /// The subscribers of `channel`, in delivery order.
    pub(crate) fn subscribers(&self, channel: &[u8]) -> Vec<ConnId> {
        self.by_channel
            .get(channel)
            .map(|s| s.iter().copied().collect())
            .unwrap_or_default()
    }

    /// Drops every subscription of `conn`.
    pub(crate) fn remove_conn(&mut self, conn: ConnId) {
        for channel in self.channels_of(conn) {
            self.unsubscribe(conn, &channel);
        }
    }
}
