//! Replication: a primary's stream of writes, replicas applying it, and
//! `WAIT`.
//!
//! Redis 7 replicates a script by its effects, and an expiry as an
//! absolute `PEXPIREAT`. This model goes one step further and replicates
//! each written key's resulting state (its value and absolute expiry, or
//! its deletion), in the order the primary wrote them, which is what the
//! replica ends up with after the effects. A [`Write`] is one such state;
//! offsets count writes, not bytes. The host (the simulator) carries the
//! writes to the replicas with whatever lag or loss it models, applies
//! them ([`Engine::apply`]) and reports acknowledgements ([`Engine::ack`]).
//!
//! `WAIT numreplicas timeout` that cannot answer at once blocks the
//! client as `BLPOP` does (see `crate::blocking`): it produces no reply,
//! later commands of the connection queue behind it, and the reply comes
//! as a delivery from [`Engine::tick`], which the host calls after
//! acknowledgements arrive ([`Engine::ack`]) or time passes. As in Redis,
//! it blocks with no replicas too (until its timeout, or for ever with
//! timeout 0), and inside `MULTI` it answers at once.
//!
//! `WAIT` waits for the stream as it stood after the caller's last
//! command, whoever wrote it: Redis sets the client's offset after every
//! command it runs (not those `EXEC` runs), a read included, so a client
//! that wrote nothing still waits for everyone's writes.
//!
//! When a replica acknowledges is the host's to say. locksim's engines
//! acknowledge each write as it arrives. A real replica acknowledges once
//! a second (`REPLCONF ACK` from its cron) and when a blocked `WAIT`'s
//! `REPLCONF GETACK` reaches it; the `GETACK` itself is part of the
//! stream, and the replica's answer to it stops short of it, so after any
//! `WAIT` that blocked the primary counts no replica up to date until
//! their next cron, up to a second later. A `WAIT` in that second blocks,
//! sends `GETACK`, and answers at the first acknowledgement that makes
//! up its number, counting only the replicas whose answers came in by
//! then. Measured on redis-server 7.0.15 with two replicas on loopback:
//! after a write, `WAIT 1 1000` answered 1 in 144 of 200 tries, 2 in 54;
//! a read then `WAIT 1 1000` right after, 1 in 71 of 100; the same after a
//! quiet 1.5 s, 2. Here every replica acknowledges what has arrived, so a
//! `WAIT` counts every replica that has its writes: a known gap where
//! Redisson (3.27.0+) compares `WAIT`'s count with its kept replica count
//! (the history row `replica-back-not-waited-for-6518` leaves a quiet
//! second before the `WAIT` it reads, so that real Redis counts both), and
//! right after a replica's link comes back (a 7.0 primary lists it with
//! `offset=0` for up to a second).

use bytes::Bytes;

use crate::client::{Blocked, BlockedOn};
use crate::cmd::Ctx;
use crate::db::Entry;
use crate::engine::{ConnId, Engine};
use crate::error::CmdError;
use crate::number::parse_i64;
use crate::value::Value;

/// One change a primary made, in its replication stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    offset: u64,
    change: Change,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Change {
    /// Every key deleted (`FLUSHALL`, or the start of a full resync).
    Flush,
    /// A key's state after the write, or its deletion.
    Key(Bytes, Option<Entry>),
}

impl Write {
    /// The primary's replication offset once this write is applied.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The key it writes (`None` for a flush).
    pub fn key(&self) -> Option<&[u8]> {
        match &self.change {
            Change::Flush => None,
            Change::Key(k, _) => Some(k),
        }
    }
}

/// A server's replication state.
#[derive(Debug, Default)]
pub(crate) struct Replication {
    /// Whether this server is a replica (it refuses `WAIT`).
    pub(crate) replica: bool,
    /// The offset of the last write made (primary) or applied (replica).
    pub(crate) offset: u64,
    /// Writes not yet taken by the host.
    outbox: Vec<Write>,
    /// Per replica, the highest offset it acknowledged.
    acks: Vec<u64>,
    /// Per replica, whether its link to this primary is down: Redis frees
    /// a replica's client when its link drops, so it is out of
    /// `connected_slaves` and of `WAIT`'s count until it resyncs.
    down: Vec<bool>,
    /// Whether the replicas write an AOF (`WAITAOF` counts only those).
    pub(crate) replicas_aof: bool,
    /// Per connection, what its `WAIT` waits for (Redis's `c->woff`):
    /// the stream's end after its last command, written by it or another.
    pub(crate) wait_offset: std::collections::BTreeMap<ConnId, u64>,
    /// Whether a `WAIT` or `WAITAOF` blocked since the host last asked:
    /// Redis's `server.get_ack_from_slaves`, on which its `beforeSleep`
    /// sends every replica `REPLCONF GETACK` (server.c:1634 at 7.0.15).
    pub(crate) get_ack: bool,
}

