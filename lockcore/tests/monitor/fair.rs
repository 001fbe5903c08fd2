//! Issue #47's proof for `RFairLock`: under `--redisson 3.44.0`, `3.45.0`
//! and `4.7.0`, a holder's `lock()` and `unlock()` and a waiter's
//! `tryLock(wait)` that gives up send exactly what
//! `RedissonFairLock` sends at those tags, on `MONITOR`: the queue and
//! timeout-set keys, the thread wait, the client's clock, the waiter's own
//! channel, `acquireFailed` before the `UNSUBSCRIBE`, and the unlock's
//! latch. Scripts are pinned by the SHA1 of their text at the tag (the
//! Java literals of the method named, joined as the JVM joins them).

use super::*;

/// redisson-3.44.0 RedissonFairLock.java `tryLockInnerAsync`
/// (`EVAL_LONG`): the enqueue reads the last thread's score unchecked.
const ACQUIRE_3_44: Script = Script {
    sha1: "929defe0321e0a4c943b4244951d3a730b6eaabc",
    source: "RedissonFairLock.tryLockInnerAsync EVAL_LONG (3.44.0)",
};

/// redisson-3.45.0 and redisson-4.7.0 RedissonFairLock.java
/// `tryLockInnerAsync` (`EVAL_LONG`), after PR #6434.
const ACQUIRE: Script = Script {
    sha1: "8f6ed299ffd259f0539c20f89253998c0777ea75",
    source: "RedissonFairLock.tryLockInnerAsync EVAL_LONG (3.45.0, 4.7.0)",
};

/// `acquireFailedAsync`: the same text at the three tags.
const ACQUIRE_FAILED: Script = Script {
    sha1: "d1ddef65ad80886b5d36e023c99930044ddd653a",
    source: "RedissonFairLock.acquireFailedAsync",
};

/// `unlockInnerAsync(threadId, requestId, timeout)`: the same text at the
/// three tags.
const UNLOCK: Script = Script {
    sha1: "367f80bd2e300e411fb0936d9b601e5bcb3fd4b6",
    source: "RedissonFairLock.unlockInnerAsync",
};

pub(super) const QUEUE: &str = "redisson_lock_queue:{orders}";
pub(super) const TIMEOUTS: &str = "redisson_lock_timeout:{orders}";
/// `getChannelName() + ":" + getLockName(threadId)`: the waiter's own.
pub(super) const B_CHANNEL: &str =
    "redisson_lock__channel:{orders}:0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a:1";
/// `threadWaitTime` (5 minutes; `fairLockWaitTimeout` from 3.46.0).
const THREAD_WAIT: &str = "300000";
/// The waiter's `tryLock` wait, which replaces the thread wait.
const TRY_WAIT: u64 = 300;
/// The client's `System.currentTimeMillis()`: locksim's client clock
/// starts at zero with the client, so any small count of ms.
pub(super) const CLOCK: Arg = Arg::Between(0, 600_000);

fn acquire(
    wire: &mut Wire,
    version: &str,
    field: &'static str,
    wait: &'static str,
) -> Vec<Vec<Arg>> {
    let script = if version == "3.44.0" {
        &ACQUIRE_3_44
    } else {
        &ACQUIRE
    };
    let mut rest = exact(&["3", LOCK, QUEUE, TIMEOUTS, DEFAULT_LEASE, field, wait]);
    rest.push(CLOCK);
    wire.script(script, rest)
}

fn unlock(wire: &mut Wire, version: &str) -> Vec<Vec<Arg>> {
    let mut rest = exact(&["5", LOCK, QUEUE, TIMEOUTS, CHANNEL]);
    rest.push(Arg::Latch);
    rest.extend(exact(&[UNLOCK_MESSAGE, DEFAULT_LEASE, FIELD_A]));
    rest.push(CLOCK);
    rest.push(Arg::Word(PUBLISH));
    rest.push(match version {
        "4.7.0" => Arg::Between(16_000, 20_000),
        _ => Arg::Word("13500"),
    });
    let mut commands = wire.script(&UNLOCK, rest);
    commands.push(del_latch());
    commands
}

