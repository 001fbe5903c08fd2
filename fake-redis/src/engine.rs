//! The command engine: one Redis server's state, driven one command at a time.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use rustc_hash::FxHashMap;

use crate::client::Client;
use crate::cmd::{self, Ctx};
use crate::config::Config;
use crate::db::Db;
use crate::outbox::OutputLimits;
use crate::pubsub::PubSub;
use crate::script::ScriptCache;
use crate::{Clock, Value};

/// How many databases `SELECT` can choose from (Redis's default).
pub(crate) const DATABASES: usize = 16;

/// Identifies one client connection to an [`Engine`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConnId(pub u64);

/// Which RESP version a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// RESP2, every connection's start.
    #[default]
    Resp2,
    /// RESP3, after `HELLO 3`.
    Resp3,
}

/// What one command produced.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Response {
    /// The replies to the calling connection, in order. Most commands give
    /// one; `SUBSCRIBE a b` gives one confirmation per channel.
    pub replies: Vec<Value>,
    /// Pub/sub messages for connections (possibly the caller), in the order
    /// Redis would write them. Redis writes them while the command runs, so
    /// a message to the caller itself goes before the caller's replies.
    pub deliveries: Vec<(ConnId, Value)>,
    /// The connection must be closed once the replies are written (`QUIT`).
    pub close: bool,
    /// On a cluster node: each `(channel, message)` a `PUBLISH` here sent
    /// over the cluster bus to every other node
    /// (`clusterPropagatePublish`), for the caller to hand to them
    /// ([`Engine::receive_published`]).
    pub published: Vec<(Bytes, Bytes)>,
}

/// A hash's `(field, value)` pairs in Redis's order.
pub type HashFields = Vec<(Bytes, Bytes)>;

/// Counters `INFO stats` reports.
#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub(crate) connections: u64,
    pub(crate) commands: u64,
}

/// The server state commands work on, apart from the databases.
#[derive(Debug, Default)]
pub(crate) struct State {
    pub(crate) pubsub: PubSub,
    pub(crate) scripts: ScriptCache,
    /// Every connected client's own state (protocol, database, name,
    /// transaction, watched keys). Hashed, not ordered: a command looks its
    /// client up several times, and 50 clients in a B-tree cost a twentieth
    /// of a pipelined PING; `CLIENT LIST` sorts by id, Redis's order.
    pub(crate) clients: FxHashMap<ConnId, Client>,
    pub(crate) config: Config,
    pub(crate) stats: Stats,
    /// The clock when the engine was made (`INFO`'s uptime).
    pub(crate) started_ms: i64,
    /// Clients blocked in BLPOP/BRPOP or WAIT, in the order they blocked.
    pub(crate) blocked_order: BTreeMap<u64, ConnId>,
    /// Room for a pass over `blocked_order` (kept between passes: a
    /// blocked `WAIT` has every command after it check the queue).
    pub(crate) serve_order: Vec<(u64, ConnId)>,
    pub(crate) next_block_seq: u64,
    /// Scripts' `math.random` state (Redis's `rand48`, shared by every
    /// script run, as in Redis).
    pub(crate) lua_rand: u64,
    /// Run Redisson's scripts in Lua too (the native-twin proof sets it).
    pub(crate) lock_scripts_in_lua: bool,
    /// Its role, offset and recorded writes (`WAIT` and `INFO` read it).
    pub(crate) replication: crate::replication::Replication,
    /// The release it answers as (which commands exist, error texts).
    pub(crate) version: crate::RedisVersion,
    /// Its place in a cluster (`cluster-enabled yes`), if any.
    pub(crate) cluster: Option<crate::routing::ClusterRole>,
}

impl State {
    pub(crate) fn protocol(&self, conn: ConnId) -> Protocol {
        self.clients
            .get(&conn)
            .map_or(Protocol::Resp2, |c| c.protocol)
    }

