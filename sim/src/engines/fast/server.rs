//! The Redis process: a fake-redis [`Engine`] on a clock set to virtual time.

use std::sync::Arc;

use bytes::Bytes;
use fake_redis::{ConnId, Engine, ManualClock, Response, SharedTopology};

use crate::{RedisSpec, SimTime};

pub(crate) use crate::model::time::EPOCH_MS;

/// Which of a client's two connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ConnKind {
    /// Commands and scripts.
    Command,
    /// Pub/sub subscriptions.
    PubSub,
}

/// What Redis holds for a lock key right now.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct KeyView {
    /// The hash's first field and its count (`None` when the key is
    /// absent): the holder, the only field a lock hash has.
    pub(crate) first: Option<(Bytes, i64)>,
    /// Whether the hash's `mode` is `read`: an `RReadWriteLock` held only
    /// in shared mode, which a waiting reader may join.
    pub(crate) shared: bool,
    /// PTTL in ms (-2 absent, -1 no expiry).
    pub(crate) pttl: i64,
    /// The virtual ms at which the key expires, if it has an expiry.
    pub(crate) expires_ms: Option<u64>,
}

/// See [`Server::stamp`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ViewStamp {
    generation: u32,
    version: u64,
    offset_ms: i64,
}

/// The Redis server. Connections are opened on first use, so clients
/// reconnect by themselves after a restart.
pub(crate) struct Server {
    clock: ManualClock,
    engine: Engine,
    /// How many replicas the primary streams its writes to.
    replicas: usize,
    /// Every node's release line and AOF settings.
    redis: RedisSpec,
    /// Bumped by every restart; messages sent to an older generation find
    /// their connection gone.
    pub(crate) generation: u32,
    /// Bumped whenever every connection closes (a restart, or Redis going
    /// down with its data kept): messages sent on an older set of
    /// connections find theirs gone.
    pub(crate) connections: u32,
    /// How far clock jumps have moved Redis's clock, in ms.
    offset_ms: i64,
    /// Commands run for the clients (and a fault's `DEL`) so far, on
    /// whichever engine was the primary.
    pub(crate) commands: u64,
    /// The open connections, by (client, life, kind) in order: a handful
    /// (two per client life), so a scan of one list beats the two ordered
    /// maps it replaces (one search per command, and one per reply owed).
    conns: Vec<((u32, u32, ConnKind), ConnId)>,
    /// In a cluster (`[sim.redis] shards`), the slot table every master
    /// shares and this one's place in it: each engine it runs joins it,
    /// so it refuses keys of other masters' slots as a node does.
    cluster: Option<(SharedTopology, usize)>,
}

impl Server {
    pub(crate) fn new(redis: &RedisSpec) -> Server {
        Server::node(redis, None)
    }

    /// Master `me` of a cluster whose slot table is `topology`.
    pub(crate) fn in_cluster(redis: &RedisSpec, topology: SharedTopology, me: usize) -> Server {
        Server::node(redis, Some((topology, me)))
    }

    fn node(redis: &RedisSpec, cluster: Option<(SharedTopology, usize)>) -> Server {
        let replicas = redis.replicas as usize;
        let clock = ManualClock::new(EPOCH_MS);
        let mut engine = Engine::new(Arc::new(clock.clone()));
        redis.configure(&mut engine, false);
        if let Some((topology, me)) = &cluster {
            engine.join_cluster(topology.clone(), *me);
        }
        engine.set_replicas(replicas);
        // A Redis Redisson has used before: its scripts are cached, so
        // 3.46+'s `EVALSHA` meets `NOSCRIPT` only after a restart.
        engine.load_lock_scripts();
        engine.record_expiries(true);
        Server {
            clock,
            engine,
            replicas,
            redis: redis.clone(),
            generation: 0,
            connections: 0,
            offset_ms: 0,
            commands: 0,
            conns: Vec::new(),
            cluster,
        }
    }

    /// Sets Redis's clock to `now` (whole ms, as Redis sees time, moved
    /// by any clock jump so far).
    pub(crate) fn set_time(&self, now: SimTime) {
        self.clock.set(self.base_ms().saturating_add(now.as_ms()));
    }

    /// The Unix ms Redis's clock reads at virtual time zero.
    fn base_ms(&self) -> u64 {
        EPOCH_MS.saturating_add_signed(self.offset_ms)
    }

    /// Moves Redis's clock by `ms` (negative: back): keys expire earlier
    /// or later in virtual time.
    pub(crate) fn jump(&mut self, ms: i64) {
        self.offset_ms = self.offset_ms.saturating_add(ms);
    }

    /// Runs one command for `client`'s connection of `kind`, opening it if
    /// needed.
    pub(crate) fn execute(
        &mut self,
        now: SimTime,
        client: (u32, u32),
        kind: ConnKind,
        args: &[Bytes],
    ) -> Response {
        self.execute_on(now, client, kind, args).1
    }

