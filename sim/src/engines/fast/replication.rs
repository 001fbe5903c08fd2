//! Redis's replicas: the primary's writes reach each replica after a lag,
//! in order, unless replication stalls (`replication-drop`), a replica's
//! link is down (`replica-down`: the writes wait for its partial resync)
//! or the primary fails first (`failover`), in which case the writes the
//! replica had not received are lost when it is promoted.
//!
//! A replica acknowledges each write as it applies it. Redis's other
//! acknowledgements matter only when that one is missing, after a
//! replica's link comes back (the primary forgets a replica's offset
//! while its link is down): a blocked `WAIT` asks every replica for one
//! (`REPLCONF GETACK`, in the stream behind what is on its way), carried
//! here as a request in the stream. Without it, a `WAIT` after a link
//! came back with nothing to catch up blocked to its timeout however up
//! to date the replica was (4.7.0 seed 59496's waiters woke a second
//! late, as nothing real does). The replica's cron acknowledgement each
//! second (`replicationCron`) is not modelled: only a `WAIT` reads the
//! acknowledgements, and one that finds them short blocks and asks, so
//! the cron's would save it a replication round trip at most.
//!
//! A run without replicas never touches this module's state, so its
//! history is what it was before replication existed.

use std::collections::VecDeque;
use std::rc::Rc;

use fake_redis::{Engine, Write};
use rand_chacha::ChaCha8Rng;

use crate::engines::fast::queue::EventQueue;
use crate::engines::fast::world::{Ev, World};
use crate::model::history::ServerCause;
use crate::model::rng::{self, Stream};
use crate::{LatencyRange, SimSpec, SimTime};

/// The replicas and the stream of writes to them, as either engine
/// carries it: the fast engine schedules an event per arrival
/// ([`Replicas::send`]'s answer) and applies one write per event
/// ([`Replicas::receive`]); the turmoil engine applies whatever is due
/// between its steps ([`Replicas::receive_due`]).
pub(crate) struct Replicas {
    engines: Vec<Engine>,
    lag: LatencyRange,
    rng: ChaCha8Rng,
    /// The master they replicate (0 outside a cluster).
    shard: u16,
    /// Per replica, the writes on their way, in order, each with when it
    /// arrives: one write shared by every replica (a copy per replica
    /// cloned the key's whole value), or `None`, a request for an
    /// acknowledgement.
    in_flight: Vec<VecDeque<(SimTime, Option<Rc<Write>>)>>,
    /// Per replica, when its last write arrives (a write never overtakes
    /// an earlier one).
    last_at: Vec<SimTime>,
    /// Open `replication-drop` windows.
    stalled: u32,
    /// Writes held back while replication stalls.
    held: Vec<Write>,
    /// Per replica, the `replica-down` windows open on its link.
    down: Vec<u32>,
    /// Per replica, the `replication-drop` windows open on its link alone.
    stalled_one: Vec<u32>,
    /// Per replica, the writes its link missed while down or stalled,
    /// sent in order when it flows again (a partial resync from the
    /// primary's backlog).
    missed: Vec<Vec<Rc<Write>>>,
    /// The writes of the send under way, shared by every replica.
    batch: Vec<Rc<Write>>,
    /// When each write of the last send arrives, and where: refilled by
    /// every send, so a run allocates it once (a list per write command
    /// was a fifth of replication's cost).
    arrivals: Vec<(SimTime, u32)>,
    /// Bumped when the primary fails: writes still on their way from it
    /// are lost.
    pub(crate) epoch: u32,
}

