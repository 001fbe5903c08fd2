//! The keyspace: strings, hashes, lists and sorted sets with per-key expiry in
//! milliseconds, and who watches which key (`WATCH`).

use std::collections::{BTreeMap, VecDeque, btree_map};
use std::sync::Arc;

use bytes::Bytes;
use indexmap::IndexMap;

use crate::change_log::{ChangeLog, Touched};
use crate::error::CmdError;
use crate::zset::Zset;

/// A hash's fields in insertion order, as a small Redis hash (a listpack)
/// keeps them: updating a field keeps its place, deleting and re-adding it
/// moves it to the end. Fields are found by FxHash, not SipHash: the
/// order is the map's own, never the hash's, and every lock script looks
/// fields up several times. fake-redis serves tests, so resistance to
/// crafted collisions (what SipHash buys) is not worth the cost.
pub(crate) type Hash = IndexMap<Bytes, Bytes, rustc_hash::FxBuildHasher>;

/// A key, or a string value, as the keyspace stores it: up to 16 bytes
/// inside the entry itself, longer ones on the heap. Most keys and values
/// are short (`redisson:lock`, a counter), and a separate allocation for
/// each would cost more than the bytes it holds (Redis's embedded strings
/// make the same trade).
pub(crate) type Small = smallvec::SmallVec<[u8; SMALL_INLINE]>;

/// How many bytes a [`Small`] holds inline.
const SMALL_INLINE: usize = 16;

/// What a key holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Data {
    /// A string.
    Str(Small),
    /// A hash (behind a pointer: most keys are strings, and an unboxed
    /// hash would make every entry of the keyspace much bigger than a
    /// string needs). Shared, copied on write: every write a primary
    /// streams carries the key's value to each replica, which copied the
    /// whole hash (its table and entries) once for the stream and once
    /// per replica.
    Hash(Arc<Hash>),
    /// A list (never empty: Redis deletes a list with its last element).
    List(VecDeque<Bytes>),
    /// A sorted set (never empty), behind a shared pointer for the
    /// reasons a hash is.
    Zset(Arc<Zset>),
}

impl Data {
    /// A string holding `bytes`.
    pub(crate) fn str(bytes: &[u8]) -> Data {
        Data::Str(Small::from_slice(bytes))
    }
}

impl Data {
    /// The name `TYPE` replies.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Data::Str(_) => "string",
            Data::Hash(_) => "hash",
            Data::List(_) => "list",
            Data::Zset(_) => "zset",
        }
    }

    /// Whether this is a hash, list or sorted set with nothing in it
    /// (Redis never keeps one).
    fn is_empty_collection(&self) -> bool {
        match self {
            Data::Str(_) => false,
            Data::Hash(h) => h.is_empty(),
            Data::List(l) => l.is_empty(),
            Data::Zset(z) => z.is_empty(),
        }
    }
}

/// One key's value and absolute expiry (Unix ms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) data: Data,
    pub(crate) expires_at: Option<i64>,
}

/// All keys, ordered so anything that iterates them is deterministic.
///
/// Expiry is checked on every access against the caller's `now`: a key
/// whose expiry is `t` is present through `t` itself (PTTL 0) and gone
/// from `t + 1` on, as in Redis 7.0. fake-redis once dropped it at `t`,
/// taking the 1 ms for unobservable; the simulator runs commands at exact
/// ms, and a script that ran in its key's last ms found the key gone
/// (4.7.0 seed 271, a false defect).
///
/// Changes are logged ([`ChangeLog`]): writes through [`Db::insert`] and
/// [`Db::remove`] and expiry log themselves; a command that changes an
/// entry in place calls [`Db::touch`].
#[derive(Debug, Default)]
pub(crate) struct Db {
    entries: BTreeMap<Small, Entry>,
    log: ChangeLog,
}

/// Redis's `keyIsExpired`: a key is gone once the time is past its
/// expiry (`now > when`), so at its expiry's very ms it is still there,
/// with a PTTL of 0.
fn live(entry: &Entry, now: i64) -> bool {
    entry.expires_at.is_none_or(|t| now <= t)
}