    /// [`Server::execute`], with the connection it ran on.
    pub(crate) fn execute_on(
        &mut self,
        now: SimTime,
        client: (u32, u32),
        kind: ConnKind,
        args: &[Bytes],
    ) -> (ConnId, Response) {
        self.set_time(now);
        self.commands += 1;
        let key = (client.0, client.1, kind);
        let conn = match self.conns.iter().find(|(k, _)| *k == key) {
            Some((_, c)) => *c,
            None => {
                let c = self.engine.connect();
                let at = self.conns.partition_point(|(k, _)| *k < key);
                self.conns.insert(at, (key, c));
                c
            }
        };
        (conn, self.engine.execute(conn, args))
    }

    /// Times out one blocked client (`WAIT`) due by `now`, or answers one
    /// whose replicas acknowledged: its reply, and those of what it had
    /// queued, as deliveries; empty when none is due.
    pub(crate) fn tick_one(&mut self, now: SimTime) -> Response {
        self.set_time(now);
        if self.engine.blocked_clients() == 0 {
            return Response::default();
        }
        self.engine.tick_one()
    }

    /// The virtual instant of the earliest blocked client's timeout.
    pub(crate) fn next_deadline(&self) -> Option<SimTime> {
        let at = self.engine.next_deadline()?;
        Some(SimTime::from_ms(at.saturating_sub(self.base_ms())))
    }

    /// Deletes `key` as another Redis client would (`DEL`), on a
    /// connection of its own: what Redis did meanwhile for blocked clients
    /// (their replies are in the response's deliveries).
    pub(crate) fn delete(&mut self, now: SimTime, key: &str) -> Response {
        let args = vec![
            Bytes::from_static(b"DEL"),
            Bytes::copy_from_slice(key.as_bytes()),
        ];
        self.execute(now, (u32::MAX, 0), ConnKind::Command, &args)
    }

    /// The client (index, life) that owns `conn`.
    pub(crate) fn owner(&self, conn: ConnId) -> Option<(u32, u32)> {
        self.conns
            .iter()
            .find(|(_, c)| *c == conn)
            .map(|((client, life, _), _)| (*client, *life))
    }

    /// Closes both connections of one client life (its process died).
    pub(crate) fn disconnect(&mut self, client: (u32, u32)) {
        for kind in [ConnKind::Command, ConnKind::PubSub] {
            let key = (client.0, client.1, kind);
            if let Some(at) = self.conns.iter().position(|(k, _)| *k == key) {
                let (_, conn) = self.conns.remove(at);
                self.engine.disconnect(conn);
            }
        }
    }

    /// Every connection closes (the server went away) but the keys stay:
    /// subscriptions are gone and messages in flight find no connection.
    pub(crate) fn drop_connections(&mut self) {
        for (_, conn) in std::mem::take(&mut self.conns) {
            self.engine.disconnect(conn);
        }
        self.connections += 1;
    }

    /// Restart without persistence: a fresh engine, every key and
    /// connection lost.
    pub(crate) fn restart(&mut self) {
        let mut fresh = self.new_engine();
        self.redis.configure(&mut fresh, false);
        fresh.set_replicas(self.replicas);
        self.replace(fresh);
    }

    /// An empty engine on Redis's clock, set up as a replica of the
    /// deployment (its release line, the replicas' AOF); in a cluster, a
    /// node of the master's shard, which serves its slots once promoted.
    pub(crate) fn new_engine(&self) -> Engine {
        let mut engine = Engine::new(Arc::new(self.clock.clone()));
        self.redis.configure(&mut engine, true);
        if let Some((topology, me)) = &self.cluster {
            engine.join_cluster(topology.clone(), *me);
        }
        engine
    }

    /// `engine` takes the primary's place (a restart, a failover): every
    /// connection is lost and clients reconnect to it. Returns the old one.
    pub(crate) fn replace(&mut self, mut engine: Engine) -> Engine {
        engine.record_expiries(true);
        self.generation += 1;
        self.connections += 1;
        self.conns.clear();
        std::mem::replace(&mut self.engine, engine)
    }

