//! `RedissonReadLock`: the read lock of an `RReadWriteLock`.
//!
//! Keys (REDISSON-FAMILY.md §1.1): the hash K with `mode` = `read` (or
//! `write`, when a writer's thread also reads) and one field per reading
//! thread, `<uuid>:<tid>` = hold count; per hold n a string
//! `{K}:<uuid>:<tid>:rwlock_timeout:<n>` with that acquire's lease. The
//! timeout keys carry each reader's liveness: an unlock sets K's TTL to
//! the longest one left, so a reader whose keys died no longer holds K
//! up. Channel `redisson_rwlock:{K}`; a read unlock publishes 0.
//!
//! By release: acquire keeps K's longer TTL from 3.11.1
//! (`read-acquire-keeps-ttl`); renewal extends every reader's timeout
//! keys from 3.8.1 (`read-lock-renewal`, #1604; before, `RLock`'s renew
//! script kept K alone); unlock publishes with `ARGV` from 3.22.0
//! (`publish-command-argument`), has a latch from 3.24.0
//! (`unlock-latch`), and answers nil for an absent lock from 3.44.0
//! (`rwlock-unlock-absent-nil`).

use bytes::Bytes;

use super::{KindInfo, LockType, Words, rw};
use crate::Switch;
use crate::machine::{Command, command};
use crate::release::SwitchReads;
use crate::script::LockScript;

/// `RedissonReadLock`.
pub(crate) struct ReadLock;

/// `getReadWriteTimeoutNamePrefix`: `{K}:<uuid>:<tid>:rwlock_timeout`.
fn timeout_prefix(w: &Words<'_>) -> Bytes {
    const SUFFIX: &[u8] = b":rwlock_timeout";
    let prefix = &w.lock.prefix;
    let mut key = Vec::with_capacity(prefix.len() + w.thread_field.len() + SUFFIX.len() + 1);
    key.extend_from_slice(prefix);
    key.push(b':');
    key.extend_from_slice(&w.thread_field);
    key.extend_from_slice(SUFFIX);
    Bytes::from(key)
}

impl LockType for ReadLock {
    const INFO: KindInfo = KindInfo {
        name: "read",
        class: "RedissonReadLock",
        channel_prefix: rw::CHANNEL_PREFIX,
        hash_field_suffix: "",
    };

    fn acquire(w: &Words<'_>) -> Command {
        let script = if w.switches.has(Switch::ReadAcquireKeepsTtl) {
            LockScript::ReadAcquire
        } else {
            LockScript::ReadAcquireFixedLease
        };
        let write_field = super::LockKind::Write.field(&w.thread_field);
        command::eval(
            script,
            [w.lock.key.clone(), timeout_prefix(w)],
            [w.lease.clone(), w.thread_field.clone(), write_field],
        )
    }

    fn unlock(w: &Words<'_>, latch: Option<(&str, Bytes)>) -> Command {
        let (key, channel) = (w.lock.key.clone(), w.lock.channel.clone());
        let (timeouts, prefix) = (timeout_prefix(w), w.lock.prefix.clone());
        let (message, field) = (rw::unlock_message(), w.thread_field.clone());
        match latch {
            Some((latch, ttl)) => {
                let script = if w.switches.has(Switch::RwUnlockAbsentNil) {
                    LockScript::ReadUnlockLatched
                } else {
                    LockScript::ReadUnlockLatchedOne
                };
                let latch = Bytes::copy_from_slice(latch.as_bytes());
                command::eval(
                    script,
                    [key, channel, timeouts, prefix, latch],
                    [message, field, rw::publish(), ttl],
                )
            }
            None if w.switches.has(Switch::PublishCommandArgument) => command::eval(
                LockScript::ReadUnlockPublishArg,
                [key, channel, timeouts, prefix],
                [message, field, rw::publish()],
            ),
            None => command::eval(
                LockScript::ReadUnlock,
                [key, channel, timeouts, prefix],
                [message, field],
            ),
        }
    }

    fn force_unlock(w: &Words<'_>) -> Command {
        let keys = [w.lock.key.clone(), w.lock.channel.clone()];
        if w.switches.has(Switch::PublishCommandArgument) {
            let args = [rw::unlock_message(), rw::publish()];
            command::eval(LockScript::ReadForceUnlockPublishArg, keys, args)
        } else {
            command::eval(LockScript::ReadForceUnlock, keys, [rw::unlock_message()])
        }
    }

    fn renew(w: &Words<'_>) -> Command {
        if w.switches.has(Switch::ReadLockRenewal) {
            command::eval(
                LockScript::ReadRenew,
                [w.lock.key.clone(), w.lock.prefix.clone()],
                [w.lease.clone(), w.thread_field.clone()],
            )
        } else {
            // Before #1604 the read lock inherited `RLock`'s renewal: K is
            // kept while the reader's field exists, its timeout keys die.
            command::renew(w.lock, w.lease.clone(), w.thread_field.clone())
        }
    }

    fn unmodelled(switches: &SwitchReads, watchdog: bool) -> Option<&'static str> {
        rw::unmodelled(switches, watchdog)
    }
}
