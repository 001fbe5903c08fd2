//! lockcore against a real `redis-server` over RESP: the scripts run in real
//! Lua, the key layout is inspected with plain commands, and unlock messages
//! are seen on a separate subscriber. Needs `redis-server` on PATH; fails
//! with a clear message if it is missing.

use std::time::Duration;

use bytes::Bytes;
use fake_redis::testing::{RealCluster, RealRedis};
use lockcore::Value;
use lockcore::{
    ClusterTransport, Config, Era, Incoming, Millis, RedissonClient, RespTransport, Shard,
    ThreadId, Transport,
};
use tokio::time::{Instant, sleep, timeout};

const T1: ThreadId = ThreadId(1);

fn cmd(parts: &[&str]) -> Vec<Bytes> {
    parts.iter().map(|p| Bytes::from(p.to_string())).collect()
}

async fn transport(redis: &RealRedis) -> RespTransport {
    RespTransport::connect(&redis.url()).await.unwrap()
}

async fn client(redis: &RealRedis, uuid: &str, config: Config) -> RedissonClient<RespTransport> {
    RedissonClient::new(uuid, config, transport(redis).await)
}

fn watchdog(ms: u64) -> Config {
    Config::builder().watchdog_timeout(ms).build().unwrap()
}

/// The key a lockcore client leaves in a real Redis is exactly a Java
/// Redisson client's: a hash with one field `<uuid>:<thread>` = 1 and a
/// TTL of the watchdog timeout; unlock deletes it.
#[tokio::test]
async fn key_layout_matches_redisson() {
    let redis = RealRedis::start_for_test();
    let raw = transport(&redis).await;
    let a = client(&redis, "6f1c7a4e-uuid", Config::default()).await;
    let lock = a.lock("orders").unwrap();
    lock.lock(T1).await.unwrap();
    assert_eq!(
        raw.send(Shard(0), &cmd(&["HGETALL", "orders"])).await,
        Ok(Value::Array(vec![
            Value::bulk("6f1c7a4e-uuid:1"),
            Value::bulk("1")
        ]))
    );
    let Ok(Value::Int(ttl)) = raw.send(Shard(0), &cmd(&["PTTL", "orders"])).await else {
        panic!("PTTL failed")
    };
    assert!(ttl > 25_000 && ttl <= 30_000, "ttl {ttl}");
    assert_eq!(lock.hold_count(T1).await, Ok(1));
    assert_eq!(lock.unlock(T1).await, Ok(true));
    assert_eq!(
        raw.send(Shard(0), &cmd(&["EXISTS", "orders"])).await,
        Ok(Value::Int(0))
    );
}

/// Unlock publishes `0` on `redisson_lock__channel:{name}`, as Redisson's
/// waiters expect; seen here by an independent subscriber.
#[tokio::test]
async fn unlock_publishes_zero() {
    let redis = RealRedis::start_for_test();
    let listener = transport(&redis).await;
    listener
        .subscribe(Shard(0), "redisson_lock__channel:{pub}".into())
        .await
        .unwrap();
    let a = client(&redis, "uuid-a", Config::default()).await;
    let lock = a.lock("pub").unwrap();
    lock.lock(T1).await.unwrap();
    lock.unlock(T1).await.unwrap();
    let message = timeout(Duration::from_secs(5), listener.next_incoming())
        .await
        .expect("no unlock message within 5 s");
    assert_eq!(
        message,
        Some(Incoming::Message((
            "redisson_lock__channel:{pub}".to_owned(),
            Bytes::from_static(b"0")
        )))
    );
}

