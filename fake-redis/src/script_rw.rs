//! The texts of `RReadWriteLock`'s scripts (`RedissonReadLock`,
//! `RedissonWriteLock`, `ReadLockTask`), byte for byte as lockcore sends
//! them (fake-redis keeps its own copy; lockcore's test
//! `fake_redis_knows_every_script_the_lock_sends` checks they agree). Each
//! runs natively (`native_rw`); the release ranges and upstream commits are
//! in lockcore's `script_rw`.

/// Read acquire, Redisson 3.8.0 to 3.11.0 (read at tag redisson-3.8.0): K's TTL is set to the new hold's lease.
pub(crate) const READ_ACQUIRE_FIXED_LEASE: &str = concat!(
    "local mode = redis.call('hget', KEYS[1], 'mode'); ",
    "if (mode == false) then redis.call('hset', KEYS[1], 'mode', 'read'); ",
    "redis.call('hset', KEYS[1], ARGV[2], 1); ",
    "redis.call('set', KEYS[2] .. ':1', 1); ",
    "redis.call('pexpire', KEYS[2] .. ':1', ARGV[1]); ",
    "redis.call('pexpire', KEYS[1], ARGV[1]); ",
    "return nil; ",
    "end; ",
    "if (mode == 'read') or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then local ind = redis.call('hincrby', KEYS[1], ARGV[2], 1); ",
    "local key = KEYS[2] .. ':' .. ind;redis.call('set', key, 1); ",
    "redis.call('pexpire', key, ARGV[1]); ",
    "redis.call('pexpire', KEYS[1], ARGV[1]); ",
    "return nil; ",
    "end;return redis.call('pttl', KEYS[1]);",
);

/// Read acquire, Redisson 3.11.1 to 4.7.0 (#2144, 25914b000; the same text at tags redisson-3.11.1, redisson-3.44.0 and redisson-4.7.0).
pub(crate) const READ_ACQUIRE: &str = concat!(
    "local mode = redis.call('hget', KEYS[1], 'mode'); ",
    "if (mode == false) then redis.call('hset', KEYS[1], 'mode', 'read'); ",
    "redis.call('hset', KEYS[1], ARGV[2], 1); ",
    "redis.call('set', KEYS[2] .. ':1', 1); ",
    "redis.call('pexpire', KEYS[2] .. ':1', ARGV[1]); ",
    "redis.call('pexpire', KEYS[1], ARGV[1]); ",
    "return nil; ",
    "end; ",
    "if (mode == 'read') or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then local ind = redis.call('hincrby', KEYS[1], ARGV[2], 1); ",
    "local key = KEYS[2] .. ':' .. ind;redis.call('set', key, 1); ",
    "redis.call('pexpire', key, ARGV[1]); ",
    "local remainTime = redis.call('pttl', KEYS[1]); ",
    "redis.call('pexpire', KEYS[1], math.max(remainTime, ARGV[1])); ",
    "return nil; ",
    "end;return redis.call('pttl', KEYS[1]);",
);

/// Read renewal, Redisson 3.8.1 to 3.43.x (#1604, 387dd9307; the same text at tags redisson-3.8.1 and redisson-3.43.0).
pub(crate) const READ_RENEW: &str = concat!(
    "local counter = redis.call('hget', KEYS[1], ARGV[2]); ",
    "if (counter ~= false) then redis.call('pexpire', KEYS[1], ARGV[1]); ",
    "if (redis.call('hlen', KEYS[1]) > 1) then local keys = redis.call('hkeys', KEYS[1]); ",
    "for n, key in ipairs(keys) do counter = tonumber(redis.call('hget', KEYS[1], key)); ",
    "if type(counter) == 'number' then for i=counter, 1, -1 do redis.call('pexpire', KEYS[2] .. ':' .. key .. ':rwlock_timeout:' .. i, ARGV[1]); ",
    "end; ",
    "end; ",
    "end; ",
    "end; ",
    "return 1; ",
    "end; ",
    "return 0;",
);