impl Replicas {
    /// `spec`'s replicas of master `shard` (each master of a cluster has
    /// as many), each a fresh engine from `new_engine`.
    pub(crate) fn new(spec: &SimSpec, shard: u16, new_engine: impl Fn() -> Engine) -> Replicas {
        let n = spec.redis.replicas as usize;
        let engines = (0..n)
            .map(|_| {
                let mut e = new_engine();
                e.set_replica();
                // Synced from a primary Redisson has used before, which
                // holds the lock scripts: 6.2 ships them to its replicas.
                if spec.redis.version.replicates_scripts() {
                    e.load_lock_scripts();
                }
                e
            })
            .collect();
        Replicas {
            engines,
            lag: spec.redis.replication_lag,
            rng: rng::stream(spec.seed, lags(shard)),
            shard,
            in_flight: vec![VecDeque::new(); n],
            last_at: vec![SimTime::ZERO; n],
            stalled: 0,
            held: Vec::new(),
            down: vec![0; n],
            stalled_one: vec![0; n],
            missed: vec![Vec::new(); n],
            batch: Vec::new(),
            arrivals: Vec::new(),
            epoch: 0,
        }
    }

    /// Draws the lags of writes from the stream of `seed` from now on (a
    /// branch's fork); writes in flight keep their arrival.
    pub(crate) fn reseed(&mut self, seed: u64) {
        self.rng = rng::stream(seed, lags(self.shard));
    }

    /// How many there are.
    pub(crate) fn len(&self) -> usize {
        self.engines.len()
    }

    /// Sends `writes` to every replica, or holds them while replication
    /// stalls: when each arrives, and where.
    pub(crate) fn send(
        &mut self,
        now: SimTime,
        writes: impl IntoIterator<Item = Write>,
    ) -> &[(SimTime, u32)] {
        self.arrivals.clear();
        if self.engines.is_empty() {
            return &self.arrivals;
        }
        if self.stalled > 0 {
            self.held.extend(writes);
            return &self.arrivals;
        }
        // Every write is in hand before the first lag is drawn: the draws
        // go replica by replica, each replica's writes in order.
        let mut batch = std::mem::take(&mut self.batch);
        batch.extend(writes.into_iter().map(Rc::new));
        for r in 0..self.engines.len() {
            if self.down[r] > 0 || self.stalled_one[r] > 0 {
                self.missed[r].extend(batch.iter().cloned());
            } else {
                self.send_to(now, r, batch.iter().cloned());
            }
        }
        batch.clear();
        self.batch = batch;
        &self.arrivals
    }

    /// Sends replica `r` the writes `writes`, each after its lag.
    fn send_to(&mut self, now: SimTime, r: usize, writes: impl IntoIterator<Item = Rc<Write>>) {
        for w in writes {
            let lag = rng::between(&mut self.rng, self.lag.min_ms, self.lag.max_ms);
            let at = now.plus_ms(lag).max(self.last_at[r]);
            self.last_at[r] = at;
            self.in_flight[r].push_back((at, Some(w)));
            self.arrivals.push((at, r as u32));
        }
    }

    /// Whether writes flow to replica `r` now.
    fn flows(&self, r: usize) -> bool {
        self.stalled == 0 && self.down[r] == 0 && self.stalled_one[r] == 0
    }

    /// A `WAIT` blocked: the primary asks each replica to acknowledge
    /// (`REPLCONF GETACK` in its stream). One with a write on its way
    /// acknowledges that write anyway; one idle answers after a lag.
    pub(crate) fn request_acks(&mut self, now: SimTime) -> &[(SimTime, u32)] {
        self.arrivals.clear();
        for r in 0..self.engines.len() {
            if self.flows(r) && self.in_flight[r].is_empty() {
                let lag = rng::between(&mut self.rng, self.lag.min_ms, self.lag.max_ms);
                let at = now.plus_ms(lag).max(self.last_at[r]);
                self.last_at[r] = at;
                self.in_flight[r].push_back((at, None));
                self.arrivals.push((at, r as u32));
            }
        }
        &self.arrivals
    }

