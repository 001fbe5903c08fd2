//! The lock scripts that fake-redis knows, by their exact text.
//!
//! Redisson sends its lock logic as Lua scripts. The simulator runs them
//! many thousands of times, so fake-redis recognises each by its exact
//! text (for `EVAL`) or its SHA1 (for `EVALSHA`) and runs an equivalent
//! native operation, atomically, instead of starting Lua (which runs every
//! other script). The texts below are the Java string concatenations of the
//! source documents, joined exactly as the JVM joins them, so a locksim
//! client and a Java Redisson client send byte-identical scripts.

use crate::{script_fair, script_fair_legacy, script_fenced, script_rw, script_spin};

/// A script fake-redis can run natively.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LockScript {
    /// Acquire, Redisson 3.13 and later (document 004 `tryLockInnerAsync`):
    /// `KEYS[1]` lock, `ARGV[1]` lease ms, `ARGV[2]` field. Nil when
    /// acquired, else the holder's PTTL.
    Acquire,
    /// Acquire, older Redisson (document 003): `HSET` on a fresh key,
    /// `HINCRBY` on re-entry; same arguments and replies as [`Self::Acquire`].
    AcquireLegacy,
    /// Renew (documents 000 to 004 `renewExpirationAsync`): `KEYS[1]` lock,
    /// `ARGV[1]` lease ms, `ARGV[2]` field. 1 when renewed, else 0.
    Renew,
    /// Unlock (document 004 `unlockInnerAsync`): `KEYS[1]` lock, `KEYS[2]`
    /// channel, `ARGV[1]` unlock message, `ARGV[2]` lease ms, `ARGV[3]`
    /// field. Nil when not held by the field, 0 when still held (count
    /// decremented, expiry re-armed), 1 when released (deleted, published).
    Unlock,
    /// Force unlock (Redisson `forceUnlockAsync`): `KEYS[1]` lock, `KEYS[2]`
    /// channel, `ARGV[1]` unlock message. 1 when a key was deleted (and the
    /// message published), else 0.
    ForceUnlock,
    /// Fenced acquire, beyond Redisson (lockcore's `fenced` profile):
    /// `KEYS[1]` lock, `KEYS[2]` fencing counter, `ARGV[1]` lease ms,
    /// `ARGV[2]` field. Acquired: `{1, token}`, where a fresh acquisition
    /// takes `INCR KEYS[2]` and a re-entry keeps the current counter value.
    /// Held by another: `{0, pttl}`.
    AcquireFenced,
    /// Unlock with a latch (Redisson 3.24+, #4871): `KEYS[1]` lock,
    /// `KEYS[2]` channel, `KEYS[3]` the call's latch key; `ARGV[1]` unlock
    /// message, `ARGV[2]` lease ms, `ARGV[3]` field, `ARGV[4]` the publish
    /// command, `ARGV[5]` the latch's TTL ms. A latch already set replays
    /// its stored result; otherwise as [`Self::Unlock`], storing 0 or 1 in
    /// the latch.
    UnlockLatched,
    /// The batched renewal round (Redisson 3.44+, `LockTask.renew`, #6303):
    /// `KEYS[i]` the chunk's locks, `ARGV[1]` lease ms, `ARGV[i + 1]` the
    /// field renewed for `KEYS[i]`. A list with one entry per key, 1 when
    /// renewed, else 0.
    RenewBatch,
    /// Unlock, Redisson 3.22.0 to 3.23.x (#5047, commit 823c786a1): as
    /// [`Self::Unlock`], publishing with the command in `ARGV[4]`
    /// (`PUBLISH`, or `SPUBLISH` on a sharded cluster).
    UnlockPublishArg,
    /// Force unlock, Redisson 3.22.0 and later: as [`Self::ForceUnlock`],
    /// publishing with the command in `ARGV[2]`.
    ForceUnlockPublishArg,
    /// `RReadWriteLock`: see `script_rw`'s `READ_ACQUIRE_FIXED_LEASE`.
    ReadAcquireFixedLease,
    /// `RReadWriteLock`: see `script_rw`'s `READ_ACQUIRE`.
    ReadAcquire,
    /// `RReadWriteLock`: see `script_rw`'s `READ_RENEW`.
    ReadRenew,
    /// `RReadWriteLock`: see `script_rw`'s `READ_RENEW_BATCH_SHADOWED`.
    ReadRenewBatchShadowed,
    /// `RReadWriteLock`: see `script_rw`'s `READ_RENEW_BATCH`.
    ReadRenewBatch,
    /// `RReadWriteLock`: see `script_rw`'s `READ_RENEW_BATCH_OWN`.
    ReadRenewBatchOwn,
    /// `RReadWriteLock`: see `script_rw`'s `READ_UNLOCK`.
    ReadUnlock,
    /// `RReadWriteLock`: see `script_rw`'s `READ_UNLOCK_PUBLISH_ARG`.
    ReadUnlockPublishArg,
    /// `RReadWriteLock`: see `script_rw`'s `READ_UNLOCK_LATCHED_ONE`.
    ReadUnlockLatchedOne,
    /// `RReadWriteLock`: see `script_rw`'s `READ_UNLOCK_LATCHED`.
    ReadUnlockLatched,
    /// `RReadWriteLock`: see `script_rw`'s `READ_FORCE_UNLOCK`.
    ReadForceUnlock,
    /// `RReadWriteLock`: see `script_rw`'s `READ_FORCE_UNLOCK_PUBLISH_ARG`.
    ReadForceUnlockPublishArg,
    /// `RReadWriteLock`: see `script_rw`'s `WRITE_ACQUIRE`.
    WriteAcquire,
    /// `RReadWriteLock`: see `script_rw`'s `WRITE_UNLOCK`.
    WriteUnlock,
    /// `RReadWriteLock`: see `script_rw`'s `WRITE_UNLOCK_PUBLISH_ARG`.
    WriteUnlockPublishArg,
    /// `RReadWriteLock`: see `script_rw`'s `WRITE_UNLOCK_LATCHED_ONE`.
    WriteUnlockLatchedOne,
    /// `RReadWriteLock`: see `script_rw`'s `WRITE_UNLOCK_LATCHED`.
    WriteUnlockLatched,
    /// `RReadWriteLock`: see `script_rw`'s `WRITE_FORCE_UNLOCK`.
    WriteForceUnlock,
    /// `RReadWriteLock`: see `script_rw`'s `WRITE_FORCE_UNLOCK_PUBLISH_ARG`.
    WriteForceUnlockPublishArg,
    /// `RFairLock` `acquireFailedAsync` (Redisson 3.32.0 to 4.7.0): `KEYS`
    /// queue, timeout set; `ARGV` `<uuid>:<tid>`, the wait ms. Takes the
    /// wait off every thread queued after the caller, then removes the
    /// caller from both. Nil.
    FairAcquireFailed,
    /// `RFairLock` `tryLock()` (3.32.0 to 4.7.0): `KEYS` K, queue, timeout
    /// set; `ARGV` lease, field, now, wait. Purges stale queue heads,
    /// acquires (nil) or re-enters (nil); else 1, never queueing.
    FairTryAcquire,
    /// `RFairLock` acquire with a wait, 3.32.0 to 3.44.x: as
    /// [`Self::FairAcquire`], but the enqueue reads the last thread's
    /// score without checking it has one (a Lua error when it has none).
    FairAcquireUnscoredLast,
    /// `RFairLock` acquire with a wait, 3.45.0 to 4.7.0 (PR #6434): `KEYS`
    /// K, queue, timeout set; `ARGV` lease, field, wait, now. Nil when
    /// acquired or re-entered; a queued caller gets `max(0, PTTL K)`; a
    /// new one is queued with deadline ttl + wait + now and gets ttl.
    FairAcquire,
    /// `RFairLock` unlock (3.32.0 to 4.7.0): `KEYS` K, queue, timeout set,
    /// channel prefix, latch; `ARGV` message, lease, field, now, publish
    /// command, latch TTL. Publishes to the queue head's own channel.
    FairUnlock,
    /// `RFairLock` force unlock (3.32.0 to 4.7.0): `KEYS` K, queue, timeout
    /// set, channel prefix; `ARGV` message, now, publish command.
    FairForceUnlock,
    /// `RFairLock` before 3.32.0: see `script_fair_legacy::FAIR_ACQUIRE_FAILED_HEAD`.
    FairAcquireFailedHead,
    /// `RFairLock` before 3.32.0: see `script_fair_legacy::FAIR_TRY_ACQUIRE_LEGACY`.
    FairTryAcquireLegacy,
    /// `RFairLock` before 3.32.0: see `script_fair_legacy::FAIR_ACQUIRE_FROM_HEAD`.
    FairAcquireFromHead,
    /// `RFairLock` before 3.32.0: see `script_fair_legacy::FAIR_UNLOCK_LEGACY`.
    FairUnlockLegacy,
    /// `RFairLock` before 3.32.0: see `script_fair_legacy::FAIR_FORCE_UNLOCK_LEGACY`.
    FairForceUnlockLegacy,
    /// `RFairLock` before 3.32.0: see `script_fair_legacy::FAIR_TRY_ACQUIRE_UNCHECKED_PURGE`.
    FairTryAcquireUncheckedPurge,
    /// `RFairLock` before 3.32.0: see `script_fair_legacy::FAIR_ACQUIRE_UNCHECKED_PURGE`.
    FairAcquireUncheckedPurge,
    /// `RFairLock` before 3.32.0: see `script_fair_legacy::FAIR_UNLOCK_PUBLISH_ARG`.
    FairUnlockPublishArg,
    /// `RFairLock` before 3.32.0: see `script_fair_legacy::FAIR_FORCE_UNLOCK_PUBLISH_ARG`.
    FairForceUnlockPublishArg,
    /// `RFairLock` before 3.32.0: see `script_fair_legacy::FAIR_UNLOCK_LATCHED_UNCHECKED_PURGE`.
    FairUnlockLatchedUncheckedPurge,
    /// `RFairLock` before 3.32.0: see `script_fair_legacy::FAIR_ACQUIRE_OWN_DEADLINE`.
    FairAcquireOwnDeadline,
    /// `RFencedLock` acquire (3.19.0 to 4.7.0): `KEYS` K, token key;
    /// `ARGV` lease, field. `RLock`'s acquire with an `INCR` of the token
    /// key on every success; nil when acquired, else K's PTTL.
    FencedAcquire,
    /// `RFencedLock` `lockAndGetToken` / `tryLockAndGetToken`: as
    /// [`Self::FencedAcquire`]; `{-1, token}` when acquired, else
    /// `{PTTL, -1}`.
    FencedAcquireToken,
    /// `RSpinLock` acquire (3.15.0 to 4.7.0): `KEYS[1]` K; `ARGV` lease,
    /// field. The calls and replies of [`Self::Acquire`].
    SpinAcquire,
    /// `RSpinLock` unlock (3.15.0 to 3.23.x): `KEYS[1]` K; `ARGV` lease,
    /// field. Nil, 0 (counted down) or 1 (deleted); publishes nothing.
    SpinUnlock,
    /// `RSpinLock` unlock with a latch (3.24.0 to 4.7.0): `KEYS` K, latch;
    /// `ARGV` lease, field, latch TTL. As [`Self::SpinUnlock`], replaying
    /// or storing the result in the latch.
    SpinUnlockLatched,
    /// `RSpinLock` force unlock: `KEYS[1]` K. 1 when deleted, else 0.
    SpinForceUnlock,
}

