//! What `WAIT` waits for, against a real `redis-server` 7.0 primary and
//! replica: the stream as it stood after the caller's last command,
//! whoever wrote it. A client that only read waits for another client's
//! write (Redis sets `c->woff` after every command); a client that has
//! sent nothing yet waits for nothing. The replica is held behind by
//! `DEBUG SLEEP`, so it acknowledges nothing while the `WAIT`s run; the
//! fake's host gives no acknowledgement either.

use std::sync::Arc;
use std::time::{Duration, Instant};

use fake_redis::testing::RealRedis;
use fake_redis::{ConnId, Engine, Protocol, SystemClock, encode_to_vec};

use crate::replica_link::{ask, fake};
use crate::wire::{Client, show};

/// A blocked fake `WAIT` of `conn`, answered at its timeout.
fn fake_timed_out(e: &mut Engine, conn: ConnId, w: &[&str], timeout: Duration) -> String {
    assert_eq!(fake(e, conn, w), None, "{w:?} blocks");
    std::thread::sleep(timeout + Duration::from_millis(20));
    let answered = e.tick().deliveries;
    match answered.as_slice() {
        [(c, v)] if *c == conn => show(&encode_to_vec(v, Protocol::Resp2)),
        other => panic!("{w:?}: {other:?}"),
    }
}

#[test]
fn wait_waits_for_the_stream_after_the_callers_last_command() {
    let primary = RealRedis::start_for_test();
    let port = primary.port().to_string();
    let replica = RealRedis::start_for_test_with(&[
        "--replicaof",
        "127.0.0.1",
        &port,
        "--enable-debug-command",
        "yes",
    ]);
    let mut writer = Client::connect(primary.addr());
    let mut reader = Client::connect(primary.addr());
    let mut r = Client::connect(replica.addr());
    let mut e = Engine::new(Arc::new(SystemClock));
    e.set_replicas(1);
    let (fw, fr, fresh) = (e.connect(), e.connect(), e.connect());

    let started = Instant::now();
    while !ask(&mut writer, &["INFO", "replication"]).contains("state=online") {
        assert!(started.elapsed() < Duration::from_secs(10), "no sync");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(ask(&mut writer, &["SET", "k", "1"]), "+OK\r\n");
    assert_eq!(ask(&mut writer, &["WAIT", "1", "2000"]), ":1\r\n");
    assert_eq!(
        fake(&mut e, fw, &["SET", "k", "1"]).as_deref(),
        Some("+OK\r\n")
    );
    e.ack(0, e.repl_offset());

    // The replica sleeps; the writer writes; the reader only reads.
    r.send(&[b"DEBUG".to_vec(), b"SLEEP".to_vec(), b"1".to_vec()]);
    std::thread::sleep(Duration::from_millis(100));
    let t0 = Instant::now();
    assert_eq!(ask(&mut writer, &["SET", "k", "2"]), "+OK\r\n");
    assert_eq!(ask(&mut reader, &["GET", "k"]), "$1\r\n2\r\n");
    let read_then_wait = ask(&mut reader, &["WAIT", "1", "200"]);
    let fresh_wait = ask(&mut Client::connect(primary.addr()), &["WAIT", "1", "200"]);
    assert!(
        t0.elapsed() < Duration::from_millis(800),
        "the replica woke too soon"
    );
    assert_eq!(
        read_then_wait, ":0\r\n",
        "a reader waits for the writer's write"
    );
    assert_eq!(
        fresh_wait, ":1\r\n",
        "a client that sent nothing waits for nothing"
    );

    assert_eq!(
        fake(&mut e, fw, &["SET", "k", "2"]).as_deref(),
        Some("+OK\r\n")
    );
    assert_eq!(
        fake(&mut e, fr, &["GET", "k"]).as_deref(),
        Some("$1\r\n2\r\n")
    );
    let fake_read_then_wait = fake_timed_out(
        &mut e,
        fr,
        &["WAIT", "1", "200"],
        Duration::from_millis(200),
    );
    assert_eq!(fake_read_then_wait, read_then_wait);
    assert_eq!(fake(&mut e, fresh, &["WAIT", "1", "200"]), Some(fresh_wait));

    assert_eq!(
        show(&r.read_frame().expect("DEBUG SLEEP's reply")),
        "+OK\r\n"
    );
    drop((replica, primary));
}
