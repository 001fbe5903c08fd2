//! `RFairLock`'s scripts before Redisson 3.32.0, by their exact text:
//! fake-redis's own copy of lockcore's `script_fair_legacy.rs` (where the
//! release of each text is), run natively by `native_fair_legacy`.

/// See lockcore's `script_fair_legacy::FAIR_ACQUIRE_FAILED_HEAD`.
pub(crate) const FAIR_ACQUIRE_FAILED_HEAD: &str = concat!(
    "local firstThreadId = redis.call('lindex', KEYS[1], 0);",
    " if firstThreadId == ARGV[1] then local keys = redis.call('zrange', KEYS[2], 0, -1);",
    " for i = 1, #keys, 1 do redis.call('zincrby', KEYS[2], -tonumber(ARGV[2]), keys[i]);end;end;",
    "redis.call('zrem', KEYS[2], ARGV[1]); redis.call('lrem', KEYS[1], 0, ARGV[1]); ",
);

/// See lockcore's `script_fair_legacy::FAIR_TRY_ACQUIRE_LEGACY`.
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

/// See lockcore's `script_fair_legacy::FAIR_ACQUIRE_FROM_HEAD`.
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

/// See lockcore's `script_fair_legacy::FAIR_UNLOCK_LEGACY`.
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

/// See lockcore's `script_fair_legacy::FAIR_FORCE_UNLOCK_LEGACY`.
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

/// See lockcore's `script_fair_legacy::FAIR_TRY_ACQUIRE_UNCHECKED_PURGE`.
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

/// See lockcore's `script_fair_legacy::FAIR_ACQUIRE_UNCHECKED_PURGE`.
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

/// See lockcore's `script_fair_legacy::FAIR_UNLOCK_PUBLISH_ARG`.
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

/// See lockcore's `script_fair_legacy::FAIR_FORCE_UNLOCK_PUBLISH_ARG`.
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

/// See lockcore's `script_fair_legacy::FAIR_UNLOCK_LATCHED_UNCHECKED_PURGE`.
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

/// See lockcore's `script_fair_legacy::FAIR_ACQUIRE_OWN_DEADLINE`.
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
