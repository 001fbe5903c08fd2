//! Issue #8's proof: against a real `redis-server` started by the test, the
//! async wrapper under `--redisson 3.23.4`, `3.44.0` and `4.7.0` sends
//! exactly the commands that Redisson release sends, as seen by `MONITOR`:
//! script texts, key names, the unlock latch key, every argument, and the
//! order, with nothing extra and nothing missing. Two runs per release:
//! lock, one watchdog renewal, unlock; and a contended `lock()` (the
//! waiter's `SUBSCRIBE`, retries and `UNSUBSCRIBE`, both clients' unlocks).
//!
//! The expected lists are written from Redisson's source at each tag, not
//! from lockcore: a script is pinned by the SHA1 of its text as the JVM joins
//! the Java string literals of the method named next to it (computed once
//! from the tag's source; neither that source nor the extraction is kept
//! here), so a test that compared against lockcore's own constants could
//! not pass vacuously. The SHA1 is also what 4.7.0 sends as `EVALSHA`'s
//! argument: its script cache is on by default.
//!
//! Redisson is modelled with a single-server config (its `syncedEval` then
//! sends a plain `EVAL`, no `INFO REPLICATION` or `WAIT`), the default
//! timeouts and retries, and each release's default script cache (off
//! before 3.46.0, on from it: see [`Wire`]); `replicated` adds a real
//! replica, the client's `INFO` and `WAIT`s, with the commands lockcore
//! does not send yet named.
//!
//! What Redisson sends while `Redisson.create()` connects is outside the
//! lock path measured here, and lockcore does not send it: among it,
//! 4.0.0+'s probe for a cluster behind a proxy (`MGET test1 test2`, an
//! `EVAL` of two keys from 4.3.1; `MasterSlaveConnectionManager.
//! detectCluster`), whose answer lockcore takes from `Config::cluster_proxy`.

mod fair;
mod fair_legacy;
mod fenced;
mod replicated;
mod rw;
mod rw_async;
mod sentinel;
mod spin;

use std::net::SocketAddr;
use std::time::Duration;

use fake_redis::testing::RealRedis;
use lockcore::{Config, RedissonClient, Release, RespTransport, ThreadId};
use sha1::{Digest, Sha1};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::time::{Instant, timeout_at};

const T1: ThreadId = ThreadId(1);
const UUID_A: &str = "6f1c7a4e-0b2d-4c3e-9f8a-1d2e3f4a5b6c";
const UUID_B: &str = "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a";
/// Redisson's `getLockName(threadId)`: `<id>:<thread-id>`.
const FIELD_A: &str = "6f1c7a4e-0b2d-4c3e-9f8a-1d2e3f4a5b6c:1";
const FIELD_B: &str = "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a:1";
const LOCK: &str = "orders";
/// `prefixName("redisson_lock__channel", name)`.
const CHANNEL: &str = "redisson_lock__channel:{orders}";
/// `getUnlockLatchName(requestId)`: `prefixName("redisson_unlock_latch",
/// name) + ":" + requestId`, the id being `generateId()` (16 random bytes
/// in lower-case hex).
const LATCH_PREFIX: &str = "redisson_unlock_latch:{orders}:";
/// A short watchdog, so the first renewal (at a third of it) comes within
/// the test; it is also `internalLockLeaseTime`, the lease every script
/// carries.
const WATCHDOG: u64 = 3_000;
const LEASE: &str = "3000";
/// Redisson's default watchdog, for the contended runs: no renewal comes
/// within them.
const DEFAULT_LEASE: &str = "30000";
/// `LockPubSub.UNLOCK_MESSAGE`.
const UNLOCK_MESSAGE: &str = "0";
/// `getSubscribeService().getPublishCommand()` without sharded pub/sub:
/// `RedisCommands.PUBLISH.getName()`.
const PUBLISH: &str = "PUBLISH";
/// How long a command may take to show up on `MONITOR`: generous, since a
/// missing command only costs this wait and a loaded CI machine is slow.
const WAIT: Duration = Duration::from_secs(6);

