//! `RFencedLock`'s (`RedissonFencedLock`) scripts, by their exact
//! text: fake-redis's own copy of lockcore's `script_fenced.rs` (fake-redis
//! cannot depend on lockcore; a lockcore test checks that every text it
//! sends is one of these), run natively by `native_fenced`. The release each
//! text belongs to is on lockcore's copy.

/// `tryLockInnerAsync` of `lock()` and `tryLock(...)` (the override of
/// `RedissonLock`'s, `EVAL_LONG` / `EVAL_NULL_BOOLEAN`), Redisson 3.19.0
/// to 4.7.0 (same text at tags redisson-3.19.0 and redisson-4.7.0):
/// `KEYS` K, `redisson_lock_token:{K}`; `ARGV` lease, `<uuid>:<tid>`.
/// `RLock`'s acquire with an `INCR` of the token key on every success,
/// re-entries included; nil when acquired, else K's PTTL.
pub(crate) const FENCED_ACQUIRE: &str = concat!(
    "if ((redis.call('exists', KEYS[1]) == 0) ",
    "or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) then ",
    "redis.call('incr', KEYS[2]);",
    "redis.call('hincrby', KEYS[1], ARGV[2], 1); ",
    "redis.call('pexpire', KEYS[1], ARGV[1]); ",
    "return nil; ",
    "end; ",
    "return redis.call('pttl', KEYS[1]);",
);

/// `tryLockInnerAsync(leaseTime, unit, threadId)` of `lockAndGetToken`
/// and `tryLockAndGetToken` (`EVAL_LONG_LIST`), Redisson 3.19.0 to 4.7.0
/// (same text at tags redisson-3.19.0 and redisson-4.7.0): the keys and
/// arguments of [`FENCED_ACQUIRE`]. `{-1, token}` when acquired (the
/// token the `INCR` gave), else `{PTTL K, -1}`.
pub(crate) const FENCED_ACQUIRE_TOKEN: &str = concat!(
    "if (redis.call('exists', KEYS[1]) == 0 ",
    "or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) then ",
    "local token = redis.call('incr', KEYS[2]);",
    "redis.call('hincrby', KEYS[1], ARGV[2], 1); ",
    "redis.call('pexpire', KEYS[1], ARGV[1]); ",
    "return {-1, token}; ",
    "end; ",
    "return {redis.call('pttl', KEYS[1]), -1};",
);