/// Two clients contend: the second waits in tryLock(wait) and gets the
/// lock once the first unlocks (woken by the message, long before the
/// first holder's 30 s TTL).
#[tokio::test]
async fn two_clients_contend() {
    let redis = RealRedis::start_for_test();
    let a = client(&redis, "uuid-a", Config::default()).await;
    let b = client(&redis, "uuid-b", Config::default()).await;
    let la = a.lock("c").unwrap();
    let lb = b.lock("c").unwrap();
    la.lock(T1).await.unwrap();
    assert_eq!(lb.try_lock(T1).await, Ok(false));
    let waiter = tokio::spawn({
        let lb = lb.clone();
        async move { lb.try_lock_wait(T1, Millis(20_000)).await }
    });
    sleep(Duration::from_millis(200)).await;
    assert_eq!(la.unlock(T1).await, Ok(true));
    let started = Instant::now();
    assert_eq!(waiter.await.unwrap(), Ok(true));
    assert!(started.elapsed() < Duration::from_secs(15));
    assert_eq!(lb.is_held_by_thread(T1).await, Ok(true));
    assert_eq!(la.is_held_by_thread(T1).await, Ok(false));
    let error = la.unlock(T1).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "attempt to unlock lock, not locked by current thread by node id: uuid-a thread-id: 1"
    );
}

/// The watchdog keeps a lock alive past its timeout: 1 000 ms timeout
/// (renewed every 333 ms), held 2.5 s; the key still exists with a positive
/// TTL and another client cannot take it. Without renewal it would expire
/// after 1 s. The timeout is short to keep the test fast, yet leaves about
/// 650 ms of slack for a renewal on a loaded CI machine.
#[tokio::test]
async fn watchdog_keeps_the_lock_past_its_timeout() {
    let redis = RealRedis::start_for_test();
    let raw = transport(&redis).await;
    let a = client(&redis, "uuid-a", watchdog(1_000)).await;
    let b = client(&redis, "uuid-b", watchdog(1_000)).await;
    let lock = a.lock("w").unwrap();
    lock.lock(T1).await.unwrap();
    sleep(Duration::from_millis(2_500)).await;
    let Ok(Value::Int(ttl)) = raw.send(Shard(0), &cmd(&["PTTL", "w"])).await else {
        panic!("PTTL failed")
    };
    assert!(ttl > 0 && ttl <= 1_000, "ttl {ttl}");
    assert_eq!(b.lock("w").unwrap().try_lock(T1).await, Ok(false));
    assert_eq!(lock.unlock(T1).await, Ok(true));
}

/// A lock with a lease is not renewed and expires in the real Redis.
#[tokio::test]
async fn lease_limited_lock_expires() {
    let redis = RealRedis::start_for_test();
    let a = client(&redis, "uuid-a", Config::default()).await;
    let b = client(&redis, "uuid-b", Config::default()).await;
    a.lock("e")
        .unwrap()
        .lock_with_lease(T1, Millis(300))
        .await
        .unwrap();
    sleep(Duration::from_millis(450)).await;
    assert_eq!(b.lock("e").unwrap().is_locked(T1).await, Ok(false));
    assert_eq!(b.lock("e").unwrap().try_lock(T1).await, Ok(true));
}

/// `fenced` against real Lua: the fencing script's tokens grow across
/// clients.
#[tokio::test]
async fn fenced_tokens_from_real_lua() {
    let redis = RealRedis::start_for_test();
    let fenced = Config::builder().era(Era::Fenced).build().unwrap();
    let a = client(&redis, "uuid-a", fenced.clone()).await;
    let b = client(&redis, "uuid-b", fenced).await;
    let la = a.lock("f").unwrap();
    la.lock(T1).await.unwrap();
    let first = la.token(T1).unwrap();
    la.unlock(T1).await.unwrap();
    let lb = b.lock("f").unwrap();
    lb.lock(T1).await.unwrap();
    assert!(lb.token(T1).unwrap() > first);
}

/// A bad url is a clear error, not a panic.
#[tokio::test]
async fn bad_url() {
    let error = RespTransport::connect("localhost:6379").await.unwrap_err();
    assert!(
        matches!(&error, lockcore::TransportError::Connection(text) if text.contains("redis://host:port")),
        "{error}"
    );
}

fn names(names: &[&str]) -> Vec<lockcore::LockName> {
    names
        .iter()
        .map(|n| lockcore::LockName::new(*n).unwrap())
        .collect()
}