    /// Replica `r`'s link to `primary` goes down, or comes back (`up`):
    /// what it missed, sent. Down, the primary forgets it (see
    /// [`Engine::set_replica_link`]); writes already on their way still
    /// arrive, but their acknowledgements find no link. Back (the last
    /// open window closing), it catches up from the primary's backlog,
    /// and counts again from the first write it acknowledges.
    pub(crate) fn link(
        &mut self,
        now: SimTime,
        r: usize,
        up: bool,
        primary: &mut Engine,
    ) -> &[(SimTime, u32)] {
        self.arrivals.clear();
        let Some(down) = self.down.get_mut(r) else {
            return &self.arrivals;
        };
        if !up {
            *down += 1;
            primary.set_replica_link(r, false);
            return &self.arrivals;
        }
        *down = down.saturating_sub(1);
        if *down == 0 {
            primary.set_replica_link(r, true);
            self.catch_up(now, r);
        }
        &self.arrivals
    }

    /// Replica `r`'s link flows again if nothing holds it: what it
    /// missed goes out.
    fn catch_up(&mut self, now: SimTime, r: usize) {
        if self.down[r] == 0 && self.stalled_one[r] == 0 {
            let missed = std::mem::take(&mut self.missed[r]);
            self.send_to(now, r, missed);
        }
    }

    /// Tells `primary` (just started, or promoted) which replicas' links
    /// are down.
    pub(crate) fn apply_links(&self, primary: &mut Engine) {
        for (r, &down) in self.down.iter().enumerate() {
            if down > 0 {
                primary.set_replica_link(r, false);
            }
        }
    }

    /// Replica `r`'s next write (or request) arrives: it applies it;
    /// the offset to acknowledge.
    pub(crate) fn receive(&mut self, r: usize) -> Option<u64> {
        let (_, w) = self.in_flight.get_mut(r)?.pop_front()?;
        let engine = &mut self.engines[r];
        if let Some(w) = w {
            engine.apply(&w);
        }
        Some(engine.repl_offset())
    }

    /// Every write due by `now` arrives: each replica and offset to
    /// acknowledge.
    pub(crate) fn receive_due(&mut self, now: SimTime) -> Vec<(usize, u64)> {
        let mut acks = Vec::new();
        for r in 0..self.engines.len() {
            while self.in_flight[r].front().is_some_and(|(at, _)| *at <= now) {
                acks.extend(self.receive(r).map(|offset| (r, offset)));
            }
        }
        acks
    }

    /// Replication to every replica (or to `one`) stalls (`stall`) or
    /// resumes: what it held back, sent.
    pub(crate) fn stall(
        &mut self,
        now: SimTime,
        stall: bool,
        one: Option<usize>,
    ) -> &[(SimTime, u32)] {
        self.arrivals.clear();
        if let Some(r) = one {
            let Some(stalled) = self.stalled_one.get_mut(r) else {
                return &self.arrivals;
            };
            if stall {
                *stalled += 1;
            } else {
                *stalled = stalled.saturating_sub(1);
                self.catch_up(now, r);
            }
            return &self.arrivals;
        }
        if stall {
            self.stalled += 1;
            return &self.arrivals;
        }
        self.stalled = self.stalled.saturating_sub(1);
        if self.stalled > 0 {
            return &self.arrivals;
        }
        let held = std::mem::take(&mut self.held);
        self.send(now, held)
    }

    /// The primary failed: what it had not yet sent, or had on its way to
    /// a replica, is lost.
    pub(crate) fn primary_failed(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        self.held.clear();
        for m in &mut self.missed {
            m.clear();
        }
        for q in &mut self.in_flight {
            q.clear();
        }
    }

    /// Takes out replica `k` (by default the most up to date, as Sentinel
    /// picks), to be the primary of the others, leaving `fresh` in its
    /// place until [`Replicas::rejoin`]: its place and engine.
    pub(crate) fn promote(&mut self, k: Option<usize>, fresh: Engine) -> Option<(usize, Engine)> {
        if self.engines.is_empty() {
            return None;
        }
        let k = k
            .filter(|&k| k < self.engines.len())
            .unwrap_or_else(|| self.most_up_to_date());
        let mut promoted = std::mem::replace(&mut self.engines[k], fresh);
        promoted.set_replicas(self.engines.len());
        Some((k, promoted))
    }

