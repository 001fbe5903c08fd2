//! fake-redis: an in-process Redis 7, proven equal to a real `redis-server`.
//!
//! locksim checks Redisson's lock against a Redis it controls: time moves
//! only when the simulator says so, and every command is a function call.
//! This crate is that Redis. It keeps 16 databases of strings, hashes,
//! lists and sorted sets with millisecond expiry, runs the Redisson lock scripts as native
//! Rust operations, queues transactions, and delivers pub/sub messages. The same [`Engine`] serves two
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
//!   present at `t` (with a PTTL of 0) and gone at `t + 1`, for every
//!   command and observer, as Redis's `keyIsExpired` (`now > when`).
//! - **Scripts.** `EVAL` with the exact text of a
//!   [`LockScript`], or `EVALSHA` with its SHA1 once it has been run or
//!   loaded, runs the script's native twin atomically (one `execute`); any
//!   other script runs in Lua 5.1 in Redis's sandbox (`lua`). The
//!   twin issues the same `redis.call`s in the same order through the same
//!   command code, so partial effects before an error, error suffixes
//!   (`... script: <sha>, on @user_script:1.`) and Lua's number
//!   conversions (integers through doubles, `tonumber` via `strtod`) are
//!   Redis's; a property test runs each twin against its Lua text.
//! - **Server order and buffers.** Behind the server, one lock covers the
//!   engine and every connection's output buffer, so commands from all
//!   connections run in one order and a message never overtakes the reply
//!   that came before it. Buffers have Redis's `client-output-buffer-limit`
//!   ([`OutputLimits`]) and replies to a pipeline leave in one write.
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
//! # Cluster mode
//!
//! An engine joined to a cluster ([`Engine::join_cluster`]; several of
//! them, one slot table and one clock: [`FakeCluster`]; on sockets:
//! `fake-redis --cluster 3`, or [`BackgroundServer::start_on`] per node)
//! is a Redis Cluster node as Redis 7.0.15 is one (`src/cluster.c`,
//! `getNodeByQuery` and `clusterRedirectClient`):
//!
//! - **Slots.** [`key_slot`]: CRC16/XMODEM ([`crc16`]) of the key, or of
//!   its hash tag (first `{`, the next `}`, an empty tag hashes the whole
//!   key), modulo [`SLOTS`]; `CLUSTER KEYSLOT`.
//! - **Routing.** A command's keys are found at the positions Redis 7's
//!   command table gives (`first`/`last`/`step`; `EVAL`/`EVALSHA`'s
//!   `numkeys`); a transaction's `EXEC` is routed over all its queued
//!   commands. In Redis's order: `CLUSTERDOWN Hash slot not served`,
//!   `CROSSSLOT Keys in request don't hash to the same slot`,
//!   `CLUSTERDOWN The cluster is down` (slots unassigned), then for a
//!   slot being migrated `ASK <slot> <ip>:<port>` (every key missing) or
//!   `TRYAGAIN Multiple keys request during rehashing of slot` (some),
//!   an importing node serving an `ASKING` client, a replica serving
//!   reads of its master's slots after `READONLY`, and
//!   `MOVED <slot> <ip>:<port>`. A redirect refuses a queued command
//!   (the `EXEC` then aborts) or discards the transaction at `EXEC`.
//!   `SELECT` other than 0 is refused.
//! - **Topology.** `CLUSTER SLOTS`, `SHARDS`, `NODES` (the lines
//!   Redisson's `ClusterNodesDecoder` splits, migrations as
//!   `[slot->-id]`/`[slot-<-id]`), `INFO`, `MYID`, and `CLUSTER SETSLOT
//!   <slot> MIGRATING|IMPORTING|STABLE|NODE` with Redis's refusals.
//!   [`Topology`] holds the nodes (ids derived from their addresses),
//!   their roles and the slot owners; [`Topology::promote`] is a
//!   failover, [`FakeCluster::replicate`] feeds replicas.
//!
//! - **The bus's `PUBLISH`.** A `PUBLISH` on a cluster node (a script's
//!   too) is handed on for every other node ([`Response::published`]),
//!   whose subscribers get it through [`Engine::receive_published`], as
//!   Redis 7.0's `clusterPropagatePublish` sends it over the bus; the
//!   simulator does so at once. [`Engine::migrate_slot`] moves a slot's
//!   keys to another node with their TTLs, as `MIGRATE` does.
//!
//! Differences: there is no cluster bus. The nodes share one slot table,
//! so `SETSLOT ... NODE` on one node is seen by all at once (Redis
//! spreads it by gossip); ping and pong times in `CLUSTER NODES` are
//! placeholders and `CLUSTER INFO` counts no bus messages; no node fails
//! on its own; the `fake-redis --cluster` binary's nodes do not hand a
//! `PUBLISH` to each other. `MIGRATE`, `CLUSTER ADDSLOTS`, `MEET`, `FAILOVER`,
//! `COUNTKEYSINSLOT`, `GETKEYSINSLOT` and the other subcommands are
//! unknown (the topology is set through [`FakeCluster`] and
//! [`Topology`]). A script's `redis.call` is not routed: Redis 7.0
//! refuses a call to an undeclared key of another node or slot ("Script
//! attempted to access a non local key in a cluster node"). A replica
//! after `READONLY` runs an `EVAL` whose script writes (Redis refuses
//! the write inside the script). `CLUSTER INFO`/`NODES` are bulk strings
//! in RESP3 too (Redis: verbatim strings). `CLUSTER SHARDS` gives a
//! peer's replication offset as 0.
//!
//! # What is proven, and how
//!
//! - `tests/differential/` starts a real `redis-server` 7.0.15
//!   ([`testing::RealRedis`]) and this crate's server, sends both 512
//!   generated command sequences (lock scripts by EVAL and EVALSHA with
//!   good and bad arguments, strings, hashes, lists, expiry, pub/sub and
//!   patterns, sorted sets (ZADD's flags, the ZRANGE family, pops,
//!   scores such as `inf`, `(2`, `-0`, `0.1`, scripts calling them), the
//!   commands clients send on connect, MULTI/EXEC/WATCH,
//!   wrong types, unknown commands, wrong arities; RESP2 and RESP3) and
//!   requires
//!   byte-identical replies and pub/sub messages; `zset.rs` there runs
//!   fixed sorted-set cases (every command, option, error and edge case)
//!   in both protocols. PTTL/TTL values may differ
//!   by the moment between the two servers' clock reads; HELLO's connection
//!   id is masked.
//! - `tests/differential/sentinel.rs` runs a real primary, replica and two
//!   `redis-server --sentinel` processes through a forced failover and
//!   requires [`Sentinel`]'s replies and announcements, and a replica's
//!   `WAIT`, `READONLY` and script errors, to be the demoted primary's
//!   and the sentinels' (clock-driven fields and run ids masked).
//! - Unit tests in each file pin expiry at exact boundaries on a
//!   [`ManualClock`], each lock script's behaviour, and error texts captured
//!   from the real server.
//! - `tests/wire.rs` sends both servers raw requests (well-formed,
//!   Redis-tolerated and malformed multibulks, quoted inline commands,
//!   over-long lines) and requires the same bytes back until each closes.
//! - `tests/serving.rs` checks the server's global order (no message after
//!   an UNSUBSCRIBE reply, 3,000 rounds under a publish flood), the output
//!   limit closing a slow subscriber (like redis-server), and no stall when
//!   a client with 40,000 channels leaves.
//! - `tests/cluster.rs` starts a real 3-master Redis Cluster on loopback
//!   ([`testing::RealCluster`]) and a [`FakeCluster`] of the same layout,
//!   sends both the same 100-odd commands (key slots and hash tags,
//!   single-key, same-slot and cross-slot commands, `EVAL` with keys on
//!   one node, several and none, transactions, `MOVED`, a slot migration
//!   with `ASK`, `TRYAGAIN` and `ASKING`, every `CLUSTER` subcommand and
//!   its errors) and requires the same bytes, node ports and ids masked
//!   (and `CLUSTER NODES`' times and epochs, which gossip sets).
//! - `tests/redis_rs.rs` runs one redis-rs session (commands, pipeline,
//!   MULTI/EXEC, WATCH transaction, a Redisson-script lock) against both
//!   servers and requires identical replies.
//! - `tests/robustness.rs` sends random bytes and near-RESP junk over TCP:
//!   no panic anywhere, only well-formed replies, and a bystander
//!   connection keeps being served.
//!
//! # Known differences from Redis
//!
//! - A replica ([`Engine::set_replica`]) refuses writes with `READONLY`
//!   and `WAIT` with Redis's texts, but its `INFO replication` gives only
//!   the role, not `master_host` and the link's state, and it has no
//!   `ROLE` command. A client blocked in `WAIT` when its primary is
//!   demoted stays blocked until its timeout (Redis 7.0.15 answers
//!   `-UNBLOCKED force unblock from blocking operation, instance state
//!   changed (master -> replica?)` and closes the connection). A [`Sentinel`] answers only what Redisson sends it
//!   (see `sentinel`).
//! - `UNSUBSCRIBE` without channels confirms in subscription order; Redis
//!   uses its dict order, which depends on a random hash seed.
//! - The commands client libraries use (README's fake-redis section has
//!   the list); others get Redis's unknown-command error. A `QUIT`
//!   queued behind a `BLPOP` is answered but does not close the
//!   connection.
//! - Scripts lack `cmsgpack`, `struct` and `redis.setresp`; see `lua`
//!   for the error texts that differ. `tostring` of a table shows an
//!   address, which differs between runs (as in Redis).
//! - INCRBYFLOAT and HINCRBYFLOAT compute in `f64` and round to 15
//!   significant digits; Redis uses C's 80-bit `long double` and prints 17
//!   decimals, so long or large sums print differently.
//! - KEYS, SCAN and PUBSUB CHANNELS answer in byte order (Redis: hash
//!   table order); SCAN's cursor is a position in that order.
//! - CLIENT SETINFO is Redis 7.2's command (7.0.15 does not know it);
//!   INFO and CLIENT LIST give the fields clients parse, with placeholders
//!   for process, memory and socket figures. TIME has millisecond
//!   precision.
//! - A multibulk header line whose `\r` is not followed by `\n` (Redis
//!   skips that byte unchecked) is refused by redis-protocol: the client
//!   gets `-ERR Protocol error: <redis-protocol's reason>` and is
//!   disconnected, where Redis would run the command. No client sends it.
//! - Sorted sets: ZADD, ZINCRBY, ZREM, ZSCORE, ZMSCORE, ZCARD, ZRANK,
//!   ZREVRANK, the ZRANGE family (ZRANGE with BYSCORE/BYLEX/REV/LIMIT,
//!   ZRANGEBYSCORE, ZREVRANGE, ZREVRANGEBYSCORE, ZRANGEBYLEX,
//!   ZREVRANGEBYLEX), ZCOUNT, ZREMRANGEBYSCORE, ZPOPMIN, ZPOPMAX; the
//!   others (ZUNION, ZSCAN, BZPOPMIN, ...) are unknown commands. A `-0`
//!   score reads back as `0`, as in Redis's listpack encoding (sets up to
//!   128 members; a larger Redis set keeps `-0`), and a lex range over
//!   members of mixed scores (which Redis leaves to its encoding's walk)
//!   stops at its first member out of range.
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
//! // The key lives through t = 31 000 (PTTL 0) and is gone from the ms
//! // after, as in Redis.
//! clock.set(31_000);
//! assert!(redis.hash_snapshot(b"lock").is_some());
//! clock.set(31_001);
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
//! - `slot`: [`key_slot`], [`crc16`]: Redis Cluster's key slots.
//! - `topology`: [`Topology`], [`ClusterNode`]: a cluster's nodes and
//!   slot owners, shared by its nodes.
//! - `routing`: a cluster node's `MOVED`/`ASK`/`CROSSSLOT`/`TRYAGAIN`
//!   decision (Redis's `getNodeByQuery`).
//! - `cluster`: [`FakeCluster`], [`ShardSpec`], [`Engine::join_cluster`].
//! - `migrate`: [`Engine::migrate_slot`], a slot's keys moving to another
//!   node.
//! - `client`: one connection's state (protocol, database, name, auth,
//!   transaction, watched keys).
//! - `multi`: MULTI/EXEC and WATCH.
//! - `blocking`: clients blocked in BLPOP/BRPOP or WAIT (served in order, timed
//!   out by [`Engine::tick`] on the injected clock).
//! - `config`: CONFIG GET/SET parameters.
//! - `db`: the keyspace, per-key expiry.
//! - `zset`: the sorted set (members by score, then bytes) and its score
//!   and lex ranges.
//! - `change_log`: what a database logs of its changes (for watchers,
//!   replicas and observers).
//! - `observer`: what an observer reads of an [`Engine`] without changing
//!   it (a lock key's head, the keyspace's version, keys dropped on
//!   expiry).
//! - `glob`: Redis's glob patterns (KEYS, SCAN, PSUBSCRIBE, CONFIG GET).
//! - `outbox`: a connection's output buffer and its limits.
//! - `cmd`: the command table and dispatcher (name, arity, subcommands,
//!   auth, subscribed-state rule, MULTI queueing); the table in `table`,
//!   one file per family (`string`, `keys`, `hash`, `list`, `zset`,
//!   `zrange`, `pubsub`,
//!   `eval`, `connection`, `client`, `config`, `transaction`, `info`,
//!   `server`, `cluster`), each command with its `# Format`; `key_spec`,
//!   where each command's keys are.
//! - `script`: [`LockScript`] texts, SHA1s and the script cache;
//!   `script_rw`, `script_fair`, `script_fenced`, `script_spin`: the
//!   texts of `RReadWriteLock`, `RFairLock`, `RFencedLock` and `RSpinLock`;
//!   `script_fair_legacy`: `RFairLock`'s before Redisson 3.32.0.
//! - `lua`, `lua_bit`, `lua_cjson`: other scripts in Lua 5.1, Redis's
//!   sandbox and its `bit` and `cjson` libraries.
//! - `native`: the lock scripts as native operations; `native_rw`,
//!   `native_fair`, `native_fenced`, `native_spin`: those of
//!   `RReadWriteLock`, `RFairLock`, `RFencedLock` and `RSpinLock`;
//!   `native_fair_legacy`: `RFairLock`'s before 3.32.0.
//! - `pubsub`: channel and pattern subscriptions.
//! - `replication`: a primary's stream of writes ([`Write`]), replicas
//!   applying it, and `WAIT`.
//! - `waitaof`: `WAITAOF` (Redis 7.2), AOF on the primary and replicas.
//! - `version`: [`RedisVersion`], the release a server answers as (6.2,
//!   7.0, 7.2): whether `WAITAOF` exists, the unknown-command text.
//! - `number`: Redis's and Lua's number parsing, and Redis's double
//!   replies (`%.17g`).
//! - `error`: [`CmdError`], displaying Redis's exact texts.
//! - `value`: [`Value`], a reply before encoding; [`Double`], a score.
//! - `frame`: [`encode`]: a `Value` as a redis-protocol RESP2 or RESP3
//!   frame, encoded by redis-protocol.
//! - `request`: [`parse_request`], [`RequestReader`]: requests off the
//!   wire, as Redis reads them (a guard with Redis's limits and texts in
//!   front of redis-protocol's decoder; the inline splitter).
//! - `connection`: [`serve_connection`] over any byte stream.
//! - `server`: [`SharedEngine`], [`serve`], [`spawn_local_server`],
//!   [`BackgroundServer`].
//! - `clock`: [`Clock`], [`SystemClock`], [`ManualClock`].
//! - `allocator`: [`Allocator`], mimalloc as the global allocator of the
//!   binaries (`fake-redis` and `locksim`), through its plain calls where the
//!   alignment allows (the one module where `unsafe` is allowed).
//! - [`testing`]: [`testing::RealRedis`], a real `redis-server` for tests;
//!   [`testing::RealCluster`], a real Redis Cluster of them.

