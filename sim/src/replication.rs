//! Redis's replicas: the primary's writes reach each replica after a lag,
//! in order, unless replication stalls (`replication-drop`) or the
//! primary fails first (`failover`), in which case the writes the replica
//! had not received are lost when it is promoted.
//!
//! A run without replicas never touches this module's state, so its
//! history is what it was before replication existed.

use std::collections::VecDeque;

use fake_redis::{Engine, Write};
use rand_chacha::ChaCha8Rng;

use crate::history::ServerCause;
use crate::queue::EventQueue;
use crate::rng::{self, Stream};
use crate::server::Server;
use crate::world::{Ev, World};
use crate::{LatencyRange, SimSpec, SimTime};

/// The replicas and the stream of writes to them.
pub(crate) struct Replicas {
    engines: Vec<Engine>,
    lag: LatencyRange,
    rng: ChaCha8Rng,
    /// Per replica, the writes on their way, in order.
    in_flight: Vec<VecDeque<Write>>,
    /// Per replica, when its last write arrives (a write never overtakes
    /// an earlier one).
    last_at: Vec<SimTime>,
    /// Open `replication-drop` windows.
    pub(crate) stalled: u32,
    /// Writes held back while replication stalls.
    held: Vec<Write>,
    /// Bumped when the primary fails: writes still on their way from it
    /// are lost.
    pub(crate) epoch: u32,
}

impl Replicas {
    pub(crate) fn new(spec: &SimSpec, server: &Server) -> Replicas {
        let n = spec.redis.replicas as usize;
        let engines = (0..n)
            .map(|_| {
                let mut e = server.new_engine();
                e.set_replica();
                e
            })
            .collect();
        Replicas {
            engines,
            lag: spec.redis.replication_lag,
            rng: rng::stream(spec.seed, Stream::Replication),
            in_flight: vec![VecDeque::new(); n],
            last_at: vec![SimTime::ZERO; n],
            stalled: 0,
            held: Vec::new(),
            epoch: 0,
        }
    }

    /// Sends `writes` to every replica, or holds them while replication
    /// stalls.
    fn send(&mut self, now: SimTime, writes: Vec<Write>, queue: &mut EventQueue<Ev>) {
        if writes.is_empty() || self.engines.is_empty() {
            return;
        }
        if self.stalled > 0 {
            self.held.extend(writes);
            return;
        }
        for r in 0..self.engines.len() {
            for w in &writes {
                let lag = rng::between(&mut self.rng, self.lag.min_ms, self.lag.max_ms);
                let at = now.plus_ms(lag).max(self.last_at[r]);
                self.last_at[r] = at;
                self.in_flight[r].push_back(w.clone());
                let (replica, epoch) = (r as u32, self.epoch);
                queue.push(at, Ev::Replicate { replica, epoch });
            }
        }
    }

    /// The replica that has applied the most (the first of equals), as
    /// Sentinel picks one.
    pub(crate) fn most_up_to_date(&self) -> usize {
        let mut best = 0;
        for (i, e) in self.engines.iter().enumerate() {
            if e.repl_offset() > self.engines[best].repl_offset() {
                best = i;
            }
        }
        best
    }
}