/// `a` then `b`, as one array of `C = A + B` scripts (checked when the
/// constant is built).
const fn joined<const A: usize, const B: usize, const C: usize>(
    a: [LockScript; A],
    b: [LockScript; B],
) -> [LockScript; C] {
    assert!(A + B == C);
    let mut all = [LockScript::Acquire; C];
    let mut i = 0;
    while i < C {
        all[i] = if i < A { a[i] } else { b[i - A] };
        i += 1;
    }
    all
}

impl LockScript {
    /// `RLock`'s scripts: the ones a Redis that Redisson clients have used
    /// before has cached (what the simulated servers start with). The lock
    /// family's scripts ran in Lua before they ran natively, uncached at
    /// the start, and stay so: a warm cache of them would spare the first
    /// `EVALSHA` its `NOSCRIPT` and change every recorded history.
    pub const RLOCK: [LockScript; 10] = [
        LockScript::Acquire,
        LockScript::AcquireLegacy,
        LockScript::Renew,
        LockScript::Unlock,
        LockScript::ForceUnlock,
        LockScript::AcquireFenced,
        LockScript::UnlockLatched,
        LockScript::RenewBatch,
        LockScript::UnlockPublishArg,
        LockScript::ForceUnlockPublishArg,
    ];

    /// `RReadWriteLock`'s scripts (`ReadLockTask`'s renewals among them).
    pub const RW: [LockScript; 19] = [
        LockScript::ReadAcquireFixedLease,
        LockScript::ReadAcquire,
        LockScript::ReadRenew,
        LockScript::ReadRenewBatchShadowed,
        LockScript::ReadRenewBatch,
        LockScript::ReadRenewBatchOwn,
        LockScript::ReadUnlock,
        LockScript::ReadUnlockPublishArg,
        LockScript::ReadUnlockLatchedOne,
        LockScript::ReadUnlockLatched,
        LockScript::ReadForceUnlock,
        LockScript::ReadForceUnlockPublishArg,
        LockScript::WriteAcquire,
        LockScript::WriteUnlock,
        LockScript::WriteUnlockPublishArg,
        LockScript::WriteUnlockLatchedOne,
        LockScript::WriteUnlockLatched,
        LockScript::WriteForceUnlock,
        LockScript::WriteForceUnlockPublishArg,
    ];

