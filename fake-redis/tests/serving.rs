//! The server as Redis serves: one command at a time across connections,
//! output buffer limits that close slow subscribers, no stall when a
//! client with many channels leaves, and a long pipeline read on while its
//! replies wait for the client.
//!
//! Each test drives fake-redis's TCP server (on its multi-threaded runtime,
//! where connections' tasks really run in parallel) with plain blocking
//! sockets; the output-limit test runs the same steps against a real
//! `redis-server` 7.0.15 and requires the same outcome.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fake_redis::testing::RealRedis;
use fake_redis::{BackgroundServer, Engine, SharedEngine, SystemClock};

/// A blocking RESP2 client reading whole frames.
struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        stream.set_nodelay(true).expect("nodelay");
        Client {
            stream,
            buf: Vec::new(),
        }
    }

    fn send(&mut self, args: &[&[u8]]) {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend(format!("${}\r\n", a.len()).as_bytes());
            out.extend(*a);
            out.extend(b"\r\n");
        }
        self.stream.write_all(&out).expect("write");
    }

    /// The next frame's text, or `None` once the server closed.
    fn frame(&mut self) -> Option<String> {
        loop {
            if let Some(n) = frame_len(&self.buf) {
                let f: Vec<u8> = self.buf.drain(..n).collect();
                return Some(String::from_utf8_lossy(&f).into_owned());
            }
            let mut chunk = [0u8; 65536];
            match self.stream.read(&mut chunk) {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.buf.extend(&chunk[..n]),
            }
        }
    }

    fn call(&mut self, args: &[&[u8]]) -> String {
        self.send(args);
        self.frame().expect("reply")
    }
}

/// The length of the RESP2 frame at the start of `buf`, if complete.
fn frame_len(buf: &[u8]) -> Option<usize> {
    let end = buf.windows(2).position(|w| w == b"\r\n")?;
    let n: i64 = std::str::from_utf8(&buf[1..end]).ok()?.parse().unwrap_or(0);
    match buf[0] {
        b'$' if n >= 0 => {
            let total = end + 2 + n as usize + 2;
            (buf.len() >= total).then_some(total)
        }
        b'*' => {
            let mut len = end + 2;
            for _ in 0..n.max(0) {
                len += frame_len(&buf[len..])?;
            }
            Some(len)
        }
        _ => Some(end + 2),
    }
}

fn fake_server() -> BackgroundServer {
    BackgroundServer::start(SharedEngine::new(Engine::new(Arc::new(SystemClock))))
        .expect("start fake-redis")
}

/// Redis runs one command at a time, so once a client has read its
/// `UNSUBSCRIBE` confirmation no later `PUBLISH` reaches it, and a
/// `PUBLISH` sent after the `SUBSCRIBE` confirmation was read always does.
/// A publisher thread floods the channel while the subscriber subscribes
/// and unsubscribes 3,000 times; after each confirmation the subscriber's
/// `PING` reply must be the very next frame. (Issue 11 measured 1,176 of
/// 2,000 rounds with a late message when commands were not serialised.)
#[test]
fn no_message_after_unsubscribe_reply() {
    let server = fake_server();
    let addr = server.addr();
    let stop = Arc::new(AtomicBool::new(false));
    let flood = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut publisher = Client::connect(addr);
            let mut sent = 0u64;
            while !stop.load(Ordering::Relaxed) {
                publisher.call(&[b"PUBLISH", b"ch", b"flood"]);
                sent += 1;
            }
            sent
        })
    };
    let mut sub = Client::connect(addr);
    let mut sync = Client::connect(addr);
    for round in 0..3000 {
        sub.send(&[b"SUBSCRIBE", b"ch"]);
        loop {
            let f = sub.frame().expect("subscribe confirmation");
            if f.contains("subscribe") {
                break;
            }
        }
        let marker = format!("sync-{round}");
        let n = sync.call(&[b"PUBLISH", b"ch", marker.as_bytes()]);
        assert_ne!(
            n, ":0\r\n",
            "round {round}: PUBLISH after SUBSCRIBE reached no one"
        );
        sub.send(&[b"UNSUBSCRIBE", b"ch"]);
        let mut saw_marker = false;
        loop {
            let f = sub.frame().expect("unsubscribe confirmation");
            saw_marker |= f.contains(&marker);
            if f.contains("unsubscribe") {
                break;
            }
        }
        assert!(
            saw_marker,
            "round {round}: message published after SUBSCRIBE lost"
        );
        let pong = sub.call(&[b"PING"]);
        assert_eq!(
            pong, "+PONG\r\n",
            "round {round}: a message after UNSUBSCRIBE's reply"
        );
    }
    stop.store(true, Ordering::Relaxed);
    let sent = flood.join().expect("publisher");
    assert!(
        sent > 100,
        "the flood must overlap the rounds ({sent} sent)"
    );
}

