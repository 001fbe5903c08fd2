//! The command engine: one Redis server's state, driven one command at a time.

use std::collections::BTreeSet;
use std::sync::Arc;

use bytes::Bytes;

use crate::cmd::{self, Ctx};
use crate::db::{Data, Db};
use crate::pubsub::PubSub;
use crate::script::ScriptCache;
use crate::{Clock, Value};

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
}

/// A hash's `(field, value)` pairs in Redis's order.
pub type HashFields = Vec<(Bytes, Bytes)>;

/// The server state commands work on.
#[derive(Debug, Default)]
pub(crate) struct State {
    pub(crate) db: Db,
    pub(crate) pubsub: PubSub,
    pub(crate) scripts: ScriptCache,
    /// Connections speaking RESP3; every other known connection speaks RESP2.
    pub(crate) resp3: BTreeSet<ConnId>,
}

impl State {
    pub(crate) fn protocol(&self, conn: ConnId) -> Protocol {
        if self.resp3.contains(&conn) {
            Protocol::Resp3
        } else {
            Protocol::Resp2
        }
    }

    pub(crate) fn set_protocol(&mut self, conn: ConnId, protocol: Protocol) {
        match protocol {
            Protocol::Resp3 => self.resp3.insert(conn),
            Protocol::Resp2 => self.resp3.remove(&conn),
        };
    }
}

/// One Redis server: keyspace, scripts, pub/sub and per-connection state.
///
/// The engine is sans-IO: it never reads the wall clock (time comes from
/// the injected [`Clock`]), spawns nothing and does no I/O, so the same code
/// runs behind the RESP server and inside the simulator.
pub struct Engine {
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) state: State,
    next_conn: u64,
    /// Its role, offset, recorded writes and blocked `WAIT`s.
    pub(crate) replication: crate::replication::Replication,
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
        Self {
            clock,
            state: State::default(),
            next_conn: 1,
            replication: Default::default(),
        }
    }

    /// Registers a new connection (RESP2, no subscriptions).
    pub fn connect(&mut self) -> ConnId {
        let id = ConnId(self.next_conn);
        self.next_conn += 1;
        id
    }

    /// Forgets a connection and its subscriptions.
    pub fn disconnect(&mut self, conn: ConnId) {
        self.state.pubsub.remove_conn(conn);
        self.state.resp3.remove(&conn);
        self.forget_conn(conn);
    }

    /// The protocol `conn` speaks now.
    pub fn protocol(&self, conn: ConnId) -> Protocol {
        self.state.protocol(conn)
    }

    /// Runs one command (`args[0]` is its name, any case) for `conn`.
    ///
    /// An empty command is ignored, as Redis ignores `*0`. A connection id
    /// that was never connected behaves as a fresh RESP2 connection. A
    /// `WAIT` that blocks gives no reply (see [`Engine::release_waits`]).
    pub fn execute(&mut self, conn: ConnId, args: Vec<Bytes>) -> Response {
        let mut out = Response::default();
        if args.is_empty() {
            return out;
        }
        let now = self.now();
        let mut ctx = Ctx {
            state: &mut self.state,
            conn,
            now,
            out: &mut out,
        };
        if crate::replication::is_wait(&args) {
            let reply = crate::replication::wait(&mut ctx, &mut self.replication, &args);
            out.replies = reply.into_iter().collect();
            return out;
        }
        let replies = cmd::dispatch(&mut ctx, &args);
        out.replies = replies;
        self.after_command(conn);
        out
    }

    /// A hash key's fields in order and its absolute expiry (Unix ms), or
    /// `None` when the key is missing, expired or not a hash. Observes
    /// without side effects (nothing is purged).
    pub fn hash_snapshot(&self, key: &[u8]) -> Option<(HashFields, Option<u64>)> {
        let entry = self.state.db.peek(key, self.now())?;
        match &entry.data {
            Data::Hash(h) => Some((
                h.iter().map(|(f, v)| (f.clone(), v.clone())).collect(),
                entry.expires_at.map(|t| u64::try_from(t).unwrap_or(0)),
            )),
            Data::Str(_) => None,
        }
    }

    /// A string key's value, or `None` when missing, expired or a hash.
    /// Observes without side effects.
    pub fn string_snapshot(&self, key: &[u8]) -> Option<Bytes> {
        match &self.state.db.peek(key, self.now())?.data {
            Data::Str(s) => Some(s.clone()),
            Data::Hash(_) => None,
        }
    }

    /// The number of live keys (what `DBSIZE` replies).
    pub fn dbsize(&self) -> usize {
        self.state.db.len(self.now())
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

    /// `SET k v PX 100` at t=5000 expires at 5100: every read path sees the
    /// key at 5099 (PTTL 1) and none at 5100. Injected clock only: a
    /// wall-clock read would make this flaky or wrong.
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
        assert_eq!(e.dbsize(), 0);
        assert_eq!(run(&mut e, c, &["EXISTS", "k"]), Value::Int(0));
        assert_eq!(run(&mut e, c, &["GET", "k"]), Value::Nil);
        assert_eq!(run(&mut e, c, &["PTTL", "k"]), Value::Int(-2));
        assert_eq!(run(&mut e, c, &["SET", "k", "w", "NX"]), Value::ok());
    }

    /// PEXPIRE on a hash: the snapshot reports the absolute expiry and
    /// treats the key as absent from that instant; a zero or negative
    /// PEXPIRE deletes at once (Redis replies 1).
    #[test]
    fn pexpire_boundaries_and_snapshot() {
        let (mut e, clock, c) = setup();
        run(&mut e, c, &["HSET", "h", "f", "1"]);
        assert_eq!(run(&mut e, c, &["PEXPIRE", "h", "10"]), Value::Int(1));
        assert_eq!(e.hash_snapshot(b"h").and_then(|s| s.1), Some(5_010));
        clock.set(5_009);
        assert!(e.hash_snapshot(b"h").is_some());
        clock.set(5_010);
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