    /// `RFairLock`'s (every era's), `RFencedLock`'s and `RSpinLock`'s.
    const OTHER_FAMILY: [LockScript; 23] = [
        LockScript::FairAcquireFailed,
        LockScript::FairTryAcquire,
        LockScript::FairAcquireUnscoredLast,
        LockScript::FairAcquire,
        LockScript::FairUnlock,
        LockScript::FairForceUnlock,
        LockScript::FairAcquireFailedHead,
        LockScript::FairTryAcquireLegacy,
        LockScript::FairAcquireFromHead,
        LockScript::FairUnlockLegacy,
        LockScript::FairForceUnlockLegacy,
        LockScript::FairTryAcquireUncheckedPurge,
        LockScript::FairAcquireUncheckedPurge,
        LockScript::FairUnlockPublishArg,
        LockScript::FairForceUnlockPublishArg,
        LockScript::FairUnlockLatchedUncheckedPurge,
        LockScript::FairAcquireOwnDeadline,
        LockScript::FencedAcquire,
        LockScript::FencedAcquireToken,
        LockScript::SpinAcquire,
        LockScript::SpinUnlock,
        LockScript::SpinUnlockLatched,
        LockScript::SpinForceUnlock,
    ];

    /// The lock family's scripts: [`Self::RW`], then the fair, fenced and
    /// spin locks'.
    pub const FAMILY: [LockScript; 42] = joined(Self::RW, Self::OTHER_FAMILY);

