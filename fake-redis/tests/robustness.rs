//! Bad input never crashes fake-redis nor disturbs other clients.
//!
//! Random bytes and near-RESP junk go to the server over TCP, split into
//! random chunks, and the client then hangs up (often mid-frame). The
//! server must answer only well-formed RESP, close the connection when the
//! client goes, never panic (a panic hook counts panics in any thread,
//! including the server's tasks, where tokio would otherwise swallow
//! them), and keep serving a connection opened before the junk started.
//! The same junk also goes straight into the request parser and, as
//! commands, into the engine.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use fake_redis::{
    BackgroundServer, Engine, ManualClock, Request, RequestReader, SharedEngine, SystemClock,
    parse_request,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

static PANICS: AtomicUsize = AtomicUsize::new(0);
static CASES: AtomicUsize = AtomicUsize::new(0);

fn count_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::SeqCst);
        previous(info);
    }));
}

/// Pieces that make near-miss RESP more likely than uniform bytes do.
const PIECES: &[&[u8]] = &[
    b"*",
    b"$",
    b"\r\n",
    b"\n",
    b"1",
    b"2",
    b"-1",
    b"0",
    b"999999999",
    b"536870913",
    b"2147483648",
    b"PING",
    b"ECHO",
    b"GET",
    b"SET",
    b"EVAL",
    b"SUBSCRIBE",
    b"HELLO 3",
    b"\"",
    b"'",
    b"\\x4",
    b"\0",
    b" ",
    b"*2\r\n$4\r\nECHO\r\n",
    b"$3\r\nabc\r\n",
    b"+OK",
    b"QUIT\r\n",
    b"*1\r\n$4\r\nPING\r\n",
];

fn junk() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..2048),
        prop::collection::vec(prop::sample::select(PIECES), 0..64).prop_map(|p| p.concat()),
    ]
}

/// The length of the RESP frame at the start of `buf`, if complete and
/// well-formed; panics on anything a client could not parse.
fn reply_len(buf: &[u8]) -> Option<usize> {
    let end = buf.windows(2).position(|w| w == b"\r\n")?;
    let header = std::str::from_utf8(&buf[1..end]).expect("header is text");
    match buf[0] {
        b'+' | b'-' | b':' | b'_' => Some(end + 2),
        b'$' => {
            let n: i64 = header.parse().expect("bulk length");
            if n < 0 {
                return Some(end + 2);
            }
            let total = end + 2 + n as usize + 2;
            (buf.len() >= total).then_some(total)
        }
        b'*' | b'>' | b'%' => {
            let n: i64 = header.parse().expect("aggregate length");
            let items = if buf[0] == b'%' { 2 * n } else { n };
            let mut at = end + 2;
            for _ in 0..items.max(0) {
                at += reply_len(&buf[at..])?;
            }
            Some(at)
        }
        other => panic!("not a RESP reply: {:?}", char::from(other)),
    }
}

fn ping(mut stream: &TcpStream) -> Vec<u8> {
    stream
        .write_all(b"*1\r\n$4\r\nPING\r\n")
        .expect("write PING");
    let mut buf = [0u8; 7];
    stream.read_exact(&mut buf).expect("read PONG");
    buf.to_vec()
}

