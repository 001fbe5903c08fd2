//! The lock's scripts: the exact texts a Java Redisson client sends (the
//! source documents' Java string concatenations, joined as the JVM joins
//! them), so Redis, or fake-redis, sees the same bytes from locksim.
//! fake-redis keeps its own copy of the texts it recognises; a test (with
//! fake-redis as a dev-dependency only) checks the two agree.

use crate::{script_fair, script_fair_legacy, script_fenced, script_rw, script_spin};

/// A script the lock sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum LockScript {
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
    /// `RReadWriteLock`: see [`crate::script_rw::READ_ACQUIRE_FIXED_LEASE`].
    ReadAcquireFixedLease,
    /// `RReadWriteLock`: see [`crate::script_rw::READ_ACQUIRE`].
    ReadAcquire,
    /// `RReadWriteLock`: see [`crate::script_rw::READ_RENEW`].
    ReadRenew,
    /// `ReadLockTask`: see [`crate::script_rw::READ_RENEW_BATCH_SHADOWED`].
    ReadRenewBatchShadowed,
    /// `ReadLockTask`: see [`crate::script_rw::READ_RENEW_BATCH`].
    ReadRenewBatch,
    /// `ReadLockTask`: see [`crate::script_rw::READ_RENEW_BATCH_OWN`].
    ReadRenewBatchOwn,
    /// `RReadWriteLock`: see [`crate::script_rw::READ_UNLOCK`].
    ReadUnlock,
    /// `RReadWriteLock`: see [`crate::script_rw::READ_UNLOCK_PUBLISH_ARG`].
    ReadUnlockPublishArg,
    /// `RReadWriteLock`: see [`crate::script_rw::READ_UNLOCK_LATCHED_ONE`].
    ReadUnlockLatchedOne,
    /// `RReadWriteLock`: see [`crate::script_rw::READ_UNLOCK_LATCHED`].
    ReadUnlockLatched,
    /// `RReadWriteLock`: see [`crate::script_rw::READ_FORCE_UNLOCK`].
    ReadForceUnlock,
    /// `RReadWriteLock`: see [`crate::script_rw::READ_FORCE_UNLOCK_PUBLISH_ARG`].
    ReadForceUnlockPublishArg,
    /// `RReadWriteLock`: see [`crate::script_rw::WRITE_ACQUIRE`].
    WriteAcquire,
    /// `RReadWriteLock`: see [`crate::script_rw::WRITE_UNLOCK`].
    WriteUnlock,
    /// `RReadWriteLock`: see [`crate::script_rw::WRITE_UNLOCK_PUBLISH_ARG`].
    WriteUnlockPublishArg,
    /// `RReadWriteLock`: see [`crate::script_rw::WRITE_UNLOCK_LATCHED_ONE`].
    WriteUnlockLatchedOne,
    /// `RReadWriteLock`: see [`crate::script_rw::WRITE_UNLOCK_LATCHED`].
    WriteUnlockLatched,
    /// `RReadWriteLock`: see [`crate::script_rw::WRITE_FORCE_UNLOCK`].
    WriteForceUnlock,
    /// `RReadWriteLock`: see [`crate::script_rw::WRITE_FORCE_UNLOCK_PUBLISH_ARG`].
    WriteForceUnlockPublishArg,
    /// `RFairLock`: see [`crate::script_fair::FAIR_ACQUIRE_FAILED`].
    FairAcquireFailed,
    /// `RFairLock`: see [`crate::script_fair::FAIR_TRY_ACQUIRE`].
    FairTryAcquire,
    /// `RFairLock`: see [`crate::script_fair::FAIR_ACQUIRE_UNSCORED_LAST`].
    FairAcquireUnscoredLast,
    /// `RFairLock`: see [`crate::script_fair::FAIR_ACQUIRE`].
    FairAcquire,
    /// `RFairLock`: see [`crate::script_fair::FAIR_UNLOCK`].
    FairUnlock,
    /// `RFairLock`: see [`crate::script_fair::FAIR_FORCE_UNLOCK`].
    FairForceUnlock,
    /// `RFairLock` before 3.32.0: see [`crate::script_fair_legacy::FAIR_ACQUIRE_FAILED_HEAD`].
    FairAcquireFailedHead,
    /// `RFairLock` before 3.32.0: see [`crate::script_fair_legacy::FAIR_TRY_ACQUIRE_LEGACY`].
    FairTryAcquireLegacy,
    /// `RFairLock` before 3.32.0: see [`crate::script_fair_legacy::FAIR_ACQUIRE_FROM_HEAD`].
    FairAcquireFromHead,
    /// `RFairLock` before 3.32.0: see [`crate::script_fair_legacy::FAIR_UNLOCK_LEGACY`].
    FairUnlockLegacy,
    /// `RFairLock` before 3.32.0: see [`crate::script_fair_legacy::FAIR_FORCE_UNLOCK_LEGACY`].
    FairForceUnlockLegacy,
    /// `RFairLock` before 3.32.0: see [`crate::script_fair_legacy::FAIR_TRY_ACQUIRE_UNCHECKED_PURGE`].
    FairTryAcquireUncheckedPurge,
    /// `RFairLock` before 3.32.0: see [`crate::script_fair_legacy::FAIR_ACQUIRE_UNCHECKED_PURGE`].
    FairAcquireUncheckedPurge,
    /// `RFairLock` before 3.32.0: see [`crate::script_fair_legacy::FAIR_UNLOCK_PUBLISH_ARG`].
    FairUnlockPublishArg,
    /// `RFairLock` before 3.32.0: see [`crate::script_fair_legacy::FAIR_FORCE_UNLOCK_PUBLISH_ARG`].
    FairForceUnlockPublishArg,
    /// `RFairLock` before 3.32.0: see [`crate::script_fair_legacy::FAIR_UNLOCK_LATCHED_UNCHECKED_PURGE`].
    FairUnlockLatchedUncheckedPurge,
    /// `RFairLock` before 3.32.0: see [`crate::script_fair_legacy::FAIR_ACQUIRE_OWN_DEADLINE`].
    FairAcquireOwnDeadline,
    /// `RFencedLock`: see [`crate::script_fenced::FENCED_ACQUIRE`].
    FencedAcquire,
    /// `RFencedLock`: see [`crate::script_fenced::FENCED_ACQUIRE_TOKEN`].
    FencedAcquireToken,
    /// `RSpinLock`: see [`crate::script_spin::SPIN_ACQUIRE`].
    SpinAcquire,
    /// `RSpinLock`: see [`crate::script_spin::SPIN_UNLOCK`].
    SpinUnlock,
    /// `RSpinLock`: see [`crate::script_spin::SPIN_UNLOCK_LATCHED`].
    SpinUnlockLatched,
    /// `RSpinLock`: see [`crate::script_spin::SPIN_FORCE_UNLOCK`].
    SpinForceUnlock,
}