/// Publishes 64 MiB in 64 KiB messages to `ch`, whose subscriber never
/// reads; then how many subscribers `ch` has, and the subscriber.
fn flood_slow_subscriber(addr: SocketAddr) -> (String, Client) {
    let mut admin = Client::connect(addr);
    assert_eq!(
        admin.call(&[
            b"CONFIG",
            b"SET",
            b"client-output-buffer-limit",
            b"pubsub 2mb 1mb 60"
        ]),
        "+OK\r\n"
    );
    let mut sub = Client::connect(addr);
    sub.call(&[b"SUBSCRIBE", b"ch"]);
    let message = vec![b'x'; 64 * 1024];
    // 64 MiB: more than loopback socket buffers hold, so most of it would
    // have to wait in the server's memory.
    for _ in 0..1024 {
        admin.call(&[b"PUBLISH", b"ch", &message]);
    }
    (admin.call(&[b"PUBSUB", b"NUMSUB", b"ch"]), sub)
}

/// Reads `client`'s socket to its end; how many bytes came. Fails if the
/// server keeps it open (the read times out).
fn read_to_close(client: &mut Client) -> usize {
    let mut total = client.buf.len();
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        match client.stream.read(&mut chunk) {
            Ok(0) => return total,
            Ok(n) => total += n,
            Err(e) => panic!("the socket stays open after {total} bytes: {e}"),
        }
    }
}

/// A subscriber that never reads is closed once its pending output passes
/// the pub/sub hard limit, on both servers: afterwards the channel has no
/// subscriber, the subscriber's socket is closed after what was already
/// sent, and the server still answers. Without a limit fake-redis buffered
/// all 64 MiB (and would buffer without end).
#[test]
fn slow_subscriber_is_closed_at_its_output_limit() {
    let real = RealRedis::start_for_test();
    let fake = fake_server();
    for addr in [real.addr(), fake.addr()] {
        let (numsub, mut sub) = flood_slow_subscriber(addr);
        assert_eq!(numsub, "*2\r\n$2\r\nch\r\n:0\r\n", "server at {addr}");
        let received = read_to_close(&mut sub);
        assert!(received < 16 << 20, "{received} bytes reached {addr}");
        let mut other = Client::connect(addr);
        assert_eq!(other.call(&[b"PING"]), "+PONG\r\n");
    }
}

