//! Sentinel as Redisson's `SentinelConnectionManager` sees it, against
//! real `redis-server --sentinel` processes on loopback: a primary, a
//! replica and two sentinels, started and stopped by the test. Before and
//! after a failover, what Redisson polls (`SENTINEL
//! GET-MASTER-ADDR-BY-NAME`, `SENTINEL SLAVES`/`REPLICAS`, `SENTINEL
//! SENTINELS`, `PING`) and its errors; the `+switch-master` and `+slave`
//! messages of the switch; and the demoted primary, still up as a
//! replica, refusing `WAIT`, writes and a writing script with the texts
//! fake-redis gives a replica. Fields that follow the wall clock or a
//! random run id are masked (see `fake_redis::Sentinel`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use fake_redis::testing::RealRedis;
use fake_redis::{Engine, Node, Protocol, Sentinel, SystemClock, encode_to_vec};

use crate::compare::{Token, tokens};
use crate::wire::{Client, show};

const NAME: &str = "mymaster";

fn words(w: &[&str]) -> Vec<Vec<u8>> {
    w.iter().map(|s| s.as_bytes().to_vec()).collect()
}

fn ask(c: &mut Client, w: &[&str]) -> Vec<u8> {
    c.send(&words(w));
    c.read_frame().unwrap_or_else(|e| panic!("{w:?}: {e}"))
}

fn fake(s: &Sentinel, w: &[&str]) -> Vec<u8> {
    let args: Vec<Bytes> = w.iter().map(|s| Bytes::from(s.to_string())).collect();
    encode_to_vec(&s.execute(&args), Protocol::Resp2)
}

/// The fields whose values are the wall clock's or random.
/// (`link-pending-commands` too: how many of the sentinel's own pings
/// and INFOs await their reply at that instant.)
const MASKED: [&str; 12] = [
    "runid",
    "link-pending-commands",
    "last-ping-sent",
    "last-ok-ping-reply",
    "last-ping-reply",
    "info-refresh",
    "role-reported-time",
    "master-link-down-time",
    "slave-repl-offset",
    "last-hello-message",
    "voted-leader",
    "voted-leader-epoch",
];

/// `frame`'s tokens with the value after each masked field name (and
/// after `name` too when `name_masked`: a sentinel's name is its run id)
/// replaced.
fn masked(frame: &[u8], name_masked: bool) -> Vec<Token> {
    let bulk = |s: &str| format!("${}\r\n{s}\r\n", s.len()).into_bytes();
    let keys: Vec<Vec<u8>> = MASKED
        .iter()
        .copied()
        .chain(name_masked.then_some("name"))
        .map(bulk)
        .collect();
    let mut out = tokens(frame);
    for i in 1..out.len() {
        if matches!(&out[i - 1], Token::Raw(k) if keys.contains(k)) {
            out[i] = Token::Raw(b"<masked>".to_vec());
        }
    }
    out
}

fn same(real: &[u8], fake: &[u8], name_masked: bool, what: &str) {
    assert!(
        masked(real, name_masked) == masked(fake, name_masked),
        "{what}\n real: {}\n fake: {}",
        show(real),
        show(fake)
    );
}

