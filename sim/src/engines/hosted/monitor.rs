//! Watching a real Redis: its `MONITOR` stream, replayed on a shadow.
//!
//! A real `redis-server` has no hook to read a lock key right after each
//! command. `MONITOR` prints every command it runs, and every command a
//! script runs (`[0 lua] "hincrby" ...`), in execution order with Redis's
//! own timestamps. Replaying the writes among them on a fake-redis engine
//! whose clock is set to each line's time gives Redis's keys at every
//! instant: after a script (its `lua` lines), the shadow holds what Redis
//! held, and each key's expiry is where Redis put it.
//!
//! Several masters (a Redis Cluster, or independent masters) have a
//! stream each, each replayed on an engine of its own (a `FLUSHALL` or a
//! restart is one master's); a lock is read from the engine of the master
//! that serves it ([`lockcore::route`]: its slot's in a cluster, the one
//! its placement names on independent masters), where every command on
//! it ran.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use fake_redis::{ConnId, Engine, ManualClock};
use lockcore::{LockName, Placement, Purpose};

use super::recorder::Recorder;
use crate::engines::fast::server::{KeyView, key_view};
use crate::model::history::{Proc, ServerCause};
use crate::{RedisSpec, SimTime};

/// One line of `MONITOR` output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    /// Redis's time, in µs since the Unix epoch.
    pub(crate) at_us: u64,
    /// The client's address, or `None` for a command a script ran.
    pub(crate) client: Option<String>,
    pub(crate) args: Vec<Bytes>,
}

/// Parses `1700000000.123456 [0 127.0.0.1:5000] "set" "k" "v"`; `None`
/// for anything else (the `OK` that starts the stream).
pub(crate) fn parse(line: &str) -> Option<Line> {
    let (time, rest) = line.split_once(' ')?;
    let (secs, micros) = time.split_once('.')?;
    let at_us = secs.parse::<u64>().ok()? * 1_000_000 + micros.parse::<u64>().ok()?;
    let rest = rest.strip_prefix('[')?;
    let (source, rest) = rest.split_once("] ")?;
    let (_db, client) = source.split_once(' ')?;
    let client = (client != "lua").then(|| client.to_owned());
    Some(Line {
        at_us,
        client,
        args: words(rest.as_bytes())?,
    })
}

/// The quoted words of a line, as Redis's `sdscatrepr` escapes them.
fn words(mut s: &[u8]) -> Option<Vec<Bytes>> {
    let mut out = Vec::new();
    loop {
        while let [b' ', tail @ ..] = s {
            s = tail;
        }
        let [b'"', tail @ ..] = s else {
            return if s.is_empty() { Some(out) } else { None };
        };
        s = tail;
        let mut word = Vec::new();
        loop {
            match s {
                [b'"', tail @ ..] => {
                    s = tail;
                    break;
                }
                [b'\\', b'x', h, l, tail @ ..] => {
                    let hex = std::str::from_utf8(&[*h, *l]).ok()?.to_owned();
                    word.push(u8::from_str_radix(&hex, 16).ok()?);
                    s = tail;
                }
                [b'\\', c, tail @ ..] => {
                    word.push(match c {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'a' => 7,
                        b'b' => 8,
                        other => *other,
                    });
                    s = tail;
                }
                [c, tail @ ..] => {
                    word.push(*c);
                    s = tail;
                }
                [] => return None,
            }
        }
        out.push(Bytes::from(word));
    }
}

/// The commands whose effect on keys the shadow replays.
const WRITES: &[&str] = &[
    "del",
    "unlink",
    "set",
    "setex",
    "psetex",
    "getdel",
    "hset",
    "hsetnx",
    "hmset",
    "hincrby",
    "hdel",
    "pexpire",
    "expire",
    "pexpireat",
    "expireat",
    "persist",
    "incr",
    "incrby",
    "decr",
    "decrby",
    "rename",
    "flushall",
    "flushdb",
];

const SCRIPTS: &[&str] = &[
    "eval",
    "evalsha",
    "eval_ro",
    "evalsha_ro",
    "fcall",
    "fcall_ro",
];