    /// The client's state; a connection never registered gets a fresh one.
    pub(crate) fn client(&mut self, conn: ConnId) -> &mut Client {
        self.clients
            .entry(conn)
            .or_insert_with(|| Client::new(conn, 0))
    }

    pub(crate) fn set_protocol(&mut self, conn: ConnId, protocol: Protocol) {
        self.client(conn).protocol = protocol;
    }
}

/// One Redis server: keyspace, scripts, pub/sub and per-connection state.
///
/// The engine is sans-IO: it never reads the wall clock (time comes from
/// the injected [`Clock`]), spawns nothing and does no I/O, so the same code
/// runs behind the RESP server and inside the simulator.
pub struct Engine {
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) dbs: Vec<Db>,
    pub(crate) state: State,
    next_conn: u64,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("state", &self.state)
            .field("next_conn", &self.next_conn)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// An empty server reading time from `clock`.
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        let mut engine = Self {
            clock,
            dbs: (0..DATABASES).map(|_| Db::default()).collect(),
            state: State {
                lua_rand: crate::lua::RAND48_START,
                ..State::default()
            },
            next_conn: 1,
        };
        engine.state.started_ms = engine.now();
        engine
    }

    /// An empty server that requires `AUTH password` (Redis's
    /// `requirepass`) before any other command.
    pub fn with_password(clock: Arc<dyn Clock>, password: &str) -> Self {
        let mut engine = Engine::new(clock);
        engine.state.config.requirepass = Some(Bytes::copy_from_slice(password.as_bytes()));
        engine
    }

    /// Makes this server answer as Redis `version` (by default 7.0, the
    /// release fake-redis is proven against).
    pub fn set_version(&mut self, version: crate::RedisVersion) {
        self.state.version = version;
    }

    /// The release this server answers as.
    pub fn version(&self) -> crate::RedisVersion {
        self.state.version
    }

    /// Caches every script of [`LockScript::RLOCK`](crate::LockScript::RLOCK)
    /// as `SCRIPT LOAD` would: a Redis that Redisson clients have used
    /// before, where `EVALSHA` of an `RLock` script finds it.
    pub fn load_lock_scripts(&mut self) {
        for script in crate::LockScript::RLOCK {
            self.state.scripts.register_lock(script);
        }
    }

    /// Registers a new connection (RESP2, database 0, no subscriptions).
    pub fn connect(&mut self) -> ConnId {
        let id = ConnId(self.next_conn);
        self.next_conn += 1;
        let client = Client::new(id, self.now());
        self.state.clients.insert(id, client);
        self.state.stats.connections += 1;
        id
    }

    /// Forgets a connection, its subscriptions and its watched keys.
    pub fn disconnect(&mut self, conn: ConnId) {
        self.state.pubsub.remove_conn(conn);
        self.state.blocked_order.retain(|_, c| *c != conn);
        if let Some(client) = self.state.clients.remove(&conn) {
            crate::multi::unwatch_all(&mut self.dbs, conn, &client);
        }
        self.forget_conn(conn);
    }

    /// The name `conn` gave itself with `CLIENT SETNAME`, if any.
    pub fn client_name(&self, conn: ConnId) -> Option<&Bytes> {
        self.state.clients.get(&conn)?.name.as_ref()
    }

    /// The protocol `conn` speaks now.
    pub fn protocol(&self, conn: ConnId) -> Protocol {
        self.state.protocol(conn)
    }

    /// Whether `conn` counts as a pub/sub client for output limits
    /// (subscribed to a channel or pattern).
    pub fn is_pubsub_client(&self, conn: ConnId) -> bool {
        self.state.pubsub.count(conn) > 0
    }

    /// The `client-output-buffer-limit` now in force.
    pub fn output_limits(&self) -> OutputLimits {
        self.state.config.output_limits
    }

    /// Runs one command (`args[0]` is its name, any case) for `conn`.
    ///
    /// An empty command is ignored, as Redis ignores `*0`. A connection id
    /// that was never connected behaves as a fresh RESP2 connection. A
    /// command that blocks (`BLPOP`, `WAIT`) gives no reply now; it comes
    /// as a delivery (see [`Engine::tick`]).
    pub fn execute(&mut self, conn: ConnId, args: impl AsRef<[Bytes]>) -> Response {
        let args = args.as_ref();
        let mut out = Response::default();
        if args.is_empty() {
            return out;
        }
        self.state.stats.commands += 1;
        let now = self.now();
        out.replies = crate::blocking::run(self, conn, args, now, &mut out);
        out
    }

    /// A message another node of the cluster published, as its bus
    /// delivers it here: to this node's subscribers of `channel` (and
    /// matching patterns), not sent on again.
    pub fn receive_published(&mut self, channel: &Bytes, message: &Bytes) -> Response {
        let mut out = Response::default();
        crate::cmd::pubsub::deliver(&self.state.pubsub, channel, message, &mut out);
        out
    }

    /// Times out blocked clients whose deadline has come (`BLPOP`'s and
    /// `WAIT`'s timeout, on the injected clock) and answers a `WAIT` whose
    /// acknowledgements arrived ([`Engine::ack`]): their replies and the
    /// replies to what they queued meanwhile, as deliveries. The simulator
    /// calls it after moving time to [`Engine::next_deadline`] or after
    /// acknowledgements; the server calls it from a timer.
    pub fn tick(&mut self) -> Response {
        let mut out = Response::default();
        let now = self.now();
        crate::blocking::expire(self, now, &mut out, usize::MAX);
        crate::blocking::serve(self, now, &mut out, usize::MAX);
        out
    }

    /// [`Engine::tick`] for one blocked client only (the first timed out,
    /// else the first that can be answered), with the commands it had
    /// queued; an empty response when none is due. Calling it until it
    /// answers nothing does what one `tick` does, and lets the caller look
    /// at the data after each client's commands ran.
    pub fn tick_one(&mut self) -> Response {
        let mut out = Response::default();
        let now = self.now();
        if crate::blocking::expire(self, now, &mut out, 1) == 0 {
            crate::blocking::serve(self, now, &mut out, 1);
        }
        out
    }

    /// How many clients are blocked (`BLPOP`, `BRPOP`, `WAIT`).
    pub fn blocked_clients(&self) -> usize {
        self.state.blocked_order.len()
    }

    /// The earliest deadline (Unix ms) of a blocked client, if any.
    pub fn next_deadline(&self) -> Option<u64> {
        self.state
            .blocked_order
            .values()
            .filter_map(|c| self.state.clients.get(c)?.blocked.as_ref()?.deadline)
            .min()
            .map(|d| u64::try_from(d).unwrap_or(0))
    }

    /// Runs one command against the connection's database with every
    /// check a client's command gets (see `cmd::dispatch`).
    pub(crate) fn dispatch(
        &mut self,
        conn: ConnId,
        args: &[Bytes],
        now: i64,
        out: &mut Response,
    ) -> Vec<Value> {
        self.run(conn, args, now, out, cmd::dispatch)
    }

    /// Runs one command queued by `MULTI` (no checks: see `cmd::run_queued`).
    pub(crate) fn run_queued(
        &mut self,
        conn: ConnId,
        args: &[Bytes],
        now: i64,
        out: &mut Response,
    ) -> Vec<Value> {
        self.run(conn, args, now, out, cmd::run_queued)
    }

    fn run(
        &mut self,
        conn: ConnId,
        args: &[Bytes],
        now: i64,
        out: &mut Response,
        how: fn(&mut Ctx<'_>, &[Bytes]) -> Vec<Value>,
    ) -> Vec<Value> {
        let index = self.state.client(conn).db;
        // The selected database is borrowed as `ctx.db`, the others (for
        // FLUSHALL, INFO, UNWATCH) as the slices before and after it:
        // nothing is built, moved or dropped (a database taken and a new
        // one put in its place was 3% of a GET's time; swapping it with a
        // spare, twice per command, still copied it four times).
        let Some((before, (db, after))) = self
            .dbs
            .split_at_mut_checked(index)
            .and_then(|(before, rest)| Some((before, rest.split_first_mut()?)))
        else {
            // SELECT accepts only an existing database.
            return vec![Value::error("ERR DB index is out of range")];
        };
        let mut ctx = Ctx {
            db,
            state: &mut self.state,
            conn,
            now,
            out,
            others: (before, after),
            db_index: index,
        };
        let replies = how(&mut ctx, args);
        crate::multi::signal_touched(&mut self.dbs[index], &mut self.state);
        self.after_command();
        replies
    }

    pub(crate) fn now(&self) -> i64 {
        i64::try_from(self.clock.now_ms()).unwrap_or(i64::MAX)
    }
}

