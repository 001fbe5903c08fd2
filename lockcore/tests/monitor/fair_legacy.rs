//! Issue #47's proof for `RFairLock` before 3.32.0: under `--redisson
//! 3.10.0`, `3.13.0`, `3.20.0` and `3.30.0`, a holder's `lock()` and
//! `unlock()` and a waiter's `tryLock(300 ms)` that gives up send exactly
//! what `RedissonFairLock` sends at those tags, on `MONITOR`: each era's
//! scripts (pinned by the SHA1 of their text at the tag, as in `fair.rs`),
//! 3.10.0's `now + 5000` deadline argument and head-only
//! `acquireFailed`, the fixed 5 000 ms thread wait up to 3.13.2 whatever
//! `tryLock` waits, the `tryLock` wait from 3.13.3, and 3.24.0's latch.

use super::fair::{B_CHANNEL, CLOCK, QUEUE, TIMEOUTS, run_waiter_gives_up};
use super::*;

/// redisson-3.10.0 `tryLockInnerAsync` (`EVAL_LONG`): the ttl from the
/// queue's head, `ARGV[3]` = now + `threadWaitTime`.
const ACQUIRE_3_10: Script = Script {
    sha1: "c10436d1a94338a33b5ca6ac6f483f6b92193d48",
    source: "RedissonFairLock.tryLockInnerAsync EVAL_LONG (3.10.0)",
};

/// redisson-3.13.0, 3.20.0 and 3.30.0 `tryLockInnerAsync` (`EVAL_LONG`),
/// after PR #2100 and before #4153's purge fix.
const ACQUIRE_3_11: Script = Script {
    sha1: "762bfafa6be221431a0b668685dd15c926483619",
    source: "RedissonFairLock.tryLockInnerAsync EVAL_LONG (3.13.0, 3.20.0, 3.30.0)",
};

/// redisson-3.10.0 `acquireFailedAsync`: the wait off every deadline only
/// when the caller heads the queue.
const ACQUIRE_FAILED_3_10: Script = Script {
    sha1: "33148f0ca0bbc1fae2674efa67209dcb1f6c6431",
    source: "RedissonFairLock.acquireFailedAsync (3.10.0)",
};

/// `acquireFailedAsync` from PR #2100 on (3.13.0, 3.20.0, 3.30.0).
const ACQUIRE_FAILED: Script = Script {
    sha1: "d1ddef65ad80886b5d36e023c99930044ddd653a",
    source: "RedissonFairLock.acquireFailedAsync",
};

/// `unlockInnerAsync`, redisson-3.10.0 to 3.21.3: `publish` in the text.
const UNLOCK_3_10: Script = Script {
    sha1: "35d32367b21753c39b55dc64d1906fee627cc9a8",
    source: "RedissonFairLock.unlockInnerAsync (3.10.0, 3.13.0, 3.20.0)",
};

/// `unlockInnerAsync(threadId, requestId, timeout)`, redisson-3.30.0: the
/// latch, the purge before #4153's fix.
const UNLOCK_3_30: Script = Script {
    sha1: "ca303f8587d0942f8a0021f62338626ca4dd0118",
    source: "RedissonFairLock.unlockInnerAsync (3.30.0)",
};

/// The thread wait `version`'s scripts add for a call waiting `wait`.
fn thread_wait(version: &str, wait: &'static str) -> &'static str {
    match version {
        "3.10.0" | "3.13.0" => "5000",
        _ => wait,
    }
}

fn acquire(
    wire: &mut Wire,
    version: &str,
    field: &'static str,
    wait: &'static str,
) -> Vec<Vec<Arg>> {
    let mut rest = exact(&["3", LOCK, QUEUE, TIMEOUTS, DEFAULT_LEASE, field]);
    if version == "3.10.0" {
        // `currentTime + threadWaitTime`, then `currentTime`.
        rest.extend([Arg::Between(5_000, 605_000), CLOCK]);
        return wire.script(&ACQUIRE_3_10, rest);
    }
    rest.push(Arg::Word(thread_wait(version, wait)));
    rest.push(CLOCK);
    wire.script(&ACQUIRE_3_11, rest)
}

fn unlock(wire: &mut Wire, version: &str) -> Vec<Vec<Arg>> {
    let mut rest = exact(&["4", LOCK, QUEUE, TIMEOUTS, CHANNEL]);
    if version != "3.30.0" {
        rest.extend(exact(&[UNLOCK_MESSAGE, DEFAULT_LEASE, FIELD_A]));
        rest.push(CLOCK);
        return wire.script(&UNLOCK_3_10, rest);
    }
    rest[0] = Arg::Word("5");
    rest.push(Arg::Latch);
    rest.extend(exact(&[UNLOCK_MESSAGE, DEFAULT_LEASE, FIELD_A]));
    rest.extend([CLOCK, Arg::Word(PUBLISH), Arg::Word("13500")]);
    let mut commands = wire.script(&UNLOCK_3_30, rest);
    commands.push(del_latch());
    commands
}

/// Under `version`: A takes the fair lock; B's `tryLock(300 ms)` queues
/// (acquire, `SUBSCRIBE` of its own channel, acquire again), its wait runs
/// out, it sends `acquireFailed` and then `UNSUBSCRIBE`s; A unlocks.
async fn proves_fair_waiter_gives_up(version: &str) {
    let mut wire = Wire::of(version);
    let holder_acquire = acquire(&mut wire, version, FIELD_A, "300000");
    let mut waiter = acquire(&mut wire, version, FIELD_B, "300");
    waiter.push(vec![Arg::Word("SUBSCRIBE"), Arg::Word(B_CHANNEL)]);
    waiter.extend(acquire(&mut wire, version, FIELD_B, "300"));
    let failed = if version == "3.10.0" {
        &ACQUIRE_FAILED_3_10
    } else {
        &ACQUIRE_FAILED
    };
    let wait = thread_wait(version, "300");
    waiter.extend(wire.script(failed, exact(&["2", QUEUE, TIMEOUTS, FIELD_B, wait])));
    waiter.push(vec![Arg::Word("UNSUBSCRIBE"), Arg::Word(B_CHANNEL)]);
    let holder_unlock = unlock(&mut wire, version);
    run_waiter_gives_up(version, holder_acquire, waiter, holder_unlock).await;
}

/// `--redisson 3.10.0`: the enqueue from the head (before #2099's fix).
#[tokio::test]
async fn redisson_3_10_0_fair_waiter_gives_up() {
    proves_fair_waiter_gives_up("3.10.0").await;
}

/// `--redisson 3.13.0`: PR #2100's scripts, the fixed 5 000 ms wait
/// (before #2883's fix).
#[tokio::test]
async fn redisson_3_13_0_fair_waiter_gives_up() {
    proves_fair_waiter_gives_up("3.13.0").await;
}

/// `--redisson 3.20.0`: `tryLock`'s wait in the deadlines, the 300 000 ms
/// default.
#[tokio::test]
async fn redisson_3_20_0_fair_waiter_gives_up() {
    proves_fair_waiter_gives_up("3.20.0").await;
}

/// `--redisson 3.30.0`: the unlock's latch and publish command, the purge
/// before #4153's fix.
#[tokio::test]
async fn redisson_3_30_0_fair_waiter_gives_up() {
    proves_fair_waiter_gives_up("3.30.0").await;
}
