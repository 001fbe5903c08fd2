//! What an observer reads of an [`Engine`] without changing it: a lock
//! key's head, a string, the key count, the keyspace's version, and which
//! keys were dropped on expiry. The simulator records Redis's view of
//! every lock after every command through these; none purges a key or
//! moves anything a command could see.

use bytes::Bytes;

use crate::db::Data;
use crate::engine::{Engine, HashFields};

impl Engine {
    /// A hash key's fields in order and its absolute expiry (Unix ms), or
    /// `None` when the key is missing, expired or not a hash. Observes
    /// database 0 without side effects (nothing is purged).
    pub fn hash_snapshot(&self, key: &[u8]) -> Option<(HashFields, Option<u64>)> {
        let entry = self.dbs[0].peek(key, self.now())?;
        match &entry.data {
            Data::Hash(h) => Some((
                h.iter().map(|(f, v)| (f.clone(), v.clone())).collect(),
                entry.expires_at.map(|t| u64::try_from(t).unwrap_or(0)),
            )),
            _ => None,
        }
    }

    /// A number that changes whenever a key of database 0 may have
    /// changed: written, deleted, dropped on expiry, flushed. Two equal
    /// numbers mean the same keys, values and expiries, so an observer
    /// that read a key under one need not read it again until the number
    /// changes or the key's expiry is reached (time alone drops no key
    /// here; a key past its expiry reads as gone either way).
    pub fn keyspace_version(&self) -> u64 {
        self.dbs[0].version()
    }

    /// Whether a live key (of any type) is at `key`, read without side
    /// effects.
    pub fn holds_key(&self, key: &[u8]) -> bool {
        self.dbs[0].peek(key, self.now()).is_some()
    }

    /// `read` of a hash key's first field and its value (in Redis's
    /// order; a field named `mode` is passed over), the value of its
    /// `mode` field (an `RReadWriteLock`'s `read` or `write`) and its
    /// absolute expiry (Unix ms), or `None` when the key is missing,
    /// expired or not a hash: [`Engine::hash_snapshot`] without copying
    /// every field, for an observer that looks after every command. Lent,
    /// not copied: the observer keeps only what it needs (the field, the
    /// value parsed).
    pub fn with_hash_head<R>(
        &self,
        key: &[u8],
        read: impl FnOnce(Option<(&Bytes, &Bytes)>, Option<&Bytes>, Option<u64>) -> R,
    ) -> Option<R> {
        let entry = self.dbs[0].peek(key, self.now())?;
        match &entry.data {
            // An `RReadWriteLock`'s hash starts with its `mode` field: the
            // head an observer wants is its first holder.
            Data::Hash(h) => Some(read(
                h.iter().find(|(field, _)| field.as_ref() != b"mode"),
                h.get(b"mode".as_slice()),
                entry.expires_at.map(|t| u64::try_from(t).unwrap_or(0)),
            )),
            _ => None,
        }
    }

    /// A string key's value in database 0, or `None` when missing, expired
    /// or not a string. Observes without side effects.
    pub fn string_snapshot(&self, key: &[u8]) -> Option<Bytes> {
        match &self.dbs[0].peek(key, self.now())?.data {
            Data::Str(s) => Some(Bytes::copy_from_slice(s)),
            _ => None,
        }
    }

    /// The number of live keys in database 0 (what `DBSIZE` replies there).
    pub fn dbsize(&self) -> usize {
        self.dbs[0].len(self.now())
    }

    /// Starts (or stops) remembering which keys of database 0 are
    /// dropped on expiry, for [`Engine::expired_since`]. Off by default:
    /// a server nobody observes keeps nothing.
    pub fn record_expiries(&mut self, on: bool) {
        self.dbs[0].record_expiries(on);
    }

    /// Whether `key` of database 0 was dropped on expiry after the
    /// keyspace was at `version` ([`Engine::keyspace_version`]): among
    /// the last 64 keys dropped so, while recording. An observer that finds a key gone after several commands
    /// ran tells so whether time freed it or one of the commands did.
    pub fn expired_since(&self, key: &[u8], version: u64) -> bool {
        self.dbs[0].expired_since(key, version)
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::{args, engine_at};

    /// A key dropped on expiry by a command is reported after the version
    /// read before that command, and only then; a key a command deleted is
    /// not; nothing is kept until an observer asks.
    #[test]
    fn a_key_dropped_on_expiry_is_told_apart_from_a_deleted_one() {
        let (mut e, clock, c) = engine_at(5_000);
        let run = |e: &mut crate::Engine, words: &[&str]| {
            e.execute(c, args(words));
        };
        run(&mut e, &["SET", "gone", "v", "PX", "10"]);
        clock.advance(11);
        run(&mut e, &["GET", "gone"]);
        assert!(!e.expired_since(b"gone", 0), "not recording: nothing kept");

        e.record_expiries(true);
        run(&mut e, &["SET", "timed", "v", "PX", "10"]);
        run(&mut e, &["SET", "deleted", "v", "PX", "10"]);
        let before = e.keyspace_version();
        run(&mut e, &["DEL", "deleted"]);
        assert!(!e.expired_since(b"deleted", before), "a DEL is no expiry");
        // At its deadline's ms the key still lives; one ms later a read
        // drops it.
        clock.advance(10);
        run(&mut e, &["GET", "timed"]);
        assert!(!e.expired_since(b"timed", before));
        clock.advance(1);
        run(&mut e, &["HSET", "timed", "f", "1"]);
        assert!(e.expired_since(b"timed", before));
        assert!(!e.expired_since(b"timed", e.keyspace_version()));
        assert!(!e.expired_since(b"other", before));
    }

    /// However many keys expire, only the latest few are kept.
    #[test]
    fn the_expiry_log_is_bounded() {
        let (mut e, clock, c) = engine_at(5_000);
        e.record_expiries(true);
        let before = e.keyspace_version();
        let n = crate::change_log::EXPIRIES_KEPT + 10;
        for i in 0..n {
            e.execute(c, args(&["SET", &format!("k{i}"), "v", "PX", "1"]));
        }
        clock.advance(2);
        for i in 0..n {
            e.execute(c, args(&["GET", &format!("k{i}")]));
        }
        assert!(
            !e.expired_since(b"k0", before),
            "the oldest drop is forgotten"
        );
        assert!(e.expired_since(format!("k{}", n - 1).as_bytes(), before));
    }
}