impl Db {
    /// Starts (or stops) noting which keys commands write.
    pub(crate) fn record_writes(&mut self, on: bool) {
        self.log.record_writes(on);
    }

    /// Whether a command wrote anything since the last
    /// [`Db::take_written`] (false when not recording).
    pub(crate) fn has_written(&self) -> bool {
        self.log.has_written()
    }

    /// The keys written since the last call (empty when not recording).
    pub(crate) fn take_written(&mut self) -> Touched {
        self.log.take_written()
    }

    /// Hands back what [`Db::take_written`] took, emptied, for its room.
    pub(crate) fn give_back_written(&mut self, touched: Touched) {
        self.log.give_back_written(touched);
    }

    /// See [`ChangeLog::record_expiries`].
    pub(crate) fn record_expiries(&mut self, on: bool) {
        self.log.record_expiries(on);
    }

    /// See [`ChangeLog::expired_since`].
    pub(crate) fn expired_since(&self, key: &[u8], version: u64) -> bool {
        self.log.expired_since(key, version)
    }

    /// See [`ChangeLog::version`].
    pub(crate) fn version(&self) -> u64 {
        self.log.version()
    }

    /// Drops `key` if it has expired by `now`.
    fn purge(&mut self, key: &[u8], now: i64) {
        Self::purge_in(&mut self.entries, &mut self.log, key, now);
    }

    /// [`Db::purge`] of `entries`, logged in `log`.
    fn purge_in(entries: &mut BTreeMap<Small, Entry>, log: &mut ChangeLog, key: &[u8], now: i64) {
        if entries.get(key).is_some_and(|e| !live(e, now)) {
            entries.remove(key);
            log.expire(key);
        }
    }

