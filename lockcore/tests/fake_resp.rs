//! lockcore's RESP transport against fake-redis's RESP server over loopback
//! TCP: the same client code that talks to a real Redis, talking to the
//! fake one, so the two servers can be swapped under a client.

use std::sync::Arc;
use std::time::Duration;

use fake_redis::{Engine, SharedEngine, SystemClock, spawn_local_server};
use lockcore::{Config, Millis, RedissonClient, RespTransport, ThreadId};
use tokio::time::sleep;

const T1: ThreadId = ThreadId(1);

async fn client(url: &str, uuid: &str, config: Config) -> RedissonClient<RespTransport> {
    RedissonClient::new(uuid, config, RespTransport::connect(url).await.unwrap())
}

/// Lock, contend, wake by pub/sub, renew and unlock over RESP against
/// fake-redis: the field layout is Redisson's, the waiter is woken by the
/// unlock message (long before the 30 s TTL), and the watchdog keeps a
/// 300 ms lock alive for 600 ms.
#[tokio::test]
async fn lock_cycle_over_resp() {
    let shared = SharedEngine::new(Engine::new(Arc::new(SystemClock)));
    let (addr, server) = spawn_local_server(shared.clone()).await.unwrap();
    let url = format!("redis://{addr}");
    let a = client(&url, "uuid-a", Config::default()).await;
    let b = client(&url, "uuid-b", Config::default()).await;
    let la = a.lock("k").unwrap();
    let lb = b.lock("k").unwrap();
    la.lock(T1).await.unwrap();
    assert_eq!(la.hold_count(T1).await, Ok(1));
    let waiter = tokio::spawn({
        let lb = lb.clone();
        async move { lb.try_lock_wait(T1, Millis(20_000)).await }
    });
    sleep(Duration::from_millis(100)).await;
    assert_eq!(la.unlock(T1).await, Ok(true));
    assert_eq!(waiter.await.unwrap(), Ok(true));
    assert_eq!(lb.unlock(T1).await, Ok(true));

    let short = Config::builder().watchdog_timeout(300).build().unwrap();
    let c = client(&url, "uuid-c", short).await;
    let lc = c.lock("w").unwrap();
    lc.lock(T1).await.unwrap();
    sleep(Duration::from_millis(600)).await;
    let ttl = lc.remain_ttl(T1).await.unwrap();
    assert!(ttl > 0 && ttl <= 300, "ttl {ttl}");
    assert_eq!(lc.unlock(T1).await, Ok(true));
    server.abort();
}

/// Redis drops every connection (it stopped and came back with its keys):
/// both clients reconnect on their own, the waiter's client subscribes
/// again (Redisson's `ConnectionWatchdog` re-attaches pub/sub channels),
/// so the holder's unlock still wakes the waiter by message, long before
/// the 30 s TTL it would otherwise sleep for.
#[tokio::test]
async fn clients_reconnect_and_resubscribe_after_connections_drop() {
    let shared = SharedEngine::new(Engine::new(Arc::new(SystemClock)));
    let (addr, server) = spawn_local_server(shared.clone()).await.unwrap();
    let url = format!("redis://{addr}");
    let a = client(&url, "uuid-a", Config::default()).await;
    let b = client(&url, "uuid-b", Config::default()).await;
    let la = a.lock("r").unwrap();
    let lb = b.lock("r").unwrap();
    la.lock(T1).await.unwrap();
    let waiter = tokio::spawn(async move { lb.lock(T1).await });
    sleep(Duration::from_millis(100)).await;

    shared.drop_connections();
    // Reconnection waits 75 ms first; give it time to resubscribe.
    sleep(Duration::from_millis(500)).await;
    assert_eq!(la.unlock(T1).await, Ok(true));
    let woken = tokio::time::timeout(Duration::from_secs(5), waiter).await;
    assert!(
        matches!(woken, Ok(Ok(Ok(())))),
        "the waiter was not woken after the reconnection: {woken:?}"
    );
    server.abort();
}