    /// Every known script: [`Self::RLOCK`], then [`Self::FAMILY`].
    pub const ALL: [LockScript; 52] = joined(Self::RLOCK, Self::FAMILY);

    /// The script's exact text.
    pub fn text(self) -> &'static str {
        match self {
            LockScript::Acquire => ACQUIRE,
            LockScript::AcquireLegacy => ACQUIRE_LEGACY,
            LockScript::Renew => RENEW,
            LockScript::Unlock => UNLOCK,
            LockScript::ForceUnlock => FORCE_UNLOCK,
            LockScript::AcquireFenced => ACQUIRE_FENCED,
            LockScript::UnlockLatched => UNLOCK_LATCHED,
            LockScript::RenewBatch => RENEW_BATCH,
            LockScript::UnlockPublishArg => UNLOCK_PUBLISH_ARG,
            LockScript::ForceUnlockPublishArg => FORCE_UNLOCK_PUBLISH_ARG,
            LockScript::ReadAcquireFixedLease => script_rw::READ_ACQUIRE_FIXED_LEASE,
            LockScript::ReadAcquire => script_rw::READ_ACQUIRE,
            LockScript::ReadRenew => script_rw::READ_RENEW,
            LockScript::ReadRenewBatchShadowed => script_rw::READ_RENEW_BATCH_SHADOWED,
            LockScript::ReadRenewBatch => script_rw::READ_RENEW_BATCH,
            LockScript::ReadRenewBatchOwn => script_rw::READ_RENEW_BATCH_OWN,
            LockScript::ReadUnlock => script_rw::READ_UNLOCK,
            LockScript::ReadUnlockPublishArg => script_rw::READ_UNLOCK_PUBLISH_ARG,
            LockScript::ReadUnlockLatchedOne => script_rw::READ_UNLOCK_LATCHED_ONE,
            LockScript::ReadUnlockLatched => script_rw::READ_UNLOCK_LATCHED,
            LockScript::ReadForceUnlock => script_rw::READ_FORCE_UNLOCK,
            LockScript::ReadForceUnlockPublishArg => script_rw::READ_FORCE_UNLOCK_PUBLISH_ARG,
            LockScript::WriteAcquire => script_rw::WRITE_ACQUIRE,
            LockScript::WriteUnlock => script_rw::WRITE_UNLOCK,
            LockScript::WriteUnlockPublishArg => script_rw::WRITE_UNLOCK_PUBLISH_ARG,
            LockScript::WriteUnlockLatchedOne => script_rw::WRITE_UNLOCK_LATCHED_ONE,
            LockScript::WriteUnlockLatched => script_rw::WRITE_UNLOCK_LATCHED,
            LockScript::WriteForceUnlock => script_rw::WRITE_FORCE_UNLOCK,
            LockScript::WriteForceUnlockPublishArg => script_rw::WRITE_FORCE_UNLOCK_PUBLISH_ARG,
            LockScript::FairAcquireFailed => script_fair::FAIR_ACQUIRE_FAILED,
            LockScript::FairTryAcquire => script_fair::FAIR_TRY_ACQUIRE,
            LockScript::FairAcquireUnscoredLast => script_fair::FAIR_ACQUIRE_UNSCORED_LAST,
            LockScript::FairAcquire => script_fair::FAIR_ACQUIRE,
            LockScript::FairUnlock => script_fair::FAIR_UNLOCK,
            LockScript::FairForceUnlock => script_fair::FAIR_FORCE_UNLOCK,
            LockScript::FairAcquireFailedHead => script_fair_legacy::FAIR_ACQUIRE_FAILED_HEAD,
            LockScript::FairTryAcquireLegacy => script_fair_legacy::FAIR_TRY_ACQUIRE_LEGACY,
            LockScript::FairAcquireFromHead => script_fair_legacy::FAIR_ACQUIRE_FROM_HEAD,
            LockScript::FairUnlockLegacy => script_fair_legacy::FAIR_UNLOCK_LEGACY,
            LockScript::FairForceUnlockLegacy => script_fair_legacy::FAIR_FORCE_UNLOCK_LEGACY,
            LockScript::FairTryAcquireUncheckedPurge => {
                script_fair_legacy::FAIR_TRY_ACQUIRE_UNCHECKED_PURGE
            }
            LockScript::FairAcquireUncheckedPurge => {
                script_fair_legacy::FAIR_ACQUIRE_UNCHECKED_PURGE
            }
            LockScript::FairUnlockPublishArg => script_fair_legacy::FAIR_UNLOCK_PUBLISH_ARG,
            LockScript::FairForceUnlockPublishArg => {
                script_fair_legacy::FAIR_FORCE_UNLOCK_PUBLISH_ARG
            }
            LockScript::FairUnlockLatchedUncheckedPurge => {
                script_fair_legacy::FAIR_UNLOCK_LATCHED_UNCHECKED_PURGE
            }
            LockScript::FairAcquireOwnDeadline => script_fair_legacy::FAIR_ACQUIRE_OWN_DEADLINE,
            LockScript::FencedAcquire => script_fenced::FENCED_ACQUIRE,
            LockScript::FencedAcquireToken => script_fenced::FENCED_ACQUIRE_TOKEN,
            LockScript::SpinAcquire => script_spin::SPIN_ACQUIRE,
            LockScript::SpinUnlock => script_spin::SPIN_UNLOCK,
            LockScript::SpinUnlockLatched => script_spin::SPIN_UNLOCK_LATCHED,
            LockScript::SpinForceUnlock => script_spin::SPIN_FORCE_UNLOCK,
        }
    }

    /// The script whose text is exactly `text`, if any.
    pub fn from_text(text: &[u8]) -> Option<LockScript> {
        Self::ALL.into_iter().find(|s| s.text().as_bytes() == text)
    }
}

