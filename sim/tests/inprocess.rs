//! lockcore end to end through the async wrapper, against fake-redis's
//! engine in the same process.
//!
//! Tokio's clock is paused (`start_paused`): time jumps straight to the next
//! timer, so a 30 s watchdog test takes no wall time, and the engine reads
//! the same paused clock ([`TokioClock`]), so key expiry and the client's
//! timers agree exactly. No wall time, no flakiness.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use fake_redis::{Clock, Engine};
use lockcore::Value;
use lockcore::{
    Config, Era, Event, FencingToken, LockError, LockName, Millis, RedissonClient, ThreadId,
};
use sim::{InProcessServer, InProcessTransport};
use tokio::time::{Instant, sleep};

/// fake-redis's clock, read from tokio's (paused) clock.
struct TokioClock(Instant);

impl Clock for TokioClock {
    fn now_ms(&self) -> u64 {
        1_700_000_000_000 + self.0.elapsed().as_millis() as u64
    }
}

fn server() -> InProcessServer {
    InProcessServer::new(Engine::new(Arc::new(TokioClock(Instant::now()))))
}

fn config(profile: Era, watchdog_ms: u64) -> Config {
    Config::builder()
        .era(profile)
        .watchdog_timeout(watchdog_ms)
        .build()
        .unwrap()
}

fn client(
    server: &InProcessServer,
    uuid: &str,
    config: Config,
) -> RedissonClient<InProcessTransport> {
    RedissonClient::new(uuid, config, server.connect())
}

fn cmd(parts: &[&str]) -> Vec<Bytes> {
    parts.iter().map(|p| Bytes::from(p.to_string())).collect()
}

fn pttl(server: &InProcessServer, key: &str) -> i64 {
    match server.execute(cmd(&["PTTL", key])) {
        Value::Int(ttl) => ttl,
        other => panic!("PTTL replied {other:?}"),
    }
}

const T1: ThreadId = ThreadId(1);
const T2: ThreadId = ThreadId(2);

/// The key a lock leaves is Redisson's: a hash with one field
/// `<uuid>:<thread>` holding the re-entrancy count, expiring after the
/// watchdog timeout; re-entry counts up, unlock counts down, the last unlock
/// deletes the key.
#[tokio::test(start_paused = true)]
async fn key_layout_and_reentrancy() {
    let server = server();
    let a = client(&server, "uuid-a", Config::default());
    let lock = a.lock("orders").unwrap();
    lock.lock(T1).await.unwrap();
    assert_eq!(
        server.execute(cmd(&["HGETALL", "orders"])),
        Value::Map(vec![(Value::bulk("uuid-a:1"), Value::bulk("1"))])
    );
    assert_eq!(pttl(&server, "orders"), 30_000);
    lock.lock(T1).await.unwrap();
    assert_eq!(lock.hold_count(T1).await, Ok(2));
    assert_eq!(lock.is_held_by_thread(T1).await, Ok(true));
    assert_eq!(lock.is_held_by_thread(T2).await, Ok(false));
    assert_eq!(lock.unlock(T1).await, Ok(false));
    assert_eq!(lock.is_locked(T1).await, Ok(true));
    assert_eq!(lock.unlock(T1).await, Ok(true));
    assert_eq!(lock.is_locked(T1).await, Ok(false));
    assert_eq!(lock.remain_ttl(T1).await, Ok(-2));
}

/// Doc 004's waiting: a second client blocked in tryLock(wait) wakes on the
/// unlock message and gets the lock right after the holder unlocks at
/// t = 1 s, not when the holder's 30 s TTL would have run out.
#[tokio::test(start_paused = true)]
async fn waiter_wakes_on_unlock() {
    let server = server();
    let a = client(&server, "uuid-a", Config::default());
    let b = client(&server, "uuid-b", Config::default());
    let la = a.lock("l").unwrap();
    let lb = b.lock("l").unwrap();
    la.lock(T1).await.unwrap();
    let start = Instant::now();
    let waiter = tokio::spawn(async move {
        let got = lb.try_lock_wait(T1, Millis(10_000)).await;
        (got, start.elapsed())
    });
    sleep(Duration::from_millis(1_000)).await;
    assert_eq!(la.unlock(T1).await, Ok(true));
    let (got, elapsed) = waiter.await.unwrap();
    assert_eq!(got, Ok(true));
    assert!(
        elapsed < Duration::from_millis(1_100),
        "woke at {elapsed:?}"
    );
    assert_eq!(
        server.execute(cmd(&["HGETALL", "l"])),
        Value::Map(vec![(Value::bulk("uuid-b:1"), Value::bulk("1"))])
    );
}

