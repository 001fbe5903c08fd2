//! `RFairLock`'s (`RedissonFairLock`) scripts, by their exact
//! text: fake-redis's own copy of lockcore's `script_fair.rs` (fake-redis
//! cannot depend on lockcore; a lockcore test checks that every text it
//! sends is one of these), run natively by `native_fair`. The release each
//! text belongs to is on lockcore's copy.

/// `acquireFailedAsync`, Redisson 3.32.0 to 4.7.0 (the same text at tags redisson-3.32.0, redisson-3.44.0 and redisson-4.7.0): `KEYS` queue, timeout set; `ARGV` `<uuid>:<tid>`, the wait ms. Takes the wait off every thread queued after the caller, then removes the caller from both.
pub(crate) const FAIR_ACQUIRE_FAILED: &str = concat!(
    "local queue = redis.call('lrange', KEYS[1], 0, -1);",
    "local i = 1;while i <= #queue and queue[i] ~= ARGV[1] do i = i + 1;",
    "end;i = i + 1;while i <= #queue do redis.call('zincrby', KEYS[2], -tonumber(ARGV[2]), queue[i]);",
    "i = i + 1;end;redis.call('zrem', KEYS[2], ARGV[1]);",
    "redis.call('lrem', KEYS[1], 0, ARGV[1]);",
);

/// `tryLockInnerAsync` for `tryLock()` (`EVAL_NULL_BOOLEAN`), Redisson 3.32.0 to 4.7.0 (same text at tags redisson-3.32.0 and redisson-4.7.0): `KEYS` K, queue, timeout set; `ARGV` lease, `<uuid>:<tid>`, the client's `currentTimeMillis`, the wait ms. Purges stale heads; acquires when K is free and the queue is empty or headed by the caller; re-enters; else 1, never queueing.
pub(crate) const FAIR_TRY_ACQUIRE: &str = concat!(
    "while true do local firstThreadId2 = redis.call('lindex', KEYS[2], 0);",
    "if firstThreadId2 == false then break;end;local timeout = redis.call('zscore', KEYS[3], firstThreadId2);",
    "if timeout ~= false and tonumber(timeout) <= tonumber(ARGV[3]) then redis.call('zrem', KEYS[3], firstThreadId2);",
    "redis.call('lpop', KEYS[2]);else break;end;end;if (redis.call('exists', KEYS[1]) == 0) and ((redis.call('exists', KEYS[2]) == 0) or (redis.call('lindex', KEYS[2], 0) == ARGV[2])) then redis.call('lpop', KEYS[2]);",
    "redis.call('zrem', KEYS[3], ARGV[2]);local keys = redis.call('zrange', KEYS[3], 0, -1);",
    "for i = 1, #keys, 1 do redis.call('zincrby', KEYS[3], -tonumber(ARGV[4]), keys[i]);",
    "end;redis.call('hset', KEYS[1], ARGV[2], 1);redis.call('pexpire', KEYS[1], ARGV[1]);",
    "return nil;end;if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('hincrby', KEYS[1], ARGV[2], 1);",
    "redis.call('pexpire', KEYS[1], ARGV[1]);return nil;",
    "end;return 1;",
);

/// `tryLockInnerAsync` with a wait (`EVAL_LONG`), Redisson 3.32.0 to 3.44.x (tags redisson-3.32.0 and redisson-3.44.0): `KEYS` K, queue, timeout set; `ARGV` lease, `<uuid>:<tid>`, the wait ms, the client's `currentTimeMillis`. As [`FAIR_ACQUIRE`], but the enqueue reads the last thread's score without checking it has one.
pub(crate) const FAIR_ACQUIRE_UNSCORED_LAST: &str = concat!(
    "while true do local firstThreadId2 = redis.call('lindex', KEYS[2], 0);",
    "if firstThreadId2 == false then break;end;local timeout = redis.call('zscore', KEYS[3], firstThreadId2);",
    "if timeout ~= false and tonumber(timeout) <= tonumber(ARGV[4]) then redis.call('zrem', KEYS[3], firstThreadId2);",
    "redis.call('lpop', KEYS[2]);else break;end;end;if (redis.call('exists', KEYS[1]) == 0) and ((redis.call('exists', KEYS[2]) == 0) or (redis.call('lindex', KEYS[2], 0) == ARGV[2])) then redis.call('lpop', KEYS[2]);",
    "redis.call('zrem', KEYS[3], ARGV[2]);local keys = redis.call('zrange', KEYS[3], 0, -1);",
    "for i = 1, #keys, 1 do redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), keys[i]);",
    "end;redis.call('hset', KEYS[1], ARGV[2], 1);redis.call('pexpire', KEYS[1], ARGV[1]);",
    "return nil;end;if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then redis.call('hincrby', KEYS[1], ARGV[2],1);",
    "redis.call('pexpire', KEYS[1], ARGV[1]);return nil;",
    "end;local timeout = redis.call('zscore', KEYS[3], ARGV[2]);",
    "if timeout ~= false then local ttl = redis.call('pttl', KEYS[1]);",
    "return math.max(0, ttl); end;local lastThreadId = redis.call('lindex', KEYS[2], -1);",
    "local ttl;if lastThreadId ~= false and lastThreadId ~= ARGV[2] then ttl = tonumber(redis.call('zscore', KEYS[3], lastThreadId)) - tonumber(ARGV[4]);",
    "else ttl = redis.call('pttl', KEYS[1]);end;local timeout = ttl + tonumber(ARGV[3]) + tonumber(ARGV[4]);",
    "if redis.call('zadd', KEYS[3], timeout, ARGV[2]) == 1 then redis.call('rpush', KEYS[2], ARGV[2]);",
    "end;return ttl;",
);