impl LockScript {
    /// The SHA1 of the script's text, lowercase hex: what `EVALSHA` names
    /// it by (3.46+, `script-cache`). Written out, as lockcore hashes
    /// nothing; a test checks each against fake-redis's hash of the text.
    pub(crate) fn sha1(self) -> &'static str {
        match self {
            LockScript::Acquire => "149c5a8bf18676fd99e9e6e24923bd64d9b62f94",
            LockScript::AcquireLegacy => "9401052d872adfd0179ef8c8e8c028512707629a",
            LockScript::Renew => "8e19a1ddbdee9138df9f32a480c57addab4353d1",
            LockScript::Unlock => "3ffe249c16dee540ac8ab32e39bd408626b9aff7",
            LockScript::ForceUnlock => "7e9c80b3d786b95d5d4aaf8fd73adb9775fa6fb1",
            LockScript::AcquireFenced => "5f268b2544e866a5a70ebc3f667e46ef1d2f78a6",
            LockScript::UnlockLatched => "6866459238a13a701d42f4971f12d9f3a50e2442",
            LockScript::RenewBatch => "6a3d31570dc6f4b0bd32bcdc8e75667747c6f635",
            LockScript::UnlockPublishArg => "778cea8aada230ae060b432fc333adaec85f2f4c",
            LockScript::ForceUnlockPublishArg => "605e338249a7a1d40df83b04f7658354f883b41b",
            LockScript::ReadAcquireFixedLease => "3e6597e1d1157c59ac0d6efa2ba7e92ef418c41e",
            LockScript::ReadAcquire => "95553a6ff11176c18e71344e89d116b06fd6f753",
            LockScript::ReadRenew => "6563941ff57e01b8cf61e86907b80686438a2f74",
            LockScript::ReadRenewBatchShadowed => "1affef780a01e1406cb1968c62918f618d10d6a3",
            LockScript::ReadRenewBatch => "d6564f42b98d6eece0e940a478ee248f80b8a90a",
            LockScript::ReadRenewBatchOwn => "38d2b478dfbe264ab67c221b7e4be62245f00ba0",
            LockScript::ReadUnlock => "f5469be4bfe5232d519471092634b3ee84e5ee6f",
            LockScript::ReadUnlockPublishArg => "92a54c31a4dc3b46f81e24a6dd5bb7d677c6f882",
            LockScript::ReadUnlockLatchedOne => "5947c0fee6ca25ae094ec1b3e7a2559a9273d29f",
            LockScript::ReadUnlockLatched => "6e1b10e11ac0a3ed8e902562ecd32ce01b553039",
            LockScript::ReadForceUnlock => "23f9bc91439172625235ce2ee06d6647f08a7e27",
            LockScript::ReadForceUnlockPublishArg => "27dbe744e95c1d854a7f556cc6817030de2d0d01",
            LockScript::WriteAcquire => "6306ba3bf1f563b284bed52d305fce615c6664d9",
            LockScript::WriteUnlock => "baa634f6184acc1b8f145e810a0e0e00967a3cbe",
            LockScript::WriteUnlockPublishArg => "319a1cdf1b56c767a0a9adf2224250bf811f110c",
            LockScript::WriteUnlockLatchedOne => "d29c5559782035515d32e926762830b3304b49be",
            LockScript::WriteUnlockLatched => "21f5fb0f8ddfa9be5c3e0c9757c128796add75c6",
            LockScript::WriteForceUnlock => "23639b0b2d18d26ce352e148ff4ac5b8e984b696",
            LockScript::WriteForceUnlockPublishArg => "2e2cb2a3b13e2e80e4236ef6a25beaf365dba608",
            LockScript::FairAcquireFailed => "d1ddef65ad80886b5d36e023c99930044ddd653a",
            LockScript::FairTryAcquire => "d20501c26a30adf6fb0fe9883bbbcc497e6157e2",
            LockScript::FairAcquireUnscoredLast => "929defe0321e0a4c943b4244951d3a730b6eaabc",
            LockScript::FairAcquire => "8f6ed299ffd259f0539c20f89253998c0777ea75",
            LockScript::FairUnlock => "367f80bd2e300e411fb0936d9b601e5bcb3fd4b6",
            LockScript::FairForceUnlock => "71ed11d4e4818119ac560b3d670a7f08256afc46",
            LockScript::FairAcquireFailedHead => "33148f0ca0bbc1fae2674efa67209dcb1f6c6431",
            LockScript::FairTryAcquireLegacy => "706c2b7e93b133c46a7d8593a3a95d5ab55e6721",
            LockScript::FairAcquireFromHead => "c10436d1a94338a33b5ca6ac6f483f6b92193d48",
            LockScript::FairUnlockLegacy => "35d32367b21753c39b55dc64d1906fee627cc9a8",
            LockScript::FairForceUnlockLegacy => "95cdf4b03f82c82edf987c7d216b4b67d861b14f",
            LockScript::FairTryAcquireUncheckedPurge => "aa0a28d2eb7cbeb50151315a58eb75302d8dfa40",
            LockScript::FairAcquireUncheckedPurge => "762bfafa6be221431a0b668685dd15c926483619",
            LockScript::FairUnlockPublishArg => "14f85250fb2a386500bf8e4b25a8e95db140ff0c",
            LockScript::FairForceUnlockPublishArg => "047c11d7fec40d0102fe9903ff1e19e9a1dec610",
            LockScript::FairUnlockLatchedUncheckedPurge => {
                "ca303f8587d0942f8a0021f62338626ca4dd0118"
            }
            LockScript::FairAcquireOwnDeadline => "f453a73adbe05f097ff2810e5e0c0489a9350076",
            LockScript::FencedAcquire => "46b5551ba403d6152a7a6eca122e08728d6c8c66",
            LockScript::FencedAcquireToken => "49babb5a1e6a0c5f188c2ae62b93b51cdfd63e45",
            LockScript::SpinAcquire => "dad0f8d619e548e04f21fb48d50be5034df3adae",
            LockScript::SpinUnlock => "5b9e58d1bcb8498e14aa1d5b49a1ca5b90748946",
            LockScript::SpinUnlockLatched => "73ac2729af29ea9a975f95e8097f7ee9a74cce3d",
            LockScript::SpinForceUnlock => "51b433c3cc9a6ca991b3aefec63d23490c246318",
        }
    }

    /// The script named by `sha1` (lowercase hex), if it is one of these.
    pub(crate) fn from_sha1(sha1: &[u8]) -> Option<LockScript> {
        Self::ALL.into_iter().find(|s| s.sha1().as_bytes() == sha1)
    }

    /// The script whose text is exactly `text`, if any.
    pub(crate) fn from_text(text: &[u8]) -> Option<LockScript> {
        Self::ALL.into_iter().find(|s| s.text().as_bytes() == text)
    }

    /// Every known script.
    pub(crate) const ALL: [LockScript; 52] = [
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

    /// The script's exact text.
    pub(crate) fn text(self) -> &'static str {
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

/// Redisson 3.44.0 to 4.7.0 `LockTask.renew` (read at tags redisson-3.44.0
/// and redisson-4.7.0; unchanged between them).
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

#[cfg(test)]
mod tests {
    use super::LockScript;

    /// Every script the lock sends, of every lock kind, is one fake-redis
    /// recognises and runs natively, byte for byte (each crate keeps its own copy of the texts), and the
    /// SHA1 lockcore names every script by is fake-redis's hash of its
    /// text.
    #[test]
    fn fake_redis_knows_every_script_the_lock_sends() {
        for script in LockScript::ALL {
            assert_eq!(
                fake_redis::sha1_hex(script.text().as_bytes()),
                script.sha1()
            );
            let known = fake_redis::LockScript::from_text(script.text().as_bytes());
            assert!(known.is_some(), "{script:?}");
            assert_eq!(known.map(|k| k.sha1()).as_deref(), Some(script.sha1()));
            assert_eq!(
                LockScript::from_sha1(script.sha1().as_bytes()),
                Some(script)
            );
            assert_eq!(
                LockScript::from_text(script.text().as_bytes()),
                Some(script)
            );
        }
    }
}