/// Read unlock, Redisson 3.8.0 to 3.21.x (tags redisson-3.8.0, redisson-3.21.3).
pub(crate) const READ_UNLOCK: &str = concat!(
    "local mode = redis.call('hget', KEYS[1], 'mode'); ",
    "if (mode == false) then redis.call('publish', KEYS[2], ARGV[1]); ",
    "return 1; ",
    "end; ",
    "local lockExists = redis.call('hexists', KEYS[1], ARGV[2]); ",
    "if (lockExists == 0) then return nil;end; ",
    "local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1); ",
    "if (counter == 0) then redis.call('hdel', KEYS[1], ARGV[2]); ",
    "end;redis.call('del', KEYS[3] .. ':' .. (counter+1)); ",
    "if (redis.call('hlen', KEYS[1]) > 1) then local maxRemainTime = -3; ",
    "local keys = redis.call('hkeys', KEYS[1]); ",
    "for n, key in ipairs(keys) do counter = tonumber(redis.call('hget', KEYS[1], key)); ",
    "if type(counter) == 'number' then for i=counter, 1, -1 do local remainTime = redis.call('pttl', KEYS[4] .. ':' .. key .. ':rwlock_timeout:' .. i); ",
    "maxRemainTime = math.max(remainTime, maxRemainTime);end; ",
    "end; ",
    "end; ",
    "if maxRemainTime > 0 then redis.call('pexpire', KEYS[1], maxRemainTime); ",
    "return 0; ",
    "end;if mode == 'write' then return 0;end; ",
    "end; ",
    "redis.call('del', KEYS[1]); ",
    "redis.call('publish', KEYS[2], ARGV[1]); ",
    "return 1; ",
);

/// Read unlock, Redisson 3.22.0 to 3.23.x (#5047; tags redisson-3.22.0, redisson-3.23.4).
pub(crate) const READ_UNLOCK_PUBLISH_ARG: &str = concat!(
    "local mode = redis.call('hget', KEYS[1], 'mode'); ",
    "if (mode == false) then redis.call(ARGV[3], KEYS[2], ARGV[1]); ",
    "return 1; ",
    "end; ",
    "local lockExists = redis.call('hexists', KEYS[1], ARGV[2]); ",
    "if (lockExists == 0) then return nil;end; ",
    "local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1); ",
    "if (counter == 0) then redis.call('hdel', KEYS[1], ARGV[2]); ",
    "end;redis.call('del', KEYS[3] .. ':' .. (counter+1)); ",
    "if (redis.call('hlen', KEYS[1]) > 1) then local maxRemainTime = -3; ",
    "local keys = redis.call('hkeys', KEYS[1]); ",
    "for n, key in ipairs(keys) do counter = tonumber(redis.call('hget', KEYS[1], key)); ",
    "if type(counter) == 'number' then for i=counter, 1, -1 do local remainTime = redis.call('pttl', KEYS[4] .. ':' .. key .. ':rwlock_timeout:' .. i); ",
    "maxRemainTime = math.max(remainTime, maxRemainTime);end; ",
    "end; ",
    "end; ",
    "if maxRemainTime > 0 then redis.call('pexpire', KEYS[1], maxRemainTime); ",
    "return 0; ",
    "end;if mode == 'write' then return 0;end; ",
    "end; ",
    "redis.call('del', KEYS[1]); ",
    "redis.call(ARGV[3], KEYS[2], ARGV[1]); ",
    "return 1; ",
);