    /// The primary's writes since the last call, for its replicas (`None`
    /// without replicas: nothing is recorded for them).
    pub(crate) fn drain_writes(&mut self) -> Option<std::vec::Drain<'_, fake_redis::Write>> {
        (self.replicas > 0).then(|| self.engine.drain_writes())
    }

    /// The primary's state as a full resync sends it, at `now`.
    pub(crate) fn full_sync(&self, now: SimTime) -> Vec<fake_redis::Write> {
        self.set_time(now);
        self.engine.full_sync()
    }

    /// The primary's engine (to promote a replica in its place).
    pub(crate) fn primary_mut(&mut self) -> &mut Engine {
        &mut self.engine
    }

    /// Whether the primary holds `key` at `now` (read without side
    /// effects).
    pub(crate) fn holds(&self, now: SimTime, key: &str) -> bool {
        self.set_time(now);
        self.engine.holds_key(key.as_bytes())
    }

    /// A message another master published, as the cluster bus brings it:
    /// for this master's subscribers.
    pub(crate) fn receive_published(&mut self, channel: &Bytes, message: &Bytes) -> Response {
        self.engine.receive_published(channel, message)
    }

    /// In a cluster, this master's id (`CLUSTER MYID`).
    pub(crate) fn node_id(&self) -> Option<String> {
        let (topology, me) = self.cluster.as_ref()?;
        let t = topology
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        t.node(*me).map(|n| n.id.clone())
    }

    /// The primary's keyspace version (see [`Server::stamp`]).
    pub(crate) fn keyspace_version(&self) -> u64 {
        self.engine.keyspace_version()
    }

    /// Whether the primary dropped `key` on expiry after its keyspace was
    /// at `version` ([`Server::keyspace_version`]).
    pub(crate) fn expired_since(&self, key: &str, version: u64) -> bool {
        self.engine.expired_since(key.as_bytes(), version)
    }

    /// What a view of a key depends on besides the time: the engine (its
    /// generation), its keyspace's version and how far clock jumps moved
    /// Redis's clock. Under an equal stamp, before the key's expiry, a
    /// key reads as it read before.
    pub(crate) fn stamp(&self) -> ViewStamp {
        ViewStamp {
            generation: self.generation,
            version: self.engine.keyspace_version(),
            offset_ms: self.offset_ms,
        }
    }

    /// The lock key as Redis holds it at `now`, read without side effects
    /// (`hash_snapshot` purges nothing, so observing cannot change a run).
    pub(crate) fn view(&mut self, now: SimTime, key: &str) -> KeyView {
        self.set_time(now);
        let base_ms = self.base_ms();
        key_view(
            &self.engine,
            key,
            base_ms,
            base_ms.saturating_add(now.as_ms()),
        )
    }
}

/// A lock hash's count: the value as a decimal integer, 0 when it is
/// not one. `HINCRBY` writes plain digits, read here without building a
/// `str` (an observation follows every command); anything else is
/// parsed as before.
fn count_of(v: &[u8]) -> i64 {
    let digits = v.strip_prefix(b"-").unwrap_or(v);
    if (1..=18).contains(&digits.len()) && digits.iter().all(u8::is_ascii_digit) {
        let n = digits
            .iter()
            .fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
        return if digits.len() < v.len() { -n } else { n };
    }
    std::str::from_utf8(v)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// The lock key `key` as `engine` holds it when its clock reads `now_ms`
/// (Unix ms), with virtual time zero at `base_ms`; read without side
/// effects. Both engines observe Redis through it.
pub(crate) fn key_view(engine: &Engine, key: &str, base_ms: u64, now_ms: u64) -> KeyView {
    let head = engine.with_hash_head(key.as_bytes(), |first, mode, expires_at| {
        let shared = mode.is_some_and(|m| m.as_ref() == b"read");
        (
            first.map(|(f, v)| (f.clone(), count_of(v))),
            shared,
            expires_at,
        )
    });
    let Some((first, shared, expires_at)) = head else {
        return KeyView {
            first: None,
            shared: false,
            pttl: -2,
            expires_ms: None,
        };
    };
    let pttl = expires_at.map_or(-1, |e| e.saturating_sub(now_ms) as i64);
    KeyView {
        first,
        shared,
        pttl,
        // Virtual ms at which the key is gone (Redis: live while now <=
        // expiry, `keyIsExpired`).
        expires_ms: expires_at.map(|e| e.saturating_add(1).saturating_sub(base_ms)),
    }
}

#[cfg(test)]
mod tests {
    use super::count_of;

    /// The digits fast path reads a count exactly as parsing the text as
    /// an `i64` does, and falls back to it for everything else.
    #[test]
    fn counts_read_as_parsed_text() {
        let parsed = |v: &[u8]| {
            std::str::from_utf8(v)
                .ok()
                .and_then(|s| s.parse::<i64>().ok())
                .unwrap_or(0)
        };
        let cases: [&[u8]; 16] = [
            b"0",
            b"1",
            b"-1",
            b"42",
            b"-",
            b"",
            b"+5",
            b"007",
            b"-0",
            b"999999999999999999",
            b"-999999999999999999",
            b"9223372036854775807",
            b"9223372036854775808",
            b"-9223372036854775808",
            b"1 ",
            b"\xff1",
        ];
        for v in cases {
            assert_eq!(count_of(v), parsed(v), "{:?}", String::from_utf8_lossy(v));
        }
    }
}