/// A command whose effect on the spec's locks is not recorded yet: a
/// script's, until its last `lua` line has been replayed.
struct Pending {
    at_us: u64,
    by: Option<Proc>,
    purpose: Purpose,
    locks: Vec<LockName>,
}

/// One master's keys, replayed from its stream.
struct Node {
    engine: Engine,
    clock: ManualClock,
    conn: ConnId,
    /// `CLIENT SETNAME` of each address.
    names: BTreeMap<String, Bytes>,
    pending: Option<Pending>,
}

impl Node {
    fn new(zero_unix_us: u64) -> Node {
        let clock = ManualClock::new(zero_unix_us / 1_000);
        let mut engine = Engine::new(Arc::new(clock.clone()));
        let conn = engine.connect();
        Node {
            engine,
            clock,
            conn,
            names: BTreeMap::new(),
            pending: None,
        }
    }

    fn apply(&mut self, at_us: u64, args: &[Bytes]) {
        let name = String::from_utf8_lossy(&args[0]).to_ascii_lowercase();
        if WRITES.contains(&name.as_str()) {
            self.clock.set(at_us / 1_000);
            let _ = self.engine.execute(self.conn, args);
        }
    }
}

/// Redis's keys, replayed from its `MONITOR` stream (from each master's,
/// with several).
pub(crate) struct Shadow {
    /// Master `i`'s replay (one with one Redis: the primary's).
    nodes: Vec<Node>,
    /// `[sim.redis] shards` and `placement`: which node holds a lock.
    shards: u16,
    placement: Placement,
    /// Redis's Unix µs at the spec's time zero.
    zero_unix_us: u64,
    /// The spec runs this many times faster than written.
    scale: u64,
}

impl Shadow {
    /// A shadow of `redis`'s masters (a node each; one with one Redis).
    pub(crate) fn new(zero_unix_us: u64, scale: u64, redis: &RedisSpec) -> Shadow {
        Shadow {
            nodes: (0..redis.master_count())
                .map(|_| Node::new(zero_unix_us))
                .collect(),
            shards: redis.shards,
            placement: redis.placement.clone(),
            zero_unix_us,
            scale: scale.max(1),
        }
    }

    /// The spec's time of Redis's Unix µs `at_us`.
    fn spec_time(&self, at_us: u64) -> SimTime {
        let us = at_us.saturating_sub(self.zero_unix_us);
        SimTime::ZERO.plus_us(us.saturating_mul(self.scale))
    }

    /// The node whose keys hold `lock`.
    fn node_of(&self, lock: &LockName) -> usize {
        let master = lockcore::route(self.shards, &self.placement, lock.as_str());
        usize::from(master.0).min(self.nodes.len() - 1)
    }

    /// Handles one line of node `node`'s stream: replays it, records what
    /// it changed.
    pub(crate) fn line(&mut self, rec: &mut Recorder, node: usize, line: Line) {
        if line.args.is_empty() || node >= self.nodes.len() {
            return;
        }
        let Some(client) = line.client else {
            let n = &mut self.nodes[node];
            n.apply(line.at_us, &line.args);
            if let Some(p) = &mut n.pending {
                p.at_us = line.at_us;
            }
            return;
        };
        self.flush_node(rec, node);
        // A key that expired before this command is recorded as expired
        // first, however late the engine's own look for expiries runs.
        let now = self.spec_time(line.at_us);
        rec.expire(now, |lock, at| self.view(lock, at));
        let name = String::from_utf8_lossy(&line.args[0]).to_ascii_lowercase();
        let n = &mut self.nodes[node];
        if name == "client" && line.args.len() == 3 && line.args[1].eq_ignore_ascii_case(b"setname")
        {
            n.names.insert(client, line.args[2].clone());
            return;
        }
        let locks = rec.named(&line.args);
        if !locks.is_empty() {
            n.pending = Some(Pending {
                at_us: line.at_us,
                by: n.names.get(&client).and_then(|name| rec.sender(name)),
                purpose: rec.purpose(&line.args),
                locks,
            });
        }
        if !SCRIPTS.contains(&name.as_str()) {
            n.apply(line.at_us, &line.args);
            self.flush_node(rec, node);
        }
        // Only locksim's control connection flushes: a Redis restart or
        // outage that loses the keys, this master's alone (a
        // `shard-restart` leaves the other masters' locks as they were).
        if name == "flushall" || name == "flushdb" {
            let seen = rec.seen_locks().into_iter();
            let own: Vec<LockName> = seen.filter(|l| self.node_of(l) == node).collect();
            for lock in own {
                let view = self.view(&lock, now);
                rec.observe(&lock, view, false, false, ServerCause::Restart, Some(now));
            }
        }
    }