impl Replication {
    /// `INFO replication`'s lines: the role, the replicas (what Redisson
    /// reads to decide whether to `WAIT`), the offset.
    pub(crate) fn info(&self) -> Vec<String> {
        let role = if self.replica { "slave" } else { "master" };
        vec![
            format!("role:{role}"),
            format!("connected_slaves:{}", self.connected()),
            format!("master_repl_offset:{}", self.offset),
        ]
    }

    /// How many replicas are connected.
    fn connected(&self) -> usize {
        self.down.iter().filter(|&&d| !d).count()
    }

    /// How many connected replicas acknowledged `target`.
    fn acked(&self, target: u64) -> u64 {
        self.acks
            .iter()
            .zip(&self.down)
            .filter(|&(&a, &down)| !down && a >= target)
            .count() as u64
    }

    /// How many replicas fsynced `target` to their AOF. A replica writes
    /// and fsyncs what it applies at once (`appendfsync always`;
    /// everysec's up to a second is not modelled). One without AOF
    /// acknowledges no AOF offset, so it counts only for a caller that
    /// wrote nothing (Redis 7.2's `repl_aof_off` starts at 0).
    pub(crate) fn acked_aof(&self, target: u64) -> u64 {
        if self.replicas_aof || target == 0 {
            self.acked(target)
        } else {
            0
        }
    }
}

impl Engine {
    /// Makes this server a primary with `n` replicas: from now on its
    /// writes are recorded for [`Engine::take_writes`], and `WAIT` counts
    /// the replicas' acknowledgements. `0` stops recording.
    pub fn set_replicas(&mut self, n: usize) {
        let r = &mut self.state.replication;
        r.replica = false;
        r.acks = vec![r.offset; n];
        r.down = vec![false; n];
        r.outbox.clear();
        r.get_ack = false;
        self.dbs[0].record_writes(n > 0);
    }

    /// Turns this server's AOF on or off (`appendonly`): `INFO`'s
    /// `aof_enabled`, and `WAITAOF`'s local fsync.
    pub fn set_appendonly(&mut self, on: bool) {
        let value: &[u8] = if on { b"yes" } else { b"no" };
        // Cannot fail: `appendonly` takes yes or no.
        let _ = self.state.config.set(b"appendonly", value);
    }

    /// Whether this primary's replicas write an AOF, which `WAITAOF`
    /// counts.
    pub fn set_replicas_appendonly(&mut self, on: bool) {
        self.state.replication.replicas_aof = on;
    }

    /// Makes this server a replica: it records nothing and refuses `WAIT`.
    pub fn set_replica(&mut self) {
        self.set_replicas(0);
        self.state.replication.replica = true;
    }

    /// The offset of the last write this server made (a primary) or
    /// applied (a replica).
    pub fn repl_offset(&self) -> u64 {
        self.state.replication.offset
    }

    /// The writes made since the last call, in order.
    pub fn take_writes(&mut self) -> Vec<Write> {
        self.drain_writes().collect()
    }

