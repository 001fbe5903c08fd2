//! A lock made of several: Redisson's `RedissonMultiLock` and
//! `RedissonRedLock`.
//!
//! A [`MultiLock`] names its constituents in the order its acquire takes
//! them; the algorithm is the machine's (`machine/multi`). The
//! constituents may be any lock kind, each on its own key; as in
//! Redisson, they share nothing but the calling thread.

use serde::{Deserialize, Serialize};

use crate::{LockError, LockName};

/// Which of Redisson's multi-locks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum MultiKind {
    /// `RedissonMultiLock` (`getMultiLock(locks...)`): held when every
    /// constituent is.
    #[serde(rename = "multi-lock")]
    Multi,
    /// `RedissonRedLock` (deprecated since 3.12.5, #2669): held when a
    /// majority is (`n/2 + 1`), each constituent given a share of the
    /// wait.
    #[serde(rename = "red-lock")]
    Red,
}

impl MultiKind {
    /// Its name in scenario files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            MultiKind::Multi => "multi-lock",
            MultiKind::Red => "red-lock",
        }
    }

    /// The Redisson class.
    pub fn class(self) -> &'static str {
        match self {
            MultiKind::Multi => "RedissonMultiLock",
            MultiKind::Red => "RedissonRedLock",
        }
    }
}

/// A multi-lock object: its kind and its constituents, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MultiLock {
    kind: MultiKind,
    locks: Vec<LockName>,
}

impl MultiLock {
    /// A multi-lock of `kind` over `locks`, taken in this order. Refused:
    /// no lock (Redisson's `IllegalArgumentException`, "Lock objects are
    /// not defined"), and one lock named twice, which Redisson allows (the
    /// second acquire re-enters) but locksim does not model: its parallel
    /// unlocks would be two calls of one thread on one lock.
    pub fn new(kind: MultiKind, locks: Vec<LockName>) -> Result<MultiLock, LockError> {
        if locks.is_empty() {
            return Err(LockError::NoLockObjects);
        }
        for (i, lock) in locks.iter().enumerate() {
            if locks[..i].contains(lock) {
                return Err(LockError::LockNamedTwice(lock.to_string()));
            }
        }
        Ok(MultiLock { kind, locks })
    }

    /// Which multi-lock it is.
    pub fn kind(&self) -> MultiKind {
        self.kind
    }

    /// Its constituents, in the order they are taken.
    pub fn locks(&self) -> &[LockName] {
        &self.locks
    }

    /// `failedLocksLimit()`: how many constituents an acquire may fail to
    /// take and still hold the lock (0; a red lock's minority).
    pub(crate) fn failed_locks_limit(&self) -> usize {
        match self.kind {
            MultiKind::Multi => 0,
            MultiKind::Red => self.locks.len() - (self.locks.len() / 2 + 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(names: &[&str]) -> Vec<LockName> {
        names.iter().map(|n| LockName::new(*n).unwrap()).collect()
    }

    #[test]
    fn a_red_lock_may_fail_its_minority() {
        let red = |n: &[&str]| MultiLock::new(MultiKind::Red, names(n)).unwrap();
        assert_eq!(red(&["a"]).failed_locks_limit(), 0);
        assert_eq!(red(&["a", "b"]).failed_locks_limit(), 0);
        assert_eq!(red(&["a", "b", "c"]).failed_locks_limit(), 1);
        assert_eq!(red(&["a", "b", "c", "d", "e"]).failed_locks_limit(), 2);
        let multi = MultiLock::new(MultiKind::Multi, names(&["a", "b", "c"])).unwrap();
        assert_eq!(multi.failed_locks_limit(), 0);
    }

    #[test]
    fn no_lock_and_a_lock_named_twice_are_refused() {
        assert_eq!(
            MultiLock::new(MultiKind::Multi, vec![])
                .unwrap_err()
                .to_string(),
            "Lock objects are not defined"
        );
        let err = MultiLock::new(MultiKind::Red, names(&["a", "b", "a"])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "lock 'a' is named twice in one multi-lock (Redisson re-enters it; not modelled)"
        );
    }
}
