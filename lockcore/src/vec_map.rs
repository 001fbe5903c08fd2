//! [`VecMap`]: an ordered map of a few entries, in a sorted vector.
//!
//! A client's requests in flight, its timers and its paused steps are
//! keyed by ids that only grow, a handful at a time, and every one is
//! removed soon after it is inserted: each reply, timer and resend does
//! an insert and a remove. A `BTreeMap` spent 100 to 170 instructions on
//! each remove (rebalancing nodes it had just made), about a twentieth of
//! a simulated run (callgrind, `explore`); a sorted vector inserts at its
//! end and removes near it. Its calls, fences and renewal entries (a few
//! threads and locks, looked up on every reply) are kept the same way,
//! and so are the simulator's checkers' open calls, waits and beliefs.
//! Order is the keys' order, as a `BTreeMap`'s; a map of many entries
//! (thousands of threads) would want a `BTreeMap` back.

use std::cmp::Ordering;

/// An ordered map for few entries that come and go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VecMap<K, V> {
    /// Sorted by key, keys unique.
    entries: Vec<(K, V)>,
}

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        VecMap {
            entries: Vec::new(),
        }
    }
}

impl<K: Ord, V> VecMap<K, V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Where `key` is, or where it would go.
    fn find(&self, key: &K) -> Result<usize, usize> {
        // A new id is the largest yet (ids only grow), and the entry most
        // often looked up is the newest: the last key is compared first,
        // and either needs no search.
        match self.entries.last().map(|(last, _)| last.cmp(key)) {
            Some(Ordering::Less) => Err(self.entries.len()),
            Some(Ordering::Equal) => Ok(self.entries.len() - 1),
            _ => self.entries.binary_search_by(|(k, _)| k.cmp(key)),
        }
    }

    /// Sets `key`'s value; the value it had, if any.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    /// `key`'s value, made with `V::default()` when it has none.
    pub fn get_or_default(&mut self, key: K) -> &mut V
    where
        V: Default,
    {
        let i = match self.find(&key) {
            Ok(i) => i,
            Err(i) => {
                self.entries.insert(i, (key, V::default()));
                i
            }
        };
        &mut self.entries[i].1
    }

    /// Takes `key`'s value out.
    pub fn remove(&mut self, key: &K) -> Option<V> {
        let i = self.find(key).ok()?;
        Some(self.entries.remove(i).1)
    }

    /// `key`'s value.
    pub fn get(&self, key: &K) -> Option<&V> {
        let i = self.find(key).ok()?;
        Some(&self.entries[i].1)
    }

    /// `key`'s value, to change.
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        let i = self.find(key).ok()?;
        Some(&mut self.entries[i].1)
    }

    /// Whether `key` has a value.
    pub fn contains_key(&self, key: &K) -> bool {
        self.find(key).is_ok()
    }

    /// The entries, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// The keys, in order.
    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.entries.iter().map(|(k, _)| k)
    }

    /// The values, in key order.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.entries.iter().map(|(_, v)| v)
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// The values, in key order, to change.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    /// The entries, in key order, values to change.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&K, &mut V)> {
        self.entries.iter_mut().map(|(k, v)| (&*k, v))
    }

    /// The values, in key order, taken.
    pub fn into_values(self) -> impl Iterator<Item = V> {
        self.entries.into_iter().map(|(_, v)| v)
    }

    /// Keeps the entries `keep` says to keep.
    pub fn retain(&mut self, mut keep: impl FnMut(&K, &mut V) -> bool) {
        self.entries.retain_mut(|(k, v)| keep(k, v));
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u8, u32),
        Remove(u8),
        Get(u8),
        Bump(u8),
        Retain(u8),
        Clear,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (any::<u8>(), any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
            6 => any::<u8>().prop_map(Op::Remove),
            3 => any::<u8>().prop_map(Op::Get),
            2 => any::<u8>().prop_map(Op::Bump),
            1 => any::<u8>().prop_map(Op::Retain),
            1 => Just(Op::Clear),
        ]
    }

    proptest! {
        /// Any sequence of operations, ids in any order, gives what a
        /// `BTreeMap` gives, and iterates in the same order.
        #[test]
        fn behaves_as_a_btree_map(ops in proptest::collection::vec(op(), 0..200)) {
            let mut map = VecMap::new();
            let mut model = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => prop_assert_eq!(map.insert(k, v), model.insert(k, v)),
                    Op::Remove(k) => prop_assert_eq!(map.remove(&k), model.remove(&k)),
                    Op::Get(k) => {
                        prop_assert_eq!(map.get(&k), model.get(&k));
                        prop_assert_eq!(map.contains_key(&k), model.contains_key(&k));
                        if let Some(v) = map.get_mut(&k) {
                            *v += 1;
                            *model.get_mut(&k).expect("present in both") += 1;
                        }
                    }
                    Op::Bump(k) => {
                        *map.get_or_default(k) += 1;
                        *model.entry(k).or_default() += 1;
                    }
                    Op::Retain(m) => {
                        // Keeps keys below `m`, and bumps what it keeps.
                        let keep = |k: &u8, v: &mut u32| {
                            *v = v.wrapping_add(1);
                            *k < m
                        };
                        map.retain(keep);
                        model.retain(keep);
                    }
                    Op::Clear => {
                        map.clear();
                        model.clear();
                    }
                }
                for v in map.values_mut() {
                    *v = v.wrapping_mul(3);
                }
                for (_, v) in model.iter_mut() {
                    *v = v.wrapping_mul(3);
                }
                prop_assert_eq!(map.len(), model.len());
                prop_assert_eq!(map.is_empty(), model.is_empty());
                prop_assert!(map.iter().eq(model.iter()));
                prop_assert!(map.values().eq(model.values()));
                prop_assert!(map.keys().eq(model.keys()));
                prop_assert!(map.iter_mut().map(|(k, v)| (*k, *v)).eq(model.iter().map(|(k, v)| (*k, *v))));
            }
            prop_assert!(map.into_values().eq(model.into_values()));
        }
    }

    /// Ids handed out in order go to the end; a late insert of a smaller
    /// id still lands in order.
    #[test]
    fn keeps_id_order() {
        let mut map = VecMap::new();
        for k in [1, 2, 5, 3, 9, 4] {
            map.insert(k, k * 10);
        }
        assert_eq!(map.remove(&5), Some(50));
        assert_eq!(map.remove(&5), None);
        let keys: Vec<_> = map.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, [1, 2, 3, 4, 9]);
    }
}