/// A client with 40,000 channels that disconnects must not stall others:
/// a bystander's PING round trips stay under 1 s meanwhile (quadratic
/// removal held the engine for 4-5 s).
#[test]
fn leaving_with_many_channels_stalls_no_one() {
    let server = fake_server();
    let names: Vec<Vec<u8>> = (0..40_000)
        .map(|i| format!("chan:{i}").into_bytes())
        .collect();
    let mut big = Client::connect(server.addr());
    let mut args: Vec<&[u8]> = vec![b"SUBSCRIBE"];
    args.extend(names.iter().map(Vec::as_slice));
    big.send(&args);
    for _ in 0..names.len() {
        big.frame().expect("confirmation");
    }
    let mut bystander = Client::connect(server.addr());
    drop(big);
    let mut worst = Duration::ZERO;
    for _ in 0..200 {
        let start = Instant::now();
        assert_eq!(bystander.call(&[b"PING"]), "+PONG\r\n");
        worst = worst.max(start.elapsed());
    }
    assert!(worst < Duration::from_secs(1), "a PING waited {worst:?}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while bystander.call(&[b"PUBSUB", b"NUMSUB", b"chan:39999"])
        != "*2\r\n$10\r\nchan:39999\r\n:0\r\n"
    {
        assert!(
            Instant::now() < deadline,
            "the departed client's channels remain"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// BLPOP over TCP on both servers: a waiting client is served by another
/// client's push with `[key, element]`, its pipelined PING is answered only
/// after that, a short timeout gives a nil array (`*-1`) in about its time
/// (not early), and WRONGTYPE and bad timeouts get Redis's errors.
#[test]
fn blpop_blocks_and_times_out_like_redis() {
    let real = RealRedis::start_for_test();
    let fake = fake_server();
    for addr in [real.addr(), fake.addr()] {
        let mut waiter = Client::connect(addr);
        let mut pusher = Client::connect(addr);
        pusher.call(&[b"DEL", b"q"]);
        waiter.send(&[b"BLPOP", b"q", b"0"]);
        waiter.send(&[b"PING"]);
        // Let the waiter block before the push.
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(pusher.call(&[b"RPUSH", b"q", b"job"]), ":1\r\n", "{addr}");
        assert_eq!(
            waiter.frame().as_deref(),
            Some("*2\r\n$1\r\nq\r\n$3\r\njob\r\n"),
            "{addr}"
        );
        assert_eq!(waiter.frame().as_deref(), Some("+PONG\r\n"), "{addr}");
        let start = Instant::now();
        assert_eq!(waiter.call(&[b"BLPOP", b"q", b"0.2"]), "*-1\r\n", "{addr}");
        let waited = start.elapsed();
        assert!(
            // Both servers count whole milliseconds of the wall clock, so
            // the wait may be up to a millisecond short of 200.
            waited >= Duration::from_millis(195) && waited < Duration::from_secs(3),
            "{addr}: waited {waited:?}"
        );
        pusher.call(&[b"SET", b"s", b"v"]);
        assert_eq!(
            waiter.call(&[b"BLPOP", b"s", b"1"]),
            "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
        );
        assert_eq!(
            waiter.call(&[b"BLPOP", b"q", b"-1"]),
            "-ERR timeout is negative\r\n"
        );
    }
}

/// A client that writes a whole pipeline before it reads a reply (as
/// redis-rs's pipelines and a blocking `write_all` do) gets every reply:
/// the server goes on reading while its replies wait for the client, as
/// Redis does. 2,000,000 `PING`s are 14 MB each way, more than loopback's
/// socket buffers hold, so a server that stopped reading while a write was
/// pending would leave both sides blocked (the client's write times out).
#[test]
fn a_long_pipeline_written_before_reading_gets_every_reply() {
    const COUNT: usize = 2_000_000;
    let server = fake_server();
    let mut stream = TcpStream::connect(server.addr()).expect("connect");
    stream
        .set_write_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let pipeline = b"PING\r\n".repeat(COUNT);
    stream
        .write_all(&pipeline)
        .unwrap_or_else(|e| panic!("the server stopped reading: {e}"));
    let want = b"+PONG\r\n".len() * COUNT;
    let mut got = 0;
    let mut chunk = vec![0u8; 1 << 20];
    while got < want {
        match stream.read(&mut chunk) {
            Ok(0) => panic!("closed after {got} of {want} bytes"),
            Ok(n) => {
                assert!(chunk[..n].iter().all(|b| b"+PONG\r\n".contains(b)));
                got += n;
            }
            Err(e) => panic!("no reply after {got} of {want} bytes: {e}"),
        }
    }
    assert_eq!(got, want);
}
