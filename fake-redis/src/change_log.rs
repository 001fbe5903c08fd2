//! What a database logs of its changes: for `WATCH`ers, for the replicas
//! and for observers. Kept apart from the keys themselves so a lookup can
//! hold an entry while its change is logged (one search of the keyspace,
//! not one to drop an expired key and another to find the live one).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use bytes::Bytes;

/// What a command may have changed: a flush, then keys.
#[derive(Debug, Default)]
pub(crate) struct Touched {
    /// Every key was deleted (before the keys below were written).
    pub(crate) flushed: bool,
    /// Keys written, deleted or expired (a key read for writing counts),
    /// sorted, each once. A command writes one or two: a sorted vector
    /// the engine hands back ([`ChangeLog::give_back_written`]) allocates
    /// nothing per command, where a set made a node for each.
    pub(crate) keys: Vec<Bytes>,
}

/// How many of the latest keys dropped on expiry a database remembers for
/// its observer: an observer asks after a client's commands ran, a handful
/// of them, so the latest few are all it can need, and the log stays
/// bounded however long the run.
pub(crate) const EXPIRIES_KEPT: usize = 64;

/// One database's log of changes.
///
/// Modifications of watched keys are logged (`touched`) for the engine to
/// mark their watchers' transactions as failed; with no watchers nothing
/// is logged.
#[derive(Debug, Default)]
pub(crate) struct ChangeLog {
    watchers: BTreeMap<Bytes, BTreeSet<crate::ConnId>>,
    touched: Vec<Bytes>,
    /// Keys written since the last [`ChangeLog::take_written`], when a
    /// primary records its writes for its replicas (`None`: not
    /// recording).
    written: Option<Touched>,
    /// Bumped by everything that may change a key (see
    /// [`ChangeLog::version`]).
    version: u64,
    /// The latest keys dropped on expiry, each with the version its drop
    /// made, when an observer asked for them (`None`: not recording).
    expired: Option<VecDeque<(Bytes, u64)>>,
}

impl ChangeLog {
    /// Starts (or stops) noting which keys commands write.
    pub(crate) fn record_writes(&mut self, on: bool) {
        self.written = on.then(Touched::default);
    }

    /// Starts (or stops) remembering the keys dropped on expiry.
    pub(crate) fn record_expiries(&mut self, on: bool) {
        self.expired = on.then(VecDeque::new);
    }

    /// `key` was dropped on expiry: a change like any other, remembered
    /// for the observer when recording.
    pub(crate) fn expire(&mut self, key: &[u8]) {
        self.touch(key);
        if let Some(log) = &mut self.expired {
            if log.len() == EXPIRIES_KEPT {
                log.pop_front();
            }
            log.push_back((Bytes::copy_from_slice(key), self.version));
        }
    }

    /// Whether `key` was dropped on expiry after the log was at `version`
    /// (as far as the kept drops tell).
    pub(crate) fn expired_since(&self, key: &[u8], version: u64) -> bool {
        self.expired
            .iter()
            .flatten()
            .any(|(k, v)| *v > version && k.as_ref() == key)
    }

    /// Whether a command wrote anything since the last
    /// [`ChangeLog::take_written`] (false when not recording).
    pub(crate) fn has_written(&self) -> bool {
        self.written
            .as_ref()
            .is_some_and(|t| t.flushed || !t.keys.is_empty())
    }

    /// The keys written since the last call (empty when not recording).
    pub(crate) fn take_written(&mut self) -> Touched {
        match &mut self.written {
            Some(t) => std::mem::take(t),
            None => Touched::default(),
        }
    }

    /// Hands back what [`ChangeLog::take_written`] took, emptied, for its
    /// room.
    pub(crate) fn give_back_written(&mut self, mut touched: Touched) {
        if let Some(t) = &mut self.written
            && !t.flushed
            && t.keys.is_empty()
        {
            touched.flushed = false;
            touched.keys.clear();
            *t = touched;
        }
    }

    /// Notes `key` for the replicas (when recording).
    pub(crate) fn note_written(&mut self, key: &[u8]) {
        // A command touches its key more than once (read for writing,
        // then written): copied only the first time.
        if let Some(t) = &mut self.written
            && let Err(i) = t.keys.binary_search_by(|k| k.as_ref().cmp(key))
        {
            t.keys.insert(i, Bytes::copy_from_slice(key));
        }
    }

    /// A number that changes whenever a key may have changed (a write, a
    /// deletion, an expired key dropped, a flush): an equal number means
    /// the same keys, values and expiries. (A key past its expiry but not
    /// yet dropped reads as gone either way: time alone changes nothing
    /// here.) Observers use it to skip reading what they read already.
    pub(crate) fn version(&self) -> u64 {
        self.version
    }

    /// A key may have changed.
    pub(crate) fn bump(&mut self) {
        self.version = self.version.wrapping_add(1);
    }

    /// Logs a modification of `key` for its watchers and the replicas.
    pub(crate) fn touch(&mut self, key: &[u8]) {
        self.bump();
        self.note_written(key);
        if self.watchers.contains_key(key) {
            self.touched.push(Bytes::copy_from_slice(key));
        }
    }

    /// Every key was deleted: logged for the watchers of the keys
    /// `present` names (those that existed) and for the replicas.
    pub(crate) fn flushed(&mut self, present: impl Fn(&[u8]) -> bool) {
        self.bump();
        let watched = self.watchers.keys().filter(|k| present(k)).cloned();
        self.touched.extend(watched);
        if let Some(t) = &mut self.written {
            t.flushed = true;
            t.keys.clear();
        }
    }

    /// Takes the log of watched keys modified since the last call, with
    /// each key's watchers.
    pub(crate) fn take_touched(&mut self) -> Vec<crate::ConnId> {
        let mut out = Vec::new();
        for key in std::mem::take(&mut self.touched) {
            if let Some(w) = self.watchers.get(&key) {
                out.extend(w.iter().copied());
            }
        }
        out
    }

    /// `conn` watches `key`.
    pub(crate) fn watch(&mut self, key: &Bytes, conn: crate::ConnId) {
        self.watchers.entry(key.clone()).or_default().insert(conn);
    }

    /// `conn` no longer watches `key`.
    pub(crate) fn unwatch(&mut self, key: &[u8], conn: crate::ConnId) {
        if let Some(w) = self.watchers.get_mut(key) {
            w.remove(&conn);
            if w.is_empty() {
                self.watchers.remove(key);
            }
        }
    }
}
