//! Issue #52's MONITOR bar with a real Sentinel: a primary, a replica and
//! a `redis-server --sentinel` monitoring them, on loopback, started and
//! stopped by the test. The switchover is the sentinel's own (`SENTINEL
//! FAILOVER`): it promotes the replica and, once it sees the old primary
//! still reporting itself a master, demotes it with its `SLAVEOF`
//! transaction, which closes the lock client's connections. `MONITOR` on
//! the old primary must show Redisson's commands exactly: `lock()` before
//! the failover (the probe, `INFO`, the acquire's batch) and the unlock
//! after it, on the demoted primary (the client has no sentinel manager
//! to move it): its batch once (3.45.0) or retried on the replica's `WAIT`
//! error (3.45.1, 4.7.0). The sentinel's own commands (`PING`, `INFO`,
//! its hello messages) are left out by its connections' names, and on
//! the demoted primary what its new primary's link replicates to it.

use bytes::Bytes;
use lockcore::{Shard, Transport, Value};

use super::replicated::{
    demoted_unlock_error, demoted_unlock_with, is_wait, primary_and_replica, synced,
};
use super::*;

const NAME: &str = "mymaster";

/// The watchdog's timeout: no renewal (every third of it) falls inside
/// the test, whose sentinel takes seconds to demote the old primary.
const WATCHDOG: u64 = 300_000;
const LEASE: &str = "300000";

/// How long the sentinel may take to see the replica, and to demote the
/// old primary after the switch (it waits until the old primary has
/// reported itself a master for 8 s: `SENTINEL_PUBLISH_PERIOD * 4`).
const SETTLE: Duration = Duration::from_secs(60);

/// `command`'s reply from the server at `url`, on a fresh connection (a
/// kept one would be closed by the demotion).
async fn ask(url: &str, command: &[&str]) -> Value {
    let transport = RespTransport::connect(url).await.unwrap();
    let words: Vec<Bytes> = command.iter().map(|w| Bytes::from(w.to_string())).collect();
    transport.send(Shard(0), &words).await.unwrap()
}

/// Every bulk string in `value`, flattened: enough to look for a field.
fn text(value: &Value) -> String {
    match value {
        Value::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Simple(s) | Value::Error(s) => s.clone(),
        Value::Int(n) => n.to_string(),
        Value::Array(items) | Value::Push(items) => {
            items.iter().map(text).collect::<Vec<_>>().join(" ")
        }
        Value::Map(pairs) => pairs
            .iter()
            .map(|(k, v)| format!("{} {}", text(k), text(v)))
            .collect::<Vec<_>>()
            .join(" "),
        Value::Nil => String::new(),
    }
}

/// Polls `command` on `url` until its reply's text satisfies `done`.
async fn until(url: &str, command: &[&str], what: &str, done: impl Fn(&str) -> bool) {
    let deadline = Instant::now() + SETTLE;
    loop {
        let reply = text(&ask(url, command).await);
        if done(&reply) {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: never; last {reply}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Redisson's commands for `lock()` with one replica, on a fresh client.
fn lock_only(version: &str) -> Vec<Vec<Arg>> {
    let info = if version == "4.7.0" {
        "ALL"
    } else {
        "REPLICATION"
    };
    let mut steps = vec![exact(&["WAIT", "0", "0"]), exact(&["INFO", info])];
    let acquire = exact(&["1", LOCK, LEASE, FIELD_A]);
    steps.extend(synced(version, &ACQUIRE, acquire, true));
    steps
}

/// Under `version`: `lock()` on the primary, `SENTINEL FAILOVER`, the
/// unlock on the demoted primary, sent `attempts` times; `MONITOR` on the
/// old primary must show Redisson's commands before and after.
async fn proves_sentinel_switchover(version: &str, attempts: usize) {
    let (primary, replica) = primary_and_replica().await;
    let sentinel = RealRedis::start_sentinel_for_test(NAME, primary.port(), 1000);
    let (old, watcher) = (primary.url(), sentinel.url());
    until(
        &watcher,
        &["SENTINEL", "REPLICAS", NAME],
        "replica seen",
        |s| s.contains("master-link-status ok") && !s.contains("disconnected"),
    )
    .await;

    let expected = lock_only(version);
    let mut monitor = Monitor::start(&primary).await;
    monitor.ignore_named("sentinel-").await;
    let config = Config::builder()
        .release(version.parse::<Release>().unwrap())
        .replicas(1)
        .watchdog_timeout(WATCHDOG)
        .build()
        .unwrap();
    let a = client(&primary, UUID_A, config).await;
    let lock = a.lock(LOCK).unwrap();
    lock.lock(T1).await.unwrap();
    let mut sent = Vec::new();
    monitor.collect(&mut sent, expected.len()).await;
    monitor.finish(&mut sent).await;
    assert_sequence(&format!("{version}, lock()"), &expected, &words(sent));

    assert_eq!(
        ask(&watcher, &["SENTINEL", "FAILOVER", NAME]).await,
        Value::Simple("OK".into())
    );
    until(&old, &["INFO", "replication"], "old primary demoted", |s| {
        s.contains("role:slave") && s.contains("master_link_status:up")
    })
    .await;
    // The client's reconnection (75 ms) and the sentinel's pub/sub link,
    // which its `CLIENT KILL TYPE pubsub` closed, back before `MONITOR`.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let expected = demoted_unlock_with(version, attempts, LEASE);
    assert_eq!(expected.iter().filter(|c| is_wait(c)).count(), attempts);
    let mut monitor = Monitor::start(&primary).await;
    monitor.ignore_named("sentinel-").await;
    monitor.ignore(replica.addr());
    let unlocked = format!("{:?}", lock.unlock(T1).await);
    assert!(
        unlocked.contains(demoted_unlock_error(version)),
        "{version}: {unlocked}"
    );
    let mut sent = Vec::new();
    monitor.collect(&mut sent, expected.len()).await;
    monitor.finish(&mut sent).await;
    let label = format!("{version}, unlock after the sentinel's switchover");
    assert_sequence(&label, &expected, &words(sent));
}

/// `--redisson 3.45.0`: `WAIT 0 0`, `INFO REPLICATION`, the acquire's
/// `EVAL` and `WAIT 1 1000`; after the switch, the unlock's batch once,
/// failing with the demoted primary's `WAIT` error (PR #6488's defect).
#[tokio::test]
async fn redisson_3_45_0_through_a_sentinel_switchover() {
    proves_sentinel_switchover("3.45.0", 1).await;
}

/// `--redisson 3.45.1`: the same lock; the unlock's batch four times.
#[tokio::test]
async fn redisson_3_45_1_through_a_sentinel_switchover() {
    proves_sentinel_switchover("3.45.1", 4).await;
}

/// `--redisson 4.7.0`: the probe's `WAIT 0 0` (7.0 refuses its `WAITAOF
/// 0 0 0` unseen), `INFO ALL`, the acquire's `SCRIPT LOAD`, `EVALSHA` and
/// `WAIT`; after the switch, the unlock's `SCRIPT LOAD` (the demotion
/// closed the client's connections, so its set is empty) and its batch
/// five times.
#[tokio::test]
async fn redisson_4_7_0_through_a_sentinel_switchover() {
    proves_sentinel_switchover("4.7.0", 5).await;
}