/// Read unlock with its latch, Redisson 3.24.0 to 3.43.x (#4871; tags redisson-3.24.0, redisson-3.43.0): an absent lock answers 1.
pub(crate) const READ_UNLOCK_LATCHED_ONE: &str = concat!(
    "local val = redis.call('get', KEYS[5]); ",
    "if val ~= false then return tonumber(val);end; ",
    "local mode = redis.call('hget', KEYS[1], 'mode'); ",
    "if (mode == false) then redis.call(ARGV[3], KEYS[2], ARGV[1]); ",
    "redis.call('set', KEYS[5], 1, 'px', ARGV[4]); ",
    "return 1; ",
    "end; ",
    "local lockExists = redis.call('hexists', KEYS[1], ARGV[2]); ",
    "if (lockExists == 0) then return nil;end; ",
    "local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1); ",
    "if (counter == 0) then redis.call('hdel', KEYS[1], ARGV[2]); ",
    "end;redis.call('del', KEYS[3] .. ':' .. (counter+1)); ",
    "if (redis.call('hlen', KEYS[1]) > 1) then local maxRemainTime = -3; ",
    "local keys = redis.call('hkeys', KEYS[1]); ",
    "for n, key in ipairs(keys) do counter = tonumber(redis.call('hget', KEYS[1], key)); ",
    "if type(counter) == 'number' then for i=counter, 1, -1 do local remainTime = redis.call('pttl', KEYS[4] .. ':' .. key .. ':rwlock_timeout:' .. i); ",
    "maxRemainTime = math.max(remainTime, maxRemainTime);end; ",
    "end; ",
    "end; ",
    "if maxRemainTime > 0 then redis.call('pexpire', KEYS[1], maxRemainTime); ",
    "redis.call('set', KEYS[5], 0, 'px', ARGV[4]); ",
    "return 0; ",
    "end;if mode == 'write' then redis.call('set', KEYS[5], 0, 'px', ARGV[4]); ",
    "return 0;end; ",
    "end; ",
    "redis.call('del', KEYS[1]); ",
    "redis.call(ARGV[3], KEYS[2], ARGV[1]); ",
    "redis.call('set', KEYS[5], 1, 'px', ARGV[4]); ",
    "return 1; ",
);

/// Read unlock with its latch, Redisson 3.44.0 to 4.7.0 (1ce49b7a2; tags redisson-3.44.0, redisson-4.7.0): an absent lock answers nil.
pub(crate) const READ_UNLOCK_LATCHED: &str = concat!(
    "local val = redis.call('get', KEYS[5]); ",
    "if val ~= false then return tonumber(val);end; ",
    "local mode = redis.call('hget', KEYS[1], 'mode'); ",
    "if (mode == false) then redis.call(ARGV[3], KEYS[2], ARGV[1]); ",
    "redis.call('set', KEYS[5], 1, 'px', ARGV[4]); ",
    "return nil; ",
    "end; ",
    "local lockExists = redis.call('hexists', KEYS[1], ARGV[2]); ",
    "if (lockExists == 0) then return nil;end; ",
    "local counter = redis.call('hincrby', KEYS[1], ARGV[2], -1); ",
    "if (counter == 0) then redis.call('hdel', KEYS[1], ARGV[2]); ",
    "end;redis.call('del', KEYS[3] .. ':' .. (counter+1)); ",
    "if (redis.call('hlen', KEYS[1]) > 1) then local maxRemainTime = -3; ",
    "local keys = redis.call('hkeys', KEYS[1]); ",
    "for n, key in ipairs(keys) do counter = tonumber(redis.call('hget', KEYS[1], key)); ",
    "if type(counter) == 'number' then for i=counter, 1, -1 do local remainTime = redis.call('pttl', KEYS[4] .. ':' .. key .. ':rwlock_timeout:' .. i); ",
    "maxRemainTime = math.max(remainTime, maxRemainTime);end; ",
    "end; ",
    "end; ",
    "if maxRemainTime > 0 then redis.call('pexpire', KEYS[1], maxRemainTime); ",
    "redis.call('set', KEYS[5], 0, 'px', ARGV[4]); ",
    "return 0; ",
    "end;if mode == 'write' then redis.call('set', KEYS[5], 0, 'px', ARGV[4]); ",
    "return 0;end; ",
    "end; ",
    "redis.call('del', KEYS[1]); ",
    "redis.call(ARGV[3], KEYS[2], ARGV[1]); ",
    "redis.call('set', KEYS[5], 1, 'px', ARGV[4]); ",
    "return 1; ",
);

