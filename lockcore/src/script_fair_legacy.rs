//! The scripts of `RFairLock` before Redisson 3.32.0, by era: the exact
//! texts Redisson sends at the tags named (the Java string
//! concatenations joined as the JVM joins them), each pinned by the SHA1
//! of its text. `kind/fair.rs` picks one by the release's switches:
//! `fair-enqueue-from-last` (3.11.1), `publish-command-argument`
//! (3.22.0), `unlock-latch` (3.24.0), `fair-purge-checks-score` (3.31.0)
//! and `fair-wait-reply-pttl` (3.32.0); `script_fair.rs` holds the texts
//! from 3.31.0 on.

/// `acquireFailedAsync`, Redisson 3.8.0 to 3.11.0 (tag redisson-3.8.0, the same text at redisson-3.10.4): `KEYS` queue, timeout set; `ARGV` `<uuid>:<tid>`, the thread wait ms. Takes the wait off every deadline only when the caller heads the queue, then removes the caller from both.
///
/// SHA1 `33148f0ca0bbc1fae2674efa67209dcb1f6c6431`.
pub(crate) const FAIR_ACQUIRE_FAILED_HEAD: &str = concat!(
    "local firstThreadId = redis.call('lindex', KEYS[1], 0);",
    " if firstThreadId == ARGV[1] then local keys = redis.call('zrange', KEYS[2], 0, -1);",
    " for i = 1, #keys, 1 do redis.call('zincrby', KEYS[2], -tonumber(ARGV[2]), keys[i]);end;end;",
    "redis.call('zrem', KEYS[2], ARGV[1]); redis.call('lrem', KEYS[1], 0, ARGV[1]); ",
);

/// `tryLockInnerAsync` for `tryLock()` (`EVAL_NULL_BOOLEAN`), Redisson 3.8.0 to 3.11.0 (tags redisson-3.8.0 and redisson-3.10.4): `KEYS` K, queue, timeout set; `ARGV` lease, `<uuid>:<tid>`, the client's `currentTimeMillis`. As [`FAIR_TRY_ACQUIRE_UNCHECKED_PURGE`] without the wait: taking the lock moves no other deadline.
///
/// SHA1 `706c2b7e93b133c46a7d8593a3a95d5ab55e6721`.
pub(crate) const FAIR_TRY_ACQUIRE_LEGACY: &str = concat!(
    "while true do local firstThreadId2 = redis.call('lindex', KEYS[2], 0);",
    "if firstThreadId2 == false then break;end;",
    " local timeout = tonumber(redis.call('zscore', KEYS[3], firstThreadId2));",
    "if timeout <= tonumber(ARGV[3]) then redis.call('zrem', KEYS[3], firstThreadId2);",
    " redis.call('lpop', KEYS[2]); else break;end; end;",
    "if (redis.call('exists', KEYS[1]) == 0) and ((redis.call('exists', KEYS[2]) == 0) or (redis.call('lindex', KEYS[2], 0) == ARGV[2])) then redis.call('lpop', KEYS[2]);",
    " redis.call('zrem', KEYS[3], ARGV[2]); redis.call('hset', KEYS[1], ARGV[2], 1);",
    " redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end;",
    " if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('hincrby', KEYS[1], ARGV[2], 1);",
    " redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; return 1;",
);