impl World<'_> {
    /// Streams the primary's latest writes to its replicas.
    pub(crate) fn replicate(&mut self) {
        let writes = self.server.take_writes();
        self.replicas.send(self.now, writes, &mut self.queue);
    }

    /// The primary's replicas resync from it (after it restarted empty).
    pub(crate) fn resync_replicas(&mut self) {
        if self.replicas.engines.is_empty() {
            return;
        }
        let sync = self.server.full_sync(self.now);
        self.replicas.send(self.now, sync, &mut self.queue);
    }

    /// A write reaches replica `r`.
    pub(crate) fn replica_receives(&mut self, r: u32, epoch: u32) {
        let reps = &mut self.replicas;
        if epoch != reps.epoch {
            return;
        }
        let r = r as usize;
        if let Some(w) = reps.in_flight[r].pop_front() {
            reps.engines[r].apply(&w);
            self.server.primary_mut().ack(r, w.offset());
        }
    }

    /// Replication stalls (`begin`) or resumes, sending what it held back.
    pub(crate) fn stall_replication(&mut self, stall: bool) {
        let reps = &mut self.replicas;
        if stall {
            reps.stalled += 1;
            return;
        }
        reps.stalled = reps.stalled.saturating_sub(1);
        if reps.stalled == 0 {
            let held = std::mem::take(&mut reps.held);
            reps.send(self.now, held, &mut self.queue);
        }
    }

    /// The primary fails: what it had not yet sent, or had on its way to a
    /// replica, is lost.
    pub(crate) fn primary_fails(&mut self) {
        self.replicate();
        let reps = &mut self.replicas;
        reps.epoch = reps.epoch.wrapping_add(1);
        reps.held.clear();
        for q in &mut reps.in_flight {
            q.clear();
        }
    }

    /// Replica `k` (by default the most up to date) becomes the primary,
    /// with what it had received; the old primary rejoins as a replica and
    /// every replica resyncs from the new one. Clients reconnect to it.
    pub(crate) fn promote(&mut self, k: Option<usize>) {
        let reps = &mut self.replicas;
        if reps.engines.is_empty() {
            return;
        }
        let k = k
            .filter(|&k| k < reps.engines.len())
            .unwrap_or_else(|| reps.most_up_to_date());
        let n = reps.engines.len();
        let mut promoted = std::mem::replace(&mut reps.engines[k], self.server.new_engine());
        promoted.set_replicas(n);
        reps.engines[k] = self.server.replace(promoted);
        let sync = self.server.full_sync(self.now);
        for e in &mut self.replicas.engines {
            e.set_replica();
            for w in &sync {
                e.apply(w);
            }
        }
        self.watch.clear();
        self.redis_waiting.clear();
        let locks: Vec<_> = self.seen.keys().cloned().collect();
        for lock in locks {
            self.observe(&lock, ServerCause::Failover);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::tests::{client, spec, thread};
    use crate::{Step, run};

    /// Writes reach a replica in order, each after its drawn lag, never
    /// overtaking one another.
    #[test]
    fn writes_arrive_in_order_after_their_lag() {
        let mut s = spec(vec![client("A", vec![thread(0, vec![Step::Write])])]);
        s.redis.replicas = 2;
        s.redis.replication_lag = LatencyRange {
            min_ms: 5,
            max_ms: 50,
        };
        let server = Server::new(2);
        let mut reps = Replicas::new(&s, &server);
        let mut queue = EventQueue::new();
        let mut primary = server.new_engine();
        primary.set_replicas(2);
        let conn = primary.connect();
        for v in ["1", "2", "3"] {
            primary.execute(conn, ["SET", "k", v].map(bytes::Bytes::from).to_vec());
        }
        reps.send(SimTime::from_ms(100), primary.take_writes(), &mut queue);
        assert_eq!(
            reps.in_flight[0]
                .iter()
                .map(Write::offset)
                .collect::<Vec<_>>(),
            [1, 2, 3]
        );
        // Deliver as the world does: each event applies its replica's
        // next write. Every write arrives within its lag, and each
        // replica ends as the primary is.
        let mut arrivals = 0;
        while let Some((at, ev)) = queue.pop() {
            let Ev::Replicate { replica, epoch: 0 } = ev else {
                panic!("{ev:?}");
            };
            assert!((SimTime::from_ms(105)..=SimTime::from_ms(150)).contains(&at));
            let r = replica as usize;
            let w = reps.in_flight[r].pop_front().expect("a write per event");
            reps.engines[r].apply(&w);
            arrivals += 1;
        }
        assert_eq!(arrivals, 6);
        for e in &reps.engines {
            assert_eq!(e.string_snapshot(b"k"), primary.string_snapshot(b"k"));
            assert_eq!(e.repl_offset(), 3);
        }
        let _ = run(&s).expect("a spec with replicas runs");
    }

    /// While replication stalls nothing is sent; what was held goes out
    /// when it resumes.
    #[test]
    fn a_stall_holds_writes_back() {
        let mut s = spec(vec![client("A", vec![thread(0, vec![Step::Write])])]);
        s.redis.replicas = 1;
        let server = Server::new(1);
        let mut reps = Replicas::new(&s, &server);
        let mut queue = EventQueue::new();
        let mut primary = server.new_engine();
        primary.set_replicas(1);
        let conn = primary.connect();
        primary.execute(conn, ["SET", "k", "v"].map(bytes::Bytes::from).to_vec());
        reps.stalled = 1;
        reps.send(SimTime::ZERO, primary.take_writes(), &mut queue);
        assert!(queue.pop().is_none());
        assert_eq!(reps.held.len(), 1);
        reps.stalled = 0;
        let held = std::mem::take(&mut reps.held);
        reps.send(SimTime::from_ms(9), held, &mut queue);
        assert!(
            queue
                .pop()
                .is_some_and(|(at, _)| at >= SimTime::from_ms(10))
        );
    }
}