/// A waiter whose wait is shorter than the holder's TTL gives up when the
/// wait is spent.
#[tokio::test(start_paused = true)]
async fn wait_runs_out() {
    let server = server();
    let a = client(&server, "uuid-a", Config::default());
    let b = client(&server, "uuid-b", Config::default());
    a.lock("l").unwrap().lock(T1).await.unwrap();
    let start = Instant::now();
    let got = b.lock("l").unwrap().try_lock_wait(T1, Millis(2_000)).await;
    assert_eq!(got, Ok(false));
    assert_eq!(start.elapsed(), Duration::from_millis(2_000));
    assert_eq!(b.lock("l").unwrap().try_lock(T1).await, Ok(false));
}

/// Every profile's watchdog keeps the lock alive well past its timeout
/// (300 ms timeout, held 1 s), and the key's TTL never runs out; another
/// client cannot take it. Without renewal the key would be gone after
/// 300 ms.
#[tokio::test(start_paused = true)]
async fn watchdog_keeps_the_lock_alive() {
    for profile in Era::ALL {
        let server = server();
        let a = client(&server, "uuid-a", config(profile, 300));
        let b = client(&server, "uuid-b", config(profile, 300));
        let mut events = a.events();
        let la = a.lock("l").unwrap();
        la.lock(T1).await.unwrap();
        for _ in 0..10 {
            sleep(Duration::from_millis(100)).await;
            let ttl = pttl(&server, "l");
            assert!(ttl > 0 && ttl <= 300, "{profile}: ttl {ttl}");
        }
        assert_eq!(b.lock("l").unwrap().try_lock(T1).await, Ok(false));
        assert_eq!(la.unlock(T1).await, Ok(true));
        let mut renewed = 0;
        while let Ok(event) = events.try_recv() {
            if matches!(event, Event::Renewed { .. }) {
                renewed += 1;
            }
        }
        assert!(
            (9..=11).contains(&renewed),
            "{profile}: renewed {renewed} times in 1 s"
        );
    }
}

/// A lock with an explicit lease is not renewed: it expires and another
/// client takes it.
#[tokio::test(start_paused = true)]
async fn lease_limited_lock_expires() {
    let server = server();
    let a = client(&server, "uuid-a", Config::default());
    let b = client(&server, "uuid-b", Config::default());
    a.lock("l")
        .unwrap()
        .lock_with_lease(T1, Millis(500))
        .await
        .unwrap();
    assert_eq!(b.lock("l").unwrap().try_lock(T1).await, Ok(false));
    sleep(Duration::from_millis(501)).await;
    assert_eq!(b.lock("l").unwrap().try_lock(T1).await, Ok(true));
    // The first holder's unlock now fails with Redisson's text.
    let error = a.lock("l").unwrap().unlock(T1).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "attempt to unlock lock, not locked by current thread by node id: uuid-a thread-id: 1"
    );
}

/// When the key disappears under the holder (deleted by someone else) the
/// next renewal answers 0 and renewal stops, reported as an event.
#[tokio::test(start_paused = true)]
async fn renewal_stops_when_the_key_is_gone() {
    let server = server();
    let a = client(&server, "uuid-a", config(Era::Redisson, 300));
    let mut events = a.events();
    a.lock("l").unwrap().lock(T1).await.unwrap();
    assert_eq!(server.execute(cmd(&["DEL", "l"])), Value::Int(1));
    sleep(Duration::from_millis(150)).await;
    assert_eq!(
        events.recv().await.unwrap(),
        Event::RenewalStopped {
            lock: LockName::new("l").unwrap(),
            reason: "not-held".into()
        }
    );
}

