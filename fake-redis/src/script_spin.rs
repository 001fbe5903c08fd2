//! `RSpinLock`'s (`RedissonSpinLock`) scripts, by their exact
//! text: fake-redis's own copy of lockcore's `script_spin.rs` (fake-redis
//! cannot depend on lockcore; a lockcore test checks that every text it
//! sends is one of these), run natively by `native_spin` (its acquire by
//! `native`, as `RLock`'s). The release each text belongs to is on
//! lockcore's copy.

/// Acquire (`tryLockInnerAsync`, tags redisson-3.15.0 to redisson-4.7.0):
/// `KEYS[1]` K, `ARGV[1]` lease ms, `ARGV[2]` field. `RLock`'s acquire
/// before 3.13, with `hincrby` where that one had `hset`. Nil when
/// acquired, else K's PTTL.
pub(crate) const SPIN_ACQUIRE: &str = concat!(
    "if (redis.call('exists', KEYS[1]) == 0) then ",
    "redis.call('hincrby', KEYS[1], ARGV[2], 1); ",
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

/// Unlock, redisson-3.15.0 to redisson-3.23.x (`unlockInnerAsync`):
/// `KEYS[1]` K, `ARGV[1]` lease ms, `ARGV[2]` field. Nil when the field
/// does not hold K, 0 when counted down (expiry re-armed), 1 when K was
/// deleted; nothing is published.
pub(crate) const SPIN_UNLOCK: &str = concat!(
    "if (redis.call('hexists', KEYS[1], ARGV[2]) == 0) then ",
    "return nil;",
    "end; ",
    "local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1); ",
    "if (counter > 0) then ",
    "redis.call('pexpire', KEYS[1], ARGV[1]); ",
    "return 0; ",
    "else ",
    "redis.call('del', KEYS[1]); ",
    "return 1; ",
    "end; ",
    "return nil;"
);

/// Unlock with the latch, redisson-3.24.0 to redisson-4.7.0: `KEYS[1]` K,
/// `KEYS[2]` the call's latch key; `ARGV[1]` lease ms, `ARGV[2]` field,
/// `ARGV[3]` the latch's TTL ms. A latch already set replays its value;
/// otherwise as [`SPIN_UNLOCK`], storing 0 or 1 in the latch.
pub(crate) const SPIN_UNLOCK_LATCHED: &str = concat!(
    "local val = redis.call('get', KEYS[2]); ",
    "if val ~= false then ",
    "return tonumber(val);",
    "end; ",
    "if (redis.call('hexists', KEYS[1], ARGV[2]) == 0) then ",
    "return nil;",
    "end; ",
    "local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1); ",
    "if (counter > 0) then ",
    "redis.call('pexpire', KEYS[1], ARGV[1]); ",
    "redis.call('set', KEYS[2], 0, 'px', ARGV[3]); ",
    "return 0; ",
    "else ",
    "redis.call('del', KEYS[1]); ",
    "redis.call('set', KEYS[2], 1, 'px', ARGV[3]); ",
    "return 1; ",
    "end; "
);

/// Force unlock (`forceUnlockAsync`, redisson-3.15.0 to redisson-4.7.0):
/// `KEYS[1]` K. 1 when K was deleted, else 0; nothing is published.
pub(crate) const SPIN_FORCE_UNLOCK: &str = concat!(
    "if (redis.call('del', KEYS[1]) == 1) then ",
    "return 1 ",
    "else ",
    "return 0 ",
    "end"
);
