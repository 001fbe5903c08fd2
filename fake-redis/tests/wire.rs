//! Request framing, compared with a real `redis-server` 7.0.15 byte for
//! byte: raw inputs (well-formed, Redis-tolerated and malformed multibulks,
//! inline commands with quoting, over-long lines) go to both servers on
//! fresh connections, and everything each writes back until it closes must
//! be equal. This is the wire layer's proof: the guard's limits and error
//! texts, redis-protocol's decoding of what the guard lets through, and
//! the inline splitter. The one accepted divergence (a header line whose
//! `\r` is not followed by `\n`) is asserted as such. The connection
//! handshakes with a password required are compared here too.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use fake_redis::testing::RealRedis;
use fake_redis::{BackgroundServer, Engine, MAX_INLINE, SharedEngine, SystemClock};

/// Sent after inputs that leave the connection open, so both servers
/// close it and a read to the end is the whole answer.
const QUIT: &[u8] = b"*1\r\n$4\r\nQUIT\r\n";

/// Everything the server at `addr` writes in answer to `input` until it
/// closes the connection.
fn answer(addr: SocketAddr, input: &[u8], then_quit: bool) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("set timeout");
    stream.write_all(input).expect("write");
    if then_quit {
        stream.write_all(QUIT).expect("write QUIT");
    }
    let mut out = Vec::new();
    stream
        .read_to_end(&mut out)
        .unwrap_or_else(|e| panic!("{addr} did not close after {:?}: {e}", show(input)));
    let _ = stream.shutdown(Shutdown::Both);
    out
}

fn show(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    if s.len() > 60 {
        format!("{}.. ({} bytes)", &s[..40], b.len())
    } else {
        s.into_owned()
    }
}