/// A Redisson script, pinned by the SHA1 (hex) of its exact text.
struct Script {
    sha1: &'static str,
    source: &'static str,
}

/// redisson-3.23.4 RedissonLock.java:207, redisson-3.44.0
/// RedissonLock.java:220 and redisson-4.7.0 RedissonLock.java:216
/// (`tryLockInnerAsync`): the same text at all three tags.
const ACQUIRE: Script = Script {
    sha1: "149c5a8bf18676fd99e9e6e24923bd64d9b62f94",
    source: "RedissonLock.tryLockInnerAsync",
};

/// redisson-3.23.4 RedissonBaseLock.java:174 (`renewExpirationAsync`).
const RENEW_3_23: Script = Script {
    sha1: "8e19a1ddbdee9138df9f32a480c57addab4353d1",
    source: "RedissonBaseLock.renewExpirationAsync (3.23.4)",
};

/// redisson-3.23.4 RedissonLock.java:332 (`unlockInnerAsync(long)`; the
/// publish command is `ARGV[4]` since 3.22.0, #5047).
const UNLOCK_3_23: Script = Script {
    sha1: "778cea8aada230ae060b432fc333adaec85f2f4c",
    source: "RedissonLock.unlockInnerAsync (3.23.4)",
};

/// redisson-3.44.0 renewal/LockTask.java:72 (`renew`) and redisson-4.7.0
/// renewal/LockTask.java:84 (`buildChunk`): one EVAL per chunk of up to
/// `lockWatchdogBatchSize` (100) locks, `ARGV[1]` the lease and
/// `ARGV[i + 1]` the field of `KEYS[i]`.
const RENEW_LOCK_TASK: Script = Script {
    sha1: "6a3d31570dc6f4b0bd32bcdc8e75667747c6f635",
    source: "LockTask.renew (3.44.0, 4.7.0)",
};

/// redisson-3.44.0 RedissonLock.java:346 and redisson-4.7.0
/// RedissonLock.java:349 (`unlockInnerAsync(threadId, requestId,
/// timeout)`): the same text at both tags.
const UNLOCK_LATCHED: Script = Script {
    sha1: "6866459238a13a701d42f4971f12d9f3a50e2442",
    source: "RedissonLock.unlockInnerAsync with latch (3.44.0, 4.7.0)",
};