    /// The old primary rejoins in place `k`, and every replica resyncs
    /// from the new primary's `sync`.
    pub(crate) fn rejoin(&mut self, k: usize, old_primary: Engine, sync: &[Write]) {
        self.engines[k] = old_primary;
        for e in &mut self.engines {
            e.set_replica();
            for w in sync {
                e.apply(w);
            }
        }
    }

    /// The replica that has applied the most (the first of equals).
    fn most_up_to_date(&self) -> usize {
        let mut best = 0;
        for (i, e) in self.engines.iter().enumerate() {
            if e.repl_offset() > self.engines[best].repl_offset() {
                best = i;
            }
        }
        best
    }
}

/// The stream of master `shard`'s replication lags: master 0's is the
/// one a deployment of one master has always drawn from.
fn lags(shard: u16) -> Stream {
    match shard {
        0 => Stream::Replication,
        k => Stream::ShardReplication(k),
    }
}

/// Schedules each arrival of master `shard`'s replicated writes (sent
/// under `epoch`).
fn schedule(queue: &mut EventQueue<Ev>, shard: u16, epoch: u32, arrivals: &[(SimTime, u32)]) {
    for &(at, replica) in arrivals {
        queue.push(
            at,
            Ev::Replicate {
                shard,
                replica,
                epoch,
            },
        );
    }
}

