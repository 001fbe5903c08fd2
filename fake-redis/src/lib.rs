//! fake-redis: an in-process Redis 7, proven equal to a real `redis-server`.
//!
//! locksim checks Redisson's lock against a Redis it controls: time moves
//! only when the simulator says so, and every command is a function call.
//! This crate is that Redis. It keeps a keyspace of strings and hashes with
//! millisecond expiry, runs the Redisson lock scripts as native Rust
//! operations, and delivers pub/sub messages. The same [`Engine`] serves two
//! callers: the simulator calls [`Engine::execute`] directly, and a RESP2 /
//! RESP3 server ([`serve`], [`serve_connection`], the `fake-redis` binary)
//! puts it on a socket, so `redis-cli`, `redis-benchmark` and real clients
//! can talk to it.
//!
//! # Model
//!
//! - **Sans-IO engine.** [`Engine`] never reads the wall clock, spawns
//!   nothing and does no I/O; time comes from the injected [`Clock`]
//!   ([`ManualClock`] in tests and the simulator, [`SystemClock`] in the
//!   binary). State lives in ordered maps, so the same commands at the same
//!   times give the same replies, byte for byte.
//! - **Expiry.** Checked on every access: a key whose expiry is `t` is
//!   present at `t - 1` and gone at `t`, for every command and observer.
//! - **Scripts.** There is no Lua. `EVAL` with the exact text of a
//!   [`LockScript`], or `EVALSHA` with its SHA1 once it has been run or
//!   loaded, runs the script's native twin atomically (one `execute`). The
//!   twin issues the same `redis.call`s in the same order through the same
//!   command code, so partial effects before an error, error suffixes
//!   (`... script: <sha>, on @user_script:1.`) and Lua's number
//!   conversions (integers through doubles, `tonumber` via `strtod`) are
//!   Redis's. Any other script text gets a clear error reply.
//! - **Replies.** Commands produce [`Value`]s; the server turns them into
//!   redis-protocol frames for the connection's protocol and redis-protocol
//!   encodes them ([`encode`]). A [`Response`] also carries pub/sub
//!   deliveries for other connections and a close flag (`QUIT`).
//! - **Wire.** Requests are read as Redis 7.0 reads them ([`parse_request`]).
//!   A guard scans a multibulk's headers in place with Redis's limits and
//!   `-ERR Protocol error: ...` texts (then the connection closes) and
//!   finds where the request ends, allocating nothing on a header's word;
//!   redis-protocol's RESP2 decoder then decodes that complete request
//!   into the arguments. Inline commands (`PING\r\n`, not RESP) are split
//!   with Redis's quoting rules.
//!
//! # What is proven, and how
//!
//! - `tests/differential.rs` starts a real `redis-server` 7.0.15
//!   ([`testing::RealRedis`]) and this crate's server, sends both 512
//!   generated command sequences (lock scripts by EVAL and EVALSHA with
//!   good and bad arguments, strings, hashes, expiry, pub/sub, wrong types,
//!   unknown commands, wrong arities; RESP2 and RESP3) and requires
//!   byte-identical replies and pub/sub messages. PTTL/TTL values may differ
//!   by the moment between the two servers' clock reads; HELLO's connection
//!   id is masked.
//! - Unit tests in each file pin expiry at exact boundaries on a
//!   [`ManualClock`], each lock script's behaviour, and error texts captured
//!   from the real server.
//! - `tests/wire.rs` sends both servers raw requests (well-formed,
//!   Redis-tolerated and malformed multibulks, quoted inline commands,
//!   over-long lines) and requires the same bytes back until each closes.
//! - `tests/robustness.rs` sends random bytes and near-RESP junk over TCP:
//!   no panic anywhere, only well-formed replies, and a bystander
//!   connection keeps being served.
//!
//! # Known differences from Redis
//!
//! - A key expiring at `t` is gone at `t` (Redis 7.0 drops it at `t + 1`
//!   and reports `PTTL 0` at `t`); no real client can observe it.
//! - `UNSUBSCRIBE` without channels confirms in subscription order; Redis
//!   uses its dict order, which depends on a random hash seed.
//! - Only the commands locksim needs: PING, ECHO, GET, SET (NX, XX, GET,
//!   EX, PX, EXAT, PXAT, KEEPTTL), INCR, DEL, EXISTS, EXPIRE, PEXPIRE (NX,
//!   XX, GT, LT), TTL, PTTL, HSET, HGET, HEXISTS, HINCRBY, HDEL, HGETALL,
//!   HLEN, PUBLISH, SUBSCRIBE, UNSUBSCRIBE, EVAL, EVALSHA, SCRIPT
//!   LOAD/EXISTS/FLUSH, DBSIZE, FLUSHALL, TIME, HELLO, QUIT, RESET. Others
//!   (CONFIG, CLIENT, PSUBSCRIBE, ...) are unknown commands.
//! - HELLO accepts SETNAME (ignored) but not AUTH; TIME has millisecond
//!   precision.
//! - A multibulk header line whose `\r` is not followed by `\n` (Redis
//!   skips that byte unchecked) is refused by redis-protocol: the client
//!   gets `-ERR Protocol error: <redis-protocol's reason>` and is
//!   disconnected, where Redis would run the command. No client sends it.
//! - An error text quoting client bytes that are not UTF-8 (an unknown
//!   command's name) shows them as U+FFFD, since [`Value::Error`] holds a
//!   `String`; Redis echoes the raw bytes.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use bytes::Bytes;
//! use fake_redis::{Engine, LockScript, ManualClock, Value};
//!
//! let clock = ManualClock::new(1_000);
//! let mut redis = Engine::new(Arc::new(clock.clone()));
//! let conn = redis.connect();
//! let eval = |words: &[&str]| -> Vec<Bytes> {
//!     let mut args = vec![Bytes::from("EVAL"), Bytes::from(LockScript::Acquire.text())];
//!     args.extend(words.iter().map(|w| Bytes::copy_from_slice(w.as_bytes())));
//!     args
//! };
//! // Client a takes the lock for 30 s; b is told how long it still has.
//! let r = redis.execute(conn, eval(&["1", "lock", "30000", "a"]));
//! assert_eq!(r.replies, vec![Value::Nil]);
//! clock.advance(10_000);
//! let r = redis.execute(conn, eval(&["1", "lock", "30000", "b"]));
//! assert_eq!(r.replies, vec![Value::Int(20_000)]);
//! // The lease ends at exactly t = 31 000.
//! clock.set(31_000);
//! assert_eq!(redis.hash_snapshot(b"lock"), None);
//! ```
//!
//! Serving it (`fake-redis --port 6380`, then `redis-cli -p 6380`), or in a
//! test without a runtime of its own:
//!
//! ```no_run
//! use std::sync::Arc;
//! use fake_redis::{BackgroundServer, Engine, SharedEngine, SystemClock};
//!
//! let server = BackgroundServer::start(SharedEngine::new(Engine::new(Arc::new(SystemClock))))?;
//! let url = format!("redis://{}", server.addr());
//! # let _ = url;
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! # Layout
//!
//! - `engine`: [`Engine`], [`ConnId`], [`Protocol`], [`Response`]; runs one
//!   command against the state.
//! - `db`: the keyspace, per-key expiry.
//! - `cmd`: the command table and dispatcher (name, arity, subcommands,
//!   subscribed-state rule); one file per family (`string`, `keys`,
//!   `hash`, `pubsub`, `eval`, `connection`, `server`), each command with
//!   its `# Format`.
//! - `script`: [`LockScript`] texts, SHA1s and the script cache.
//! - `native`: the lock scripts as native operations.
//! - `pubsub`: channel subscriptions.
//! - `number`: Redis's and Lua's number parsing.
//! - `error`: [`CmdError`], displaying Redis's exact texts.
//! - `value`: [`Value`], a reply before encoding.
//! - `frame`: [`encode`]: a `Value` as a redis-protocol RESP2 or RESP3
//!   frame, encoded by redis-protocol.
//! - `request`: [`parse_request`], [`RequestReader`]: requests off the
//!   wire, as Redis reads them (a guard with Redis's limits and texts in
//!   front of redis-protocol's decoder; the inline splitter).
//! - `connection`: [`serve_connection`] over any byte stream.
//! - `server`: [`SharedEngine`], [`serve`], [`spawn_local_server`],
//!   [`BackgroundServer`].
//! - `clock`: [`Clock`], [`SystemClock`], [`ManualClock`].
//! - [`testing`]: [`testing::RealRedis`], a real `redis-server` for tests.

mod client;
mod clock;
mod cmd;
mod config;
mod connection;
mod db;
mod engine;
mod error;
mod frame;
mod glob;
mod multi;
mod native;
mod number;
mod outbox;
mod pubsub;
mod request;
mod script;
mod server;
pub mod testing;
mod value;

pub use clock::{Clock, ManualClock, SystemClock};
pub use connection::serve_connection;
pub use engine::{ConnId, Engine, HashFields, Protocol, Response};
pub use error::CmdError;
pub use frame::{encode, encode_to_vec};
pub use outbox::{Limit, OutputLimits};
pub use request::{
    MAX_BULK, MAX_INLINE, MAX_MULTIBULK, ProtocolError, Request, RequestReader, parse_request,
};
pub use script::{LockScript, sha1_hex};
pub use server::{BackgroundServer, SharedEngine, serve, spawn_local_server};
pub use value::Value;