/// One expected argument.
#[derive(Clone)]
enum Arg {
    /// Exactly these bytes.
    Word(&'static str),
    /// A script text with this SHA1.
    Script(&'static Script),
    /// `LATCH_PREFIX` and a 32-hex-digit request id, the same id wherever
    /// it appears in the sequence.
    Latch,
    /// A decimal number in this range (a TTL drawn with jitter).
    Between(u64, u64),
}

impl Arg {
    fn accepts(&self, word: &[u8], latch: &mut Option<Vec<u8>>) -> bool {
        match self {
            Arg::Word(w) => word == w.as_bytes(),
            Arg::Script(s) => sha1_hex(word) == s.sha1,
            Arg::Latch => accepts_latch(word, latch),
            Arg::Between(lo, hi) => std::str::from_utf8(word)
                .ok()
                .and_then(|w| w.parse::<u64>().ok())
                .is_some_and(|n| (*lo..=*hi).contains(&n)),
        }
    }

    fn render(&self) -> String {
        match self {
            Arg::Word(w) => format!("{w:?}"),
            Arg::Script(s) => format!("<script sha1 {} = {}>", s.sha1, s.source),
            Arg::Latch => format!("\"{LATCH_PREFIX}<request id>\""),
            Arg::Between(lo, hi) => format!("<{lo}..={hi}>"),
        }
    }
}

fn accepts_latch(word: &[u8], latch: &mut Option<Vec<u8>>) -> bool {
    let Some(id) = word.strip_prefix(LATCH_PREFIX.as_bytes()) else {
        return false;
    };
    let hex = id.len() == 32 && id.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'));
    hex && latch.get_or_insert_with(|| id.to_vec()) == id
}

fn sha1_hex(text: &[u8]) -> String {
    Sha1::digest(text)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// An argument as sent: a script by its SHA1 and its first words.
fn show(word: &[u8]) -> String {
    let text = String::from_utf8_lossy(word);
    if word.len() <= 48 {
        return format!("{text:?}");
    }
    let head: String = text.chars().take(48).collect();
    format!("<script sha1 {} = {head:?}...>", sha1_hex(word))
}

/// How a release sends its scripts to one Redis. Before 3.46.0,
/// `EVAL <text>`. From 3.46.0 (`useScriptCache` true by default, #5507,
/// commit b380d911e; `CommandAsyncService.evalAsync`, redisson-4.7.0
/// CommandAsyncService.java:578-659): `EVALSHA <sha1>`; the first time
/// this Redis sees a script it answers `NOSCRIPT`, and Redisson sends
/// `SCRIPT LOAD <text>` and the same `EVALSHA` again.
struct Wire {
    cached: bool,
    loaded: Vec<&'static str>,
}

impl Wire {
    fn of(version: &str) -> Wire {
        Wire {
            cached: version == "4.7.0",
            loaded: Vec::new(),
        }
    }

    /// The commands that run `script` with `rest` (numkeys, keys, args).
    fn script(&mut self, script: &'static Script, rest: Vec<Arg>) -> Vec<Vec<Arg>> {
        if !self.cached {
            let mut command = vec![Arg::Word("EVAL"), Arg::Script(script)];
            command.extend(rest);
            return vec![command];
        }
        let mut command = vec![Arg::Word("EVALSHA"), Arg::Word(script.sha1)];
        command.extend(rest);
        if self.loaded.contains(&script.sha1) {
            return vec![command];
        }
        self.loaded.push(script.sha1);
        let load = vec![Arg::Word("SCRIPT"), Arg::Word("LOAD"), Arg::Script(script)];
        vec![command.clone(), load, command]
    }
}

fn exact(words: &[&'static str]) -> Vec<Arg> {
    words.iter().map(|w| Arg::Word(w)).collect()
}

fn acquire(wire: &mut Wire, field: &'static str, lease: &'static str) -> Vec<Vec<Arg>> {
    wire.script(&ACQUIRE, exact(&["1", LOCK, lease, field]))
}

/// One lock's renewal: the same arguments before and after the batched
/// chain (a chunk of one key), only the script differs.
fn renew(wire: &mut Wire, version: &str) -> Vec<Vec<Arg>> {
    let script = match version {
        "3.23.4" => &RENEW_3_23,
        _ => &RENEW_LOCK_TASK,
    };
    wire.script(script, exact(&["1", LOCK, LEASE, FIELD_A]))
}

/// The release's unlock: the script, then (3.24+) the latch's `DEL`.
fn unlock(
    wire: &mut Wire,
    version: &str,
    field: &'static str,
    lease: &'static str,
) -> Vec<Vec<Arg>> {
    let (script, rest) = match version {
        "3.23.4" => {
            let args = [UNLOCK_MESSAGE, lease, field, PUBLISH];
            let rest = exact(&[&["2", LOCK, CHANNEL][..], &args].concat());
            return wire.script(&UNLOCK_3_23, rest);
        }
        "3.44.0" => (
            &UNLOCK_LATCHED,
            latched_args(field, lease, Arg::Word("13500")),
        ),
        _ => (
            &UNLOCK_LATCHED,
            latched_args(field, lease, Arg::Between(16_000, 20_000)),
        ),
    };
    let mut commands = wire.script(script, rest);
    commands.push(del_latch());
    commands
}

/// The latched unlock's keys and arguments; `ttl` is `ARGV[5]`, the
/// latch's TTL.
fn latched_args(field: &'static str, lease: &'static str, ttl: Arg) -> Vec<Arg> {
    let mut rest = exact(&["3", LOCK, CHANNEL]);
    rest.push(Arg::Latch);
    rest.extend(exact(&[UNLOCK_MESSAGE, lease, field, PUBLISH]));
    rest.push(ttl);
    rest
}

/// `writeAsync(..., DEL, getUnlockLatchName(id))` once the unlock script
/// answered (RedissonBaseLock.java:228 at 3.44.0, :240 at 4.7.0).
fn del_latch() -> Vec<Arg> {
    vec![Arg::Word("DEL"), Arg::Latch]
}

/// `SUBSCRIBE` or `UNSUBSCRIBE` of the lock's channel.
fn pubsub(command: &'static str) -> Vec<Arg> {
    vec![Arg::Word(command), Arg::Word(CHANNEL)]
}

/// Each command sent, with every argument that matches its expectation
/// rendered as the expectation (so equal lists mean a match).
fn canonical(expected: &[Vec<Arg>], sent: &[Vec<Vec<u8>>]) -> Vec<String> {
    let mut latch = None;
    let mut line = |(i, command): (usize, &Vec<Vec<u8>>)| {
        let args = command.iter().enumerate().map(|(j, word)| {
            match expected.get(i).and_then(|c| c.get(j)) {
                Some(arg) if arg.accepts(word, &mut latch) => arg.render(),
                _ => show(word),
            }
        });
        args.collect::<Vec<_>>().join(" ")
    };
    sent.iter().enumerate().map(&mut line).collect()
}

fn numbered(lines: &[String]) -> String {
    let rows = lines.iter().enumerate();
    rows.map(|(i, l)| format!("  {}. {l}\n", i + 1)).collect()
}

/// `None` when `sent` is `expected`, else both numbered lists and the
/// commands that differ.
fn sequence_diff(label: &str, expected: &[Vec<Arg>], sent: &[Vec<Vec<u8>>]) -> Option<String> {
    let want: Vec<String> = expected
        .iter()
        .map(|c| c.iter().map(Arg::render).collect::<Vec<_>>().join(" "))
        .collect();
    let got = canonical(expected, sent);
    if want == got {
        return None;
    }
    let differ: Vec<String> = (0..want.len().max(got.len()))
        .filter(|&i| want.get(i) != got.get(i))
        .map(|i| (i + 1).to_string())
        .collect();
    Some(format!(
        "--redisson {label}: the lock client's commands differ from Redisson's \
         (command {}).\nRedisson sends:\n{}lockcore sent:\n{}",
        differ.join(", "),
        numbered(&want),
        numbered(&got)
    ))
}

fn assert_sequence(label: &str, expected: &[Vec<Arg>], sent: &[Vec<Vec<u8>>]) {
    if let Some(diff) = sequence_diff(label, expected, sent) {
        panic!("{diff}");
    }
}

/// One `MONITOR` line: who sent it (`127.0.0.1:<port>`, or `lua` for a
/// script's own calls) and its arguments.
#[derive(Debug, PartialEq)]
struct Seen {
    source: String,
    words: Vec<Vec<u8>>,
}

/// `+<time> [<db> <source>] "<arg>" "<arg>" ...`.
fn parse_line(line: &[u8]) -> Seen {
    let text = std::str::from_utf8(line).expect("MONITOR lines are ASCII");
    let text = text.trim_end_matches(['\r', '\n']);
    let open = text
        .find(" [")
        .unwrap_or_else(|| panic!("MONITOR line {text:?}"));
    let close = open
        + text[open..]
            .find("] ")
            .unwrap_or_else(|| panic!("{text:?}"));
    let (_db, source) = text[open + 2..close]
        .split_once(' ')
        .expect("db and source");
    Seen {
        source: source.to_owned(),
        words: unquote_all(&text.as_bytes()[close + 2..]),
    }
}

fn unquote_all(mut rest: &[u8]) -> Vec<Vec<u8>> {
    let mut words = Vec::new();
    while let Some((word, tail)) = unquote(rest) {
        words.push(word);
        rest = tail.strip_prefix(b" ").unwrap_or(tail);
    }
    words
}

/// One argument as Redis's `sdscatrepr` quotes it.
fn unquote(s: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    let mut s = s.strip_prefix(b"\"")?;
    let mut word = Vec::new();
    loop {
        s = match s {
            [b'"', tail @ ..] => return Some((word, tail)),
            [b'\\', b'x', h, l, tail @ ..] => {
                word.push(hex_digit(*h) * 16 + hex_digit(*l));
                tail
            }
            [b'\\', c, tail @ ..] => {
                word.push(unescape(*c));
                tail
            }
            [c, tail @ ..] => {
                word.push(*c);
                tail
            }
            [] => panic!("unterminated argument in a MONITOR line"),
        };
    }
}

fn unescape(c: u8) -> u8 {
    match c {
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'a' => 0x07,
        b'b' => 0x08,
        other => other,
    }
}

fn hex_digit(d: u8) -> u8 {
    (d as char).to_digit(16).expect("a hex digit after \\x") as u8
}

/// A `MONITOR` connection to the test's Redis.
struct Monitor {
    lines: BufReader<TcpStream>,
    /// Its own address and the test's helper connections', whose lines are
    /// not a lock client's.
    ignored: Vec<String>,
    redis: SocketAddr,
}

impl Monitor {
    async fn start(redis: &RealRedis) -> Monitor {
        let mut stream = TcpStream::connect(redis.addr()).await.unwrap();
        let own = stream.local_addr().unwrap().to_string();
        stream.write_all(b"MONITOR\r\n").await.unwrap();
        let mut lines = BufReader::new(stream);
        let mut ok = String::new();
        lines.read_line(&mut ok).await.unwrap();
        assert_eq!(ok, "+OK\r\n");
        let redis = redis.addr();
        let ignored = vec![own];
        Monitor {
            lines,
            ignored,
            redis,
        }
    }

    /// The next line, or `None` once `deadline` passed.
    async fn next(&mut self, deadline: Instant) -> Option<Seen> {
        let mut line = Vec::new();
        match timeout_at(deadline, self.lines.read_until(b'\n', &mut line)).await {
            Err(_elapsed) => None,
            Ok(Ok(n)) if n > 0 => Some(parse_line(&line)),
            Ok(other) => panic!("MONITOR connection ended: {other:?}"),
        }
    }

    /// Not the test's own line, nor a script's inner call.
    fn is_client(&self, seen: &Seen) -> bool {
        seen.source != "lua" && !self.ignored.contains(&seen.source)
    }

    /// Adds the lock clients' commands to `sent` until it holds `n`, or
    /// until `WAIT` passed (a missing command then shows in the comparison).
    async fn collect(&mut self, sent: &mut Vec<Seen>, n: usize) {
        let deadline = Instant::now() + WAIT;
        while sent.len() < n {
            let Some(seen) = self.next(deadline).await else {
                return;
            };
            if self.is_client(&seen) {
                sent.push(seen);
            }
        }
    }

    /// A plain connection of the test's, sending `command`; its reply.
    async fn helper(&mut self, command: &[u8]) -> (String, Vec<u8>) {
        let mut stream = TcpStream::connect(self.redis).await.unwrap();
        let addr = stream.local_addr().unwrap().to_string();
        self.ignored.push(addr.clone());
        stream.write_all(command).await.unwrap();
        let mut stream = BufReader::new(stream);
        let mut head = String::new();
        stream.read_line(&mut head).await.unwrap();
        let len: usize = head.trim_end().strip_prefix('$').unwrap().parse().unwrap();
        let mut body = vec![0; len + 2];
        stream.read_exact(&mut body).await.unwrap();
        body.truncate(len);
        (addr, body)
    }

    /// Leaves out the commands from `addr` (on a replica, its primary's
    /// link, whose replicated writes and pings `MONITOR` shows).
    fn ignore(&mut self, addr: SocketAddr) {
        self.ignored.push(addr.to_string());
    }

    /// Leaves out the commands of every connection named `name…` now
    /// (a sentinel's, which names its links `sentinel-<id>-cmd` and
    /// `-pubsub`).
    async fn ignore_named(&mut self, name: &str) {
        let (_, list) = self.helper(b"CLIENT LIST\r\n").await;
        let list = String::from_utf8(list).unwrap();
        for line in list.lines() {
            let field = |key: &str| line.split(' ').find_map(|f| f.strip_prefix(key));
            if field("name=").is_some_and(|n| n.starts_with(name))
                && let Some(addr) = field("addr=")
            {
                self.ignored.push(addr.to_owned());
            }
        }
    }

    /// The addresses of every client connected now but the test's own.
    async fn clients(&mut self) -> Vec<String> {
        let (_, list) = self.helper(b"CLIENT LIST\r\n").await;
        let list = String::from_utf8(list).unwrap();
        let addrs = list.lines().filter_map(|l| {
            let field = l.split(' ').find_map(|f| f.strip_prefix("addr="));
            field.map(str::to_owned)
        });
        addrs.filter(|a| !self.ignored.contains(a)).collect()
    }

    /// Ends the capture: a fresh connection sends `ECHO`, and every command
    /// the lock clients sent before it (an extra one too) joins `sent`.
    async fn finish(&mut self, sent: &mut Vec<Seen>) {
        let (marker, reply) = self.helper(b"ECHO end\r\n").await;
        assert_eq!(reply, b"end");
        let deadline = Instant::now() + WAIT;
        loop {
            let seen = self
                .next(deadline)
                .await
                .expect("the ECHO marker on MONITOR");
            if seen.source == marker {
                return;
            }
            if self.is_client(&seen) {
                sent.push(seen);
            }
        }
    }
}

fn config(release: &str, watchdog: u64) -> Config {
    Config::builder()
        .release(release.parse::<Release>().unwrap())
        .watchdog_timeout(watchdog)
        .build()
        .unwrap()
}

async fn client(redis: &RealRedis, uuid: &str, config: Config) -> RedissonClient<RespTransport> {
    let transport = RespTransport::connect(&redis.url()).await.unwrap();
    RedissonClient::new(uuid, config, transport)
}

fn words(sent: Vec<Seen>) -> Vec<Vec<Vec<u8>>> {
    sent.into_iter().map(|s| s.words).collect()
}

/// Under `version`: `lock()` (no lease, so the watchdog renews), held
/// until the first renewal showed on `MONITOR` (a third of the watchdog,
/// 1 s, after the acquire), then `unlock()`; every command the lock
/// client sent, in order, must be Redisson's.
async fn proves_lock_renew_unlock(version: &str) {
    let mut wire = Wire::of(version);
    let mut expected = acquire(&mut wire, FIELD_A, LEASE);
    expected.extend(renew(&mut wire, version));
    let held = expected.len();
    expected.extend(unlock(&mut wire, version, FIELD_A, LEASE));
    let redis = RealRedis::start_for_test();
    let mut monitor = Monitor::start(&redis).await;
    let a = client(&redis, UUID_A, config(version, WATCHDOG)).await;
    let lock = a.lock(LOCK).unwrap();
    let mut sent = Vec::new();
    lock.lock(T1).await.unwrap();
    // The acquire, then the first renewal: waiting for it on MONITOR rather
    // than sleeping keeps the test exact on a slow machine (the second
    // renewal is another second away).
    monitor.collect(&mut sent, held).await;
    assert_eq!(lock.unlock(T1).await, Ok(true));
    monitor.collect(&mut sent, expected.len()).await;
    monitor.finish(&mut sent).await;
    assert_sequence(version, &expected, &words(sent));
}

/// What each client of the contended run must send, step by step, in the
/// order the steps reach Redis (which decides who meets `NOSCRIPT`).
struct Contended {
    holder_acquire: Vec<Vec<Arg>>,
    waiter_waits: Vec<Vec<Arg>>,
    holder_unlock: Vec<Vec<Arg>>,
    waiter_wakes: Vec<Vec<Arg>>,
    waiter_unlock: Vec<Vec<Arg>>,
}

fn contended_expected(version: &str) -> Contended {
    let mut wire = Wire::of(version);
    let holder_acquire = acquire(&mut wire, FIELD_A, DEFAULT_LEASE);
    let mut waiter_waits = acquire(&mut wire, FIELD_B, DEFAULT_LEASE);
    waiter_waits.push(pubsub("SUBSCRIBE"));
    waiter_waits.extend(acquire(&mut wire, FIELD_B, DEFAULT_LEASE));
    let holder_unlock = unlock(&mut wire, version, FIELD_A, DEFAULT_LEASE);
    let mut waiter_wakes = acquire(&mut wire, FIELD_B, DEFAULT_LEASE);
    waiter_wakes.push(pubsub("UNSUBSCRIBE"));
    let waiter_unlock = unlock(&mut wire, version, FIELD_B, DEFAULT_LEASE);
    Contended {
        holder_acquire,
        waiter_waits,
        holder_unlock,
        waiter_wakes,
        waiter_unlock,
    }
}

/// Under `version` with Redisson's default watchdog: A holds the lock; B's
/// `lock()` tries, subscribes, tries again and waits; A unlocks (its
/// script publishes, B wakes), B acquires, unsubscribes and unlocks. Each
/// step waits for the previous one on MONITOR, so each client's order is
/// fixed; the two clients' commands are told apart by their connections.
async fn proves_contended_lock(version: &str) {
    let steps = contended_expected(version);
    let redis = RealRedis::start_for_test();
    let mut monitor = Monitor::start(&redis).await;
    let a = client(&redis, UUID_A, config(version, 30_000)).await;
    let a_addrs = monitor.clients().await;
    let b = client(&redis, UUID_B, config(version, 30_000)).await;
    let (la, lb) = (a.lock(LOCK).unwrap(), b.lock(LOCK).unwrap());
    let mut sent = Vec::new();
    let mut seen = steps.holder_acquire.len();
    la.lock(T1).await.unwrap();
    monitor.collect(&mut sent, seen).await;
    let waiting = tokio::spawn(async move { lb.lock(T1).await.map(|()| lb) });
    seen += steps.waiter_waits.len();
    monitor.collect(&mut sent, seen).await;
    assert_eq!(la.unlock(T1).await, Ok(true));
    seen += steps.holder_unlock.len() + steps.waiter_wakes.len();
    monitor.collect(&mut sent, seen).await;
    let lb = waiting.await.unwrap().unwrap();
    assert_eq!(lb.unlock(T1).await, Ok(true));
    seen += steps.waiter_unlock.len();
    monitor.collect(&mut sent, seen).await;
    monitor.finish(&mut sent).await;
    let holder = [steps.holder_acquire, steps.holder_unlock].concat();
    let waiter = [steps.waiter_waits, steps.waiter_wakes, steps.waiter_unlock].concat();
    assert_per_client(version, &a_addrs, sent, &holder, &waiter);
}

/// Splits `sent` by client (A's connections are `a_addrs`) and checks both
/// sequences, reporting every difference at once.
fn assert_per_client(
    version: &str,
    a_addrs: &[String],
    sent: Vec<Seen>,
    holder: &[Vec<Arg>],
    waiter: &[Vec<Arg>],
) {
    let (from_a, from_b): (Vec<Seen>, Vec<Seen>) =
        sent.into_iter().partition(|s| a_addrs.contains(&s.source));
    let diffs: Vec<String> = [
        sequence_diff(&format!("{version}, holder A"), holder, &words(from_a)),
        sequence_diff(&format!("{version}, waiter B"), waiter, &words(from_b)),
    ]
    .into_iter()
    .flatten()
    .collect();
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

/// `--redisson 3.23.4`: acquire (`RedissonLock.tryLockInnerAsync`), one
/// watchdog renewal (`RedissonBaseLock.renewExpirationAsync`, scheduled by
/// `renewExpiration` at `internalLockLeaseTime / 3`), unlock
/// (`RedissonLock.unlockInnerAsync(long)`, with the publish command as
/// `ARGV[4]`), and nothing else: no latch before 3.24. Any difference in a
/// script's SHA1, an argument or the order fails it.
#[tokio::test]
async fn redisson_3_23_4_lock_renew_unlock() {
    proves_lock_renew_unlock("3.23.4").await;
}

/// `--redisson 3.44.0`: acquire (`RedissonLock.tryLockInnerAsync`), one
/// renewal by the batched chain (`renewal/LockTask.renew`, a chunk of one
/// lock), the latched unlock (`RedissonLock.unlockInnerAsync(threadId,
/// requestId, timeout)`, `KEYS[3]` the latch, `ARGV[5]` its TTL
/// `(timeout + retryInterval) * retryAttempts` = (3000 + 1500) * 3), then
/// `DEL` of that same latch key (`RedissonBaseLock.unlockInnerAsync(long)`).
#[tokio::test]
async fn redisson_3_44_0_lock_renew_unlock() {
    proves_lock_renew_unlock("3.44.0").await;
}

/// `--redisson 4.7.0`: as 3.44.0 (`LockTask.buildChunk` holds the renewal
/// script now), except the latch's TTL: `(timeout +
/// retryDelay.calcDelay(retryAttempts)) * retryAttempts` with 4 attempts and
/// `EqualJitterDelay(1 s, 2 s)`, whose delay at attempt 4 is 1 000 to
/// 2 000 ms, so 16 000 to 20 000 ms (RedissonBaseLock.java:225-226);
/// and every script goes as `EVALSHA <sha1>`, Redisson's default
/// `useScriptCache(true)` since 3.46.0 (#5507): this Redis is fresh, so
/// each script's first `EVALSHA` meets `NOSCRIPT` and is followed by
/// `SCRIPT LOAD` of its text and the `EVALSHA` again.
#[tokio::test]
async fn redisson_4_7_0_lock_renew_unlock() {
    proves_lock_renew_unlock("4.7.0").await;
}

/// `--redisson 3.23.4`, contended: `RedissonLock.lock(leaseTime, unit,
/// interruptibly)` sends the acquire, `SUBSCRIBE`s the channel
/// (`subscribe(threadId)`), acquires again before waiting on the latch,
/// again once woken, then `UNSUBSCRIBE`s (`PublishSubscribe.unsubscribe`,
/// the entry's last user gone); the holder sends its acquire and unlock.
#[tokio::test]
async fn redisson_3_23_4_contended_lock() {
    proves_contended_lock("3.23.4").await;
}

/// `--redisson 3.44.0`, contended: the same `lock()` loop as 3.23.4, with
/// the latched unlock and its `DEL` for both clients.
#[tokio::test]
async fn redisson_3_44_0_contended_lock() {
    proves_contended_lock("3.44.0").await;
}

/// `--redisson 4.7.0`, contended: as 3.44.0 (the same `lock()` loop and
/// `PublishSubscribe.unsubscribe` at the tag).
#[tokio::test]
async fn redisson_4_7_0_contended_lock() {
    proves_contended_lock("4.7.0").await;
}

/// The parser reads `sdscatrepr`'s escapes back into the bytes sent, and
/// the source of a script's inner call is `lua`.
#[test]
fn monitor_lines_parse() {
    let line = br#"+1700000000.123456 [0 127.0.0.1:5555] "EVAL" "a \"q\" \\x\n\t\x01" "1""#;
    let seen = parse_line(line);
    assert_eq!(seen.source, "127.0.0.1:5555");
    let words: Vec<&[u8]> = seen.words.iter().map(Vec::as_slice).collect();
    assert_eq!(words, [&b"EVAL"[..], b"a \"q\" \\x\n\t\x01", b"1"]);
    let inner = parse_line(b"+1700000000.2 [0 lua] \"hexists\" \"orders\"\r\n");
    assert_eq!(inner.source, "lua");
}