const ACQUIRE: &str = concat!(
    "if ((redis.call('exists', KEYS[1]) == 0) ",
    "or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) then ",
    "redis.call('hincrby', KEYS[1], ARGV[2], 1); ",
    "redis.call('pexpire', KEYS[1], ARGV[1]); ",
    "return nil; ",
    "end; ",
    "return redis.call('pttl', KEYS[1]);"
);

const ACQUIRE_LEGACY: &str = concat!(
    "if (redis.call('exists', KEYS[1]) == 0) then ",
    "redis.call('hset', KEYS[1], ARGV[2], 1); ",
    "redis.call('pexpire', KEYS[1], ARGV[1]); ",
    "return nil; ",
    "end; ",
    "if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then ",
    "redis.call('hincrby', KEYS[1], ARGV[2], 1); ",
    "redis.call('pexpire', KEYS[1], ARGV[1]); ",
    "return nil; ",
    "end; ",
    "return redis.call('pttl', KEYS[1]);"
);

const RENEW: &str = concat!(
    "if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then ",
    "redis.call('pexpire', KEYS[1], ARGV[1]); ",
    "return 1; ",
    "end; ",
    "return 0;"
);

/// Redisson 3.44.0 to 4.7.0 `LockTask.renew`.
const RENEW_BATCH: &str = concat!(
    "local result = {} ",
    "for i = 1, #KEYS, 1 do ",
    "if (redis.call('hexists', KEYS[i], ARGV[i + 1]) == 1) then ",
    "redis.call('pexpire', KEYS[i], ARGV[1]); ",
    "table.insert(result, 1); ",
    "else ",
    "table.insert(result, 0); ",
    "end; ",
    "end; ",
    "return result;"
);