/// `RedissonMultiLock` against real Redis: A takes `m1` and `m2`; B's
/// multi-lock over `m2` and `m3` cannot, and unlocks the `m3` it took
/// before its `tryLock` answers false; once A unlocks, B takes both.
#[tokio::test]
async fn multi_locks_contend() {
    use lockcore::MultiKind;
    let redis = RealRedis::start_for_test();
    let raw = transport(&redis).await;
    let a = client(&redis, "uuid-a", Config::default()).await;
    let b = client(&redis, "uuid-b", Config::default()).await;
    let ma = a
        .multi_lock(MultiKind::Multi, names(&["m1", "m2"]))
        .unwrap();
    let mb = b
        .multi_lock(MultiKind::Multi, names(&["m3", "m2"]))
        .unwrap();
    ma.lock(T1).await.unwrap();
    assert_eq!(mb.try_lock(T1, 300).await, Ok(false));
    let exists = |key: &'static str| {
        let raw = &raw;
        async move { raw.send(Shard(0), &cmd(&["EXISTS", key])).await }
    };
    assert_eq!(exists("m3").await, Ok(Value::Int(0)), "B left m3 held");
    assert_eq!(exists("m1").await, Ok(Value::Int(1)));
    ma.unlock(T1).await.unwrap();
    assert_eq!(exists("m1").await, Ok(Value::Int(0)));
    assert_eq!(mb.try_lock(T1, 5_000).await, Ok(true));
    assert_eq!(exists("m3").await, Ok(Value::Int(1)));
    mb.unlock(T1).await.unwrap();
    assert_eq!(exists("m2").await, Ok(Value::Int(0)));
}

/// A red lock's leased `tryLock(wait, lease)` takes each lock for twice
/// the wait, then expires each after the lease with `RedissonExpirable`'s
/// script, run by real Lua.
#[tokio::test]
async fn a_leased_red_lock_expires_its_locks_by_script() {
    use lockcore::{Call, CallOutcome, MultiKind};
    let redis = RealRedis::start_for_test();
    let raw = transport(&redis).await;
    let a = client(&redis, "uuid-a", Config::default()).await;
    let red = a
        .multi_lock(MultiKind::Red, names(&["r1", "r2", "r3"]))
        .unwrap();
    let call = Call::TryLock {
        wait: Some(Millis(10_000)),
        lease: Some(Millis(5_000)),
    };
    let taken = red.call(T1, call).await;
    assert!(
        matches!(taken, Ok(CallOutcome::Acquired { .. })),
        "{taken:?}"
    );
    for key in ["r1", "r2", "r3"] {
        let Ok(Value::Int(ttl)) = raw.send(Shard(0), &cmd(&["PTTL", key])).await else {
            panic!("PTTL {key} failed")
        };
        assert!(
            ttl > 4_000 && ttl <= 5_000,
            "{key}: ttl {ttl}, not the lease"
        );
    }
    red.unlock(T1).await.unwrap();
    let Ok(Value::Int(left)) = raw
        .send(Shard(0), &cmd(&["EXISTS", "r1", "r2", "r3"]))
        .await
    else {
        panic!("EXISTS failed")
    };
    assert_eq!(left, 0);
}

/// Names whose locks live on master `shard` of `masters` (by the slot
/// split `redis-cli --cluster create` makes, which `RealCluster` uses).
fn names_on(masters: u16, shard: u16, n: usize) -> Vec<String> {
    (0..)
        .map(|i| format!("lock-{i}"))
        .filter(|name| lockcore::shard_of(masters, name) == Shard(shard))
        .take(n)
        .collect()
}

/// A client of `cluster` in cluster mode: one RESP transport per master.
async fn cluster_client(
    cluster: &RealCluster,
    uuid: &str,
    config: Config,
) -> RedissonClient<ClusterTransport<RespTransport>> {
    let mut masters = Vec::new();
    for addr in cluster.addrs() {
        masters.push(
            RespTransport::connect(&format!("redis://{addr}"))
                .await
                .unwrap(),
        );
    }
    RedissonClient::new(uuid, config, ClusterTransport::new(masters))
}

/// A plain connection to each master, to look at its keys.
async fn raw_masters(cluster: &RealCluster) -> Vec<RespTransport> {
    let mut raw = Vec::new();
    for addr in cluster.addrs() {
        raw.push(
            RespTransport::connect(&format!("redis://{addr}"))
                .await
                .unwrap(),
        );
    }
    raw
}

