//! What the read lock and the write lock of `RReadWriteLock` share: the
//! channel, the messages, the releases the machine models them under.

use bytes::Bytes;

use crate::Switch;
use crate::machine::command::{PUBLISH, UNLOCK_MESSAGE};
use crate::release::SwitchReads;

/// `redisson_rwlock:{K}`, shared by the read and the write lock.
pub(super) const CHANNEL_PREFIX: &str = "redisson_rwlock";

/// `LockPubSub.READ_UNLOCK_MESSAGE`: every waiter's latch is released and
/// every listener runs.
pub(crate) const READ_UNLOCK_MESSAGE: &str = "1";

/// The message a read unlock publishes (`UNLOCK_MESSAGE`, one waiter).
pub(super) fn unlock_message() -> Bytes {
    Bytes::from_static(UNLOCK_MESSAGE.as_bytes())
}

/// `getPublishCommand()` on a single Redis.
pub(super) fn publish() -> Bytes {
    Bytes::from_static(PUBLISH)
}

/// Why the release's read or write lock is not modelled, if it is not:
/// locksim's fencing tokens are an `RLock` design.
pub(super) fn unmodelled(switches: &SwitchReads, _watchdog: bool) -> Option<&'static str> {
    if switches.has(Switch::Fencing) {
        return Some("fencing tokens cover RLock only; use a Redisson release");
    }
    None
}