/// Read force unlock, Redisson 3.8.0 to 3.21.x.
pub(crate) const READ_FORCE_UNLOCK: &str = concat!(
    "if (redis.call('hget', KEYS[1], 'mode') == 'read') then redis.call('del', KEYS[1]); ",
    "redis.call('publish', KEYS[2], ARGV[1]); ",
    "return 1; ",
    "end; ",
    "return 0; ",
);

/// Read force unlock, Redisson 3.22.0 to 4.7.0.
pub(crate) const READ_FORCE_UNLOCK_PUBLISH_ARG: &str = concat!(
    "if (redis.call('hget', KEYS[1], 'mode') == 'read') then redis.call('del', KEYS[1]); ",
    "redis.call(ARGV[2], KEYS[2], ARGV[1]); ",
    "return 1; ",
    "end; ",
    "return 0; ",
);

/// Write acquire, Redisson 3.8.0 to 4.7.0 (the same text at tags redisson-3.8.0 and redisson-4.7.0).
pub(crate) const WRITE_ACQUIRE: &str = concat!(
    "local mode = redis.call('hget', KEYS[1], 'mode'); ",
    "if (mode == false) then redis.call('hset', KEYS[1], 'mode', 'write'); ",
    "redis.call('hset', KEYS[1], ARGV[2], 1); ",
    "redis.call('pexpire', KEYS[1], ARGV[1]); ",
    "return nil; ",
    "end; ",
    "if (mode == 'write') then if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then redis.call('hincrby', KEYS[1], ARGV[2], 1); ",
    "local currentExpire = redis.call('pttl', KEYS[1]); ",
    "redis.call('pexpire', KEYS[1], currentExpire + ARGV[1]); ",
    "return nil; ",
    "end; ",
    "end;return redis.call('pttl', KEYS[1]);",
);

/// Write unlock, Redisson 3.8.0 to 3.21.x.
pub(crate) const WRITE_UNLOCK: &str = concat!(
    "local mode = redis.call('hget', KEYS[1], 'mode'); ",
    "if (mode == false) then redis.call('publish', KEYS[2], ARGV[1]); ",
    "return 1; ",
    "end;if (mode == 'write') then local lockExists = redis.call('hexists', KEYS[1], ARGV[3]); ",
    "if (lockExists == 0) then return nil;else local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); ",
    "if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); ",
    "return 0; ",
    "else redis.call('hdel', KEYS[1], ARGV[3]); ",
    "if (redis.call('hlen', KEYS[1]) == 1) then redis.call('del', KEYS[1]); ",
    "redis.call('publish', KEYS[2], ARGV[1]); ",
    "else redis.call('hset', KEYS[1], 'mode', 'read'); ",
    "end; ",
    "return 1; ",
    "end; ",
    "end; ",
    "end; ",
    "return nil;",
);

/// Write unlock, Redisson 3.22.0 to 3.23.x.
pub(crate) const WRITE_UNLOCK_PUBLISH_ARG: &str = concat!(
    "local mode = redis.call('hget', KEYS[1], 'mode'); ",
    "if (mode == false) then redis.call(ARGV[4], KEYS[2], ARGV[1]); ",
    "return 1; ",
    "end;if (mode == 'write') then local lockExists = redis.call('hexists', KEYS[1], ARGV[3]); ",
    "if (lockExists == 0) then return nil;else local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); ",
    "if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); ",
    "return 0; ",
    "else redis.call('hdel', KEYS[1], ARGV[3]); ",
    "if (redis.call('hlen', KEYS[1]) == 1) then redis.call('del', KEYS[1]); ",
    "redis.call(ARGV[4], KEYS[2], ARGV[1]); ",
    "else redis.call('hset', KEYS[1], 'mode', 'read'); ",
    "end; ",
    "return 1; ",
    "end; ",
    "end; ",
    "end; ",
    "return nil;",
);

