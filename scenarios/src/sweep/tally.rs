//! Entries by key, in the order each key was first offered, at most a
//! fixed number of them: explore's defect groups and upstream issues, so
//! memory stays flat however long the sweep.

use std::collections::BTreeMap;

/// Entries in the order their keys were first offered.
pub(super) struct Tally<K, V> {
    entries: Vec<V>,
    index: BTreeMap<K, usize>,
    max: usize,
    /// Offers of a new key that found no room.
    pub(super) overflow: u64,
}

impl<K: Ord, V> Tally<K, V> {
    /// An empty tally of at most `max` entries.
    pub(super) fn new(max: usize) -> Self {
        Tally {
            entries: Vec::new(),
            index: BTreeMap::new(),
            max,
            overflow: 0,
        }
    }

    /// Updates `key`'s entry with `again`, or makes it with `first` when
    /// there is room, or counts an overflow.
    pub(super) fn offer(&mut self, key: K, first: impl FnOnce() -> V, again: impl FnOnce(&mut V)) {
        if let Some(&i) = self.index.get(&key) {
            again(&mut self.entries[i]);
        } else if self.entries.len() < self.max {
            self.index.insert(key, self.entries.len());
            self.entries.push(first());
        } else {
            self.overflow += 1;
        }
    }

    /// The entries, in the order their keys were first offered.
    pub(super) fn all(&self) -> &[V] {
        &self.entries
    }
}
