//! The words a client sends again and again, built once.
//!
//! Every acquire and renewal carries the lock's key, a lease and the
//! thread's field `<uuid>:<thread>`. Formatting them afresh for every
//! command was a handful of allocations per command (and as many frees
//! when the command was dropped); kept here as [`Bytes`], a word costs a
//! reference count per use.

use std::borrow::Cow;
use std::collections::BTreeMap;

use bytes::Bytes;

use crate::{LockName, ThreadId};

/// How many entries each cache keeps: a client uses a few threads, locks
/// and leases, and a caller with unbounded distinct values must not make
/// the cache grow with them (past the bound, words are built each time).
const BOUND: usize = 64;

/// One lock's key words.
#[derive(Debug, Clone)]
pub(crate) struct LockWords {
    /// The lock's key.
    pub(crate) key: Bytes,
    /// Its pub/sub channel (`redisson_lock__channel:{<name>}`).
    pub(crate) channel: Bytes,
    /// Its fencing counter's key (`{<name>}:fencing`).
    pub(crate) fencing: Bytes,
    /// The key in braces, `{<name>}` (or the name when it has a hash
    /// tag): the read-write lock's `getKeyPrefix`.
    pub(crate) prefix: Bytes,
}

impl LockWords {
    pub(super) fn new(lock: &LockName) -> LockWords {
        LockWords {
            key: Bytes::copy_from_slice(lock.as_str().as_bytes()),
            channel: Bytes::copy_from_slice(lock.channel().as_bytes()),
            fencing: Bytes::from(lock.fencing_key()),
            prefix: Bytes::from(match lock.as_str() {
                name if name.contains('{') => name.to_owned(),
                name => format!("{{{name}}}"),
            }),
        }
    }
}

/// The cache of one client's words.
#[derive(Debug, Default)]
pub(super) struct Wire {
    fields: BTreeMap<ThreadId, Bytes>,
    /// A client sends to one or two locks: a list, searched once by name
    /// (the shared name compares by address), where a map searched to
    /// test and again to lend was 250 instructions a command.
    locks: Vec<(LockName, LockWords)>,
    numbers: BTreeMap<u64, Bytes>,
}

impl Wire {
    /// The hash field of `thread` (`<uuid>:<thread-id>`).
    pub(super) fn field(&mut self, uuid: &str, thread: ThreadId) -> Bytes {
        if let Some(f) = self.fields.get(&thread) {
            return f.clone();
        }
        let mut digits = itoa::Buffer::new();
        let digits = digits.format(thread.0);
        let mut f = Vec::with_capacity(uuid.len() + 1 + digits.len());
        f.extend_from_slice(uuid.as_bytes());
        f.push(b':');
        f.extend_from_slice(digits.as_bytes());
        let f = Bytes::from(f);
        if self.fields.len() < BOUND {
            self.fields.insert(thread, f.clone());
        }
        f
    }

    /// The key words of `lock`, lent: a command takes only the words it
    /// sends (cloning all three and dropping the rest was about 1% of an
    /// explored seed).
    pub(super) fn lock(&mut self, lock: &LockName) -> Cow<'_, LockWords> {
        let i = match self.locks.iter().position(|(l, _)| l == lock) {
            Some(i) => i,
            None if self.locks.len() >= BOUND => return Cow::Owned(LockWords::new(lock)),
            None => {
                self.locks.push((lock.clone(), LockWords::new(lock)));
                self.locks.len() - 1
            }
        };
        match self.locks.get(i) {
            Some((_, w)) => Cow::Borrowed(w),
            None => Cow::Owned(LockWords::new(lock)),
        }
    }

    /// `n` in decimal (a lease, a TTL).
    pub(super) fn number(&mut self, n: u64) -> Bytes {
        if let Some(b) = self.numbers.get(&n) {
            return b.clone();
        }
        let b = Bytes::copy_from_slice(itoa::Buffer::new().format(n).as_bytes());
        if self.numbers.len() < BOUND {
            self.numbers.insert(n, b.clone());
        }
        b
    }

    /// `n` in decimal, a sign first when negative (a latch TTL that
    /// wrapped, #7089); non-negative numbers share [`Wire::number`]'s cache.
    pub(super) fn signed(&mut self, n: i64) -> Bytes {
        match u64::try_from(n) {
            Ok(n) => self.number(n),
            Err(_) => Bytes::copy_from_slice(itoa::Buffer::new().format(n).as_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cached word is the same text as a fresh one: the cache must never
    /// change what goes on the wire.
    #[test]
    fn cached_words_match_fresh_ones() {
        let mut w = Wire::default();
        let lock = LockName::new("orders").unwrap();
        for _ in 0..2 {
            assert_eq!(w.field("u", ThreadId(7)), Bytes::from_static(b"u:7"));
            assert_eq!(w.number(30_000), Bytes::from_static(b"30000"));
            let words = w.lock(&lock);
            assert_eq!(words.key, Bytes::from_static(b"orders"));
            assert_eq!(
                words.channel,
                Bytes::from_static(b"redisson_lock__channel:{orders}")
            );
            assert_eq!(words.fencing, Bytes::from_static(b"{orders}:fencing"));
        }
    }

    /// Past the bound, words are still right, just not kept.
    #[test]
    fn the_cache_is_bounded() {
        let mut w = Wire::default();
        for n in 0..(BOUND as u64 * 2) {
            assert_eq!(w.number(n), Bytes::from(n.to_string()));
        }
        assert_eq!(w.numbers.len(), BOUND);
        for n in 0..(BOUND * 2) {
            let lock = LockName::new(format!("l{n}")).unwrap();
            for _ in 0..2 {
                assert_eq!(w.lock(&lock).key, Bytes::from(format!("l{n}")));
            }
        }
        assert_eq!(w.locks.len(), BOUND);
    }
}