/// Test helper: command words as arguments.
#[cfg(test)]
pub(crate) fn args(words: &[&str]) -> Vec<Bytes> {
    words
        .iter()
        .map(|w| Bytes::copy_from_slice(w.as_bytes()))
        .collect()
}

/// Test helper: a bulk string reply.
#[cfg(test)]
pub(crate) fn bulk(s: &str) -> Value {
    Value::Bulk(Bytes::copy_from_slice(s.as_bytes()))
}

/// Test helper: an engine on a manual clock at `start_ms`, its clock, and
/// one connection.
#[cfg(test)]
pub(crate) fn engine_at(start_ms: u64) -> (Engine, crate::ManualClock, ConnId) {
    let clock = crate::ManualClock::new(start_ms);
    let mut engine = Engine::new(Arc::new(clock.clone()));
    let conn = engine.connect();
    (engine, clock, conn)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ManualClock;

    fn setup() -> (Engine, ManualClock, ConnId) {
        engine_at(5_000)
    }

    fn run(e: &mut Engine, c: ConnId, words: &[&str]) -> Value {
        let r = e.execute(c, args(words));
        assert_eq!(r.replies.len(), 1, "{words:?} -> {r:?}");
        r.replies.into_iter().next().unwrap_or(Value::Nil)
    }

    /// The keyspace version moves with every write, deletion, expired key
    /// dropped and flush; reads and the clock passing an expiry leave it
    /// (the simulator's observer skips re-reading a lock key on it).
    #[test]
    fn keyspace_version_moves_with_every_change_and_only_then() {
        let (mut e, clock, c) = setup();
        let mut last = e.keyspace_version();
        let mut step = |e: &mut Engine, words: &[&str], changes: bool| {
            run(e, c, words);
            let now = e.keyspace_version();
            assert_eq!(now != last, changes, "{words:?}");
            last = now;
        };
        step(&mut e, &["HINCRBY", "lock", "a:1", "1"], true);
        step(&mut e, &["HEXISTS", "lock", "a:1"], false);
        step(&mut e, &["PTTL", "lock"], false);
        step(&mut e, &["PEXPIRE", "lock", "100"], true);
        step(&mut e, &["EXISTS", "lock", "other"], false);
        step(&mut e, &["SET", "s", "v"], true);
        step(&mut e, &["GET", "s"], false);
        clock.set(5_101);
        step(&mut e, &["PING"], false);
        step(&mut e, &["HEXISTS", "lock", "a:1"], true);
        step(&mut e, &["HEXISTS", "lock", "a:1"], false);
        step(&mut e, &["DEL", "s"], true);
        step(&mut e, &["SET", "t", "v"], true);
        step(&mut e, &["FLUSHALL"], true);
    }

    /// `SET k v PX 100` at t=5000 expires at 5100: every read path sees the
    /// key at 5099 (PTTL 1) and at 5100 (PTTL 0: Redis's `keyIsExpired` is
    /// `now > when`), and none at 5101. Injected clock only: a wall-clock
    /// read would make this flaky or wrong.
    #[test]
    fn set_px_expires_exactly_at_boundary() {
        let (mut e, clock, c) = setup();
        assert_eq!(run(&mut e, c, &["SET", "k", "v", "PX", "100"]), Value::ok());
        clock.set(5_099);
        assert_eq!(run(&mut e, c, &["PTTL", "k"]), Value::Int(1));
        assert_eq!(run(&mut e, c, &["TTL", "k"]), Value::Int(0));
        assert_eq!(run(&mut e, c, &["GET", "k"]), bulk("v"));
        assert_eq!(e.dbsize(), 1);
        clock.set(5_100);
        assert_eq!(run(&mut e, c, &["PTTL", "k"]), Value::Int(0));
        assert_eq!(run(&mut e, c, &["GET", "k"]), bulk("v"));
        assert_eq!(e.dbsize(), 1);
        clock.set(5_101);
        assert_eq!(e.dbsize(), 0);
        assert_eq!(run(&mut e, c, &["EXISTS", "k"]), Value::Int(0));
        assert_eq!(run(&mut e, c, &["GET", "k"]), Value::Nil);
        assert_eq!(run(&mut e, c, &["PTTL", "k"]), Value::Int(-2));
        assert_eq!(run(&mut e, c, &["SET", "k", "w", "NX"]), Value::ok());
    }

    /// PEXPIRE on a hash: the snapshot reports the absolute expiry and
    /// treats the key as absent from the ms after it; a zero or negative
    /// PEXPIRE deletes at once (Redis replies 1).
    #[test]
    fn pexpire_boundaries_and_snapshot() {
        let (mut e, clock, c) = setup();
        run(&mut e, c, &["HSET", "h", "f", "1"]);
        assert_eq!(run(&mut e, c, &["PEXPIRE", "h", "10"]), Value::Int(1));
        assert_eq!(e.hash_snapshot(b"h").and_then(|s| s.1), Some(5_010));
        clock.set(5_010);
        assert!(e.hash_snapshot(b"h").is_some());
        clock.set(5_011);
        assert_eq!(e.hash_snapshot(b"h"), None);
        run(&mut e, c, &["HSET", "h", "f", "1"]);
        assert_eq!(run(&mut e, c, &["PEXPIRE", "h", "0"]), Value::Int(1));
        assert_eq!(run(&mut e, c, &["EXISTS", "h"]), Value::Int(0));
        assert_eq!(run(&mut e, c, &["PEXPIRE", "h", "10"]), Value::Int(0));
    }

    /// Error strings checked against redis-server 7.0.15; a paraphrase
    /// would break clients that match on text.
    #[test]
    fn errors_are_redis_text() {
        let (mut e, _clock, c) = setup();
        let err = |t: &str| Value::error(t);
        assert_eq!(
            run(&mut e, c, &["GET"]),
            err("ERR wrong number of arguments for 'get' command")
        );
        assert_eq!(
            run(&mut e, c, &["foo", "a", "b"]),
            err("ERR unknown command 'foo', with args beginning with: 'a' 'b' ")
        );
        run(&mut e, c, &["SET", "s", "x"]);
        assert_eq!(
            run(&mut e, c, &["HGET", "s", "f"]),
            err("WRONGTYPE Operation against a key holding the wrong kind of value")
        );
        assert_eq!(
            run(&mut e, c, &["INCR", "s"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            run(&mut e, c, &["SET", "k", "v", "PX", "0"]),
            err("ERR invalid expire time in 'set' command")
        );
        assert_eq!(
            run(&mut e, c, &["SET", "k", "v", "NX", "XX"]),
            err("ERR syntax error")
        );
        assert_eq!(
            run(&mut e, c, &["PEXPIRE", "s", "9223372036854775807"]),
            err("ERR invalid expire time in 'pexpire' command")
        );
        run(&mut e, c, &["SET", "n", "9223372036854775807"]);
        assert_eq!(
            run(&mut e, c, &["INCR", "n"]),
            err("ERR increment or decrement would overflow")
        );
        assert_eq!(
            run(&mut e, c, &["HELLO", "4"]),
            err("NOPROTO unsupported protocol version")
        );
        assert_eq!(
            run(&mut e, c, &["HSET", "h", "f"]),
            err("ERR wrong number of arguments for 'hset' command")
        );
        run(&mut e, c, &["HSET", "h", "f", "x"]);
        assert_eq!(
            run(&mut e, c, &["HINCRBY", "h", "f", "1"]),
            err("ERR hash value is not an integer")
        );
        assert_eq!(
            run(&mut e, c, &["EVAL", "x", "2", "a"]),
            err("ERR Number of keys can't be greater than number of args")
        );
        assert_eq!(
            run(&mut e, c, &["EVAL", "x", "-1"]),
            err("ERR Number of keys can't be negative")
        );
        assert_eq!(
            run(&mut e, c, &["SCRIPT", "LOAD"]),
            err("ERR wrong number of arguments for 'script|load' command")
        );
    }

    /// HDEL then re-adding a field moves it to the end, as Redis's listpack
    /// does; HSET of an existing field keeps its place.
    #[test]
    fn hash_order_follows_listpack() {
        let (mut e, _clock, c) = setup();
        run(&mut e, c, &["HSET", "h", "a", "1", "b", "2", "c", "3"]);
        run(&mut e, c, &["HDEL", "h", "a"]);
        run(&mut e, c, &["HSET", "h", "a", "4", "b", "9"]);
        assert_eq!(
            run(&mut e, c, &["HGETALL", "h"]),
            Value::Map(vec![
                (bulk("b"), bulk("9")),
                (bulk("c"), bulk("3")),
                (bulk("a"), bulk("4"))
            ])
        );
        assert_eq!(run(&mut e, c, &["HLEN", "h"]), Value::Int(3));
        assert_eq!(
            run(&mut e, c, &["HDEL", "h", "a", "b", "c", "z"]),
            Value::Int(3)
        );
        assert_eq!(run(&mut e, c, &["EXISTS", "h"]), Value::Int(0));
    }

    /// A subscribed RESP2 connection refuses ordinary commands with Redis's
    /// text, PUBLISH reaches subscribers in subscription order, and after
    /// the last UNSUBSCRIBE commands work again. `HELLO 3` lifts the
    /// restriction.
    #[test]
    fn pubsub_state_and_delivery() {
        let (mut e, _clock, a) = setup();
        let b = e.connect();
        let p = e.connect();
        let r = e.execute(a, args(&["SUBSCRIBE", "ch", "other", "ch"]));
        assert_eq!(r.replies.len(), 3);
        assert_eq!(
            r.replies[2],
            Value::Push(vec![bulk("subscribe"), bulk("ch"), Value::Int(2)])
        );
        assert_eq!(
            run(&mut e, a, &["GET", "x"]),
            Value::error(
                "ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
            )
        );
        assert_eq!(
            run(&mut e, a, &["PING"]),
            Value::Array(vec![bulk("pong"), bulk("")])
        );
        assert!(!run(&mut e, b, &["HELLO", "3"]).is_error());
        e.execute(b, args(&["SUBSCRIBE", "ch"]));
        assert_eq!(run(&mut e, b, &["GET", "x"]), Value::Nil);
        let r = e.execute(p, args(&["PUBLISH", "ch", "hi"]));
        assert_eq!(r.replies, vec![Value::Int(2)]);
        let to: Vec<ConnId> = r.deliveries.iter().map(|d| d.0).collect();
        assert_eq!(to, vec![a, b]);
        let r = e.execute(a, args(&["UNSUBSCRIBE"]));
        assert_eq!(r.replies.len(), 2);
        assert_eq!(run(&mut e, a, &["GET", "x"]), Value::Nil);
        e.disconnect(b);
        assert_eq!(run(&mut e, p, &["PUBLISH", "ch", "hi"]), Value::Int(0));
    }

    /// QUIT asks for the connection to be closed after its `OK`.
    #[test]
    fn quit_closes() {
        let (mut e, _clock, c) = setup();
        let r = e.execute(c, args(&["quit"]));
        assert!(r.close);
        assert_eq!(r.replies, vec![Value::ok()]);
    }
}
