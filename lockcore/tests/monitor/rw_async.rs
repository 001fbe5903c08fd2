//! Issue #47's proof for the read and write locks' async acquires: under
//! `--redisson 3.8.2`, `3.23.4` and `4.7.0` (one release per renewal era
//! the read-write lock is modelled in), a waiter's `lockAsync()` and
//! `tryLockAsync(wait)` on the read and on the write lock send, on
//! `MONITOR`, exactly what its `lock()` and `tryLock(wait)` send: the
//! attempt, `SUBSCRIBE` of the read-write lock's channel, the attempt
//! again, the attempt once the writer's unlock woke it, `UNSUBSCRIBE`,
//! and its unlock. RedissonReadLock and RedissonWriteLock override no
//! acquire method at any tag: their async forms are RedissonLock's,
//! over their own `tryLockInnerAsync` and `getChannelName`.

use lockcore::{Call, LockKind, LockName, Millis};

use super::*;

/// `prefixName("redisson_rwlock", name)`.
const RW_CHANNEL: &str = "redisson_rwlock:{orders}";
/// The waiter B's read acquire: `KEYS[2]`, its timeout-key prefix.
const TIMEOUTS_B: &str = "{orders}:0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a:1:rwlock_timeout";
/// `getWriteLockName(threadId)` of the waiter B.
const WRITE_FIELD_B: &str = "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a:1:write";
/// How long each `tryLock` form waits: far longer than the run.
const TRY_WAIT: Millis = Millis(20_000);

/// Whether `seen` is a script's run (`EVAL`, or `EVALSHA` from 3.46.0).
fn is_script(seen: &Seen) -> bool {
    matches!(
        seen.words.first().map(Vec::as_slice),
        Some(b"EVAL" | b"EVALSHA")
    )
}

/// A command with what differs from run to run by design made plain:
/// the unlock latch's random id and 4.7.0's jittered latch TTL.
fn plain(words: &[Vec<u8>]) -> String {
    let word = |w: &Vec<u8>| {
        let text = String::from_utf8_lossy(w);
        let jitter = text
            .parse::<u64>()
            .is_ok_and(|n| (16_000..=20_000).contains(&n));
        if text.starts_with(LATCH_PREFIX) {
            "<latch>".to_owned()
        } else if jitter {
            "<jittered ttl>".to_owned()
        } else {
            show(w)
        }
    };
    words.iter().map(word).collect::<Vec<_>>().join(" ")
}

/// Under `version`: A holds the write lock (`lock()`); B's `call` on
/// `kind`'s object attempts, subscribes and attempts again; then A
/// unlocks, B acquires and unlocks. The commands of A, and of B, as sent.
async fn run(version: &str, kind: LockKind, call: Call) -> (Vec<String>, Vec<String>) {
    let redis = RealRedis::start_for_test();
    let mut monitor = Monitor::start(&redis).await;
    let a = client(&redis, UUID_A, config(version, 30_000)).await;
    let a_addrs = monitor.clients().await;
    let b = client(&redis, UUID_B, config(version, 30_000)).await;
    let object = |k| LockName::of_kind(LOCK, k).unwrap();
    let (la, lb) = (
        a.lock_object(object(LockKind::Write)),
        b.lock_object(object(kind)),
    );
    la.lock(T1).await.unwrap();
    let waiting = tokio::spawn(async move { (lb.call(T1, call).await, lb) });
    let mut sent = Vec::new();
    // B waits once its attempt after the SUBSCRIBE reached Redis.
    let mut subscribed = false;
    let waits = |seen: &Seen| {
        let attempt = subscribed && is_script(seen);
        subscribed |= seen.words.first().is_some_and(|w| w == b"SUBSCRIBE");
        attempt
    };
    until_b_sends(&mut monitor, &a_addrs, &mut sent, waits).await;
    assert_eq!(la.unlock(T1).await, Ok(true));
    // B's UNSUBSCRIBE goes on its pub/sub connection: wait for it before
    // B's unlock, so that the order on MONITOR is the client's.
    let unsubscribed = |seen: &Seen| seen.words.first().is_some_and(|w| w == b"UNSUBSCRIBE");
    until_b_sends(&mut monitor, &a_addrs, &mut sent, unsubscribed).await;
    let (acquired, lb) = waiting.await.unwrap();
    assert!(matches!(
        acquired,
        Ok(lockcore::CallOutcome::Acquired { .. })
    ));
    assert_eq!(lb.unlock(T1).await, Ok(true));
    monitor.finish(&mut sent).await;
    let (from_a, from_b): (Vec<Seen>, Vec<Seen>) =
        sent.into_iter().partition(|s| a_addrs.contains(&s.source));
    let plain_all = |s: Vec<Seen>| s.iter().map(|s| plain(&s.words)).collect();
    (plain_all(from_a), plain_all(from_b))
}

