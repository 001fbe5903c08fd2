//! Issue #47's proof for the read lock's own watchdog, `ReadLockTask`:
//! under `--redisson 3.44.0`, `4.0.0` and `4.7.0`, a reader's `lock()`,
//! its first renewal and its `unlock()` send exactly what
//! `RedissonReadLock` and `ReadLockTask` send at those tags, on `MONITOR`:
//! the reader's timeout-key prefix, the renewal chunk's `KEYS` pair (K,
//! `{K}`) and its `ARGV` (the lease, then one lockName up to 4.3.x, a
//! count and every own lockName from 4.4.0), and the latched unlock.
//! Scripts are pinned by the SHA1 of their text at the tag (the Java
//! literals of the method named, joined as the JVM joins them).

use super::*;

/// `RedissonReadLock.tryLockInnerAsync`: the same text at the three tags
/// (since 3.11.1, #2144).
const READ_ACQUIRE: Script = Script {
    sha1: "95553a6ff11176c18e71344e89d116b06fd6f753",
    source: "RedissonReadLock.tryLockInnerAsync (3.44.0, 4.0.0, 4.7.0)",
};

/// redisson-3.44.0 renewal/ReadLockTask.java (`renew`): the inner loop
/// reuses `i` (PR #6883).
const READ_RENEW_3_44: Script = Script {
    sha1: "1affef780a01e1406cb1968c62918f618d10d6a3",
    source: "ReadLockTask.renew (3.44.0)",
};

/// redisson-4.0.0 renewal/ReadLockTask.java (`renew`), after 725d181c8.
const READ_RENEW_4_0: Script = Script {
    sha1: "d6564f42b98d6eece0e940a478ee248f80b8a90a",
    source: "ReadLockTask.renew (4.0.0)",
};

/// redisson-4.7.0 renewal/ReadLockTask.java (`buildChunk`), after PR
/// #7098 (4.4.0).
const READ_RENEW_4_7: Script = Script {
    sha1: "38d2b478dfbe264ab67c221b7e4be62245f00ba0",
    source: "ReadLockTask.buildChunk (4.7.0)",
};

/// `RedissonReadLock.unlockInnerAsync(threadId, requestId, timeout)`: the
/// same text at the three tags (nil for an absent lock since 3.44.0).
const READ_UNLOCK: Script = Script {
    sha1: "6e1b10e11ac0a3ed8e902562ecd32ce01b553039",
    source: "RedissonReadLock.unlockInnerAsync (3.44.0, 4.0.0, 4.7.0)",
};

/// `prefixName("redisson_rwlock", name)`.
const RW_CHANNEL: &str = "redisson_rwlock:{orders}";
/// `getKeyPrefix`: the timeout prefix before `:<lockName>`.
const KEY_PREFIX: &str = "{orders}";
/// `getReadWriteTimeoutNamePrefix(threadId)`.
const TIMEOUTS_A: &str = "{orders}:6f1c7a4e-0b2d-4c3e-9f8a-1d2e3f4a5b6c:1:rwlock_timeout";
/// `getWriteLockName(threadId)`.
const WRITE_FIELD_A: &str = "6f1c7a4e-0b2d-4c3e-9f8a-1d2e3f4a5b6c:1:write";

/// The script cache is on by default from 3.46.0.
fn wire(version: &str) -> Wire {
    Wire {
        cached: version != "3.44.0",
        loaded: Vec::new(),
    }
}

fn renew(wire: &mut Wire, version: &str) -> Vec<Vec<Arg>> {
    match version {
        "3.44.0" => wire.script(
            &READ_RENEW_3_44,
            exact(&["2", LOCK, KEY_PREFIX, LEASE, FIELD_A]),
        ),
        "4.0.0" => wire.script(
            &READ_RENEW_4_0,
            exact(&["2", LOCK, KEY_PREFIX, LEASE, FIELD_A]),
        ),
        _ => wire.script(
            &READ_RENEW_4_7,
            exact(&["2", LOCK, KEY_PREFIX, LEASE, "1", FIELD_A]),
        ),
    }
}

fn unlock(wire: &mut Wire, version: &str) -> Vec<Vec<Arg>> {
    let mut rest = exact(&["5", LOCK, RW_CHANNEL, TIMEOUTS_A, KEY_PREFIX]);
    rest.push(Arg::Latch);
    rest.extend(exact(&[UNLOCK_MESSAGE, FIELD_A, PUBLISH]));
    rest.push(match version {
        "3.44.0" => Arg::Word("13500"),
        _ => Arg::Between(16_000, 20_000),
    });
    let mut commands = wire.script(&READ_UNLOCK, rest);
    commands.push(del_latch());
    commands
}

/// Under `version`: A's read `lock()` (no lease), held until
/// `ReadLockTask`'s first round showed on `MONITOR`, then `unlock()`.
async fn proves_read_lock_renew_unlock(version: &str) {
    let mut wire = wire(version);
    let acquire = exact(&["2", LOCK, TIMEOUTS_A, LEASE, FIELD_A, WRITE_FIELD_A]);
    let mut expected = wire.script(&READ_ACQUIRE, acquire);
    expected.extend(renew(&mut wire, version));
    let held = expected.len();
    expected.extend(unlock(&mut wire, version));
    let redis = RealRedis::start_for_test();
    let mut monitor = Monitor::start(&redis).await;
    let a = client(&redis, UUID_A, config(version, WATCHDOG)).await;
    let name = lockcore::LockName::of_kind(LOCK, lockcore::LockKind::Read).unwrap();
    let lock = a.lock_object(name);
    let mut sent = Vec::new();
    lock.lock(T1).await.unwrap();
    monitor.collect(&mut sent, held).await;
    assert_eq!(lock.unlock(T1).await, Ok(true));
    monitor.collect(&mut sent, expected.len()).await;
    monitor.finish(&mut sent).await;
    assert_sequence(version, &expected, &words(sent));
}

/// `--redisson 3.44.0`: `ReadLockTask`'s first script, plain `EVAL`.
#[tokio::test]
async fn redisson_3_44_0_read_lock_renew_unlock() {
    proves_read_lock_renew_unlock("3.44.0").await;
}

/// `--redisson 4.0.0`: the loop variable renamed (PR #6883), by `EVALSHA`.
#[tokio::test]
async fn redisson_4_0_0_read_lock_renew_unlock() {
    proves_read_lock_renew_unlock("4.0.0").await;
}

/// `--redisson 4.7.0`: a count and the client's own lockNames (PR #7098).
#[tokio::test]
async fn redisson_4_7_0_read_lock_renew_unlock() {
    proves_read_lock_renew_unlock("4.7.0").await;
}
