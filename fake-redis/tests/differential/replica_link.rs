//! A replica whose link to its primary drops, against real `redis-server`
//! 7.0 processes: the primary's `INFO replication` (`connected_slaves`,
//! what Redisson 3.18.1+ sizes its `WAIT` by) and `WAIT`'s count leave it
//! out while the link is down, and count it again once it has resynced
//! and acknowledged, as fake-redis's `Engine::set_replica_link` has it.
//! The link is dropped the way locksim's real engine drops it for
//! `replica-down`: the replica follows a port where nothing listens.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use fake_redis::testing::RealRedis;
use fake_redis::{Engine, Protocol, SystemClock, Value, encode_to_vec};

use crate::wire::{Client, show};

pub(crate) fn ask(c: &mut Client, w: &[&str]) -> String {
    c.send(&w.iter().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>());
    show(&c.read_frame().unwrap_or_else(|e| panic!("{w:?}: {e}")))
}

/// `connected_slaves` of an `INFO replication` reply.
fn connected(info: &str) -> String {
    info.lines()
        .find_map(|l| l.strip_prefix("connected_slaves:"))
        .map(|v| v.trim().to_owned())
        .unwrap_or_else(|| panic!("no connected_slaves in {info}"))
}

/// Asks the primary until `done` holds of its reply, for up to 10 s.
pub(crate) fn until(c: &mut Client, w: &[&str], what: &str, done: impl Fn(&str) -> bool) -> String {
    let started = Instant::now();
    loop {
        let reply = ask(c, w);
        if done(&reply) {
            return reply;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{what}: still {reply}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The fake primary's reply to `w`, as the wire shows it (`None` while it
/// blocks).
pub(crate) fn fake(e: &mut Engine, conn: fake_redis::ConnId, w: &[&str]) -> Option<String> {
    let args: Vec<Bytes> = w.iter().map(|s| Bytes::from(s.to_string())).collect();
    let replies = e.execute(conn, args).replies;
    replies
        .first()
        .map(|r| show(&encode_to_vec(r, Protocol::Resp2)))
}

/// The fake primary's `connected_slaves`.
fn fake_connected(e: &mut Engine) -> String {
    let conn = e.connect();
    let info = match e
        .execute(conn, [Bytes::from("INFO"), Bytes::from("replication")])
        .replies
        .first()
    {
        Some(Value::Bulk(b)) => String::from_utf8_lossy(b).into_owned(),
        other => panic!("{other:?}"),
    };
    e.disconnect(conn);
    connected(&info)
}

#[test]
fn a_replica_whose_link_is_down_is_counted_out_like_a_real_one() {
    let primary = RealRedis::start_for_test();
    let port = primary.port().to_string();
    let replica = RealRedis::start_for_test_with(&["--replicaof", "127.0.0.1", &port]);
    let mut p = Client::connect(primary.addr());
    let mut r = Client::connect(replica.addr());
    let mut e = Engine::new(Arc::new(SystemClock));
    e.set_replicas(1);
    let conn = e.connect();

    // Up and synced: counted, and a write is acknowledged.
    until(&mut p, &["INFO", "replication"], "first sync", |s| {
        s.contains("connected_slaves:1") && s.contains("state=online")
    });
    assert_eq!(ask(&mut p, &["SET", "k", "1"]), "+OK\r\n");
    assert_eq!(ask(&mut p, &["WAIT", "1", "2000"]), ":1\r\n");
    assert_eq!(
        fake(&mut e, conn, &["SET", "k", "1"]).as_deref(),
        Some("+OK\r\n")
    );
    e.ack(0, e.repl_offset());
    assert_eq!(
        fake(&mut e, conn, &["WAIT", "1", "2000"]).as_deref(),
        Some(":1\r\n")
    );

    // Down: out of the count, and a WAIT for it times out with 0.
    assert_eq!(ask(&mut r, &["REPLICAOF", "127.0.0.1", "1"]), "+OK\r\n");
    let info = until(&mut p, &["INFO", "replication"], "link down", |s| {
        s.contains("connected_slaves:0")
    });
    e.set_replica_link(0, false);
    assert_eq!(connected(&info), fake_connected(&mut e));
    assert_eq!(ask(&mut p, &["SET", "k", "2"]), "+OK\r\n");
    assert_eq!(ask(&mut p, &["WAIT", "1", "100"]), ":0\r\n");
    assert_eq!(
        fake(&mut e, conn, &["SET", "k", "2"]).as_deref(),
        Some("+OK\r\n")
    );
    // An acknowledgement has no link to come by.
    e.ack(0, e.repl_offset());
    assert_eq!(fake(&mut e, conn, &["WAIT", "1", "100"]), None, "blocks");
    std::thread::sleep(Duration::from_millis(120));
    let answered = e.tick().deliveries;
    assert_eq!(answered, [(conn, Value::Int(0))]);

    // Back: counted again, and once it acknowledges, a WAIT counts it.
    assert_eq!(ask(&mut r, &["REPLICAOF", "127.0.0.1", &port]), "+OK\r\n");
    let info = until(&mut p, &["INFO", "replication"], "link back", |s| {
        s.contains("connected_slaves:1") && s.contains("state=online")
    });
    e.set_replica_link(0, true);
    assert_eq!(connected(&info), fake_connected(&mut e));
    assert_eq!(ask(&mut p, &["WAIT", "1", "2000"]), ":1\r\n");
    e.ack(0, e.repl_offset());
    assert_eq!(
        fake(&mut e, conn, &["WAIT", "1", "2000"]).as_deref(),
        Some(":1\r\n")
    );
    drop((replica, primary));
}