/// `tryLockInnerAsync` with a wait (`EVAL_LONG`), Redisson 3.8.0 to 3.11.0 (tags redisson-3.8.0 and redisson-3.10.4): `KEYS` K, queue, timeout set; `ARGV` lease, `<uuid>:<tid>`, `currentTimeMillis + threadWaitTime`, `currentTimeMillis`. A waiter (queued or not) takes its ttl from the queue's head (the head's deadline − now, or K's PTTL when it is the head), and its deadline becomes ttl + now + wait again on every attempt (ZADD updates a queued member's score); taking the lock moves no other deadline (the drift of #2099).
///
/// SHA1 `c10436d1a94338a33b5ca6ac6f483f6b92193d48`.
pub(crate) const FAIR_ACQUIRE_FROM_HEAD: &str = concat!(
    "while true do local firstThreadId2 = redis.call('lindex', KEYS[2], 0);",
    "if firstThreadId2 == false then break;end;",
    " local timeout = tonumber(redis.call('zscore', KEYS[3], firstThreadId2));",
    "if timeout <= tonumber(ARGV[4]) then redis.call('zrem', KEYS[3], firstThreadId2);",
    " redis.call('lpop', KEYS[2]); else break;end; end;",
    "if (redis.call('exists', KEYS[1]) == 0) and ((redis.call('exists', KEYS[2]) == 0) or (redis.call('lindex', KEYS[2], 0) == ARGV[2])) then redis.call('lpop', KEYS[2]);",
    " redis.call('zrem', KEYS[3], ARGV[2]); redis.call('hset', KEYS[1], ARGV[2], 1);",
    " redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end;",
    " if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('hincrby', KEYS[1], ARGV[2], 1);",
    " redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end;",
    " local firstThreadId = redis.call('lindex', KEYS[2], 0); local ttl;",
    " if firstThreadId ~= false and firstThreadId ~= ARGV[2] then ttl = tonumber(redis.call('zscore', KEYS[3], firstThreadId)) - tonumber(ARGV[4]);",
    "else ttl = redis.call('pttl', KEYS[1]);end; local timeout = ttl + tonumber(ARGV[3]);",
    "if redis.call('zadd', KEYS[3], timeout, ARGV[2]) == 1 then redis.call('rpush', KEYS[2], ARGV[2]);",
    "end; return ttl;",
);

/// `unlockInnerAsync`, Redisson 3.8.0 to 3.21.x (the same text at tags redisson-3.8.0, redisson-3.11.1 and redisson-3.21.3): `KEYS` K, queue, timeout set, `redisson_lock__channel:{K}`; `ARGV` message, lease, `<uuid>:<tid>`, `currentTimeMillis`. Purges stale heads (a head without a score fails the script) and publishes to the queue head's own channel.
///
/// SHA1 `35d32367b21753c39b55dc64d1906fee627cc9a8`.
pub(crate) const FAIR_UNLOCK_LEGACY: &str = concat!(
    "while true do local firstThreadId2 = redis.call('lindex', KEYS[2], 0);",
    "if firstThreadId2 == false then break;end;",
    " local timeout = tonumber(redis.call('zscore', KEYS[3], firstThreadId2));",
    "if timeout <= tonumber(ARGV[4]) then redis.call('zrem', KEYS[3], firstThreadId2);",
    " redis.call('lpop', KEYS[2]); else break;end; end;",
    "if (redis.call('exists', KEYS[1]) == 0) then local nextThreadId = redis.call('lindex', KEYS[2], 0);",
    " if nextThreadId ~= false then redis.call('publish', KEYS[4] .. ':' .. nextThreadId, ARGV[1]); end;",
    " return 1; end;if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil;end;",
    " local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1);",
    " if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); return 0; end;",
    " redis.call('del', KEYS[1]); local nextThreadId = redis.call('lindex', KEYS[2], 0);",
    " if nextThreadId ~= false then redis.call('publish', KEYS[4] .. ':' .. nextThreadId, ARGV[1]); end;",
    " return 1; ",
);

/// `forceUnlockAsync`, Redisson 3.8.0 to 3.21.x (tags redisson-3.8.0 and redisson-3.21.3): `KEYS` K, queue, timeout set, channel; `ARGV` message, `currentTimeMillis`.
///
/// SHA1 `95cdf4b03f82c82edf987c7d216b4b67d861b14f`.
pub(crate) const FAIR_FORCE_UNLOCK_LEGACY: &str = concat!(
    "while true do local firstThreadId2 = redis.call('lindex', KEYS[2], 0);",
    "if firstThreadId2 == false then break;end;",
    " local timeout = tonumber(redis.call('zscore', KEYS[3], firstThreadId2));",
    "if timeout <= tonumber(ARGV[2]) then redis.call('zrem', KEYS[3], firstThreadId2);",
    " redis.call('lpop', KEYS[2]); else break;end; end;",
    "if (redis.call('del', KEYS[1]) == 1) then local nextThreadId = redis.call('lindex', KEYS[2], 0);",
    " if nextThreadId ~= false then redis.call('publish', KEYS[4] .. ':' .. nextThreadId, ARGV[1]); end;",
    " return 1; end; return 0;",
);

