//! Ids and times: newtypes, so a thread id can never be passed where a time belongs.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::{LockError, LockKind};

/// A thread of a client, as Redisson's `Thread.currentThread().getId()`.
/// Threads are explicit ids, not OS threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ThreadId(pub u64);

impl fmt::Display for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The name of a lock: its Redis key, and which Redisson object of that
/// key a call is on ([`LockKind`]: `RLock`, or the read or write lock of
/// an `RReadWriteLock`). Shared, not copied: every pending command,
/// renewal and event of a run names its lock, and a clone is a reference
/// count where a `String` was an allocation.
///
/// The shared text is the lock's pub/sub channel (`RLock`'s
/// `redisson_lock__channel:{<name>}`), with the name inside it: a waiting
/// client asks for the channel on every reply and timer (about 40 times
/// an explored seed), which built a `String` each time.
///
/// Two names are equal when their key and kind are: a thread's read hold
/// of `K` and its write hold of `K` are two holds. As text (serde,
/// `Display`) a name is its key alone; the kind travels beside it (a
/// scenario step names its kind).
#[derive(Clone, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct LockName {
    text: Arc<str>,
    /// Where the key sits in `text`.
    start: u32,
    kind: LockKind,
}

// Names are compared as text, but most comparisons (map lookups by lock,
// in the client, the simulator and every checker) meet two clones of one
// name: the shared pointer answers those without reading the text.
impl PartialEq for LockName {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
            && (Arc::ptr_eq(&self.text, &other.text) || self.as_str() == other.as_str())
    }
}

impl fmt::Debug for LockName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            LockKind::Lock => f.debug_tuple("LockName").field(&self.as_str()).finish(),
            kind => f
                .debug_tuple("LockName")
                .field(&self.as_str())
                .field(&kind)
                .finish(),
        }
    }
}

impl Eq for LockName {}

impl Ord for LockName {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if Arc::ptr_eq(&self.text, &other.text) && self.kind == other.kind {
            return std::cmp::Ordering::Equal;
        }
        // By the name, not the channel (`}` sorts after most characters),
        // then the kind (`RLock` first).
        self.as_str()
            .cmp(other.as_str())
            .then(self.kind.cmp(&other.kind))
    }
}

impl PartialOrd for LockName {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::hash::Hash for LockName {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
        self.kind.hash(state);
    }
}

impl LockName {
    /// An `RLock`'s name; empty names are rejected, as Redis keys for a
    /// lock must name something.
    pub fn new(name: impl Into<String>) -> Result<Self, LockError> {
        Self::of_kind(name, LockKind::Lock)
    }

    /// The name of `kind`'s object on key `name`.
    pub fn of_kind(name: impl Into<String>, kind: LockKind) -> Result<Self, LockError> {
        let name = name.into();
        if name.is_empty() {
            return Err(LockError::EmptyLockName);
        }
        let prefix = kind.info().channel_prefix;
        // Redisson's `prefixName` for every kind (read at tags
        // redisson-3.8.0, 3.24.0 and 4.7.0, `RedissonObject.java`): no
        // braces around a name that already has a hash tag, so a name's
        // own tag puts its channel in its slot.
        let braces = !name.contains('{');
        let mut channel = String::with_capacity(prefix.len() + name.len() + 3);
        channel.push_str(prefix);
        channel.push(':');
        if braces {
            channel.push('{');
        }
        let start = channel.len();
        channel.push_str(&name);
        if braces {
            channel.push('}');
        }
        let start = u32::try_from(start).map_err(|_| LockError::EmptyLockName)?;
        Ok(Self {
            text: channel.into(),
            start,
            kind,
        })
    }

    /// The same key as `kind`'s object.
    pub fn with_kind(&self, kind: LockKind) -> LockName {
        if kind == self.kind {
            return self.clone();
        }
        Self::of_kind(self.as_str(), kind).unwrap_or_else(|_| self.clone())
    }

    /// Which Redisson object of the key this is.
    pub fn kind(&self) -> LockKind {
        self.kind
    }

    /// The key, as text.
    pub fn as_str(&self) -> &str {
        let end = if self.text.ends_with('}') && self.text[..self.start as usize].ends_with('{') {
            self.text.len() - 1
        } else {
            self.text.len()
        };
        &self.text[self.start as usize..end]
    }

    /// The pub/sub channel Redisson uses for this lock:
    /// `redisson_lock__channel:{<name>}` (`RLock`),
    /// `redisson_rwlock:{<name>}` (read and write locks).
    pub fn channel(&self) -> &str {
        &self.text
    }