/// Two clients in cluster mode on a real 3-master Redis Cluster, under
/// 3.44.0's batched watchdog, which renews slot by slot with one `EVAL`
/// per slot sent to its master. A holds two locks whose names hash to
/// masters 0 and 2, with a 3 s watchdog (renewed every second), for 3.5 s:
/// each key is still there with a TTL of at most 3 s on its own master,
/// and the other masters answer `MOVED` for it. Without renewal the keys
/// would be gone after 3 s; a renewal sent to the wrong master would be
/// refused with `MOVED` and the key would expire too. Then B waits on
/// both locks and A unlocks them: each unlock's message, published on
/// the lock's master, wakes B's waiter subscribed there, well before the
/// 2 s or more left of the TTL B was told to wait.
#[tokio::test]
async fn a_cluster_client_renews_and_wakes_on_each_master() {
    let cluster = RealCluster::start_for_test(3);
    let raw = raw_masters(&cluster).await;
    let config = Config::builder()
        .era(Era::RedissonBatched)
        .cluster_shards(3)
        .watchdog_timeout(3_000)
        .build()
        .unwrap();
    let a = cluster_client(&cluster, "uuid-a", config.clone()).await;
    let b = cluster_client(&cluster, "uuid-b", config).await;
    let on = [
        (0, names_on(3, 0, 1).remove(0)),
        (2, names_on(3, 2, 1).remove(0)),
    ];
    let threads = [T1, ThreadId(2)];
    for ((_, name), thread) in on.iter().zip(threads) {
        a.lock(name).unwrap().lock(thread).await.unwrap();
    }
    sleep(Duration::from_millis(3_500)).await;
    for (master, name) in &on {
        let ttl = raw[*master].send(Shard(0), &cmd(&["PTTL", name])).await;
        let Ok(Value::Int(ttl)) = ttl else {
            panic!("PTTL {name} on master {master}: {ttl:?}")
        };
        assert!(
            ttl > 0 && ttl <= 3_000,
            "{name} on master {master}: ttl {ttl}"
        );
        for other in (0..3).filter(|m| m != master) {
            let moved = raw[other].send(Shard(0), &cmd(&["PTTL", name])).await;
            assert!(
                matches!(&moved, Ok(Value::Error(e)) if e.starts_with("MOVED")),
                "{name} on master {other}: {moved:?}"
            );
        }
    }
    let mut waiters = Vec::new();
    for ((_, name), thread) in on.iter().zip(threads) {
        let lock = b.lock(name).unwrap();
        assert_eq!(lock.try_lock(thread).await, Ok(false), "{name} is A's");
        waiters.push(tokio::spawn(async move {
            let taken = lock.try_lock_wait(thread, Millis(20_000)).await;
            (taken, Instant::now())
        }));
    }
    sleep(Duration::from_millis(200)).await;
    let mut unlocked = Vec::new();
    for ((_, name), thread) in on.iter().zip(threads) {
        assert_eq!(a.lock(name).unwrap().unlock(thread).await, Ok(true));
        unlocked.push(Instant::now());
    }
    let done = waiters.into_iter().zip(unlocked).zip(&on).zip(threads);
    for (((waiter, at), (master, name)), thread) in done {
        let (taken, when) = waiter.await.unwrap();
        assert_eq!(taken, Ok(true), "{name}");
        let woken = when.saturating_duration_since(at);
        assert!(
            woken < Duration::from_millis(1_000),
            "B took {name} (master {master}) {woken:?} after its unlock: no message woke it"
        );
        let holder = raw[*master].send(Shard(0), &cmd(&["HKEYS", name])).await;
        let field = Value::bulk(b.field(thread));
        assert_eq!(holder, Ok(Value::Array(vec![field])), "{name}");
    }
}