    /// The live entry at `key` in `entries`, an expired one dropped (and
    /// logged in `log`) on the way: one search of the keyspace, where
    /// dropping first and then finding made two. Every `redis.call` of a
    /// lock script reads its key so, several times a script. A key longer
    /// than a [`Small`] holds inline is searched twice instead (the one
    /// search wants the key as the map stores it: a copy on the heap).
    fn live_in<'e>(
        entries: &'e mut BTreeMap<Small, Entry>,
        log: &mut ChangeLog,
        key: &[u8],
        now: i64,
    ) -> Option<&'e mut Entry> {
        if key.len() > SMALL_INLINE {
            Self::purge_in(entries, log, key, now);
            return entries.get_mut(key);
        }
        match entries.entry(Small::from_slice(key)) {
            btree_map::Entry::Occupied(o) if live(o.get(), now) => Some(o.into_mut()),
            btree_map::Entry::Occupied(o) => {
                o.remove();
                log.expire(key);
                None
            }
            btree_map::Entry::Vacant(_) => None,
        }
    }

    /// Logs a modification of `key` for its watchers and the replicas.
    pub(crate) fn touch(&mut self, key: &[u8]) {
        self.log.touch(key);
    }

    /// Takes the log of watched keys modified since the last call, with
    /// each key's watchers.
    pub(crate) fn take_touched(&mut self) -> Vec<crate::ConnId> {
        self.log.take_touched()
    }

    /// `conn` watches `key`.
    pub(crate) fn watch(&mut self, key: &Bytes, conn: crate::ConnId) {
        self.log.watch(key, conn);
    }

    /// `conn` no longer watches `key`.
    pub(crate) fn unwatch(&mut self, key: &[u8], conn: crate::ConnId) {
        self.log.unwatch(key, conn);
    }

    /// Live keys in order, for `KEYS` and `SCAN`.
    pub(crate) fn keys(&self, now: i64) -> impl Iterator<Item = &[u8]> {
        self.entries
            .iter()
            .filter(move |(_, e)| live(e, now))
            .map(|(k, _)| k.as_slice())
    }

    /// Live keys after `cursor` (exclusive), in order.
    pub(crate) fn keys_after<'a>(
        &'a self,
        cursor: Option<&'a [u8]>,
        now: i64,
    ) -> impl Iterator<Item = (&'a [u8], &'a Entry)> + 'a {
        use std::ops::Bound;
        let start = match cursor {
            Some(c) => Bound::Excluded(c),
            None => Bound::Unbounded,
        };
        self.entries
            .range::<[u8], _>((start, Bound::Unbounded))
            .filter(move |(_, e)| live(e, now))
            .map(|(k, e)| (k.as_slice(), e))
    }

    /// How many live keys have an expiry (`INFO keyspace`'s `expires`).
    pub(crate) fn expires(&self, now: i64) -> usize {
        self.entries
            .values()
            .filter(|e| live(e, now) && e.expires_at.is_some())
            .count()
    }

    /// The live entry at `key`.
    pub(crate) fn get(&mut self, key: &[u8], now: i64) -> Option<&Entry> {
        Self::live_in(&mut self.entries, &mut self.log, key, now).map(|e| &*e)
    }

    /// The live entry at `key`, mutable.
    pub(crate) fn get_mut(&mut self, key: &[u8], now: i64) -> Option<&mut Entry> {
        let entry = Self::live_in(&mut self.entries, &mut self.log, key, now);
        self.log.touch(key);
        entry
    }

    /// The live entry at `key` without purging (for observers).
    pub(crate) fn peek(&self, key: &[u8], now: i64) -> Option<&Entry> {
        self.entries.get(key).filter(|e| live(e, now))
    }

    /// Stores `entry` at `key`, replacing what was there.
    pub(crate) fn insert(&mut self, key: Bytes, entry: Entry) {
        self.touch(&key);
        self.entries.insert(Small::from_slice(&key), entry);
    }

    /// Stores `entry` at `key` as a write the replicas get (`RESTORE`).
    pub(crate) fn restore(&mut self, key: Bytes, entry: Entry) {
        self.log.note_written(&key);
        self.insert(key, entry);
    }

    /// Deletes `key`; whether a live key was there.
    pub(crate) fn remove(&mut self, key: &[u8], now: i64) -> bool {
        self.purge(key, now);
        self.log.note_written(key);
        let existed = self.entries.remove(key).is_some();
        if existed {
            self.touch(key);
        }
        existed
    }

    /// Takes the live entry at `key` out of the keyspace.
    pub(crate) fn take(&mut self, key: &[u8], now: i64) -> Option<Entry> {
        self.purge(key, now);
        let entry = self.entries.remove(key);
        if entry.is_some() {
            self.touch(key);
        }
        entry
    }

    /// The number of live keys.
    pub(crate) fn len(&self, now: i64) -> usize {
        self.entries.values().filter(|e| live(e, now)).count()
    }

    /// Deletes every key.
    pub(crate) fn clear(&mut self) {
        let entries = &self.entries;
        self.log.flushed(|k| entries.contains_key(k));
        self.entries.clear();
    }

    /// The string at `key`; `WRONGTYPE` for a hash.
    pub(crate) fn get_str(&mut self, key: &[u8], now: i64) -> Result<Option<Bytes>, CmdError> {
        match self.get(key, now) {
            None => Ok(None),
            Some(Entry {
                data: Data::Str(s), ..
            }) => Ok(Some(Bytes::copy_from_slice(s))),
            Some(_) => Err(CmdError::WrongType),
        }
    }

    /// The list at `key`; `WRONGTYPE` for another type.
    pub(crate) fn get_list(
        &mut self,
        key: &[u8],
        now: i64,
    ) -> Result<Option<&mut VecDeque<Bytes>>, CmdError> {
        match self.get_mut(key, now) {
            None => Ok(None),
            Some(Entry {
                data: Data::List(l),
                ..
            }) => Ok(Some(l)),
            Some(_) => Err(CmdError::WrongType),
        }
    }

    /// The value at `key` as `pick` finds it in the data; `WRONGTYPE`
    /// when `pick` finds nothing (another type).
    fn get_typed<T>(
        &mut self,
        key: &[u8],
        now: i64,
        pick: fn(&Data) -> Option<&T>,
    ) -> Result<Option<&T>, CmdError> {
        match self.get(key, now) {
            None => Ok(None),
            Some(entry) => pick(&entry.data).map(Some).ok_or(CmdError::WrongType),
        }
    }

    /// The sorted set at `key`; `WRONGTYPE` for another type.
    pub(crate) fn get_zset(&mut self, key: &[u8], now: i64) -> Result<Option<&Zset>, CmdError> {
        self.get_typed(key, now, |data| match data {
            Data::Zset(z) => Some(&**z),
            _ => None,
        })
    }

    /// The sorted set at `key`, to change; `WRONGTYPE` for another type.
    /// Unlike [`Db::get_mut`] this logs nothing: a sorted-set command that
    /// changes nothing (`ZADD NX` of a member that is there) must not fail
    /// a watcher's transaction, so the caller calls [`Db::touch`] when it
    /// did change the set.
    pub(crate) fn zset_mut(&mut self, key: &[u8], now: i64) -> Result<Option<&mut Zset>, CmdError> {
        match Self::live_in(&mut self.entries, &mut self.log, key, now) {
            None => Ok(None),
            Some(Entry {
                data: Data::Zset(z),
                ..
            }) => Ok(Some(Arc::make_mut(z))),
            Some(_) => Err(CmdError::WrongType),
        }
    }

    /// The hash at `key`; `WRONGTYPE` for a string.
    pub(crate) fn get_hash(&mut self, key: &[u8], now: i64) -> Result<Option<&Hash>, CmdError> {
        self.get_typed(key, now, |data| match data {
            Data::Hash(h) => Some(&**h),
            _ => None,
        })
    }

    /// The hash at `key`, created empty (without expiry) when missing;
    /// `WRONGTYPE` for a string. The caller must not leave it empty.
    pub(crate) fn hash_or_create(&mut self, key: &[u8], now: i64) -> Result<&mut Hash, CmdError> {
        // One search: an expired entry is dropped by taking its place.
        let fresh = || Entry {
            data: Data::Hash(Arc::default()),
            expires_at: None,
        };
        let entry = match self.entries.entry(Small::from_slice(key)) {
            btree_map::Entry::Occupied(o) => {
                let entry = o.into_mut();
                if !live(entry, now) {
                    *entry = fresh();
                    self.log.expire(key);
                }
                entry
            }
            btree_map::Entry::Vacant(v) => v.insert(fresh()),
        };
        self.log.touch(key);
        match &mut entry.data {
            Data::Hash(h) => Ok(Arc::make_mut(h)),
            _ => Err(CmdError::WrongType),
        }
    }

    /// Every live key and its entry, in key order (a full resync).
    pub(crate) fn live_entries(&self, now: i64) -> impl Iterator<Item = (&[u8], &Entry)> {
        self.entries
            .iter()
            .filter(move |(_, e)| live(e, now))
            .map(|(k, e)| (k.as_slice(), e))
    }

    /// Sets `key` to `entry`, or deletes it, as a replica applying its
    /// primary's write (no expiry check: the primary decided).
    pub(crate) fn replace(&mut self, key: Bytes, entry: Option<Entry>) {
        self.log.bump();
        match entry {
            Some(e) => self.entries.insert(Small::from_slice(&key), e),
            None => self.entries.remove(key.as_ref()),
        };
    }

    /// Removes `key` if it is an empty hash, list or sorted set (Redis
    /// never keeps one).
    pub(crate) fn drop_if_empty(&mut self, key: &[u8]) {
        if self
            .entries
            .get(key)
            .is_some_and(|e| e.data.is_empty_collection())
        {
            self.entries.remove(key);
            self.log.bump();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry_expiring(at: i64) -> Entry {
        Entry {
            data: Data::str(b"v"),
            expires_at: Some(at),
        }
    }

    /// Keys and values of up to 16 bytes live inside the entry, with no
    /// allocation of their own, and an entry stays at 48 bytes: what keeps
    /// a million short keys within redis-server's memory (README,
    /// fake-redis). A longer key still round-trips.
    #[test]
    fn short_strings_are_stored_inline() {
        let mut db = Db::default();
        let short = Entry {
            data: Data::str(b"xxx"),
            expires_at: None,
        };
        db.insert(Bytes::from_static(b"key:000000123456"), short);
        let (key, entry) = db.entries.iter().next().expect("one key");
        assert!(!key.spilled());
        assert!(matches!(&entry.data, Data::Str(s) if !s.spilled()));
        assert!(std::mem::size_of::<Entry>() <= 48);
        let long = b"redisson_lock__channel:{redisson:lock}";
        db.insert(Bytes::from_static(long), entry_expiring(10));
        assert_eq!(db.get_str(long, 0), Ok(Some(Bytes::from_static(b"v"))));
    }

    /// A key expiring at t=1000 must be readable at 1000 (PTTL 0) and
    /// gone at 1001 for every access path, as Redis's `keyIsExpired`
    /// (`now > when`) has it; an off-by-one fails one side.
    #[test]
    fn key_is_present_at_expiry_and_gone_after_it() {
        let mut db = Db::default();
        db.insert(Bytes::from_static(b"k"), entry_expiring(1000));
        assert!(db.peek(b"k", 1000).is_some());
        assert_eq!(db.len(1000), 1);
        assert!(db.get(b"k", 1000).is_some());
        assert!(db.peek(b"k", 1001).is_none());
        assert_eq!(db.len(1001), 0);
        assert!(db.get(b"k", 1001).is_none());
        assert!(!db.remove(b"k", 1001));
    }

    /// Every read drops an expired key and logs it (for its watchers, the
    /// replicas and the version), for keys held inline and longer ones
    /// (found by different searches); a live key read is not logged, and
    /// a hash made where an expired key was starts empty, without expiry.
    #[test]
    fn reads_drop_expired_keys_and_log_them() {
        let short: &[u8] = b"redisson:lock";
        let long: &[u8] = b"redisson_lock__channel:{redisson:lock}";
        type Read = fn(&mut Db, &[u8], i64) -> bool;
        let reads: [(&str, Read); 4] = [
            ("get", |db, k, now| db.get(k, now).is_some()),
            ("get_mut", |db, k, now| db.get_mut(k, now).is_some()),
            ("get_hash", |db, k, now| {
                matches!(db.get_hash(k, now), Ok(Some(_)))
            }),
            ("hash_or_create", |db, k, now| {
                db.hash_or_create(k, now).is_ok_and(|h| h.is_empty())
            }),
        ];
        for key in [short, long] {
            for (name, read) in reads {
                let mut db = Db::default();
                db.record_writes(true);
                let hash = Entry {
                    data: Data::Hash(Arc::new(Hash::from_iter([(
                        Bytes::from_static(b"a:1"),
                        Bytes::from_static(b"1"),
                    )]))),
                    expires_at: Some(1000),
                };
                db.insert(Bytes::copy_from_slice(key), hash);
                db.watch(&Bytes::copy_from_slice(key), crate::ConnId(7));
                db.take_written();
                db.take_touched();
                let before = db.version();
                if name != "get_mut" && name != "hash_or_create" {
                    assert!(read(&mut db, key, 1000), "{name}: live");
                    assert_eq!(db.version(), before, "{name}: a live read logs nothing");
                    assert!(db.take_touched().is_empty(), "{name}");
                }
                let created = read(&mut db, key, 1001);
                assert_eq!(created, name == "hash_or_create", "{name}: expired");
                assert_ne!(db.version(), before, "{name}");
                assert_eq!(db.take_touched().first(), Some(&crate::ConnId(7)), "{name}");
                assert_eq!(db.take_written().keys, [key], "{name}");
                let left = db.peek(key, 1001).map(|e| e.expires_at);
                let expect = (name == "hash_or_create").then_some(None);
                assert_eq!(left, expect, "{name}: what is left");
            }
        }
    }

    /// Creating a hash over an expired string must succeed: the expired key
    /// is gone, so it cannot cause WRONGTYPE.
    #[test]
    fn expired_string_does_not_block_a_new_hash() {
        let mut db = Db::default();
        db.insert(Bytes::from_static(b"k"), entry_expiring(10));
        assert_eq!(db.hash_or_create(b"k", 5).err(), Some(CmdError::WrongType));
        assert_eq!(db.hash_or_create(b"k", 10).err(), Some(CmdError::WrongType));
        assert!(db.hash_or_create(b"k", 11).is_ok());
    }
}