/// `tryLockInnerAsync` with a wait (`EVAL_LONG`), Redisson 3.45.0 to 4.7.0 (PR #6434, 2fe06b7a3; tags redisson-3.45.0 and redisson-4.7.0): purge stale heads; acquire when K is free and the queue empty or headed by the caller (taking the wait off every other waiter's deadline); re-enter; a queued caller gets `max(0, PTTL K)`; a new one is queued behind the last thread with deadline ttl + wait + now and gets ttl.
pub(crate) const FAIR_ACQUIRE: &str = concat!(
    "while true do local firstThreadId2 = redis.call('lindex', KEYS[2], 0);",
    "if firstThreadId2 == false then break;end;local timeout = redis.call('zscore', KEYS[3], firstThreadId2);",
    "if timeout ~= false and tonumber(timeout) <= tonumber(ARGV[4]) then redis.call('zrem', KEYS[3], firstThreadId2);",
    "redis.call('lpop', KEYS[2]);else break;end;end;if (redis.call('exists', KEYS[1]) == 0) and ((redis.call('exists', KEYS[2]) == 0) or (redis.call('lindex', KEYS[2], 0) == ARGV[2])) then redis.call('lpop', KEYS[2]);",
    "redis.call('zrem', KEYS[3], ARGV[2]);local keys = redis.call('zrange', KEYS[3], 0, -1);",
    "for i = 1, #keys, 1 do redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), keys[i]);",
    "end;redis.call('hset', KEYS[1], ARGV[2], 1);redis.call('pexpire', KEYS[1], ARGV[1]);",
    "return nil;end;if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then redis.call('hincrby', KEYS[1], ARGV[2],1);",
    "redis.call('pexpire', KEYS[1], ARGV[1]);return nil;",
    "end;local timeout = redis.call('zscore', KEYS[3], ARGV[2]);",
    "if timeout ~= false then local ttl = redis.call('pttl', KEYS[1]);",
    "return math.max(0, ttl); end;local lastThreadId = redis.call('lindex', KEYS[2], -1);",
    "local ttl;if lastThreadId ~= false and lastThreadId ~= ARGV[2] and redis.call('zscore', KEYS[3], lastThreadId) ~= false then ttl = tonumber(redis.call('zscore', KEYS[3], lastThreadId)) - tonumber(ARGV[4]);",
    "else ttl = redis.call('pttl', KEYS[1]);end;local timeout = ttl + tonumber(ARGV[3]) + tonumber(ARGV[4]);",
    "if redis.call('zadd', KEYS[3], timeout, ARGV[2]) == 1 then redis.call('rpush', KEYS[2], ARGV[2]);",
    "end;return ttl;",
);

/// `unlockInnerAsync`, Redisson 3.32.0 to 4.7.0 (same text at tags redisson-3.32.0 and redisson-4.7.0): `KEYS` K, queue, timeout set, `redisson_lock__channel:{K}`, the latch; `ARGV` message, lease, `<uuid>:<tid>`, `currentTimeMillis`, the publish command, the latch TTL. Publishes to the queue head's own channel only.
pub(crate) const FAIR_UNLOCK: &str = concat!(
    "local val = redis.call('get', KEYS[5]); if val ~= false then return tonumber(val);",
    "end; while true do local firstThreadId2 = redis.call('lindex', KEYS[2], 0);",
    "if firstThreadId2 == false then break;end; local timeout = redis.call('zscore', KEYS[3], firstThreadId2);",
    "if timeout ~= false and tonumber(timeout) <= tonumber(ARGV[4]) then redis.call('zrem', KEYS[3], firstThreadId2);",
    " redis.call('lpop', KEYS[2]); else break;end; end;if (redis.call('exists', KEYS[1]) == 0) then local nextThreadId = redis.call('lindex', KEYS[2], 0);",
    " if nextThreadId ~= false then redis.call(ARGV[5], KEYS[4] .. ':' .. nextThreadId, ARGV[1]);",
    " end; redis.call('set', KEYS[5], 1, 'px', ARGV[6]);",
    " return 1; end;if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil;",
    "end; local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1);",
    " if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]);",
    " redis.call('set', KEYS[5], 0, 'px', ARGV[6]); return 0;",
    " end; redis.call('del', KEYS[1]); redis.call('set', KEYS[5], 1, 'px', ARGV[6]);",
    " local nextThreadId = redis.call('lindex', KEYS[2], 0);",
    " if nextThreadId ~= false then redis.call(ARGV[5], KEYS[4] .. ':' .. nextThreadId, ARGV[1]);",
    " end; return 1; ",
);

/// `forceUnlockAsync`, Redisson 3.32.0 to 4.7.0 (same text at tags redisson-3.32.0 and redisson-4.7.0): `KEYS` K, queue, timeout set, channel; `ARGV` message, `currentTimeMillis`, the publish command.
pub(crate) const FAIR_FORCE_UNLOCK: &str = concat!(
    "while true do local firstThreadId2 = redis.call('lindex', KEYS[2], 0);",
    "if firstThreadId2 == false then break;end; local timeout = redis.call('zscore', KEYS[3], firstThreadId2);",
    "if timeout ~= false and tonumber(timeout) <= tonumber(ARGV[2]) then redis.call('zrem', KEYS[3], firstThreadId2);",
    " redis.call('lpop', KEYS[2]); else break;end; end;if (redis.call('del', KEYS[1]) == 1) then local nextThreadId = redis.call('lindex', KEYS[2], 0);",
    " if nextThreadId ~= false then redis.call(ARGV[3], KEYS[4] .. ':' .. nextThreadId, ARGV[1]);",
    " end; return 1; end; return 0;",
);
