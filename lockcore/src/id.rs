//! Ids and times: newtypes, so a thread id can never be passed where a time belongs.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::LockError;

/// A thread of a client, as Redisson's `Thread.currentThread().getId()`.
/// Threads are explicit ids, not OS threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ThreadId(pub u64);

impl fmt::Display for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The name of a lock: its Redis key. Shared, not copied: every pending
/// command, renewal and event of a run names its lock, and a clone is a
/// reference count where a `String` was an allocation.
///
/// The shared text is the lock's pub/sub channel,
/// `redisson_lock__channel:{<name>}`, with the name inside it: a waiting
/// client asks for the channel on every reply and timer (about 40 times
/// an explored seed), which built a `String` each time.
#[derive(Clone, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct LockName(Arc<str>);

/// What comes before the name in its channel.
const CHANNEL_PREFIX: &str = "redisson_lock__channel:{";

// Names are compared as text, but most comparisons (map lookups by lock,
// in the client, the simulator and every checker) meet two clones of one
// name: the shared pointer answers those without reading the text.
impl PartialEq for LockName {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
    }
}

impl fmt::Debug for LockName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("LockName").field(&self.as_str()).finish()
    }
}

impl Eq for LockName {}

impl Ord for LockName {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if Arc::ptr_eq(&self.0, &other.0) {
            return std::cmp::Ordering::Equal;
        }
        // By the name, not the channel: `}` sorts after most characters.
        self.as_str().cmp(other.as_str())
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
    }
}

impl LockName {
    /// A lock name; empty names are rejected, as Redis keys for a lock must
    /// name something.
    pub fn new(name: impl Into<String>) -> Result<Self, LockError> {
        let name = name.into();
        if name.is_empty() {
            return Err(LockError::EmptyLockName);
        }
        let mut channel = String::with_capacity(CHANNEL_PREFIX.len() + name.len() + 1);
        channel.push_str(CHANNEL_PREFIX);
        channel.push_str(&name);
        channel.push('}');
        Ok(Self(channel.into()))
    }

    /// The key, as text.
    pub fn as_str(&self) -> &str {
        &self.0[CHANNEL_PREFIX.len()..self.0.len() - 1]
    }

    /// The pub/sub channel Redisson uses for this lock:
    /// `redisson_lock__channel:{<name>}`.
    pub fn channel(&self) -> &str {
        &self.0
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

impl fmt::Display for LockName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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