/// Adds the lock clients' commands to `sent` until B (a client not at
/// `a_addrs`) sent one that `done` accepts; fails after `WAIT`.
async fn until_b_sends(
    monitor: &mut Monitor,
    a_addrs: &[String],
    sent: &mut Vec<Seen>,
    mut done: impl FnMut(&Seen) -> bool,
) {
    let deadline = Instant::now() + WAIT;
    loop {
        let seen = monitor.next(deadline).await;
        let seen = seen.unwrap_or_else(|| panic!("B stopped short: {sent:?}"));
        if !monitor.is_client(&seen) {
            continue;
        }
        let last = !a_addrs.contains(&seen.source) && done(&seen);
        sent.push(seen);
        if last {
            return;
        }
    }
}

/// The acquire B sends first, by its keys and arguments after the
/// script: the read or the write lock's, not `RLock`'s.
fn acquire_args(kind: LockKind) -> Vec<&'static str> {
    match kind {
        LockKind::Read => vec!["2", LOCK, TIMEOUTS_B, DEFAULT_LEASE, FIELD_B, WRITE_FIELD_B],
        _ => vec!["1", LOCK, DEFAULT_LEASE, WRITE_FIELD_B],
    }
}

/// Under `version`, for the read and the write lock, the async form of
/// `lock()` and of `tryLock(wait)` sends what the blocking form sends,
/// the waiter's and the holder's commands alike.
async fn proves_async_sends_the_blocking_commands(version: &str) {
    let forms = [
        (Call::Lock { lease: None }, Call::LockAsync { lease: None }),
        (
            Call::TryLock {
                wait: Some(TRY_WAIT),
                lease: None,
            },
            Call::TryLockAsync {
                wait: Some(TRY_WAIT),
                lease: None,
            },
        ),
    ];
    for kind in [LockKind::Read, LockKind::Write] {
        for (blocking, listening) in &forms {
            let sync = run(version, kind, blocking.clone()).await;
            let in_async = run(version, kind, listening.clone()).await;
            let label = format!("--redisson {version}, {kind} lock, {listening:?}");
            assert_eq!(in_async.1, sync.1, "{label}: the waiter's commands");
            assert_eq!(in_async.0, sync.0, "{label}: the holder's commands");
            let waiter = &in_async.1;
            assert!(
                waiter.contains(&format!("\"SUBSCRIBE\" {RW_CHANNEL:?}")),
                "{label}: {waiter:#?}"
            );
            let args: Vec<String> = acquire_args(kind)
                .iter()
                .map(|w| show(w.as_bytes()))
                .collect();
            let first = &waiter[0];
            assert!(first.ends_with(&args.join(" ")), "{label}: {first}");
        }
    }
}

/// `--redisson 3.8.2`: per-thread renewal timers; the write unlock
/// publishes `READ_UNLOCK_MESSAGE` (#1542), which runs every listener.
#[tokio::test]
async fn redisson_3_8_2_read_write_async_acquire() {
    proves_async_sends_the_blocking_commands("3.8.2").await;
}

/// `--redisson 3.23.4`: per-lock renewal timers, no unlock latch.
#[tokio::test]
async fn redisson_3_23_4_read_write_async_acquire() {
    proves_async_sends_the_blocking_commands("3.23.4").await;
}

/// `--redisson 4.7.0`: the batched chain, `ReadLockTask`, the latched
/// unlocks and `EVALSHA`.
#[tokio::test]
async fn redisson_4_7_0_read_write_async_acquire() {
    proves_async_sends_the_blocking_commands("4.7.0").await;
}