const UNLOCK: &str = concat!(
    "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then ",
    "return nil;",
    "end; ",
    "local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); ",
    "if (counter > 0) then ",
    "redis.call('pexpire', KEYS[1], ARGV[2]); ",
    "return 0; ",
    "else ",
    "redis.call('del', KEYS[1]); ",
    "redis.call('publish', KEYS[2], ARGV[1]); ",
    "return 1; ",
    "end; ",
    "return nil;"
);

/// Redisson 3.24.0 to 4.7.0 `unlockInnerAsync(threadId, requestId, timeout)`.
const UNLOCK_LATCHED: &str = concat!(
    "local val = redis.call('get', KEYS[3]); ",
    "if val ~= false then ",
    "return tonumber(val);",
    "end; ",
    "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then ",
    "return nil;",
    "end; ",
    "local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); ",
    "if (counter > 0) then ",
    "redis.call('pexpire', KEYS[1], ARGV[2]); ",
    "redis.call('set', KEYS[3], 0, 'px', ARGV[5]); ",
    "return 0; ",
    "else ",
    "redis.call('del', KEYS[1]); ",
    "redis.call(ARGV[4], KEYS[2], ARGV[1]); ",
    "redis.call('set', KEYS[3], 1, 'px', ARGV[5]); ",
    "return 1; ",
    "end; "
);

/// Redisson 3.22.0 to 3.23.x `unlockInnerAsync(threadId)` (commit
/// 823c786a1, read at tags redisson-3.22.0 and redisson-3.23.5).
const UNLOCK_PUBLISH_ARG: &str = concat!(
    "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then ",
    "return nil;",
    "end; ",
    "local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); ",
    "if (counter > 0) then ",
    "redis.call('pexpire', KEYS[1], ARGV[2]); ",
    "return 0; ",
    "else ",
    "redis.call('del', KEYS[1]); ",
    "redis.call(ARGV[4], KEYS[2], ARGV[1]); ",
    "return 1; ",
    "end; ",
    "return nil;"
);

/// Redisson 3.22.0 to 4.7.0 `forceUnlockAsync` (commit 823c786a1; the
/// same text at tags redisson-3.23.4, redisson-3.44.0 and redisson-4.7.0).
const FORCE_UNLOCK_PUBLISH_ARG: &str = concat!(
    "if (redis.call('del', KEYS[1]) == 1) then ",
    "redis.call(ARGV[2], KEYS[2], ARGV[1]); ",
    "return 1 ",
    "else ",
    "return 0 ",
    "end"
);

const FORCE_UNLOCK: &str = concat!(
    "if (redis.call('del', KEYS[1]) == 1) then ",
    "redis.call('publish', KEYS[2], ARGV[1]); ",
    "return 1 ",
    "else ",
    "return 0 ",
    "end"
);

