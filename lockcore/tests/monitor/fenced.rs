//! Issue #47's proof for Redisson's `RFencedLock`: under `--redisson
//! 3.23.4`, `3.44.0` and `4.7.0`, `lockAndGetToken()`, `unlock()`,
//! `lock()`, `getToken()` and `unlock()` send exactly what
//! `RedissonFencedLock` sends at those tags, on `MONITOR`: the token
//! script with the token key `redisson_lock_token:{K}` as `KEYS[2]`, the
//! overridden `lock()` script, the `GET` of the token key, and `RLock`'s
//! unlock (the class overrides none). Scripts are pinned by the SHA1 of
//! their text at the tag (the Java literals of the method named, joined
//! as the JVM joins them); neither changed from redisson-3.19.0 to
//! redisson-4.7.0.

use super::*;

/// redisson-3.23.4, -3.44.0 and -4.7.0 RedissonFencedLock.java
/// `tryLockInnerAsync(leaseTime, unit, threadId)` (`EVAL_LONG_LIST`), the
/// script of `lockAndGetToken` / `tryLockAndGetToken`.
const ACQUIRE_TOKEN: Script = Script {
    sha1: "49babb5a1e6a0c5f188c2ae62b93b51cdfd63e45",
    source: "RedissonFencedLock.tryLockInnerAsync EVAL_LONG_LIST",
};

/// The same tags' override of `RedissonLock.tryLockInnerAsync(waitTime,
/// leaseTime, unit, threadId, command)`, the script of `lock()` and
/// `tryLock(...)`.
const ACQUIRE: Script = Script {
    sha1: "46b5551ba403d6152a7a6eca122e08728d6c8c66",
    source: "RedissonFencedLock.tryLockInnerAsync (lock, tryLock)",
};

/// `prefixName("redisson_lock_token", getRawName())`.
const TOKEN_KEY: &str = "redisson_lock_token:{orders}";

/// Under `version`: A takes the fenced lock with `lockAndGetToken()`
/// (token 1), unlocks, takes it with `lock()` (the key counts 2, no token
/// returned), reads `getToken()` (2) and unlocks.
async fn proves_fenced_lock(version: &str) {
    let mut wire = Wire::of(version);
    let rest = || exact(&["2", LOCK, TOKEN_KEY, DEFAULT_LEASE, FIELD_A]);
    // Two holds, each with its unlock's own latch id: compared apart.
    let mut first = wire.script(&ACQUIRE_TOKEN, rest());
    first.extend(unlock(&mut wire, version, FIELD_A, DEFAULT_LEASE));
    let mut second = wire.script(&ACQUIRE, rest());
    second.push(exact(&["GET", TOKEN_KEY]));
    second.extend(unlock(&mut wire, version, FIELD_A, DEFAULT_LEASE));
    let redis = RealRedis::start_for_test();
    let mut monitor = Monitor::start(&redis).await;
    let a = client(&redis, UUID_A, config(version, 30_000)).await;
    let name = lockcore::LockName::of_kind(LOCK, lockcore::LockKind::Fenced).unwrap();
    let lock = a.lock_object(name);
    let token = lockcore::Call::TryLockAndGetToken {
        wait: None,
        lease: None,
    };
    let got = lock.call(T1, token).await;
    let one = Some(lockcore::FencingToken(1));
    assert_eq!(got, Ok(lockcore::CallOutcome::Acquired { token: one }));
    assert_eq!(lock.unlock(T1).await, Ok(true));
    let mut sent = Vec::new();
    monitor.collect(&mut sent, first.len()).await;
    assert_sequence(version, &first, &words(sent));
    lock.lock(T1).await.unwrap();
    let read = lock.call(T1, lockcore::Call::GetToken).await;
    assert_eq!(read, Ok(lockcore::CallOutcome::Count(2)));
    assert_eq!(lock.unlock(T1).await, Ok(true));
    let mut sent = Vec::new();
    monitor.collect(&mut sent, second.len()).await;
    monitor.finish(&mut sent).await;
    assert_sequence(version, &second, &words(sent));
}

/// `--redisson 3.23.4`: plain `EVAL`, the unlock without a latch.
#[tokio::test]
async fn redisson_3_23_4_fenced_lock() {
    proves_fenced_lock("3.23.4").await;
}

/// `--redisson 3.44.0`: the unlock with its latch and its `DEL`.
#[tokio::test]
async fn redisson_3_44_0_fenced_lock() {
    proves_fenced_lock("3.44.0").await;
}

/// `--redisson 4.7.0`: every script by `EVALSHA` after its `SCRIPT LOAD`
/// (the script cache, default since 3.46.0).
#[tokio::test]
async fn redisson_4_7_0_fenced_lock() {
    proves_fenced_lock("4.7.0").await;
}