/// Write unlock with its latch, Redisson 3.24.0 to 3.43.x: an absent lock answers 1.
pub(crate) const WRITE_UNLOCK_LATCHED_ONE: &str = concat!(
    "local val = redis.call('get', KEYS[3]); ",
    "if val ~= false then return tonumber(val);end; ",
    "local mode = redis.call('hget', KEYS[1], 'mode'); ",
    "if (mode == false) then redis.call(ARGV[4], KEYS[2], ARGV[1]); ",
    "redis.call('set', KEYS[3], 1, 'px', ARGV[5]); ",
    "return 1; ",
    "end;if (mode == 'write') then local lockExists = redis.call('hexists', KEYS[1], ARGV[3]); ",
    "if (lockExists == 0) then return nil;else local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); ",
    "if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); ",
    "redis.call('set', KEYS[3], 0, 'px', ARGV[5]); ",
    "return 0; ",
    "else redis.call('hdel', KEYS[1], ARGV[3]); ",
    "if (redis.call('hlen', KEYS[1]) == 1) then redis.call('del', KEYS[1]); ",
    "redis.call(ARGV[4], KEYS[2], ARGV[1]); ",
    "else redis.call('hset', KEYS[1], 'mode', 'read'); ",
    "end; ",
    "redis.call('set', KEYS[3], 1, 'px', ARGV[5]); ",
    "return 1; ",
    "end; ",
    "end; ",
    "end; ",
    "return nil;",
);

/// Write unlock with its latch, Redisson 3.44.0 to 4.7.0: an absent lock answers nil.
pub(crate) const WRITE_UNLOCK_LATCHED: &str = concat!(
    "local val = redis.call('get', KEYS[3]); ",
    "if val ~= false then return tonumber(val);end; ",
    "local mode = redis.call('hget', KEYS[1], 'mode'); ",
    "if (mode == false) then redis.call(ARGV[4], KEYS[2], ARGV[1]); ",
    "redis.call('set', KEYS[3], 1, 'px', ARGV[5]); ",
    "return nil; ",
    "end;if (mode == 'write') then local lockExists = redis.call('hexists', KEYS[1], ARGV[3]); ",
    "if (lockExists == 0) then return nil;else local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); ",
    "if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); ",
    "redis.call('set', KEYS[3], 0, 'px', ARGV[5]); ",
    "return 0; ",
    "else redis.call('hdel', KEYS[1], ARGV[3]); ",
    "if (redis.call('hlen', KEYS[1]) == 1) then redis.call('del', KEYS[1]); ",
    "redis.call(ARGV[4], KEYS[2], ARGV[1]); ",
    "else redis.call('hset', KEYS[1], 'mode', 'read'); ",
    "end; ",
    "redis.call('set', KEYS[3], 1, 'px', ARGV[5]); ",
    "return 1; ",
    "end; ",
    "end; ",
    "end; ",
    "return nil;",
);

/// Write force unlock, Redisson 3.8.0 to 3.21.x.
pub(crate) const WRITE_FORCE_UNLOCK: &str = concat!(
    "if (redis.call('hget', KEYS[1], 'mode') == 'write') then redis.call('del', KEYS[1]); ",
    "redis.call('publish', KEYS[2], ARGV[1]); ",
    "return 1; ",
    "end; ",
    "return 0; ",
);

/// Write force unlock, Redisson 3.22.0 to 4.7.0.
pub(crate) const WRITE_FORCE_UNLOCK_PUBLISH_ARG: &str = concat!(
    "if (redis.call('hget', KEYS[1], 'mode') == 'write') then redis.call('del', KEYS[1]); ",
    "redis.call(ARGV[2], KEYS[2], ARGV[1]); ",
    "return 1; ",
    "end; ",
    "return 0; ",
);