/// `tryLockInnerAsync` for `tryLock()` (`EVAL_NULL_BOOLEAN`), Redisson 3.11.1 to 3.30.x (PR #2100, 6dbc972b6; the same text at tags redisson-3.11.1 and redisson-3.30.0): as [`crate::script_fair::FAIR_TRY_ACQUIRE`], but the purge compares a head's score without checking it has one (Lua's "attempt to compare nil with number", #4153).
///
/// SHA1 `aa0a28d2eb7cbeb50151315a58eb75302d8dfa40`.
pub(crate) const FAIR_TRY_ACQUIRE_UNCHECKED_PURGE: &str = concat!(
    "while true do local firstThreadId2 = redis.call('lindex', KEYS[2], 0);",
    "if firstThreadId2 == false then break;end;",
    "local timeout = tonumber(redis.call('zscore', KEYS[3], firstThreadId2));",
    "if timeout <= tonumber(ARGV[3]) then redis.call('zrem', KEYS[3], firstThreadId2);",
    "redis.call('lpop', KEYS[2]);else break;end;end;",
    "if (redis.call('exists', KEYS[1]) == 0) and ((redis.call('exists', KEYS[2]) == 0) or (redis.call('lindex', KEYS[2], 0) == ARGV[2])) then redis.call('lpop', KEYS[2]);",
    "redis.call('zrem', KEYS[3], ARGV[2]);local keys = redis.call('zrange', KEYS[3], 0, -1);",
    "for i = 1, #keys, 1 do redis.call('zincrby', KEYS[3], -tonumber(ARGV[4]), keys[i]);end;",
    "redis.call('hset', KEYS[1], ARGV[2], 1);redis.call('pexpire', KEYS[1], ARGV[1]);return nil;end;",
    "if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('hincrby', KEYS[1], ARGV[2], 1);",
    "redis.call('pexpire', KEYS[1], ARGV[1]);return nil;end;return 1;",
);

/// `tryLockInnerAsync` with a wait (`EVAL_LONG`), Redisson 3.11.1 to 3.30.x (PR #2100, 6dbc972b6; tags redisson-3.11.1 and redisson-3.30.0): `KEYS` K, queue, timeout set; `ARGV` lease, `<uuid>:<tid>`, the wait ms, `currentTimeMillis`. As [`FAIR_ACQUIRE_OWN_DEADLINE`], but the purge compares a head's score without checking it has one.
///
/// SHA1 `762bfafa6be221431a0b668685dd15c926483619`.
pub(crate) const FAIR_ACQUIRE_UNCHECKED_PURGE: &str = concat!(
    "while true do local firstThreadId2 = redis.call('lindex', KEYS[2], 0);",
    "if firstThreadId2 == false then break;end;",
    "local timeout = tonumber(redis.call('zscore', KEYS[3], firstThreadId2));",
    "if timeout <= tonumber(ARGV[4]) then redis.call('zrem', KEYS[3], firstThreadId2);",
    "redis.call('lpop', KEYS[2]);else break;end;end;",
    "if (redis.call('exists', KEYS[1]) == 0) and ((redis.call('exists', KEYS[2]) == 0) or (redis.call('lindex', KEYS[2], 0) == ARGV[2])) then redis.call('lpop', KEYS[2]);",
    "redis.call('zrem', KEYS[3], ARGV[2]);local keys = redis.call('zrange', KEYS[3], 0, -1);",
    "for i = 1, #keys, 1 do redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), keys[i]);end;",
    "redis.call('hset', KEYS[1], ARGV[2], 1);redis.call('pexpire', KEYS[1], ARGV[1]);return nil;end;",
    "if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then redis.call('hincrby', KEYS[1], ARGV[2],1);",
    "redis.call('pexpire', KEYS[1], ARGV[1]);return nil;end;",
    "local timeout = redis.call('zscore', KEYS[3], ARGV[2]);",
    "if timeout ~= false then return timeout - tonumber(ARGV[3]) - tonumber(ARGV[4]);end;",
    "local lastThreadId = redis.call('lindex', KEYS[2], -1);local ttl;",
    "if lastThreadId ~= false and lastThreadId ~= ARGV[2] then ttl = tonumber(redis.call('zscore', KEYS[3], lastThreadId)) - tonumber(ARGV[4]);",
    "else ttl = redis.call('pttl', KEYS[1]);end;",
    "local timeout = ttl + tonumber(ARGV[3]) + tonumber(ARGV[4]);",
    "if redis.call('zadd', KEYS[3], timeout, ARGV[2]) == 1 then redis.call('rpush', KEYS[2], ARGV[2]);",
    "end;return ttl;",
);