/// Under `version`: A takes the fair lock; B's `tryLock(300 ms)` queues
/// (acquire, `SUBSCRIBE` of its own channel, acquire again), its wait runs
/// out, it sends `acquireFailed` and then `UNSUBSCRIBE`s; A unlocks.
async fn proves_fair_waiter_gives_up(version: &str) {
    let mut wire = Wire::of(version);
    let holder_acquire = acquire(&mut wire, version, FIELD_A, THREAD_WAIT);
    let mut waiter = acquire(&mut wire, version, FIELD_B, "300");
    waiter.push(vec![Arg::Word("SUBSCRIBE"), Arg::Word(B_CHANNEL)]);
    waiter.extend(acquire(&mut wire, version, FIELD_B, "300"));
    let rest = exact(&["2", QUEUE, TIMEOUTS, FIELD_B, "300"]);
    waiter.extend(wire.script(&ACQUIRE_FAILED, rest));
    waiter.push(vec![Arg::Word("UNSUBSCRIBE"), Arg::Word(B_CHANNEL)]);
    let holder_unlock = unlock(&mut wire, version);
    run_waiter_gives_up(version, holder_acquire, waiter, holder_unlock).await;
}

/// Runs A's `lock()`, B's `tryLock(300 ms)` that gives up and A's
/// `unlock()` of the fair lock under `version` against a real
/// `redis-server`, and checks each client sent exactly what is expected:
/// A `holder_acquire` then `holder_unlock`, B `waiter`.
pub(super) async fn run_waiter_gives_up(
    version: &str,
    holder_acquire: Vec<Vec<Arg>>,
    waiter: Vec<Vec<Arg>>,
    holder_unlock: Vec<Vec<Arg>>,
) {
    let redis = RealRedis::start_for_test();
    let mut monitor = Monitor::start(&redis).await;
    let a = client(&redis, UUID_A, config(version, 30_000)).await;
    let a_addrs = monitor.clients().await;
    let b = client(&redis, UUID_B, config(version, 30_000)).await;
    let name = |s: &str| lockcore::LockName::of_kind(s, lockcore::LockKind::Fair).unwrap();
    let (la, lb) = (a.lock_object(name(LOCK)), b.lock_object(name(LOCK)));
    let mut sent = Vec::new();
    la.lock(T1).await.unwrap();
    monitor.collect(&mut sent, holder_acquire.len()).await;
    let wait = lockcore::Millis(TRY_WAIT);
    assert_eq!(lb.try_lock_wait(T1, wait).await, Ok(false));
    monitor
        .collect(&mut sent, holder_acquire.len() + waiter.len())
        .await;
    assert_eq!(la.unlock(T1).await, Ok(true));
    let all = holder_acquire.len() + waiter.len() + holder_unlock.len();
    monitor.collect(&mut sent, all).await;
    monitor.finish(&mut sent).await;
    let holder = [holder_acquire, holder_unlock].concat();
    assert_per_client(version, &a_addrs, sent, &holder, &waiter);
}

/// `--redisson 3.44.0`: the enqueue script before PR #6434, plain `EVAL`.
#[tokio::test]
async fn redisson_3_44_0_fair_waiter_gives_up() {
    proves_fair_waiter_gives_up("3.44.0").await;
}

/// `--redisson 3.45.0`: the enqueue checks the last thread's score.
#[tokio::test]
async fn redisson_3_45_0_fair_waiter_gives_up() {
    proves_fair_waiter_gives_up("3.45.0").await;
}

/// `--redisson 4.7.0`: as 3.45.0, every script by `EVALSHA` (the script
/// cache, default since 3.46.0), the latch TTL with 4.7.0's jitter.
#[tokio::test]
async fn redisson_4_7_0_fair_waiter_gives_up() {
    proves_fair_waiter_gives_up("4.7.0").await;
}