    /// `suffixName(K, suffix)`: `{K}:suffix`, or `K:suffix` when K
    /// already has a hash tag.
    pub fn suffixed(&self, suffix: &str) -> String {
        let name = self.as_str();
        let mut key = String::with_capacity(name.len() + suffix.len() + 3);
        if name.contains('{') {
            key.push_str(name);
        } else {
            key.push('{');
            key.push_str(name);
            key.push('}');
        }
        key.push(':');
        key.push_str(suffix);
        key
    }

    /// The unlock latch of one unlock call (Redisson 3.24+,
    /// `getUnlockLatchName`): `redisson_unlock_latch:{<name>}:<request id>`
    /// (a name that already holds a hash tag is used as it is).
    pub fn unlock_latch(&self, request_id: &str) -> String {
        const PREFIX: &str = "redisson_unlock_latch:";
        let name = self.as_str();
        let mut key = String::with_capacity(PREFIX.len() + name.len() + request_id.len() + 3);
        key.push_str(PREFIX);
        if name.contains('{') {
            key.push_str(name);
        } else {
            key.push('{');
            key.push_str(name);
            key.push('}');
        }
        key.push(':');
        key.push_str(request_id);
        key
    }

    /// The key of the fencing counter used by the `fenced` profile:
    /// `{<name>}:fencing` (same hash slot as the lock).
    pub fn fencing_key(&self) -> String {
        let name = self.as_str();
        let mut key = String::with_capacity(name.len() + 10);
        key.push('{');
        key.push_str(name);
        key.push_str("}:fencing");
        key
    }
}

impl TryFrom<String> for LockName {
    type Error = LockError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        LockName::new(value)
    }
}

impl From<LockName> for String {
    fn from(value: LockName) -> Self {
        value.as_str().to_owned()
    }
}

/// An `RLock` shows as its key; another object as the object of its key
/// (`read lock of orders`), so a timeline tells a reader from a writer.
impl fmt::Display for LockName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            LockKind::Lock => f.write_str(self.as_str()),
            kind => write!(f, "{kind} lock of {}", self.as_str()),
        }
    }
}

/// A fencing token: grows with every acquisition of a lock name (`fenced`
/// profile only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FencingToken(pub u64);

impl fmt::Display for FencingToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Milliseconds: a duration, or an instant on the driver's monotonic clock.
/// lockcore never reads a clock; the driver passes `now` with every input.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
pub struct Millis(pub u64);

impl Millis {
    /// `self + other`, saturating.
    pub fn plus(self, other: Millis) -> Millis {
        Millis(self.0.saturating_add(other.0))
    }

    /// `self - other`, or zero when `other` is later.
    pub fn minus(self, other: Millis) -> Millis {
        Millis(self.0.saturating_sub(other.0))
    }
}

impl fmt::Display for Millis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ms", self.0)
    }
}

/// Identifies one command the state machine asked the driver to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RequestId(pub u64);

/// Identifies one timer the state machine asked the driver to set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TimerId(pub u64);

/// Identifies the rest of a callback the state machine paused
/// ([`Output::Step`](crate::Output::Step)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct StepId(pub u64);

#[cfg(test)]
mod tests {
    use super::*;

    /// Names built apart compare as their text; clones of one name, by
    /// the shared pointer, give the same answers.
    #[test]
    fn lock_names_compare_as_text() {
        let a = LockName::new("orders").expect("a name");
        let same = LockName::new("orders").expect("a name");
        let b = LockName::new("payments").expect("a name");
        assert_eq!(a, same);
        assert_eq!(a, a.clone());
        assert_ne!(a, b);
        assert_eq!(a.cmp(&same), std::cmp::Ordering::Equal);
        assert_eq!(a.cmp(&b), std::cmp::Ordering::Less);
        assert_eq!(b.cmp(&a.clone()), std::cmp::Ordering::Greater);
        assert_eq!(a.channel(), "redisson_lock__channel:{orders}");
        // `prefixName`: a name with a hash tag keeps it, unwrapped.
        let tagged = LockName::new("{inventory}orders").expect("a name");
        assert_eq!(tagged.channel(), "redisson_lock__channel:{inventory}orders");
        assert_eq!(tagged.as_str(), "{inventory}orders");
        assert_eq!(a.fencing_key(), "{orders}:fencing");
        // The name's order, not its channel's (`}` sorts after `0`).
        let short = LockName::new("a").expect("a name");
        let long = LockName::new("a0").expect("a name");
        assert!(short < long);
        assert_eq!(short.as_str(), "a");
        assert_eq!(format!("{short:?} {short}"), "LockName(\"a\") a");
        assert_eq!(String::from(long), "a0");
    }
}