/// forceUnlock deletes another client's lock and wakes its waiters.
#[tokio::test(start_paused = true)]
async fn force_unlock_frees_the_lock() {
    let server = server();
    let a = client(&server, "uuid-a", Config::default());
    let b = client(&server, "uuid-b", Config::default());
    a.lock("l").unwrap().lock(T1).await.unwrap();
    let lb = b.lock("l").unwrap();
    let waiter = tokio::spawn({
        let lb = lb.clone();
        async move { lb.lock(T2).await }
    });
    sleep(Duration::from_millis(10)).await;
    assert_eq!(b.lock("l").unwrap().force_unlock(T1).await, Ok(true));
    waiter.await.unwrap().unwrap();
    assert_eq!(lb.is_held_by_thread(T2).await, Ok(true));
}

/// `fenced`: every fresh acquisition gets a larger token, across clients;
/// re-entry keeps it.
#[tokio::test(start_paused = true)]
async fn fenced_tokens_grow() {
    let server = server();
    let a = client(&server, "uuid-a", config(Era::Fenced, 30_000));
    let b = client(&server, "uuid-b", config(Era::Fenced, 30_000));
    let la = a.lock("l").unwrap();
    let lb = b.lock("l").unwrap();
    la.lock(T1).await.unwrap();
    let first = la.token(T1).unwrap();
    la.lock(T1).await.unwrap();
    assert_eq!(la.token(T1), Some(first));
    la.unlock(T1).await.unwrap();
    la.unlock(T1).await.unwrap();
    assert_eq!(la.token(T1), None);
    lb.lock(T1).await.unwrap();
    let second = lb.token(T1).unwrap();
    assert!(second > first, "{second:?} after {first:?}");
    assert!(second >= FencingToken(2));
}

/// Bad input is refused with a typed error and nothing panics.
#[tokio::test(start_paused = true)]
async fn bad_input() {
    let server = server();
    let a = client(&server, "uuid-a", Config::default());
    assert_eq!(a.lock("").unwrap_err(), LockError::EmptyLockName);
    let l = a.lock("l").unwrap();
    assert_eq!(
        l.lock_with_lease(T1, Millis(0)).await,
        Err(LockError::InvalidLease(0))
    );
    assert_eq!(
        l.try_lock_wait(T1, Millis(0)).await,
        Err(LockError::InvalidWait(0))
    );
    assert_eq!(
        l.try_lock_wait_lease(T1, Millis(10), Millis(0)).await,
        Err(LockError::InvalidLease(0))
    );
    assert!(matches!(
        l.unlock(T1).await,
        Err(LockError::NotLockedByCurrentThread { .. })
    ));
    assert_eq!(server.execute(cmd(&["DBSIZE"])), Value::Int(0));
    // A thread is sequential: a second call while one waits is refused.
    let b = client(&server, "uuid-b", Config::default());
    b.lock("l").unwrap().lock(T1).await.unwrap();
    let waiting = tokio::spawn({
        let l = l.clone();
        async move { l.lock(T2).await }
    });
    sleep(Duration::from_millis(10)).await;
    assert_eq!(l.try_lock(T2).await, Err(LockError::ThreadBusy(T2)));
    b.lock("l").unwrap().unlock(T1).await.unwrap();
    waiting.await.unwrap().unwrap();
}

/// `fenced`: a holder whose lease runs out is told so (LeaseLost) and its
/// token is withdrawn, while the key lives out its last ms in the server
/// (PTTL 0, as Redis keeps a key through its deadline) and is gone the
/// ms after; `redisson` would say nothing.
#[tokio::test(start_paused = true)]
async fn fenced_lease_lost() {
    let server = server();
    let a = client(&server, "uuid-a", config(Era::Fenced, 30_000));
    let mut events = a.events();
    let la = a.lock("l").unwrap();
    la.lock_with_lease(T1, Millis(500)).await.unwrap();
    assert!(la.token(T1).is_some());
    let event = events.recv().await.unwrap();
    assert_eq!(
        event,
        Event::LeaseLost {
            lock: LockName::new("l").unwrap(),
            threads: vec![T1]
        }
    );
    assert_eq!(la.token(T1), None);
    assert_eq!(pttl(&server, "l"), 0);
    tokio::time::advance(Duration::from_millis(1)).await;
    assert_eq!(pttl(&server, "l"), -2);
}