/// `unlockInnerAsync`, Redisson 3.22.0 to 3.23.x (#5047, 823c786a1; tags redisson-3.22.0 and redisson-3.23.5): as [`FAIR_UNLOCK_LEGACY`], publishing with the command in `ARGV[5]`.
///
/// SHA1 `14f85250fb2a386500bf8e4b25a8e95db140ff0c`.
pub(crate) const FAIR_UNLOCK_PUBLISH_ARG: &str = concat!(
    "while true do local firstThreadId2 = redis.call('lindex', KEYS[2], 0);",
    "if firstThreadId2 == false then break;end;",
    " local timeout = tonumber(redis.call('zscore', KEYS[3], firstThreadId2));",
    "if timeout <= tonumber(ARGV[4]) then redis.call('zrem', KEYS[3], firstThreadId2);",
    " redis.call('lpop', KEYS[2]); else break;end; end;",
    "if (redis.call('exists', KEYS[1]) == 0) then local nextThreadId = redis.call('lindex', KEYS[2], 0);",
    " if nextThreadId ~= false then redis.call(ARGV[5], KEYS[4] .. ':' .. nextThreadId, ARGV[1]); end;",
    " return 1; end;if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil;end;",
    " local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1);",
    " if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); return 0; end;",
    " redis.call('del', KEYS[1]); local nextThreadId = redis.call('lindex', KEYS[2], 0);",
    " if nextThreadId ~= false then redis.call(ARGV[5], KEYS[4] .. ':' .. nextThreadId, ARGV[1]); end;",
    " return 1; ",
);

/// `forceUnlockAsync`, Redisson 3.22.0 to 3.30.x (tags redisson-3.22.0 and redisson-3.30.0): as [`FAIR_FORCE_UNLOCK_LEGACY`], publishing with the command in `ARGV[3]`.
///
/// SHA1 `047c11d7fec40d0102fe9903ff1e19e9a1dec610`.
pub(crate) const FAIR_FORCE_UNLOCK_PUBLISH_ARG: &str = concat!(
    "while true do local firstThreadId2 = redis.call('lindex', KEYS[2], 0);",
    "if firstThreadId2 == false then break;end;",
    " local timeout = tonumber(redis.call('zscore', KEYS[3], firstThreadId2));",
    "if timeout <= tonumber(ARGV[2]) then redis.call('zrem', KEYS[3], firstThreadId2);",
    " redis.call('lpop', KEYS[2]); else break;end; end;",
    "if (redis.call('del', KEYS[1]) == 1) then local nextThreadId = redis.call('lindex', KEYS[2], 0);",
    " if nextThreadId ~= false then redis.call(ARGV[3], KEYS[4] .. ':' .. nextThreadId, ARGV[1]); end;",
    " return 1; end; return 0;",
);