    /// Records the effect of the command each node last saw, once it is
    /// complete.
    pub(crate) fn flush(&mut self, rec: &mut Recorder) {
        for node in 0..self.nodes.len() {
            self.flush_node(rec, node);
        }
    }

    /// Records the effect of the command node `node` last saw.
    fn flush_node(&mut self, rec: &mut Recorder, node: usize) {
        let Some(p) = self.nodes[node].pending.take() else {
            return;
        };
        let at = self.spec_time(p.at_us);
        let deletes = matches!(p.purpose, Purpose::Unlock | Purpose::ForceUnlock);
        for lock in p.locks {
            let view = self.view(&lock, at);
            let (command, cause) = match &p.by {
                Some(by) => (
                    true,
                    ServerCause::Command {
                        by: by.clone(),
                        purpose: p.purpose,
                    },
                ),
                // Someone other than the lock's clients (locksim's
                // control connection, for a `delete-key` fault).
                None => (false, ServerCause::Deleted),
            };
            rec.observe(&lock, view, command, deletes, cause, Some(at));
        }
    }

    /// A promoted replica lacks `lock`: it is gone from the shadow too,
    /// recorded lost to the failover at `at` (if the shadow had it).
    pub(crate) fn lose(&mut self, rec: &mut Recorder, lock: &LockName, at: SimTime) {
        // A key that had expired by then is recorded expired, not lost.
        rec.expire(at, |lock, at| self.view(lock, at));
        let node = self.node_of(lock);
        let n = &mut self.nodes[node];
        let _ = n.engine.execute(
            n.conn,
            &[
                Bytes::from_static(b"DEL"),
                Bytes::from(lock.as_str().to_owned()),
            ],
        );
        let view = self.view(lock, at);
        rec.observe(lock, view, false, false, ServerCause::Failover, Some(at));
    }