/// Each input, sent raw (then `QUIT` where the input itself does not close
/// the connection), gets the same bytes from fake-redis as from Redis: a
/// wrong error text, a limit off by one, a tolerated form refused (or a
/// refused one run), a quoting rule or an empty command handled
/// differently shows as a byte difference.
#[test]
fn requests_frame_like_real_redis() {
    let real = RealRedis::start_for_test();
    let fake = BackgroundServer::start(SharedEngine::new(Engine::new(Arc::new(SystemClock))))
        .expect("start fake-redis");
    let mut cases: Vec<(Vec<u8>, bool)> = [
        // Decoded by redis-protocol after the guard.
        (&b"*1\r\n$4\r\nPING\r\n"[..], true),
        (b"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", true),
        (b"*2\r\n$4\r\nECHO\r\n$3\r\na\0b\r\n", true),
        (b"*2\r\n$4\r\nECHO\r\n$4\r\na\r\nb\r\n", true),
        (b"*1\r\n$4\r\nPINGxx", true),
        (b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", true),
        (b"*4\r\n$4\r\nHSET\r\n$1\r\nh\r\n$1\r\nf\r\n$1\r\nv\r\n*2\r\n$7\r\nHGETALL\r\n$1\r\nh\r\n", true),
        // Empty commands, the guard's.
        (b"*0\r\n", true),
        (b"*-1\r\n", true),
        (b"*-5\r\nPING\r\n", true),
        // Inline.
        (b"PING\r\n", true),
        (b"PING\n", true),
        (b"\r\n", true),
        (b"   \r\n", true),
        (b"ECHO 'a b'\r\n", true),
        (b"ECHO \"c\\x41\\n\\t\" 'it\\'s'\r\n", true),
        (b"ECHO \"unterminated\r\n", false),
        (b"ECHO 'a'b\r\n", false),
        (b"ECHO \"a\"b\r\n", false),
        // Malformed multibulks.
        (b"*abc\r\n", false),
        (b"*+1\r\n", false),
        (b"*01\r\n", false),
        (b"*3000000000\r\n", false),
        (b"*1\r\n+foo\r\n", false),
        (b"*1\r\n:1\r\n", false),
        (b"*1\r\n*1\r\n$4\r\nPING\r\n", false),
        (b"*1\r\n$999999999\r\n", false),
        (b"*1\r\n$536870913\r\n", false),
        (b"*1\r\n$-1\r\n", false),
        (b"*1\r\n$x\r\n", false),
    ]
    .iter()
    .map(|(input, quit)| (input.to_vec(), *quit))
    .collect();
    // Lines with no end just over the limit (the whole input is read
    // before the error, so neither server resets the connection).
    cases.push((vec![b'a'; MAX_INLINE + 1], false));
    let mut mbulk = b"*".to_vec();
    mbulk.extend([b'1'; MAX_INLINE]);
    cases.push((mbulk, false));
    let mut bulk = b"*1\r\n".to_vec();
    bulk.extend([b'x'; MAX_INLINE + 1]);
    cases.push((bulk, false));

    let mut errors = 0;
    for (input, quit) in &cases {
        let r = answer(real.addr(), input, *quit);
        let f = answer(fake.addr(), input, *quit);
        assert_eq!(
            show(&r),
            show(&f),
            "answers to {:?} differ (real first)",
            show(input)
        );
        errors += usize::from(r.starts_with(b"-ERR Protocol error"));
    }
    // Guard against a vacuous run: most malformed inputs must have failed.
    assert!(errors >= 15, "only {errors} protocol errors");
}

/// The accepted divergence: Redis ends a header at `\r` and skips the next
/// byte unchecked, so `*1\rX$4\r\nPING\r\n` is `PING` to it; redis-protocol
/// requires `\r\n`, so fake-redis answers a protocol error with
/// redis-protocol's reason and closes. If either side changes, this fails
/// and the module docs of `request` must be revisited.
#[test]
fn header_without_lf_is_the_known_divergence() {
    let real = RealRedis::start_for_test();
    let fake = BackgroundServer::start(SharedEngine::new(Engine::new(Arc::new(SystemClock))))
        .expect("start fake-redis");
    let input = b"*1\rX$4\r\nPING\r\n";
    assert_eq!(show(&answer(real.addr(), input, true)), "+PONG\r\n+OK\r\n");
    assert_eq!(
        show(&answer(fake.addr(), input, false)),
        "-ERR Protocol error: to_isize: Failed to parse as integer.\r\n"
    );
}

/// With a password required (`--requirepass` on redis-server,
/// `Engine::with_password` here), both servers answer the connection
/// handshakes clients send identically: commands before AUTH, wrong and
/// right passwords by AUTH and by `HELLO 3 AUTH ... SETNAME`, the name
/// set by HELLO, and RESET dropping the authentication. HELLO's reply is
/// compared without its connection id.
#[test]
fn requirepass_handshakes_like_real_redis() {
    let real = RealRedis::start_for_test_with(&["--requirepass", "secret"]);
    let fake = BackgroundServer::start(SharedEngine::new(Engine::with_password(
        Arc::new(SystemClock),
        "secret",
    )))
    .expect("start fake-redis");
    let script: &[&[u8]] = &[
        b"*1\r\n$4\r\nPING\r\n",
        b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
        b"*1\r\n$5\r\nMULTI\r\n",
        b"*1\r\n$4\r\nEXEC\r\n",
        b"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n",
        b"*5\r\n$5\r\nHELLO\r\n$1\r\n3\r\n$4\r\nAUTH\r\n$7\r\ndefault\r\n$5\r\nwrong\r\n",
        b"*2\r\n$4\r\nAUTH\r\n$5\r\nwrong\r\n",
        b"*4\r\n$4\r\nAUTH\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n",
        b"*7\r\n$5\r\nHELLO\r\n$1\r\n2\r\n$4\r\nAUTH\r\n$7\r\ndefault\r\n$6\r\nsecret\r\n$7\r\nSETNAME\r\n$2\r\nme\r\n",
        b"*2\r\n$6\r\nCLIENT\r\n$7\r\nGETNAME\r\n",
        b"*1\r\n$5\r\nRESET\r\n",
        b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
        b"*2\r\n$4\r\nAUTH\r\n$6\r\nsecret\r\n",
        b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n",
    ];
    let mask_id = |reply: Vec<u8>| {
        let text = String::from_utf8_lossy(&reply).into_owned();
        match text.find("$2\r\nid\r\n:") {
            Some(at) => {
                let start = at + "$2\r\nid\r\n:".len();
                let end = text[start..].find("\r\n").map_or(text.len(), |e| start + e);
                format!("{}<id>{}", &text[..start], &text[end..])
            }
            None => text,
        }
    };
    let run = |addr: SocketAddr| -> Vec<String> {
        let mut stream = TcpStream::connect(addr).expect("connect");
        script
            .iter()
            .map(|request| {
                stream.write_all(request).expect("write");
                let mut reply = Vec::new();
                let mut chunk = [0u8; 4096];
                // One reply per request: wait long for its first bytes,
                // then until the server has been quiet for a moment.
                let mut wait = Duration::from_secs(10);
                loop {
                    stream.set_read_timeout(Some(wait)).expect("timeout");
                    match stream.read(&mut chunk) {
                        Ok(n) if n > 0 => reply.extend(&chunk[..n]),
                        _ => break,
                    }
                    wait = Duration::from_millis(150);
                }
                mask_id(reply)
            })
            .collect()
    };
    let want = run(real.addr());
    let got = run(fake.addr());
    assert!(want[0].starts_with("-NOAUTH"), "{want:?}");
    assert_eq!(want, got);
}
