//! `RLock` (`RedissonLock`): the lock locksim has modelled from the start.
//! Its scripts, by release, are in `machine/command.rs`; this file only
//! registers them as a kind.

use bytes::Bytes;

use super::{KindInfo, LockType, Words};
use crate::machine::{Command, command};
use crate::release::SwitchReads;

/// `RedissonLock`.
pub(crate) struct RLockType;

impl LockType for RLockType {
    const INFO: KindInfo = KindInfo {
        name: "rlock",
        class: "RedissonLock",
        channel_prefix: "redisson_lock__channel",
        hash_field_suffix: "",
    };

    fn acquire(w: &Words<'_>) -> Command {
        command::acquire(w.switches, w.lock, w.lease.clone(), w.thread_field.clone())
    }

    fn unlock(w: &Words<'_>, latch: Option<(&str, Bytes)>) -> Command {
        let (lease, field) = (w.lease.clone(), w.thread_field.clone());
        match latch {
            Some((latch, ttl)) => command::unlock_latched(w.lock, lease, field, latch, ttl),
            None => command::unlock(w.switches, w.lock, lease, field),
        }
    }

    fn force_unlock(w: &Words<'_>) -> Command {
        command::force_unlock(w.switches, w.lock)
    }

    fn renew(w: &Words<'_>) -> Command {
        command::renew(w.lock, w.lease.clone(), w.thread_field.clone())
    }

    fn unmodelled(_: &SwitchReads, _: bool) -> Option<&'static str> {
        None
    }
}