mod allocator;
mod blocking;
mod change_log;
mod client;
mod clock;
mod cluster;
mod cmd;
mod config;
mod connection;
mod db;
mod engine;
mod error;
mod frame;
mod glob;
mod lua;
mod lua_bit;
mod lua_cjson;
mod migrate;
mod multi;
mod native;
mod native_fair;
mod native_fair_legacy;
#[cfg(test)]
mod native_family_twins;
mod native_fenced;
mod native_rw;
mod native_spin;
#[cfg(test)]
mod native_twins;
mod number;
mod observer;
mod outbox;
mod pubsub;
mod replication;
mod request;
mod routing;
mod script;
mod script_fair;
mod script_fair_legacy;
mod script_fenced;
mod script_rw;
mod script_spin;
mod sentinel;
mod server;
mod slot;
pub mod testing;
mod topology;
mod value;
mod version;
mod waitaof;
mod zset;

pub use allocator::Allocator;
pub use clock::{Clock, ManualClock, SystemClock};
pub use cluster::{ClusterError, FakeCluster, ShardSpec};
pub use connection::serve_connection;
pub use engine::{ConnId, Engine, HashFields, Protocol, Response};
pub use error::CmdError;
pub use frame::{encode, encode_to_vec};
pub use outbox::{Limit, OutputLimits};
pub use replication::Write;
pub use request::{
    MAX_BULK, MAX_INLINE, MAX_MULTIBULK, ProtocolError, Request, RequestReader, parse_request,
};
pub use script::{LockScript, sha1_hex};
pub use sentinel::{Announcement, Node, Sentinel};
pub use server::{
    BackgroundServer, CommandHook, SharedEngine, serve, spawn_local_server, time_out_blocked,
};
pub use slot::{SLOTS, crc16, key_slot};
pub use topology::{ClusterNode, SharedTopology, Topology};
pub use value::{Double, Value};
pub use version::{RedisVersion, UnknownVersion};