/// Junk over TCP, then a hang-up: replies are well-formed RESP, the
/// server closes its side, nothing panics, and a bystander connection
/// still gets `PONG` after every case.
#[test]
fn junk_over_tcp_never_breaks_the_server() {
    count_panics();
    let server = BackgroundServer::start(SharedEngine::new(Engine::new(Arc::new(SystemClock))))
        .expect("start server");
    let bystander = TcpStream::connect(server.addr()).expect("connect bystander");
    bystander
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut runner = TestRunner::new(Config {
        cases: 200,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(
        &(junk(), prop::collection::vec(1usize..64, 1..8)),
        |(bytes, cuts)| {
            CASES.fetch_add(1, Ordering::SeqCst);
            let mut client = TcpStream::connect(server.addr()).expect("connect");
            client
                .set_read_timeout(Some(Duration::from_secs(10)))
                .expect("timeout");
            let mut rest = &bytes[..];
            for cut in cuts {
                let (now, later) = rest.split_at(cut.min(rest.len()));
                // The server may already have closed after a protocol error.
                if client.write_all(now).is_err() {
                    break;
                }
                rest = later;
            }
            let _ = client.write_all(rest);
            let _ = client.shutdown(Shutdown::Write);
            let mut out = Vec::new();
            // Reading to EOF proves the server closed its side.
            if let Err(e) = client.read_to_end(&mut out) {
                prop_assert!(
                    e.kind() == std::io::ErrorKind::ConnectionReset,
                    "server did not close: {e}"
                );
            }
            let mut at = 0;
            while at < out.len() {
                match reply_len(&out[at..]) {
                    Some(n) => at += n,
                    None => prop_assert!(
                        false,
                        "truncated reply {:?}",
                        String::from_utf8_lossy(&out[at..])
                    ),
                }
            }
            prop_assert_eq!(ping(&bystander), b"+PONG\r\n".to_vec());
            Ok(())
        },
    );
    if let Err(e) = result {
        panic!("{e}");
    }
    assert_eq!(
        PANICS.load(Ordering::SeqCst),
        0,
        "a panic happened (see output)"
    );
}

/// A declared bulk of 512 MiB is accepted as a promise only: the server
/// holds what arrived, not what was declared, and a client that leaves
/// mid-frame is simply dropped while others are served.
#[test]
fn huge_declared_length_then_disconnect() {
    let server = BackgroundServer::start(SharedEngine::new(Engine::new(Arc::new(SystemClock))))
        .expect("start server");
    let mut big = TcpStream::connect(server.addr()).expect("connect");
    big.write_all(b"*2\r\n$4\r\nECHO\r\n$536870912\r\nabc")
        .expect("write");
    let other = TcpStream::connect(server.addr()).expect("connect");
    other
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    assert_eq!(ping(&other), b"+PONG\r\n");
    drop(big);
    assert_eq!(ping(&other), b"+PONG\r\n");
    let mut bad = TcpStream::connect(server.addr()).expect("connect");
    bad.write_all(b"*1\r\n$999999999\r\n").expect("write");
    let mut out = Vec::new();
    bad.read_to_end(&mut out).expect("read");
    assert_eq!(out, b"-ERR Protocol error: invalid bulk length\r\n");
    assert_eq!(ping(&other), b"+PONG\r\n");
}

/// The parser on arbitrary bytes: never panics, every command it returns
/// consumed input (so the read loop cannot spin), and a [`RequestReader`]
/// fed the bytes in random pieces reads exactly what one parse of the
/// whole input reads (its resumption is invisible).
#[test]
fn parser_never_panics_and_pieces_read_like_the_whole() {
    let mut runner = TestRunner::new(Config {
        cases: 2000,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(
        &(junk(), prop::collection::vec(1usize..32, 1..64)),
        |(bytes, cuts)| {
            let mut whole = Vec::new();
            let mut buf = BytesMut::from(&bytes[..]);
            loop {
                let before = buf.len();
                let r = parse_request(&mut buf);
                let stop = !matches!(r, Request::Command(_));
                prop_assert!(stop || buf.len() < before, "no progress");
                whole.push(r);
                if stop {
                    break;
                }
            }
            let mut pieces = Vec::new();
            let mut reader = RequestReader::new();
            let mut buf = BytesMut::new();
            let mut rest = &bytes[..];
            let mut cuts = cuts.into_iter().cycle();
            'feed: loop {
                let (now, later) = rest.split_at(cuts.next().unwrap_or(1).min(rest.len()));
                buf.extend_from_slice(now);
                rest = later;
                loop {
                    let r = reader.next_request(&mut buf);
                    match r {
                        Request::Command(_) => pieces.push(r),
                        Request::Incomplete if !rest.is_empty() => break,
                        _ => {
                            pieces.push(r);
                            break 'feed;
                        }
                    }
                }
            }
            prop_assert_eq!(whole, pieces);
            Ok(())
        },
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Command names and arguments the engine fuzz draws from.
const WORDS: &[&str] = &[
    "GET",
    "SET",
    "DEL",
    "EXISTS",
    "PEXPIRE",
    "EXPIRE",
    "PTTL",
    "TTL",
    "HSET",
    "HGET",
    "HEXISTS",
    "HINCRBY",
    "HDEL",
    "HGETALL",
    "HLEN",
    "INCR",
    "PUBLISH",
    "SUBSCRIBE",
    "UNSUBSCRIBE",
    "EVAL",
    "EVALSHA",
    "SCRIPT",
    "LOAD",
    "EXISTS",
    "FLUSH",
    "DBSIZE",
    "FLUSHALL",
    "TIME",
    "HELLO",
    "QUIT",
    "RESET",
    "PING",
    "ECHO",
    "k",
    "f",
    "1",
    "-1",
    "0",
    "3",
    "PX",
    "EX",
    "NX",
    "XX",
    "GET",
    "KEEPTTL",
    "9223372036854775807",
    "-9223372036854775808",
    "",
    "INCRBY",
    "DECR",
    "DECRBY",
    "INCRBYFLOAT",
    "SETEX",
    "PSETEX",
    "SETNX",
    "MGET",
    "MSET",
    "GETDEL",
    "GETEX",
    "PERSIST",
    "HMSET",
    "HMGET",
    "HKEYS",
    "HVALS",
    "HSETNX",
    "HINCRBYFLOAT",
    "LPUSH",
    "RPUSH",
    "LPOP",
    "RPOP",
    "LLEN",
    "LRANGE",
    "LINDEX",
    "LREM",
    "PSUBSCRIBE",
    "PUNSUBSCRIBE",
    "PUBSUB",
    "CHANNELS",
    "NUMSUB",
    "NUMPAT",
    "KEYS",
    "SCAN",
    "MATCH",
    "COUNT",
    "TYPE",
    "RENAME",
    "CONFIG",
    "CLIENT",
    "SETNAME",
    "GETNAME",
    "SETINFO",
    "LIST",
    "INFO",
    "SELECT",
    "AUTH",
    "MULTI",
    "EXEC",
    "DISCARD",
    "WATCH",
    "UNWATCH",
    "FLUSHDB",
    "*",
    "[a-",
    "1.5",
    "inf",
    "16",
    "client-output-buffer-limit",
    "BLPOP",
    "BRPOP",
];

/// Random words as commands straight into the engine (no server): every
/// command gets at least one reply (a blocking pop may wait instead),
/// nothing panics.
#[test]
fn engine_takes_any_command() {
    let clock = ManualClock::new(0);
    let mut engine = Engine::new(Arc::new(clock.clone()));
    let conn = std::cell::Cell::new(engine.connect());
    let word = prop_oneof![
        prop::sample::select(WORDS).prop_map(|w| Bytes::from_static(w.as_bytes())),
        prop::collection::vec(any::<u8>(), 0..8).prop_map(Bytes::from),
    ];
    let mut runner = TestRunner::new(Config {
        cases: 20_000,
        failure_persistence: None,
        ..Config::default()
    });
    let engine = std::cell::RefCell::new(&mut engine);
    let result = runner.run(
        &(
            prop::sample::select(WORDS),
            prop::collection::vec(word, 0..8),
            0u64..100_000,
        ),
        |(name, rest, advance)| {
            clock.advance(advance);
            let mut args = vec![Bytes::from_static(name.as_bytes())];
            args.extend(rest);
            let blocking =
                args[0].eq_ignore_ascii_case(b"blpop") || args[0].eq_ignore_ascii_case(b"brpop");
            let mut engine = engine.borrow_mut();
            let response = engine.execute(conn.get(), args);
            if response.replies.is_empty() {
                // Only a blocking pop waits; start over on a new connection.
                prop_assert!(blocking);
                engine.disconnect(conn.get());
                conn.set(engine.connect());
            }
            Ok(())
        },
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}