/// `unlockInnerAsync`, Redisson 3.24.0 to 3.30.x (#4871, 2669597d8; tags redisson-3.24.0 and redisson-3.30.0): as [`crate::script_fair::FAIR_UNLOCK`] (the latch in `KEYS[5]`), but the purge compares a head's score without checking it has one.
///
/// SHA1 `ca303f8587d0942f8a0021f62338626ca4dd0118`.
pub(crate) const FAIR_UNLOCK_LATCHED_UNCHECKED_PURGE: &str = concat!(
    "local val = redis.call('get', KEYS[5]); if val ~= false then return tonumber(val);end;",
    " while true do local firstThreadId2 = redis.call('lindex', KEYS[2], 0);",
    "if firstThreadId2 == false then break;end;",
    " local timeout = tonumber(redis.call('zscore', KEYS[3], firstThreadId2));",
    "if timeout <= tonumber(ARGV[4]) then redis.call('zrem', KEYS[3], firstThreadId2);",
    " redis.call('lpop', KEYS[2]); else break;end; end;",
    "if (redis.call('exists', KEYS[1]) == 0) then local nextThreadId = redis.call('lindex', KEYS[2], 0);",
    " if nextThreadId ~= false then redis.call(ARGV[5], KEYS[4] .. ':' .. nextThreadId, ARGV[1]); end;",
    " redis.call('set', KEYS[5], 1, 'px', ARGV[6]); return 1; end;",
    "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil;end;",
    " local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1);",
    " if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]);",
    " redis.call('set', KEYS[5], 0, 'px', ARGV[6]); return 0; end; redis.call('del', KEYS[1]);",
    " redis.call('set', KEYS[5], 1, 'px', ARGV[6]);",
    " local nextThreadId = redis.call('lindex', KEYS[2], 0);",
    " if nextThreadId ~= false then redis.call(ARGV[5], KEYS[4] .. ':' .. nextThreadId, ARGV[1]); end;",
    " return 1; ",
);

/// `tryLockInnerAsync` with a wait (`EVAL_LONG`), Redisson 3.31.0 only (#4153, 703f6f57b; tag redisson-parent-3.31.0): as [`crate::script_fair::FAIR_ACQUIRE_UNSCORED_LAST`], but a queued caller is told its own deadline − wait − now, which can be far past the holder's TTL, or negative (#4705, #5503).
///
/// SHA1 `f453a73adbe05f097ff2810e5e0c0489a9350076`.
pub(crate) const FAIR_ACQUIRE_OWN_DEADLINE: &str = concat!(
    "while true do local firstThreadId2 = redis.call('lindex', KEYS[2], 0);",
    "if firstThreadId2 == false then break;end;",
    "local timeout = redis.call('zscore', KEYS[3], firstThreadId2);",
    "if timeout ~= false and tonumber(timeout) <= tonumber(ARGV[4]) then redis.call('zrem', KEYS[3], firstThreadId2);",
    "redis.call('lpop', KEYS[2]);else break;end;end;",
    "if (redis.call('exists', KEYS[1]) == 0) and ((redis.call('exists', KEYS[2]) == 0) or (redis.call('lindex', KEYS[2], 0) == ARGV[2])) then redis.call('lpop', KEYS[2]);",
    "redis.call('zrem', KEYS[3], ARGV[2]);local keys = redis.call('zrange', KEYS[3], 0, -1);",
    "for i = 1, #keys, 1 do redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), keys[i]);end;",
    "redis.call('hset', KEYS[1], ARGV[2], 1);redis.call('pexpire', KEYS[1], ARGV[1]);return nil;end;",
    "if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then redis.call('hincrby', KEYS[1], ARGV[2],1);",
    "redis.call('pexpire', KEYS[1], ARGV[1]);return nil;end;",
    "local timeout = redis.call('zscore', KEYS[3], ARGV[2]);",
    "if timeout ~= false then return timeout - tonumber(ARGV[3]) - tonumber(ARGV[4]);end;",
    "local lastThreadId = redis.call('lindex', KEYS[2], -1);local ttl;",
    "if lastThreadId ~= false and lastThreadId ~= ARGV[2] then ttl = tonumber(redis.call('zscore', KEYS[3], lastThreadId)) - tonumber(ARGV[4]);",
    "else ttl = redis.call('pttl', KEYS[1]);end;",
    "local timeout = ttl + tonumber(ARGV[3]) + tonumber(ARGV[4]);",
    "if redis.call('zadd', KEYS[3], timeout, ARGV[2]) == 1 then redis.call('rpush', KEYS[2], ARGV[2]);",
    "end;return ttl;",
);