const ACQUIRE_FENCED: &str = concat!(
    "if (redis.call('exists', KEYS[1]) == 0) then ",
    "local token = redis.call('incr', KEYS[2]); ",
    "redis.call('hset', KEYS[1], ARGV[2], 1); ",
    "redis.call('pexpire', KEYS[1], ARGV[1]); ",
    "return {1, token}; ",
    "end; ",
    "if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then ",
    "redis.call('hincrby', KEYS[1], ARGV[2], 1); ",
    "redis.call('pexpire', KEYS[1], ARGV[1]); ",
    "return {1, tonumber(redis.call('get', KEYS[2]))}; ",
    "end; ",
    "return {0, redis.call('pttl', KEYS[1])};"
);

/// The SHA1 of `text` in lowercase hex, as `SCRIPT LOAD` returns it.
pub fn sha1_hex(text: &[u8]) -> String {
    use sha1::{Digest, Sha1};
    let digest = Sha1::digest(text);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The scripts this server has seen, by SHA1 (what `EVALSHA` may run).
///
/// Redis 7 caches every script it ran with `EVAL` or loaded with `SCRIPT
/// LOAD` (once it compiled). A lock script is kept as its kind; any other
/// as its text, for `EVALSHA` to run in Lua.
#[derive(Debug, Default)]
pub(crate) struct ScriptCache {
    /// Which lock scripts are cached, one bit per [`LockScript::ALL`]
    /// index: their SHA1s are known to the process, so caching one is a
    /// bit, not a String and a map insert (every simulated server caches
    /// the scripts its clients send, a twentieth of a short run).
    lock_scripts: u64,
    /// The text of every cached script that is not a lock script (those
    /// run in Lua), by SHA1.
    texts: std::collections::BTreeMap<String, bytes::Bytes>,
}

// One bit per lock script in [`ScriptCache::lock_scripts`].
const _: () = assert!(LockScript::ALL.len() <= u64::BITS as usize);

impl ScriptCache {
    /// Caches `text`; its SHA1 and the native script it is, if any.
    pub(crate) fn register(&mut self, text: &[u8]) -> (String, Option<LockScript>) {
        match LockScript::from_text(text) {
            Some(script) => {
                self.register_lock(script);
                (script.sha1(), Some(script))
            }
            None => {
                let sha = sha1_hex(text);
                self.texts
                    .insert(sha.clone(), bytes::Bytes::copy_from_slice(text));
                (sha, None)
            }
        }
    }

    /// Caches a lock script (as [`Self::register`] its text would).
    pub(crate) fn register_lock(&mut self, script: LockScript) {
        self.lock_scripts |= 1u64 << script.index();
    }

    /// Looks a lowercase SHA1 up: `None` when never seen, `Some(None)` for
    /// a cached script fake-redis cannot run.
    pub(crate) fn get(&self, sha: &str) -> Option<Option<LockScript>> {
        match LockScript::from_sha1(sha) {
            Some(script) if self.lock_scripts & (1u64 << script.index()) != 0 => Some(Some(script)),
            // A lock script's text never lands in `texts`: not cached.
            Some(_) => None,
            None => self.texts.contains_key(sha).then_some(None),
        }
    }

    /// The text of a cached script that runs in Lua.
    pub(crate) fn text(&self, sha: &str) -> Option<bytes::Bytes> {
        self.texts.get(sha).cloned()
    }

    /// Forgets every script (`SCRIPT FLUSH`).
    pub(crate) fn clear(&mut self) {
        self.lock_scripts = 0;
        self.texts.clear();
    }
}

impl LockScript {
    /// The SHA1 of the script's text, lowercase hex (what `EVALSHA` takes).
    pub fn sha1(self) -> String {
        self.sha1_str().to_owned()
    }

    /// The SHA1, borrowed: hashed once per process, since every EVAL of a
    /// lock script needs it (for the cache and for error suffixes) and the
    /// simulator runs many thousands of them.
    pub(crate) fn sha1_str(self) -> &'static str {
        static SHAS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        let shas = SHAS.get_or_init(|| {
            LockScript::ALL
                .iter()
                .map(|s| sha1_hex(s.text().as_bytes()))
                .collect()
        });
        &shas[self.index()]
    }

    /// The lock script whose SHA1 (lowercase hex) is `sha`, if any.
    pub(crate) fn from_sha1(sha: &str) -> Option<LockScript> {
        LockScript::ALL.into_iter().find(|s| s.sha1_str() == sha)
    }

    /// The script's index in [`LockScript::ALL`].
    fn index(self) -> usize {
        LockScript::ALL
            .iter()
            .position(|s| *s == self)
            .expect("ALL lists every script")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The SHA1s below were printed by redis-server 7.0.15 (`SCRIPT LOAD`)
    /// for these exact texts; a changed byte in a text changes its SHA1, so
    /// clients using EVALSHA against real Redis would stop matching.
    #[test]
    fn sha1_matches_real_redis() {
        assert_eq!(
            LockScript::Acquire.sha1(),
            "149c5a8bf18676fd99e9e6e24923bd64d9b62f94"
        );
        assert_eq!(
            LockScript::AcquireLegacy.sha1(),
            "9401052d872adfd0179ef8c8e8c028512707629a"
        );
        assert_eq!(
            LockScript::Renew.sha1(),
            "8e19a1ddbdee9138df9f32a480c57addab4353d1"
        );
        assert_eq!(
            LockScript::Unlock.sha1(),
            "3ffe249c16dee540ac8ab32e39bd408626b9aff7"
        );
        assert_eq!(
            LockScript::ForceUnlock.sha1(),
            "7e9c80b3d786b95d5d4aaf8fd73adb9775fa6fb1"
        );
        assert_eq!(
            LockScript::AcquireFenced.sha1(),
            "5f268b2544e866a5a70ebc3f667e46ef1d2f78a6"
        );
        assert_eq!(
            LockScript::RenewBatch.sha1(),
            "6a3d31570dc6f4b0bd32bcdc8e75667747c6f635"
        );
        assert_eq!(
            sha1_hex(b"return 1"),
            "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"
        );
    }

    /// The cache answers `EVALSHA` as Redis does: a lock script once it
    /// was run or loaded (and not after `SCRIPT FLUSH`), any other script
    /// by its text, and nothing for a SHA1 never seen.
    #[test]
    fn cache_knows_what_was_registered_until_flushed() {
        let mut cache = ScriptCache::default();
        let renew = LockScript::Renew.sha1();
        assert_eq!(cache.get(&renew), None);
        cache.register_lock(LockScript::Renew);
        assert_eq!(cache.get(&renew), Some(Some(LockScript::Renew)));
        assert_eq!(cache.get(&LockScript::Unlock.sha1()), None);
        assert_eq!(
            cache.register(LockScript::Unlock.text().as_bytes()),
            (LockScript::Unlock.sha1(), Some(LockScript::Unlock))
        );
        assert_eq!(
            cache.get(&LockScript::Unlock.sha1()),
            Some(Some(LockScript::Unlock))
        );
        let (sha, script) = cache.register(b"return 1");
        assert_eq!(
            (sha.as_str(), script),
            ("e0e1f9fabfc9d4800c877a703b823ac0578ff8db", None)
        );
        assert_eq!(cache.get(&sha), Some(None));
        assert_eq!(cache.text(&sha).as_deref(), Some(&b"return 1"[..]));
        assert_eq!(cache.text(&renew), None);
        cache.clear();
        for sha in [renew, LockScript::Unlock.sha1(), sha] {
            assert_eq!(cache.get(&sha), None, "{sha}");
        }
    }

    /// Every script has a bit of its own in the cache's mask, and a text of
    /// its own (two equal texts would make one of them unreachable).
    #[test]
    fn every_script_fits_the_cache_mask_and_texts_differ() {
        assert!(LockScript::ALL.len() <= 64);
        assert_eq!(
            LockScript::ALL[..LockScript::RLOCK.len()],
            LockScript::RLOCK
        );
        let mut cache = ScriptCache::default();
        for script in LockScript::ALL {
            assert_eq!(
                LockScript::from_text(script.text().as_bytes()),
                Some(script)
            );
            assert_eq!(cache.get(script.sha1_str()), None, "{script:?}");
            cache.register_lock(script);
            assert_eq!(cache.get(script.sha1_str()), Some(Some(script)));
        }
    }

    /// Every lock script is found by its own SHA1, and no other SHA1.
    #[test]
    fn lock_scripts_are_found_by_sha1() {
        for script in LockScript::ALL {
            assert_eq!(LockScript::from_sha1(script.sha1_str()), Some(script));
        }
        assert_eq!(
            LockScript::from_sha1("e0e1f9fabfc9d4800c877a703b823ac0578ff8db"),
            None
        );
    }
}