/// Dropping the client shuts it down: the watchdog stops (the key expires
/// after the watchdog timeout, as after a crash) and surviving handles
/// fail with Shutdown instead of half working.
#[tokio::test(start_paused = true)]
async fn dropped_client_shuts_down() {
    let server = server();
    let a = client(&server, "uuid-a", config(Era::Redisson, 300));
    let la = a.lock("l").unwrap();
    la.lock(T1).await.unwrap();
    drop(a);
    sleep(Duration::from_millis(301)).await;
    assert_eq!(pttl(&server, "l"), -2);
    assert_eq!(la.is_locked(T1).await, Err(LockError::Shutdown));
}

/// A client whose timers run late (`set_lag`, a process starved of CPU)
/// renews too late: the 3 s key expires under it. Without the lag the
/// watchdog keeps it alive, as the other tests show.
#[tokio::test(start_paused = true)]
async fn timers_that_run_late_let_the_key_expire() {
    let server = server();
    let a = client(&server, "uuid-a", config(Era::Redisson, 3_000));
    a.set_lag(Box::new(|what| match what {
        lockcore::Lagged::Timer => Duration::from_secs(5),
        lockcore::Lagged::Callback => Duration::ZERO,
    }));
    let lock = a.lock("starved").unwrap();
    lock.lock(ThreadId(1)).await.unwrap();
    sleep(Duration::from_millis(2_500)).await;
    assert!(
        pttl(&server, "starved") > 0,
        "the key is gone before its TTL"
    );
    // The renewal due at 1 s runs at 6 s: the key expired at 3 s.
    sleep(Duration::from_millis(1_000)).await;
    assert_eq!(pttl(&server, "starved"), -2);

    let b = client(&server, "uuid-b", config(Era::Redisson, 3_000));
    let kept = b.lock("kept").unwrap();
    kept.lock(ThreadId(1)).await.unwrap();
    sleep(Duration::from_millis(6_000)).await;
    assert!(pttl(&server, "kept") > 0, "the watchdog did not keep it");
}

/// A stop-the-world pause (frozen from 5 s to 20 s) during which the
/// thread's work ends (9.9 s) before the watchdog's renewal falls due
/// (10 s): on thaw the thread, waiting its turn
/// among the held-back inputs (`resume_turn`), unlocks first, so the
/// renewal finds the key gone and never renews it, as on the fast engine
/// (stw-pause). Handed the timer first, as `thaw` once did, the client
/// renewed the key and then unlocked.
#[tokio::test(start_paused = true)]
async fn a_thaw_runs_overdue_work_in_the_order_it_fell_due() {
    let server = server();
    let a = client(&server, "uuid-a", Config::default());
    let mut events = a.events();
    let la = a.lock("l").unwrap();
    let start = Instant::now();
    la.lock(T1).await.unwrap();
    sleep(Duration::from_secs(5)).await;
    a.freeze();
    let thread = {
        let la = la.clone();
        tokio::spawn(async move {
            tokio::time::sleep_until(start + Duration::from_millis(9_900)).await;
            let turn = la.resume_turn().expect("the client is frozen");
            turn.await.expect("thaw gives the turn");
            la.unlock(T1).await
        })
    };
    tokio::time::sleep_until(start + Duration::from_secs(20)).await;
    assert!(!thread.is_finished(), "the thread ran during the freeze");
    a.thaw().await;
    assert_eq!(thread.await.unwrap(), Ok(true));
    assert_eq!(pttl(&server, "l"), -2);
    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        seen.push(event);
    }
    assert!(
        !seen.iter().any(|e| matches!(e, Event::Renewed { .. })),
        "renewed before the thread's unlock: {seen:?}"
    );
}
