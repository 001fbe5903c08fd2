//! The lock's scripts: the exact texts a Java Redisson client sends (the
//! source documents' Java string concatenations, joined as the JVM joins
//! them), so Redis, or fake-redis, sees the same bytes from locksim.
//! fake-redis keeps its own copy of the texts it recognises; a test (with
//! fake-redis as a dev-dependency only) checks the two agree.

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
}

impl LockScript {
    /// Every known script.
    #[cfg(test)]
    pub(crate) const ALL: [LockScript; 7] = [
        LockScript::Acquire,
        LockScript::AcquireLegacy,
        LockScript::Renew,
        LockScript::Unlock,
        LockScript::ForceUnlock,
        LockScript::AcquireFenced,
        LockScript::UnlockLatched,
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

    /// Every script the lock sends is one fake-redis recognises, byte for
    /// byte (each crate keeps its own copy of the texts).
    #[test]
    fn fake_redis_knows_every_script_the_lock_sends() {
        for script in LockScript::ALL {
            assert!(
                fake_redis::LockScript::from_text(script.text().as_bytes()).is_some(),
                "{script:?}"
            );
        }
    }
}