impl World<'_> {
    /// Streams each master's latest writes to its replicas.
    pub(crate) fn replicate(&mut self) {
        for shard in 0..self.redis.len() as u16 {
            self.replicate_shard(shard);
        }
    }

    /// Streams master `shard`'s latest writes to its replicas.
    fn replicate_shard(&mut self, shard: u16) {
        let redis = &mut self.redis[usize::from(shard)];
        let epoch = redis.replicas.epoch;
        let Some(writes) = redis.server.drain_writes() else {
            return;
        };
        let arrivals = redis.replicas.send(self.now, writes);
        schedule(&mut self.queue, shard, epoch, arrivals);
        if redis.server.primary_mut().take_ack_request() {
            let arrivals = redis.replicas.request_acks(self.now);
            schedule(&mut self.queue, shard, epoch, arrivals);
        }
    }

    /// The replicas of `masters` resync from them (after they restarted
    /// empty).
    pub(crate) fn resync_replicas(&mut self, masters: std::ops::Range<usize>) {
        for shard in masters {
            let redis = &mut self.redis[shard];
            if redis.replicas.len() == 0 {
                continue;
            }
            let epoch = redis.replicas.epoch;
            redis.replicas.apply_links(redis.server.primary_mut());
            let sync = redis.server.full_sync(self.now);
            let arrivals = redis.replicas.send(self.now, sync);
            schedule(&mut self.queue, shard as u16, epoch, arrivals);
        }
    }

    /// A write reaches replica `r` of master `shard`.
    pub(crate) fn replica_receives(&mut self, shard: u16, r: u32, epoch: u32) {
        let redis = &mut self.redis[usize::from(shard)];
        if epoch != redis.replicas.epoch {
            return;
        }
        if let Some(offset) = redis.replicas.receive(r as usize) {
            redis.server.primary_mut().ack(r as usize, offset);
            // A WAIT this acknowledgement satisfies answers now.
            crate::engines::fast::execution::redis_tick(self, shard);
        }
    }

    /// Replication to every replica (or to `one`) stalls (`begin`) or
    /// resumes, sending what it held back. Replication faults act on a
    /// deployment of one master (`crate::model::fault::needs_replicas`).
    pub(crate) fn stall_replication(&mut self, stall: bool, one: Option<usize>) {
        let epoch = self.redis[0].replicas.epoch;
        let arrivals = self.redis[0].replicas.stall(self.now, stall, one);
        schedule(&mut self.queue, 0, epoch, arrivals);
    }

    /// Replica `r`'s link goes down, or comes back (`up`) and catches up.
    pub(crate) fn replica_link(&mut self, r: usize, up: bool) {
        let redis = &mut self.redis[0];
        let epoch = redis.replicas.epoch;
        let arrivals = redis
            .replicas
            .link(self.now, r, up, redis.server.primary_mut());
        schedule(&mut self.queue, 0, epoch, arrivals);
    }

    /// Master `shard` fails: what it had not yet sent, or had on its way
    /// to a replica, is lost.
    pub(crate) fn primary_fails(&mut self, shard: u16) {
        self.replicate_shard(shard);
        self.redis[usize::from(shard)].replicas.primary_failed();
    }

    /// Replica `k` of master `shard` (by default the most up to date)
    /// becomes the master, with what it had received; the old master
    /// rejoins as a replica and every replica resyncs from the new one.
    /// Clients reconnect to it.
    pub(crate) fn promote(&mut self, shard: u16, k: Option<usize>) {
        let redis = &mut self.redis[usize::from(shard)];
        let Some((k, promoted)) = redis.replicas.promote(k, redis.server.new_engine()) else {
            return;
        };
        let old = redis.server.replace(promoted);
        let sync = redis.server.full_sync(self.now);
        redis.replicas.rejoin(k, old, &sync);
        redis.waiting.clear();
        self.observe_all(ServerCause::Failover);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::fast::server::Server;
    use crate::run::tests::{client, spec, thread};
    use crate::steps;
    use crate::{Step, run};

    /// Writes reach a replica in order, each after its drawn lag, never
    /// overtaking one another.
    #[test]
    fn writes_arrive_in_order_after_their_lag() {
        let mut s = spec(vec![client(
            "A",
            vec![thread(0, vec![Step::Write(steps::Write {})])],
        )]);
        s.redis.replicas = 2;
        s.redis.replication_lag = LatencyRange {
            min_ms: 5,
            max_ms: 50,
        };
        let server = Server::new(&s.redis);
        let mut reps = Replicas::new(&s, 0, || server.new_engine());
        let mut primary = server.new_engine();
        primary.set_replicas(2);
        let conn = primary.connect();
        for v in ["1", "2", "3"] {
            primary.execute(conn, ["SET", "k", v].map(bytes::Bytes::from));
        }
        let arrivals = reps
            .send(SimTime::from_ms(100), primary.take_writes())
            .to_vec();
        assert_eq!(
            reps.in_flight[0]
                .iter()
                .map(|(_, w)| w.as_ref().map(|w| w.offset()))
                .collect::<Vec<_>>(),
            [Some(1), Some(2), Some(3)]
        );
        // Every write arrives within its lag, none before an earlier one,
        // and each replica ends as the primary is.
        assert_eq!(arrivals.len(), 6);
        for r in 0..2 {
            let times: Vec<SimTime> = arrivals
                .iter()
                .filter(|(_, x)| *x == r)
                .map(|(at, _)| *at)
                .collect();
            assert!(times.is_sorted(), "{times:?}");
            assert!(
                times
                    .iter()
                    .all(|at| (SimTime::from_ms(105)..=SimTime::from_ms(150)).contains(at))
            );
        }
        assert!(reps.receive_due(SimTime::from_ms(104)).is_empty());
        assert_eq!(reps.receive_due(SimTime::from_ms(150)).len(), 6);
        for e in &reps.engines {
            assert_eq!(e.string_snapshot(b"k"), primary.string_snapshot(b"k"));
            assert_eq!(e.repl_offset(), 3);
        }
        let _ = run(&s).expect("a spec with replicas runs");
    }

    /// A promoted replica answers the lock scripts' `EVALSHA` on Redis
    /// 6.2, which ships the primary's script cache to its replicas, and
    /// `NOSCRIPT` on 7.0 and 7.2, which do not
    /// (`RedisVersion::replicates_scripts`).
    #[test]
    fn a_6_2_replica_has_the_lock_scripts() {
        let sha = fake_redis::LockScript::Renew.sha1();
        for version in fake_redis::RedisVersion::ALL {
            let mut s = spec(vec![]);
            s.redis.replicas = 1;
            s.redis.version = version;
            let server = Server::new(&s.redis);
            let mut reps = Replicas::new(&s, 0, || server.new_engine());
            let mut fresh = server.new_engine();
            fresh.set_replicas(1);
            let (_, mut promoted) = reps.promote(None, fresh).expect("a replica");
            let conn = promoted.connect();
            let words =
                ["SCRIPT".to_owned(), "EXISTS".to_owned(), sha.clone()].map(bytes::Bytes::from);
            let exists = promoted.execute(conn, words).replies;
            let cached = i64::from(version.replicates_scripts());
            assert_eq!(
                exists,
                [fake_redis::Value::Array(vec![fake_redis::Value::Int(
                    cached
                )])],
                "{version}"
            );
        }
    }

    /// A blocked `WAIT`'s request for acknowledgements reaches only a
    /// replica with nothing on its way and writes flowing, in its stream:
    /// answered with the replica's offset, and no later write overtakes
    /// it.
    #[test]
    fn a_getack_reaches_an_idle_replica_in_its_stream() {
        let mut s = spec(vec![]);
        s.redis.replicas = 2;
        let server = Server::new(&s.redis);
        let mut reps = Replicas::new(&s, 0, || server.new_engine());
        let mut primary = server.new_engine();
        primary.set_replicas(2);
        let conn = primary.connect();
        primary.execute(conn, ["SET", "k", "v"].map(bytes::Bytes::from));
        reps.send(SimTime::ZERO, primary.take_writes());
        assert_eq!(reps.receive_due(SimTime::from_ms(10)).len(), 2);
        // Replica 1's link goes down and comes back: it is idle again.
        reps.link(SimTime::from_ms(10), 1, false, &mut primary);
        primary.execute(conn, ["SET", "k", "w"].map(bytes::Bytes::from));
        reps.send(SimTime::from_ms(10), primary.take_writes());
        let asked = reps.request_acks(SimTime::from_ms(11)).to_vec();
        assert!(asked.is_empty(), "busy or down: {asked:?}");
        reps.link(SimTime::from_ms(20), 1, true, &mut primary);
        assert_eq!(reps.receive_due(SimTime::from_ms(40)), [(0, 2), (1, 2)]);
        let asked = reps.request_acks(SimTime::from_ms(40)).to_vec();
        assert_eq!(asked.iter().map(|a| a.1).collect::<Vec<_>>(), [0, 1]);
        primary.execute(conn, ["SET", "k", "x"].map(bytes::Bytes::from));
        reps.send(SimTime::from_ms(40), primary.take_writes());
        let acks = reps.receive_due(SimTime::from_ms(100));
        assert_eq!(acks, [(0, 2), (0, 3), (1, 2), (1, 3)]);
    }

    /// While replication stalls nothing is sent; what was held goes out
    /// when it resumes.
    #[test]
    fn a_stall_holds_writes_back() {
        let mut s = spec(vec![client(
            "A",
            vec![thread(0, vec![Step::Write(steps::Write {})])],
        )]);
        s.redis.replicas = 1;
        let server = Server::new(&s.redis);
        let mut reps = Replicas::new(&s, 0, || server.new_engine());
        let mut primary = server.new_engine();
        primary.set_replicas(1);
        let conn = primary.connect();
        primary.execute(conn, ["SET", "k", "v"].map(bytes::Bytes::from));
        assert!(reps.stall(SimTime::ZERO, true, None).is_empty());
        assert!(reps.send(SimTime::ZERO, primary.take_writes()).is_empty());
        assert_eq!(reps.held.len(), 1);
        let sent = reps.stall(SimTime::from_ms(9), false, None).to_vec();
        assert!(
            sent.len() == 1 && sent[0].0 >= SimTime::from_ms(10),
            "{sent:?}"
        );
    }
}