    /// [`Engine::take_writes`], drained out of the engine's outbox, which
    /// keeps its room for the next command's writes (a caller that
    /// replicates after every command allocates nothing for them).
    pub fn drain_writes(&mut self) -> std::vec::Drain<'_, Write> {
        self.record_touched();
        self.state.replication.outbox.drain(..)
    }

    /// A full resync: a flush, then every live key as it is now, all at
    /// the current offset.
    pub fn full_sync(&self) -> Vec<Write> {
        let offset = self.state.replication.offset;
        let now = self.now();
        let flush = Write {
            offset,
            change: Change::Flush,
        };
        let keys = self.dbs[0].live_entries(now).map(|(k, e)| Write {
            offset,
            change: Change::Key(Bytes::copy_from_slice(k), Some(e.clone())),
        });
        std::iter::once(flush).chain(keys).collect()
    }

    /// Applies a primary's write (on a replica).
    pub fn apply(&mut self, write: &Write) {
        match &write.change {
            Change::Flush => self.dbs[0].clear(),
            Change::Key(k, e) => self.dbs[0].replace(k.clone(), e.clone()),
        }
        self.state.replication.offset = write.offset;
    }

    /// Whether a `WAIT` or `WAITAOF` blocked since the last call: the
    /// host then asks every replica for an acknowledgement (`REPLCONF
    /// GETACK`), which each gives once it has read what came before it
    /// in its stream.
    pub fn take_ack_request(&mut self) -> bool {
        std::mem::take(&mut self.state.replication.get_ack)
    }

    /// Replica `replica` has applied everything up to `offset`. A `WAIT`
    /// this satisfies answers at the next [`Engine::tick`]. Nothing while
    /// its link is down: the primary has no client to read it from.
    pub fn ack(&mut self, replica: usize, offset: u64) {
        let r = &mut self.state.replication;
        if r.down.get(replica) == Some(&false)
            && let Some(a) = r.acks.get_mut(replica)
        {
            *a = (*a).max(offset);
        }
    }

    /// Replica `replica`'s link to this primary goes down, or comes back
    /// (`up`). Down, Redis frees its client: it leaves `INFO`'s
    /// `connected_slaves` and `WAIT`'s count, and what it acknowledged is
    /// forgotten. Back, it counts from what it acknowledges next: a real
    /// 7.0 primary lists a replica back from a partial resync with
    /// `offset=0` until the replica's next `REPLCONF ACK` (its cron's, up
    /// to a second later, or a blocked `WAIT`'s `GETACK`).
    pub fn set_replica_link(&mut self, replica: usize, up: bool) {
        let r = &mut self.state.replication;
        if let (Some(down), Some(ack)) = (r.down.get_mut(replica), r.acks.get_mut(replica)) {
            if !up {
                *ack = 0;
            }
            *down = !up;
        }
    }

    /// How many replicas acknowledged `target`.
    pub(crate) fn acked(&self, target: u64) -> u64 {
        self.state.replication.acked(target)
    }

    /// Moves the keys the last command wrote to the outbox, each with its
    /// state now.
    pub(crate) fn record_touched(&mut self) {
        // Most commands write nothing (and none records without
        // replicas): taking and dropping an empty set cost about 1% of an
        // explored seed.
        if !self.dbs[0].has_written() {
            return;
        }
        let mut touched = self.dbs[0].take_written();
        if touched.flushed {
            let r = &mut self.state.replication;
            r.offset += 1;
            r.outbox.push(Write {
                offset: r.offset,
                change: Change::Flush,
            });
        }
        // A flush alone has no key to read the clock for (as dear as a
        // small command on the wall clock).
        if !touched.keys.is_empty() {
            let now = self.now();
            let r = &mut self.state.replication;
            for key in touched.keys.drain(..) {
                let entry = self.dbs[0].peek(&key, now).cloned();
                r.offset += 1;
                r.outbox.push(Write {
                    offset: r.offset,
                    change: Change::Key(key, entry),
                });
            }
        }
        self.dbs[0].give_back_written(touched);
    }

    /// Puts the writes of a command just run into the stream.
    pub(crate) fn after_command(&mut self) {
        self.record_touched();
    }

    /// Sets `conn`'s `WAIT` offset to the stream's end, after a command
    /// of its own (not one `EXEC` runs), whether it wrote or not: Redis
    /// 7.0's `processCommand` sets `c->woff = server.master_repl_offset`
    /// after every `call` (server.c:4021 at 7.0.15), and only there.
    pub(crate) fn note_wait_offset(&mut self, conn: ConnId) {
        if self.state.clients.contains_key(&conn) {
            let offset = self.state.replication.offset;
            self.state.replication.wait_offset.insert(conn, offset);
        }
    }

    /// Forgets `conn`'s `WAIT` offset.
    pub(crate) fn forget_conn(&mut self, conn: ConnId) {
        self.state.replication.wait_offset.remove(&conn);
    }
}