/// A client in cluster mode over a one-node transport fails its call with
/// a clear error for a lock on another master, and sends nothing there.
/// A slot migrated under a held lock, on a real 3-master cluster, as
/// `redis-cli --cluster reshard` moves it: `SETSLOT IMPORTING` and
/// `MIGRATING`, `MIGRATE` of the lock's key, `SETSLOT NODE` on every
/// master. A (4.7.0, 3 s watchdog) holds the lock throughout: its
/// renewals meet `ASK` after the key moved and `MOVED` once the slot
/// did, and follow them (to master 1), so the key is still there 4 s
/// later. B waits on the lock, subscribed on master 0; A's unlock, sent
/// to master 0 and moved to master 1, publishes there, and the cluster
/// bus carries the message to B's subscription: B takes the lock at
/// once.
#[tokio::test]
async fn a_lock_survives_its_slot_migrating_to_another_master() {
    let cluster = RealCluster::start_for_test(3);
    let raw = raw_masters(&cluster).await;
    let nodes: Vec<String> = cluster.addrs().iter().map(|a| a.to_string()).collect();
    let config = Config::builder()
        .release("4.7.0".parse().unwrap())
        .cluster_shards(3)
        .cluster_nodes(nodes)
        .watchdog_timeout(3_000)
        .build()
        .unwrap();
    let a = cluster_client(&cluster, "uuid-a", config.clone()).await;
    let b = cluster_client(&cluster, "uuid-b", config).await;
    let name = names_on(3, 0, 1).remove(0);
    let slot = lockcore::calc_slot(&name).to_string();
    assert!(a.lock(&name).unwrap().try_lock(T1).await.unwrap());
    let admin = |m: usize, words: &[&str]| {
        let words = cmd(words);
        let raw = &raw[m];
        async move { raw.send(Shard(0), &words).await }
    };
    let ok = Ok(Value::Simple("OK".into()));
    let (from, to) = (cluster.id(0).to_owned(), cluster.id(1).to_owned());
    assert_eq!(
        admin(1, &["CLUSTER", "SETSLOT", &slot, "IMPORTING", &from]).await,
        ok
    );
    assert_eq!(
        admin(0, &["CLUSTER", "SETSLOT", &slot, "MIGRATING", &to]).await,
        ok
    );
    sleep(Duration::from_millis(1_200)).await;
    let target = cluster.addr(1);
    let (host, port) = (target.ip().to_string(), target.port().to_string());
    assert_eq!(
        admin(
            0,
            &["MIGRATE", &host, &port, "", "0", "5000", "KEYS", &name]
        )
        .await,
        ok
    );
    sleep(Duration::from_millis(1_200)).await;
    for m in 0..3 {
        assert_eq!(
            admin(m, &["CLUSTER", "SETSLOT", &slot, "NODE", &to]).await,
            ok,
            "master {m}"
        );
    }
    sleep(Duration::from_millis(1_600)).await;
    let ttl = admin(1, &["PTTL", &name]).await;
    assert!(
        matches!(ttl, Ok(Value::Int(ms)) if ms > 0 && ms <= 3_000),
        "{name} on master 1 after 4 s: {ttl:?}"
    );
    let lock = b.lock(&name).unwrap();
    let waiter = tokio::spawn(async move {
        let taken = lock.try_lock_wait(ThreadId(2), Millis(20_000)).await;
        (taken, Instant::now())
    });
    sleep(Duration::from_millis(300)).await;
    assert_eq!(a.lock(&name).unwrap().unlock(T1).await, Ok(true));
    let unlocked = Instant::now();
    let (taken, when) = waiter.await.unwrap();
    assert_eq!(taken, Ok(true));
    let woken = when.saturating_duration_since(unlocked);
    assert!(
        woken < Duration::from_millis(1_000),
        "B woke {woken:?} after the unlock"
    );
}

#[tokio::test]
async fn a_one_node_transport_refuses_other_shards() {
    let redis = RealRedis::start_for_test();
    let config = Config::builder().cluster_shards(3).build().unwrap();
    let a = client(&redis, "uuid-a", config).await;
    let name = names_on(3, 2, 1).remove(0);
    let error = a.lock(&name).unwrap().try_lock(T1).await.unwrap_err();
    assert!(
        error.to_string().contains("no connection to shard 2"),
        "{error}"
    );
    let raw = transport(&redis).await;
    assert_eq!(
        raw.send(Shard(0), &cmd(&["EXISTS", &name])).await,
        Ok(Value::Int(0))
    );
}
