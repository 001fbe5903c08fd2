//! Issue #47's proof for `RSpinLock`: under `--redisson 3.17.0`, `3.44.0`
//! and `4.7.0`, a holder's `lock()` and `unlock()`, a waiter's
//! `tryLock(wait)` that polls and gives up, and its `lock()` once the lock
//! is free send exactly what `RedissonSpinLock` sends at those tags, on
//! `MONITOR`: the spin lock's own scripts (pinned by the SHA1 of their
//! text at the tag), no `SUBSCRIBE`, no `PUBLISH` inside the unlock, and
//! the unlock's latch from 3.24.0. The back-off's random part makes the
//! count of the waiter's attempts vary, so the test asserts the sequence:
//! the same acquire, at least twice (it polled), and nothing else.

use super::*;

/// `RedissonSpinLock.tryLockInnerAsync`: the same text at redisson-3.15.0,
/// 3.17.0, 3.44.0 and 4.7.0.
const SPIN_ACQUIRE: Script = Script {
    sha1: "dad0f8d619e548e04f21fb48d50be5034df3adae",
    source: "RedissonSpinLock.tryLockInnerAsync",
};

/// `RedissonSpinLock.unlockInnerAsync(long)`, redisson-3.15.0 to 3.23.x:
/// no channel, nothing published.
const SPIN_UNLOCK: Script = Script {
    sha1: "5b9e58d1bcb8498e14aa1d5b49a1ca5b90748946",
    source: "RedissonSpinLock.unlockInnerAsync (3.17.0)",
};

/// `RedissonSpinLock.unlockInnerAsync(threadId, requestId, timeout)`,
/// redisson-3.24.0 to 4.7.0 (#4871).
const SPIN_UNLOCK_LATCHED: Script = Script {
    sha1: "73ac2729af29ea9a975f95e8097f7ee9a74cce3d",
    source: "RedissonSpinLock.unlockInnerAsync with latch (3.44.0, 4.7.0)",
};

/// The waiter's `tryLock` wait: with the exponential back-off (1, 2, 4,
/// ... 128 ms) about nine attempts.
const TRY_WAIT: u64 = 300;

fn acquire(wire: &mut Wire, field: &'static str) -> Vec<Vec<Arg>> {
    wire.script(&SPIN_ACQUIRE, exact(&["1", LOCK, DEFAULT_LEASE, field]))
}

fn unlock(wire: &mut Wire, version: &str, field: &'static str) -> Vec<Vec<Arg>> {
    if version == "3.17.0" {
        return wire.script(&SPIN_UNLOCK, exact(&["1", LOCK, DEFAULT_LEASE, field]));
    }
    let mut rest = exact(&["2", LOCK]);
    rest.push(Arg::Latch);
    rest.extend(exact(&[DEFAULT_LEASE, field]));
    rest.push(match version {
        "4.7.0" => Arg::Between(16_000, 20_000),
        _ => Arg::Word("13500"),
    });
    let mut commands = wire.script(&SPIN_UNLOCK_LATCHED, rest);
    commands.push(del_latch());
    commands
}

/// Under `version`: A takes the spin lock; B's `tryLock(300 ms)` attempts,
/// sleeps, attempts ... and answers false; A unlocks; B's `lock()` takes
/// it at once and B unlocks.
async fn proves_spin_waiter_polls(version: &str) {
    let mut wire = Wire::of(version);
    let holder_acquire = acquire(&mut wire, FIELD_A);
    // Every attempt of B's is this one command (the script is loaded by
    // then under 4.7.0).
    let poll = acquire(&mut wire, FIELD_B);
    assert_eq!(poll.len(), 1);
    let holder_unlock = unlock(&mut wire, version, FIELD_A);
    let waiter_unlock = unlock(&mut wire, version, FIELD_B);
    let redis = RealRedis::start_for_test();
    let mut monitor = Monitor::start(&redis).await;
    let a = client(&redis, UUID_A, config(version, 30_000)).await;
    let a_addrs = monitor.clients().await;
    let b = client(&redis, UUID_B, config(version, 30_000)).await;
    let name = |s: &str| lockcore::LockName::of_kind(s, lockcore::LockKind::Spin).unwrap();
    let (la, lb) = (a.lock_object(name(LOCK)), b.lock_object(name(LOCK)));
    let mut sent = Vec::new();
    la.lock(T1).await.unwrap();
    monitor.collect(&mut sent, holder_acquire.len()).await;
    let started = std::time::Instant::now();
    let wait = lockcore::Millis(TRY_WAIT);
    assert_eq!(lb.try_lock_wait(T1, wait).await, Ok(false));
    assert!(started.elapsed() >= Duration::from_millis(TRY_WAIT));
    monitor.finish(&mut sent).await;
    let polls = sent.len() - holder_acquire.len();
    assert!(polls >= 2, "{version}: B attempted {polls} times");
    assert_eq!(la.unlock(T1).await, Ok(true));
    lb.lock(T1).await.unwrap();
    assert_eq!(lb.unlock(T1).await, Ok(true));
    monitor.finish(&mut sent).await;
    let holder = [holder_acquire, holder_unlock].concat();
    let mut waiter = vec![poll[0].clone(); polls + 1];
    waiter.extend(waiter_unlock);
    assert_per_client(version, &a_addrs, sent, &holder, &waiter);
}

/// `--redisson 3.17.0`: plain `EVAL`, the unlock without a latch.
#[tokio::test]
async fn redisson_3_17_0_spin_waiter_polls() {
    proves_spin_waiter_polls("3.17.0").await;
}

/// `--redisson 3.44.0`: the unlock with its latch (13 500 ms) and `DEL`.
#[tokio::test]
async fn redisson_3_44_0_spin_waiter_polls() {
    proves_spin_waiter_polls("3.44.0").await;
}

/// `--redisson 4.7.0`: every script by `EVALSHA` (the script cache), the
/// latch TTL with 4.7.0's jitter.
#[tokio::test]
async fn redisson_4_7_0_spin_waiter_polls() {
    proves_spin_waiter_polls("4.7.0").await;
}