/// `ReadLockTask.renew`'s chunk, Redisson 3.44.0 to 3.52.x (#6303,
/// 597d604a3; read at tag redisson-3.44.0): `KEYS` pairs (K, `{K}`),
/// `ARGV[1]` the lease, then one lockName per pair. The inner loop names
/// its variable `i` too, so `KEYS[i+1]` is the pair `counter` places on:
/// a count of 2 or more makes it another pair's key or nil, and the
/// concatenation fails the script (PR #6883).
pub(crate) const READ_RENEW_BATCH_SHADOWED: &str = concat!(
    "local result = {} ",
    "local j = 1 ",
    "for i = 1, #KEYS, 2 do ",
    "j = j + 1; ",
    "local counter = redis.call('hget', KEYS[i], ARGV[j]); ",
    "if (counter ~= false) then ",
    "redis.call('pexpire', KEYS[i], ARGV[1]); ",
    "if (redis.call('hlen', KEYS[i]) > 1) then ",
    "local keys = redis.call('hkeys', KEYS[i]); ",
    "for n, key in ipairs(keys) do ",
    "counter = tonumber(redis.call('hget', KEYS[i], key)); ",
    "if type(counter) == 'number' then ",
    "for i=counter, 1, -1 do ",
    "redis.call('pexpire', KEYS[i+1] .. ':' .. key .. ':rwlock_timeout:' .. i, ARGV[1]); ",
    "end; ",
    "end; ",
    "end; ",
    "end; ",
    "table.insert(result, 1); ",
    "else ",
    "table.insert(result, 0); ",
    "end; ",
    "end; ",
    "return result;",
);

/// `ReadLockTask.renew`'s chunk, Redisson 4.0.0 to 4.3.x (PR #6883,
/// 725d181c8; read at tags redisson-4.0.0 and redisson-4.3.1): as
/// [`READ_RENEW_BATCH_SHADOWED`] with the inner variable renamed `c`.
pub(crate) const READ_RENEW_BATCH: &str = concat!(
    "local result = {} ",
    "local j = 1 ",
    "for i = 1, #KEYS, 2 do ",
    "j = j + 1; ",
    "local counter = redis.call('hget', KEYS[i], ARGV[j]); ",
    "if (counter ~= false) then ",
    "redis.call('pexpire', KEYS[i], ARGV[1]); ",
    "if (redis.call('hlen', KEYS[i]) > 1) then ",
    "local keys = redis.call('hkeys', KEYS[i]); ",
    "for n, key in ipairs(keys) do ",
    "counter = tonumber(redis.call('hget', KEYS[i], key)); ",
    "if type(counter) == 'number' then ",
    "for c=counter, 1, -1 do ",
    "redis.call('pexpire', KEYS[i+1] .. ':' .. key .. ':rwlock_timeout:' .. c, ARGV[1]); ",
    "end; ",
    "end; ",
    "end; ",
    "end; ",
    "table.insert(result, 1); ",
    "else ",
    "table.insert(result, 0); ",
    "end; ",
    "end; ",
    "return result;",
);

/// `ReadLockTask`'s chunk, Redisson 4.4.0 to 4.7.0 (PR #7098, bfbf73d0b;
/// the same text at tags redisson-4.4.0 and redisson-4.7.0): per pair a
/// count and this client's lockNames; each one present has its own
/// timeout keys extended, and K only if one was.
pub(crate) const READ_RENEW_BATCH_OWN: &str = concat!(
    "local result = {} ",
    "local argIdx = 2 ",
    "for i = 1, #KEYS, 2 do ",
    "local anyAlive = false; ",
    "local lockNamesCount = tonumber(ARGV[argIdx]); ",
    "argIdx = argIdx + 1; ",
    "for k = 1, lockNamesCount do ",
    "local counter = redis.call('hget', KEYS[i], ARGV[argIdx]); ",
    "if (counter ~= false) then ",
    "anyAlive = true; ",
    "for c=counter, 1, -1 do ",
    "redis.call('pexpire', KEYS[i+1] .. ':' .. ARGV[argIdx] .. ':rwlock_timeout:' .. c, ARGV[1]); ",
    "end; ",
    "end; ",
    "argIdx = argIdx + 1; ",
    "end; ",
    "if (anyAlive) then ",
    "redis.call('pexpire', KEYS[i], ARGV[1]); ",
    "table.insert(result, 1); ",
    "else ",
    "table.insert(result, 0); ",
    "end; ",
    "end; ",
    "return result;",
);
