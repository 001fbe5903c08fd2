//! `RedissonWriteLock`: the write lock of an `RReadWriteLock`.
//!
//! The hash K with `mode` = `write` and the writer's field
//! `<uuid>:<tid>:write` = hold count (REDISSON-FAMILY.md §1.1). A re-entry
//! adds its lease to K's PTTL. A full release deletes K when no reader is
//! left, else turns the mode to `read` without publishing (the writer's
//! own read holds remain). Renewal is `RLock`'s script on the `:write`
//! field. A full release publishes 1 (`READ_UNLOCK_MESSAGE`: every waiter
//! wakes) from 3.8.2 (`write-unlock-wakes-all`, #1542), 0 before.
//! By release the unlock's text changes as the read lock's does.

use bytes::Bytes;

use super::{KindInfo, LockType, Words, rw};
use crate::Switch;
use crate::machine::{Command, command};
use crate::release::SwitchReads;
use crate::script::LockScript;

/// `RedissonWriteLock`.
pub(crate) struct WriteLock;

/// The message a full write release publishes.
fn message(switches: &SwitchReads) -> Bytes {
    if switches.has(Switch::WriteUnlockWakesAll) {
        Bytes::from_static(rw::READ_UNLOCK_MESSAGE.as_bytes())
    } else {
        rw::unlock_message()
    }
}

impl LockType for WriteLock {
    const INFO: KindInfo = KindInfo {
        name: "write",
        class: "RedissonWriteLock",
        channel_prefix: rw::CHANNEL_PREFIX,
        hash_field_suffix: ":write",
    };

    fn acquire(w: &Words<'_>) -> Command {
        let field = super::LockKind::Write.field(&w.thread_field);
        command::eval(
            LockScript::WriteAcquire,
            [w.lock.key.clone()],
            [w.lease.clone(), field],
        )
    }

    fn unlock(w: &Words<'_>, latch: Option<(&str, Bytes)>) -> Command {
        let keys = (w.lock.key.clone(), w.lock.channel.clone());
        let field = super::LockKind::Write.field(&w.thread_field);
        let (message, lease) = (message(w.switches), w.lease.clone());
        match latch {
            Some((latch, ttl)) => {
                let script = if w.switches.has(Switch::RwUnlockAbsentNil) {
                    LockScript::WriteUnlockLatched
                } else {
                    LockScript::WriteUnlockLatchedOne
                };
                let latch = Bytes::copy_from_slice(latch.as_bytes());
                command::eval(
                    script,
                    [keys.0, keys.1, latch],
                    [message, lease, field, rw::publish(), ttl],
                )
            }
            None if w.switches.has(Switch::PublishCommandArgument) => command::eval(
                LockScript::WriteUnlockPublishArg,
                [keys.0, keys.1],
                [message, lease, field, rw::publish()],
            ),
            None => command::eval(
                LockScript::WriteUnlock,
                [keys.0, keys.1],
                [message, lease, field],
            ),
        }
    }

    fn force_unlock(w: &Words<'_>) -> Command {
        let keys = [w.lock.key.clone(), w.lock.channel.clone()];
        let message = message(w.switches);
        if w.switches.has(Switch::PublishCommandArgument) {
            let args = [message, rw::publish()];
            command::eval(LockScript::WriteForceUnlockPublishArg, keys, args)
        } else {
            command::eval(LockScript::WriteForceUnlock, keys, [message])
        }
    }

    fn renew(w: &Words<'_>) -> Command {
        let field = super::LockKind::Write.field(&w.thread_field);
        command::renew(w.lock, w.lease.clone(), field)
    }

    fn unmodelled(switches: &SwitchReads, _: bool) -> Option<&'static str> {
        rw::unmodelled(switches, false)
    }
}