/// `WAIT numreplicas timeout`: the number of replicas that acknowledged
/// the stream up to the caller's `WAIT` offset (its end after the
/// caller's last command), once `numreplicas` have or `timeout` ms
/// passed (0: no timeout). No reply: it blocks (the reply comes from
/// [`Engine::tick`]).
///
/// # Format
///
/// `WAIT numreplicas timeout` -> integer
pub(crate) fn wait(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Vec<Value>, CmdError> {
    let r = &ctx.state.replication;
    if r.replica {
        return Err(CmdError::other(
            "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.",
        ));
    }
    // Redis 7.0's waitCommand: numreplicas first, then the timeout, an
    // integer number of ms (checked against redis-server 7.0.15).
    let numreplicas = parse_i64(&args[1]).ok_or(CmdError::NotInteger)?;
    let timeout = parse_i64(&args[2])
        .ok_or_else(|| CmdError::other("ERR timeout is not an integer or out of range"))?;
    if timeout < 0 {
        return Err(CmdError::other("ERR timeout is negative"));
    }
    let target = r.wait_offset.get(&ctx.conn).copied().unwrap_or(0);
    let now_acked = r.acked(target);
    let client = ctx.state.client(ctx.conn);
    // Inside a transaction a client cannot block: Redis answers at once.
    if i128::from(now_acked) >= i128::from(numreplicas) || client.in_exec {
        return Ok(vec![Value::Int(now_acked as i64)]);
    }
    client.blocked = Some(Blocked {
        on: BlockedOn::Replicas {
            target,
            numreplicas: numreplicas as u64,
            aof: false,
        },
        deadline: (timeout > 0).then(|| ctx.now.saturating_add(timeout)),
    });
    // Redis's waitCommand: replicationRequestAckFromSlaves().
    ctx.state.replication.get_ack = true;
    // No reply now: it comes when enough replicas acknowledge or at the
    // timeout.
    Ok(vec![])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{args, engine_at};

    fn run(e: &mut Engine, conn: ConnId, words: &[&str]) -> Vec<Value> {
        e.execute(conn, args(words)).replies
    }

    /// A replica that applies the primary's writes holds what the primary
    /// holds, expiry included (absolute, so it lapses at the same instant);
    /// one that missed the last write does not: the loss a failover makes.
    #[test]
    fn a_replica_applying_the_stream_holds_what_the_primary_holds() {
        let (mut primary, clock, conn) = engine_at(1_000);
        let (mut replica, _, _) = engine_at(1_000);
        replica.set_replica();
        primary.set_replicas(1);
        run(&mut primary, conn, &["HSET", "lock", "a:1", "1"]);
        run(&mut primary, conn, &["PEXPIRE", "lock", "30000"]);
        run(&mut primary, conn, &["GET", "nothing"]);
        let writes = primary.take_writes();
        // The read wrote nothing.
        assert_eq!(writes.iter().map(Write::offset).collect::<Vec<_>>(), [1, 2]);
        for w in &writes {
            replica.apply(w);
        }
        assert_eq!(
            replica.hash_snapshot(b"lock"),
            primary.hash_snapshot(b"lock")
        );
        assert_eq!(replica.repl_offset(), 2);
        run(&mut primary, conn, &["DEL", "lock"]);
        let missed = primary.take_writes();
        assert_eq!(missed.len(), 1);
        assert!(replica.hash_snapshot(b"lock").is_some(), "not applied yet");
        replica.apply(&missed[0]);
        assert_eq!(replica.hash_snapshot(b"lock"), None);
        // Without replicas nothing is recorded.
        let (mut alone, _, c) = engine_at(0);
        run(&mut alone, c, &["SET", "k", "v"]);
        assert!(alone.take_writes().is_empty());
        // A key that lapses is deleted on the primary when next touched,
        // and the deletion is replicated.
        run(&mut primary, conn, &["SET", "t", "v", "PX", "10"]);
        clock.advance(11);
        run(&mut primary, conn, &["GET", "t"]);
        let writes = primary.take_writes();
        assert_eq!(writes.len(), 2);
        assert_eq!(writes[1].key(), Some(&b"t"[..]));
        assert_eq!(
            writes[1].change,
            Change::Key(Bytes::from_static(b"t"), None)
        );
    }

    /// A `WAIT` that blocks asks the replicas to acknowledge (once, until
    /// the host takes the request); one answered at once asks nothing.
    #[test]
    fn a_blocked_wait_asks_for_acknowledgements() {
        let (mut primary, _, conn) = engine_at(0);
        primary.set_replicas(1);
        assert_eq!(
            run(&mut primary, conn, &["WAIT", "1", "0"]),
            [Value::Int(1)]
        );
        assert!(!primary.take_ack_request());
        run(&mut primary, conn, &["SET", "k", "v"]);
        assert!(run(&mut primary, conn, &["WAIT", "1", "100"]).is_empty());
        assert!(primary.take_ack_request());
        assert!(!primary.take_ack_request(), "taken once");
    }

    /// A full resync replaces everything the replica had.
    #[test]
    fn a_full_sync_replaces_the_replica_data() {
        let (mut primary, _, conn) = engine_at(0);
        let (mut replica, _, rc) = engine_at(0);
        run(&mut primary, conn, &["SET", "a", "1"]);
        run(&mut replica, rc, &["SET", "b", "2"]);
        for w in primary.full_sync() {
            replica.apply(&w);
        }
        assert_eq!(replica.string_snapshot(b"a").as_deref(), Some(&b"1"[..]));
        assert_eq!(replica.string_snapshot(b"b"), None);
        assert_eq!(primary.full_sync()[0].key(), None);
    }

    /// `WAIT 1 0` blocks until the replica acknowledges the caller's last
    /// write, and what the client sends meanwhile waits behind it; `WAIT 1
    /// 100` answers 0 at its timeout; without replicas `WAIT 1 100` blocks
    /// until its timeout too (Redis 7.0.15 does), `WAIT 0 ...` answers at
    /// once; a replica refuses it.
    #[test]
    fn wait_counts_acknowledgements() {
        let (mut primary, clock, conn) = engine_at(0);
        assert_eq!(
            run(&mut primary, conn, &["WAIT", "0", "0"]),
            [Value::Int(0)]
        );
        assert!(run(&mut primary, conn, &["WAIT", "1", "100"]).is_empty());
        assert_eq!(primary.next_deadline(), Some(100));
        clock.set(100);
        assert_eq!(primary.tick().deliveries, [(conn, Value::Int(0))]);
        primary.set_replicas(1);
        // No write yet: nothing to wait for, the replica counts.
        assert_eq!(
            run(&mut primary, conn, &["WAIT", "1", "0"]),
            [Value::Int(1)]
        );
        run(&mut primary, conn, &["SET", "k", "v"]);
        assert!(run(&mut primary, conn, &["WAIT", "1", "0"]).is_empty());
        assert!(run(&mut primary, conn, &["PING"]).is_empty(), "queued");
        let other = primary.connect();
        assert!(run(&mut primary, other, &["WAIT", "1", "0"]).len() == 1);
        assert!(primary.tick().deliveries.is_empty());
        primary.ack(0, 1);
        assert_eq!(
            primary.tick().deliveries,
            [(conn, Value::Int(1)), (conn, Value::Simple("PONG".into()))]
        );
        run(&mut primary, conn, &["SET", "k", "w"]);
        assert!(run(&mut primary, conn, &["WAIT", "1", "100"]).is_empty());
        assert_eq!(primary.next_deadline(), Some(200));
        clock.set(199);
        assert!(primary.tick().deliveries.is_empty());
        clock.set(200);
        assert_eq!(primary.tick().deliveries, [(conn, Value::Int(0))]);
        // Inside MULTI it cannot block.
        assert_eq!(
            run(&mut primary, conn, &["MULTI"]),
            [Value::Simple("OK".into())]
        );
        run(&mut primary, conn, &["WAIT", "1", "0"]);
        assert_eq!(
            run(&mut primary, conn, &["EXEC"]),
            [Value::Array(vec![Value::Int(0)])]
        );
        let mut replica = engine_at(0).0;
        replica.set_replica();
        let rc = replica.connect();
        let reply = run(&mut replica, rc, &["WAIT", "0", "0"]);
        assert!(
            matches!(&reply[0], Value::Error(e) if e.starts_with("ERR WAIT cannot be used with replica"))
        );
    }

    /// A replica whose link is down is out of `connected_slaves` and of
    /// `WAIT`'s count, and its acknowledgements are ignored; back, it
    /// counts from what it acknowledges next.
    #[test]
    fn a_replica_whose_link_is_down_does_not_count() {
        let (mut primary, _, conn) = engine_at(0);
        primary.set_replicas(2);
        let connected = |e: &mut Engine| {
            let c = e.connect();
            let info = run(e, c, &["INFO", "replication"]);
            match &info[0] {
                Value::Bulk(b) => String::from_utf8_lossy(b)
                    .lines()
                    .find_map(|l| l.strip_prefix("connected_slaves:").map(str::to_owned)),
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(connected(&mut primary).as_deref(), Some("2"));
        primary.set_replica_link(1, false);
        primary.set_replica_link(7, false);
        assert_eq!(connected(&mut primary).as_deref(), Some("1"));
        run(&mut primary, conn, &["SET", "k", "v"]);
        primary.ack(0, 1);
        primary.ack(1, 1);
        assert!(
            run(&mut primary, conn, &["WAIT", "2", "0"]).is_empty(),
            "blocks: one replica counts"
        );
        assert!(primary.tick().deliveries.is_empty());
        primary.set_replica_link(1, true);
        assert_eq!(connected(&mut primary).as_deref(), Some("2"));
        assert!(
            primary.tick().deliveries.is_empty(),
            "its old ack was forgotten"
        );
        primary.ack(1, 1);
        assert_eq!(primary.tick().deliveries, [(conn, Value::Int(2))]);
    }

    /// `tick_one` answers one blocked client at a time, in the order they
    /// blocked, each with the commands it queued, so a caller can look at
    /// the data after each (the simulator's observation of who changed a
    /// key); called until it answers nothing, it does what `tick` does.
    #[test]
    fn tick_one_answers_one_waiting_client_and_its_queue() {
        let (mut primary, _, a) = engine_at(0);
        primary.set_replicas(1);
        let b = primary.connect();
        run(&mut primary, a, &["SET", "k", "a"]);
        assert!(run(&mut primary, a, &["WAIT", "1", "0"]).is_empty());
        assert!(run(&mut primary, a, &["DEL", "k"]).is_empty(), "queued");
        run(&mut primary, b, &["SET", "other", "b"]);
        assert!(run(&mut primary, b, &["WAIT", "1", "0"]).is_empty());
        assert!(
            run(&mut primary, b, &["SET", "k", "b"]).is_empty(),
            "queued"
        );
        primary.ack(0, 2);
        assert_eq!(
            primary.tick_one().deliveries,
            [(a, Value::Int(1)), (a, Value::Int(1))]
        );
        assert_eq!(primary.string_snapshot(b"k"), None, "b's SET not run yet");
        assert_eq!(
            primary.tick_one().deliveries,
            [(b, Value::Int(1)), (b, Value::Simple("OK".into()))]
        );
        assert_eq!(primary.string_snapshot(b"k").as_deref(), Some(&b"b"[..]));
        assert!(primary.tick_one().deliveries.is_empty());
    }

    /// A demoted primary (a replica now) refuses writes with Redis's
    /// `READONLY` text, from a client, in a transaction (which it dooms)
    /// and from a script (with the script's suffix); reads and `PUBLISH`
    /// still run (texts from redis-server 7.0.15 as a replica).
    #[test]
    fn a_replica_refuses_writes_as_read_only() {
        let (mut e, _, conn) = engine_at(0);
        run(&mut e, conn, &["SET", "k", "v"]);
        e.set_replica();
        let ro = "READONLY You can't write against a read only replica.";
        assert_eq!(run(&mut e, conn, &["SET", "k", "w"]), [Value::error(ro)]);
        assert_eq!(run(&mut e, conn, &["del", "k"]), [Value::error(ro)]);
        assert_eq!(
            run(&mut e, conn, &["GET", "k"]),
            [Value::Bulk(Bytes::from_static(b"v"))]
        );
        assert_eq!(run(&mut e, conn, &["PUBLISH", "c", "m"]), [Value::Int(0)]);
        run(&mut e, conn, &["MULTI"]);
        assert_eq!(
            run(&mut e, conn, &["HSET", "h", "f", "1"]),
            [Value::error(ro)]
        );
        assert_eq!(
            run(&mut e, conn, &["EXEC"]),
            [Value::error(
                "EXECABORT Transaction discarded because of previous errors."
            )]
        );
        let reply = run(
            &mut e,
            conn,
            &["EVAL", "return redis.call('set','k','v')", "0"],
        );
        assert_eq!(
            reply,
            [Value::error(format!(
                "{ro} script: d223ed8c7345b684e8ed044ed472601f536fa58b, on @user_script:1."
            ))]
        );
    }

    /// Redisson's lock scripts, which run natively, are refused on a
    /// replica at their first write like any script, and write nothing:
    /// the unlock does not count the hold down, the renewal does not
    /// re-arm the key, the acquire of a free lock takes nothing. A native
    /// call that skipped the replica check left the hash at 0 (seen as
    /// "held x0" under locksim's `switchover`).
    #[test]
    fn a_replica_refuses_the_native_lock_scripts() {
        use crate::LockScript;
        let (mut e, _, conn) = engine_at(0);
        run(&mut e, conn, &["HSET", "lock", "u:1", "2"]);
        run(&mut e, conn, &["PEXPIRE", "lock", "30000"]);
        e.set_replica();
        let suffix = |script: LockScript| {
            format!(
                "READONLY You can't write against a read only replica. script: {}, on @user_script:1.",
                crate::sha1_hex(script.text().as_bytes())
            )
        };
        let unlock = LockScript::Unlock.text();
        let reply = run(
            &mut e,
            conn,
            &["EVAL", unlock, "2", "lock", "ch", "0", "30000", "u:1"],
        );
        assert_eq!(reply, [Value::error(suffix(LockScript::Unlock))]);
        let renew = LockScript::Renew.text();
        let reply = run(&mut e, conn, &["EVAL", renew, "1", "lock", "1000", "u:1"]);
        assert_eq!(reply, [Value::error(suffix(LockScript::Renew))]);
        let acquire = LockScript::Acquire.text();
        let reply = run(
            &mut e,
            conn,
            &["EVAL", acquire, "1", "free", "30000", "u:1"],
        );
        assert_eq!(reply, [Value::error(suffix(LockScript::Acquire))]);
        assert_eq!(
            run(&mut e, conn, &["HGET", "lock", "u:1"]),
            [Value::Bulk(Bytes::from_static(b"2"))]
        );
        let pttl = run(&mut e, conn, &["PTTL", "lock"]);
        assert!(matches!(pttl[0], Value::Int(ms) if ms > 29_000), "{pttl:?}");
        assert_eq!(run(&mut e, conn, &["EXISTS", "free"]), [Value::Int(0)]);
    }

    /// Redis 6.2 words a replica's refusal of a script's write inside
    /// `Error running script`, natively and in Lua alike, and the text no
    /// longer begins `READONLY`.
    #[test]
    fn a_6_2_replica_wraps_its_refusal_of_a_script() {
        for in_lua in [false, true] {
            let (mut e, _, conn) = engine_at(0);
            e.set_version(crate::RedisVersion::V6_2);
            e.state.lock_scripts_in_lua = in_lua;
            run(&mut e, conn, &["HSET", "lock", "u:1", "1"]);
            e.set_replica();
            let renew = crate::LockScript::Renew;
            let reply = run(
                &mut e,
                conn,
                &["EVAL", renew.text(), "1", "lock", "1000", "u:1"],
            );
            let text = format!(
                "ERR Error running script (call to f_{}): @user_script:1: @user_script: 1: \
                 -READONLY You can't write against a read only replica.",
                renew.sha1()
            );
            assert_eq!(reply, [Value::error(text)], "in Lua: {in_lua}");
        }
    }

    /// Bad arguments get Redis's errors, and a closed connection's wait
    /// is forgotten.
    #[test]
    fn wait_refuses_bad_arguments() {
        let (mut e, _, conn) = engine_at(0);
        e.set_replicas(1);
        let err = |v: Vec<Value>| match &v[0] {
            Value::Error(e) => e.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            err(run(&mut e, conn, &["WAIT", "1"])),
            "ERR wrong number of arguments for 'wait' command"
        );
        assert_eq!(
            err(run(&mut e, conn, &["wait", "x", "x"])),
            "ERR value is not an integer or out of range"
        );
        assert_eq!(
            err(run(&mut e, conn, &["WAIT", "1", "1.5"])),
            "ERR timeout is not an integer or out of range"
        );
        assert_eq!(
            err(run(&mut e, conn, &["WAIT", "1", "-1"])),
            "ERR timeout is negative"
        );
        run(&mut e, conn, &["SET", "k", "v"]);
        assert!(run(&mut e, conn, &["WAIT", "1", "0"]).is_empty());
        e.disconnect(conn);
        e.ack(0, 9);
        assert!(e.tick().deliveries.is_empty());
    }
}