    /// `lock` as Redis (its master, in a cluster) held it at the spec's
    /// time `at`, in the spec's time units.
    pub(crate) fn view(&mut self, lock: &LockName, at: SimTime) -> KeyView {
        let at_ms = (self.zero_unix_us + at.0 / self.scale) / 1_000;
        let zero_ms = self.zero_unix_us / 1_000;
        let n = &self.nodes[self.node_of(lock)];
        n.clock.set(at_ms);
        let view = key_view(&n.engine, lock.as_str(), zero_ms, at_ms);
        KeyView {
            pttl: if view.pttl > 0 {
                view.pttl.saturating_mul(self.scale as i64)
            } else {
                view.pttl
            },
            expires_ms: view.expires_ms.map(|e| e.saturating_mul(self.scale)),
            first: view.first,
            shared: view.shared,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as Redis 7 prints them: escapes, a script's own commands, a
    /// client's address.
    #[test]
    fn monitor_lines() {
        let line = parse(r#"1795455304.587881 [0 lua] "hincrby" "lo ck" "u:1 \"q\"" "1" "\x00\n""#)
            .unwrap();
        assert_eq!(line.at_us, 1_795_455_304_587_881);
        assert_eq!(line.client, None);
        let words: Vec<&[u8]> = line.args.iter().map(|b| b.as_ref()).collect();
        assert_eq!(
            words,
            vec![&b"hincrby"[..], b"lo ck", b"u:1 \"q\"", b"1", b"\x00\n"]
        );
        let line = parse(r#"1.000001 [0 127.0.0.1:36362] "client" "setname" "A""#).unwrap();
        assert_eq!(line.client.as_deref(), Some("127.0.0.1:36362"));
        assert_eq!(line.at_us, 1_000_001);
        assert_eq!(parse("OK"), None);
        assert_eq!(parse(r#"1.5 [0 lua] "unterminated"#), None);
    }

    /// In a cluster each master's lines replay on a node of their own: a
    /// lock is read from its slot's master ("orders" is slot 105, master
    /// 0 of 2; "payments" slot 8507, master 1), and one master's
    /// `FLUSHALL` leaves the other's keys.
    #[test]
    fn each_master_replays_on_its_own_node() {
        use crate::run::tests::{client, critical, spec, thread};
        let on = |lock: &str| {
            let mut t = thread(0, critical(1_000));
            t.lock = LockName::new(lock).expect("a name");
            t
        };
        let mut s = spec(vec![client("A", vec![on("orders"), on("payments")])]);
        s.redis.shards = 2;
        let mut rec = Recorder::new(&s);
        let mut shadow = Shadow::new(1_000_000_000, 1, &s.redis);
        let line = |text: &str| parse(text).expect("a line");
        let (orders, payments) = (on("orders").lock, on("payments").lock);
        shadow.line(
            &mut rec,
            1,
            line(r#"1000.000100 [0 127.0.0.1:1] "hset" "payments" "u:1" "1""#),
        );
        shadow.line(
            &mut rec,
            0,
            line(r#"1000.000200 [0 127.0.0.1:2] "hset" "orders" "u:2" "1""#),
        );
        let held = |shadow: &mut Shadow, lock: &LockName| {
            shadow.view(lock, SimTime::from_ms(1)).first.map(|(f, _)| f)
        };
        assert_eq!(held(&mut shadow, &payments), Some(Bytes::from("u:1")));
        assert_eq!(held(&mut shadow, &orders), Some(Bytes::from("u:2")));
        shadow.line(
            &mut rec,
            0,
            line(r#"1000.000300 [0 127.0.0.1:2] "flushall""#),
        );
        assert_eq!(held(&mut shadow, &orders), None);
        assert_eq!(held(&mut shadow, &payments), Some(Bytes::from("u:1")));
    }

    /// On independent masters a lock replays on the node of the master it
    /// is placed on ("b" on 1, "a" unplaced on 0), and one master's
    /// `FLUSHALL` (a `shard-restart`) records its own locks lost to the
    /// restart, never the other master's.
    #[test]
    fn independent_masters_replay_on_their_placed_nodes() {
        use crate::run::tests::{client, critical, spec, thread};
        let on = |lock: &str| {
            let mut t = thread(0, critical(1_000));
            t.lock = LockName::new(lock).expect("a name");
            t
        };
        let mut s = spec(vec![client("A", vec![on("a"), on("b")])]);
        s.redis.masters = 2;
        s.redis.placement = Placement::new([("b".to_owned(), 1)]);
        let mut rec = Recorder::new(&s);
        let mut shadow = Shadow::new(1_000_000_000, 1, &s.redis);
        let line = |text: &str| parse(text).expect("a line");
        let (a, b) = (on("a").lock, on("b").lock);
        shadow.line(
            &mut rec,
            0,
            line(r#"1000.000100 [0 127.0.0.1:1] "hset" "a" "u:1" "1""#),
        );
        shadow.line(
            &mut rec,
            1,
            line(r#"1000.000200 [0 127.0.0.1:2] "hset" "b" "u:2" "1""#),
        );
        let held = |shadow: &mut Shadow, lock: &LockName| {
            shadow.view(lock, SimTime::from_ms(1)).first.map(|(f, _)| f)
        };
        assert_eq!(held(&mut shadow, &a), Some(Bytes::from("u:1")));
        assert_eq!(held(&mut shadow, &b), Some(Bytes::from("u:2")));
        let before = rec.records.len();
        shadow.line(
            &mut rec,
            1,
            line(r#"1000.000300 [0 127.0.0.1:3] "flushall""#),
        );
        assert_eq!(held(&mut shadow, &b), None);
        assert_eq!(held(&mut shadow, &a), Some(Bytes::from("u:1")));
        let lost: Vec<(&LockName, &ServerCause)> = (rec.records[before..].iter())
            .filter_map(|r| match &r.kind {
                crate::RecordKind::Server {
                    lock,
                    holder: None,
                    cause,
                    ..
                } => Some((lock, cause)),
                _ => None,
            })
            .collect();
        assert_eq!(lost, [(&b, &ServerCause::Restart)]);
    }
}