/// Polls `c` with `w` until `ready` holds of the reply, for up to 40 s.
fn until(c: &mut Client, w: &[&str], what: &str, ready: impl Fn(&str) -> bool) -> Vec<u8> {
    let start = Instant::now();
    loop {
        let reply = ask(c, w);
        if ready(&show(&reply)) {
            return reply;
        }
        assert!(
            start.elapsed() < Duration::from_secs(40),
            "{what}: still {}",
            show(&reply)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The sentinel view the fake must give: `master` with `replicas`, and
/// the other sentinel at `peer`.
fn view(master: u16, replicas: &[u16], peer: u16) -> Sentinel {
    let mut s = Sentinel::new(NAME, Node::new("127.0.0.1", master), 1000);
    for r in replicas {
        s.add_replica(Node::new("127.0.0.1", *r));
    }
    s.add_peer(Node::new("127.0.0.1", peer), "x");
    s
}

/// Every query Redisson sends a sentinel, before and after a failover,
/// and the errors of the same commands misspelt.
fn queries_match(real: &mut Client, fake_view: &Sentinel, when: &str) {
    for w in [
        &["SENTINEL", "GET-MASTER-ADDR-BY-NAME", NAME][..],
        &["SENTINEL", "SLAVES", NAME],
        &["SENTINEL", "REPLICAS", NAME],
        &["PING"],
        &["ROLE"],
        &["SENTINEL", "GET-MASTER-ADDR-BY-NAME", "nope"],
        &["SENTINEL", "SLAVES", "nope"],
        &["SENTINEL", "SENTINELS", "nope"],
        &["SENTINEL", "slaves"],
        &["SENTINEL", "nope1"],
        &["SELECT", "0"],
    ] {
        same(
            &ask(real, w),
            &fake(fake_view, w),
            false,
            &format!("{when}: {w:?}"),
        );
    }
    let w = ["SENTINEL", "SENTINELS", NAME];
    same(
        &ask(real, &w),
        &fake(fake_view, &w),
        true,
        &format!("{when}: {w:?}"),
    );
}

/// The failover path end to end: queries, announcements, the demoted
/// primary. A fake that reported the old primary still as primary, left
/// it out of the replicas, announced other payloads, or answered the
/// demoted primary's `WAIT` or writes with other texts fails here.
#[test]
fn sentinels_and_the_demoted_primary_answer_like_real_ones() {
    let primary = RealRedis::start_for_test();
    let (p, r) = (primary.port(), {
        let port = primary.port().to_string();
        RealRedis::start_for_test_with(&["--replicaof", "127.0.0.1", &port])
    });
    let replica_port = r.port();
    let s1 = RealRedis::start_sentinel_for_test(NAME, p, 1000);
    let s2 = RealRedis::start_sentinel_for_test(NAME, p, 1000);
    let mut c1 = Client::connect(s1.addr());
    let mut c2 = Client::connect(s2.addr());
    let in_sync =
        |s: &str| s.contains("master-link-status\r\n$2\r\nok") && s.contains("$5\r\nslave");
    for c in [&mut c1, &mut c2] {
        until(c, &["SENTINEL", "REPLICAS", NAME], "replica found", in_sync);
        // Learnt from its hello messages before the link to it is up
        // (`sentinel,disconnected`): wait for the link.
        until(c, &["SENTINEL", "SENTINELS", NAME], "peer linked", |s| {
            s.starts_with("*1") && s.contains("flags\r\n$8\r\nsentinel\r\n")
        });
    }
    queries_match(&mut c1, &view(p, &[replica_port], s2.port()), "before");

    let mut sub = Client::connect(s2.addr());
    sub.send(&words(&["SUBSCRIBE", "+switch-master", "+slave"]));
    for _ in 0..2 {
        sub.read_frame().expect("subscribe confirmation");
    }
    assert_eq!(
        show(&ask(&mut c1, &["SENTINEL", "FAILOVER", NAME])),
        "+OK\r\n"
    );
    let mut after = view(p, &[replica_port], s2.port());
    let announced = after.switch_master(&Node::new("127.0.0.1", replica_port));
    let message = |channel: &str, payload: &str| {
        let b = |s: &str| format!("${}\r\n{s}\r\n", s.len());
        format!("*3\r\n{}{}{}", b("message"), b(channel), b(payload))
    };
    let expected: Vec<String> = announced
        .iter()
        .map(|a| message(a.channel, &a.payload))
        .collect();
    let mut seen = Vec::new();
    while seen.len() < expected.len() {
        let frame = show(&sub.read_frame().expect("a sentinel event"));
        // Events before the switch (none are expected) are not compared.
        if !seen.is_empty() || frame.contains("+switch-master") {
            seen.push(frame);
        }
    }
    assert_eq!(seen, expected, "the switch's announcements");

    // The old primary stays up, reconfigured as a replica of the new one.
    let old_port = p.to_string();
    let listed = format!("port\r\n${}\r\n{old_port}\r\n", old_port.len());
    let demoted = |s: &str| s.contains(&listed) && in_sync(s);
    for c in [&mut c1, &mut c2] {
        until(
            c,
            &["SENTINEL", "REPLICAS", NAME],
            "old primary demoted",
            demoted,
        );
    }
    queries_match(&mut c1, &after, "after");

    let mut old = Client::connect(primary.addr());
    let mut engine = Engine::new(Arc::new(SystemClock));
    let conn = engine.connect();
    engine.set_replica();
    for w in [
        &["WAIT", "0", "0"][..],
        &["SET", "k", "v"],
        &[
            "EVAL",
            "return redis.call('hset', KEYS[1], 'a', 1)",
            "1",
            "lock",
        ],
        &["GET", "k"],
        // Redisson's acquire, which fake-redis runs natively: refused at
        // its first write (`hincrby`) with the script's suffix, and the
        // free key stays absent.
        &[
            "EVAL",
            fake_redis::LockScript::Acquire.text(),
            "1",
            "free",
            "30000",
            "u:1",
        ],
        &["EXISTS", "free"],
    ] {
        let args: Vec<Bytes> = w.iter().map(|s| Bytes::from(s.to_string())).collect();
        let fake_reply = encode_to_vec(&engine.execute(conn, args).replies[0], Protocol::Resp2);
        let real_reply = ask(&mut old, w);
        assert_eq!(
            show(&real_reply),
            show(&fake_reply),
            "demoted primary: {w:?}"
        );
    }
    drop((s1, s2, r));
}
