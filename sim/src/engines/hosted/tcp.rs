//! The turmoil engine: the same spec, run by the code a user ships.
//!
//! Each client is a turmoil host running lockcore's async wrapper
//! ([`lockcore::RedissonClient`] over [`lockcore::RespTransport`]) on
//! turmoil's simulated TCP, speaking RESP to a Redis host that serves
//! fake-redis's real RESP server code ([`fake_redis::serve_connection`]).
//! Thread scripts drive the async API ([`lockcore::RLock::call`]). Time is
//! turmoil's: hosts advance in 1 ms ticks, network messages are delivered
//! between ticks (latency drawn by turmoil from the spec's range, seeded
//! from the spec's seed), timers fire inside a tick at their instant.
//!
//! The history is gathered as the fast engine records it: lockcore's
//! [`lockcore::Tracer`] on each client, fake-redis's
//! [`fake_redis::CommandHook`] on Redis (each command's lock keys, read
//! right after it ran), and the engine's loop (faults, expiries between
//! ticks). The same checkers and oracle judge it.
//!
//! Determinism: turmoil runs every host on this thread, in a fixed order,
//! with its randomness seeded from the spec; the async code's `select!`s
//! are `biased`; nothing reads the wall clock (the Redis engine's clock
//! is the simulated one). The same spec gives the same history.
//!
//! Faults: each fault's verbs (`fault::effect`) as `effects` carries them
//! out (see [`TURMOIL_FAULTS`]); a fault with a verb turmoil cannot carry
//! out is refused with [`SimError::Unsupported`] before anything runs.

use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fake_redis::{Clock, Engine, SharedEngine};
use lockcore::Connect;

use super::action::{self, Action};
use super::delay::{Delay, DelayedStream};
use super::gate::Gate;
use super::process::{self, ClientHost, Slots};
use super::recorder::{self, Recorder, Shared};
use crate::engines::fast::replication::Replicas;
use crate::model::ended::Ended;
use crate::model::fault::effect;
use crate::model::history::{Phase, RecordKind, ServerCause};
use crate::model::time::EPOCH_MS;
use crate::{CutShort, History, SimError, SimSpec, SimTime};

mod effects;
mod switchover;

/// The Redis host's name.
pub(crate) const REDIS: &str = "redis";
pub(crate) const PORT: u16 = 6379;
/// Turmoil's step: network deliveries happen between steps.
const TICK: Duration = Duration::from_millis(1);
/// The processes connect to Redis during this boot phase, before the
/// spec's time zero, as an application builds its Redisson client before
/// it takes a lock; every time the history shows is after it.
pub(crate) const BOOT_MS: u64 = 100;

/// Redis's clock: the simulated time of the running host, or the loop's
/// between steps, moved by any `clock-jump` so far.
#[derive(Debug, Default)]
struct SimClock {
    loop_ms: AtomicU64,
    offset_ms: AtomicI64,
}

impl Clock for SimClock {
    fn now_ms(&self) -> u64 {
        let base = EPOCH_MS.saturating_add_signed(self.offset_ms.load(Ordering::SeqCst));
        match turmoil::sim_elapsed() {
            Some(d) => (base + d.as_millis() as u64).saturating_sub(BOOT_MS),
            None => base + self.loop_ms.load(Ordering::SeqCst),
        }
    }
}

/// A client's connections: turmoil TCP to the Redis host, each named
/// after the process so Redis's hook knows who sent what; Redis's replies
/// are read through the client's `delay-replies` windows.
struct TurmoilConnect {
    name: String,
    replies: Delay,
}

impl Connect for TurmoilConnect {
    type Stream = DelayedStream<turmoil::net::TcpStream>;

    fn target(&self) -> String {
        format!("{REDIS}:{PORT}")
    }

    async fn open(&self) -> std::io::Result<Self::Stream> {
        let stream = turmoil::net::TcpStream::connect((REDIS, PORT)).await?;
        Ok(DelayedStream::new(
            stream,
            Gate::default(),
            self.replies.clone(),
        ))
    }

    fn client_name(&self) -> Option<String> {
        Some(self.name.clone())
    }
}

/// The simulation every run of `spec` steps through, the engine's and
/// the bare program's ([`super::bare::run_turmoil_bare`]) alike: the same
/// tick, latency range and seed, so the two cover the same simulated time.
pub(crate) fn builder(spec: &SimSpec) -> turmoil::Builder {
    let mut builder = turmoil::Builder::new();
    builder
        .simulation_duration(horizon(spec) + TICK * 10)
        .tick_duration(TICK)
        .min_message_latency(Duration::from_millis(spec.latency.min_ms))
        .max_message_latency(Duration::from_millis(spec.latency.max_ms))
        .rng_seed(spec.seed);
    builder
}

/// Where the loop stops stepping: the boot phase, then the spec's horizon.
pub(crate) fn horizon(spec: &SimSpec) -> Duration {
    Duration::from_millis(BOOT_MS + spec.horizon_ms)
}

pub(crate) fn engine_failed(e: Box<dyn std::error::Error>) -> SimError {
    SimError::Engine {
        engine: "turmoil".to_owned(),
        reason: e.to_string(),
    }
}

/// Runs `spec` on the turmoil engine, for the judge (`crate::run_turmoil`).
pub(crate) fn play(spec: &SimSpec) -> Result<Ended, SimError> {
    crate::model::validate::validate_spec(spec)?;
    let actions = action::plan(spec, action::Kinds::Turmoil)?;
    let (history, cut_short, events) = simulate(spec, &actions)?;
    Ok(Ended::hosted(history, cut_short, events))
}

fn simulate(
    spec: &SimSpec,
    actions: &[(u64, Action)],
) -> Result<(History, Vec<CutShort>, u64), SimError> {
    let configs = process::configs(spec, 1)?;
    let recorder: Shared = Arc::new(Mutex::new(Recorder::new(spec)));
    let clock = Arc::new(SimClock::default());
    let hooked = recorder.clone();
    let mut primary = primary_engine(spec, &clock);
    // Warm, as the fast engine's (`Server::new`); a restart's is cold.
    primary.load_lock_scripts();
    let shared = SharedEngine::with_hook(
        primary,
        Box::new(move |engine, conn, args| recorder::lock(&hooked).command(engine, conn, args)),
    );
    let redis_gate = Gate::default();
    let mut sim = builder(spec).build();
    let slots = process::slots(spec, 1);
    let requests = slots
        .iter()
        .map(|s| (s.borrow().host.clone(), s.borrow().requests.clone()))
        .collect();
    redis_host(&mut sim, shared.clone(), redis_gate.clone(), requests);
    let shared_spec = Rc::new(spec.clone());
    for (c, (config, watchdog_ms)) in configs.into_iter().enumerate() {
        let host = slots[c].borrow().host.clone();
        let client = ClientHost {
            c,
            spec: shared_spec.clone(),
            config,
            watchdog_ms,
            recorder: recorder.clone(),
            slots: slots.clone(),
            connect: {
                let replies = slots[c].borrow().replies.clone();
                // One Redis host: turmoil runs no cluster (`action::plan`).
                Rc::new(move |name| {
                    vec![TurmoilConnect {
                        name,
                        replies: replies.clone(),
                    }]
                })
            },
            boot: Duration::from_millis(BOOT_MS),
            scale: 1,
        };
        sim.host(host, move || {
            let client = client.clone();
            async move { client.software().await.map_err(|e| e.to_string().into()) }
        });
    }
    let mut next = 0;
    let mut steps = 0u64;
    let horizon = horizon(spec);
    let mut world = Loop {
        spec,
        sim: &mut sim,
        recorder: &recorder,
        shared: &shared,
        clock: &clock,
        slots: &slots,
        redis_gate: &redis_gate,
        redis_down: 0,
        replicas: Replicas::new(spec, 0, || {
            let mut e = Engine::new(clock.clone());
            spec.redis.configure(&mut e, true);
            e
        }),
        promoted: None,
    };
    while world.sim.elapsed() < horizon {
        let elapsed_ms = world.sim.elapsed().as_millis() as u64;
        let now_ms = elapsed_ms.saturating_sub(BOOT_MS);
        world.set_time(now_ms);
        // Faults strike from time zero on, never during the boot phase.
        while let Some((at, action)) = actions.get(next).copied()
            && elapsed_ms >= BOOT_MS
            && at <= now_ms
        {
            world.act(action)?;
            next += 1;
        }
        world.sim.step().map_err(engine_failed)?;
        steps += 1;
        world.set_time((world.sim.elapsed().as_millis() as u64).saturating_sub(BOOT_MS));
        world.replicate();
        shared.with_engine(|e| {
            let mut rec = recorder::lock(&recorder);
            let (now, offset) = (rec.now(), rec.redis_offset_ms);
            rec.expire(now, |lock, at| recorder::turmoil_view(e, lock, at, offset));
        });
    }
    world.set_time(spec.horizon_ms);
    if let Some(command) = crate::model::leftover::command(spec) {
        let reply = shared.with_engine(|e| {
            let conn = e.connect();
            let reply = e.execute(conn, &command).replies.into_iter().next();
            e.disconnect(conn);
            reply
        });
        let reply = reply.map_or(
            lockcore::Value::Nil,
            crate::engines::fast::inprocess::lock_value,
        );
        let at = SimTime::from_ms(spec.horizon_ms);
        recorder::lock(&recorder).leftovers(spec, at, &reply);
    }
    let (history, cut) = process::finish(spec, &recorder, &slots);
    Ok((history, cut, steps))
}

/// An empty primary on Redis's clock, streaming its writes to the spec's
/// replicas.
fn primary_engine(spec: &SimSpec, clock: &Arc<SimClock>) -> Engine {
    let mut engine = Engine::new(clock.clone());
    spec.redis.configure(&mut engine, false);
    engine.set_replicas(spec.redis.replicas as usize);
    engine
}

/// The Redis host: fake-redis's RESP server on turmoil's TCP; it reads
/// nothing while `gate` is closed (a Redis pause), and reads each client's
/// requests through its `delay-requests` windows (`requests`, by host).
fn redis_host(
    sim: &mut turmoil::Sim<'_>,
    shared: SharedEngine,
    gate: Gate,
    requests: BTreeMap<String, Delay>,
) {
    sim.host(REDIS, move || {
        let (shared, gate, requests) = (shared.clone(), gate.clone(), requests.clone());
        async move {
            // BLPOP and WAIT time out in simulated time.
            tokio::task::spawn_local(fake_redis::time_out_blocked(shared.clone()));
            let listener = turmoil::net::TcpListener::bind(("0.0.0.0", PORT)).await?;
            loop {
                let (stream, peer) = listener.accept().await?;
                let delay = turmoil::reverse_lookup(peer.ip())
                    .and_then(|host| requests.get(&host).cloned())
                    .unwrap_or_default();
                let stream = DelayedStream::new(stream, gate.clone(), delay);
                tokio::task::spawn_local(fake_redis::serve_connection(shared.clone(), stream));
            }
        }
    });
}

/// The engine's loop: what it acts on between steps.
struct Loop<'a, 's> {
    spec: &'a SimSpec,
    sim: &'a mut turmoil::Sim<'s>,
    recorder: &'a Shared,
    shared: &'a SharedEngine,
    clock: &'a Arc<SimClock>,
    slots: &'a Slots,
    redis_gate: &'a Gate,
    /// Redis-down windows open now (they may overlap).
    redis_down: u32,
    /// The primary's replicas (none unless the spec asks).
    replicas: Replicas,
    /// During a switchover, the promoted replica (its place, its engine)
    /// that no client reaches yet.
    promoted: Option<(usize, Engine)>,
}

impl Loop<'_, '_> {
    fn set_time(&self, ms: u64) {
        self.clock.loop_ms.store(ms, Ordering::SeqCst);
        recorder::lock(self.recorder).loop_now = SimTime::from_ms(ms);
    }

    /// The loop's time (between steps).
    fn now(&self) -> SimTime {
        SimTime::from_ms(self.clock.loop_ms.load(Ordering::SeqCst))
    }

    fn act(&mut self, action: Action) -> Result<(), SimError> {
        let (i, phase) = match action {
            Action::Begin(i) => (i, Phase::Begin),
            Action::End(i) => (i, Phase::End),
        };
        let spec = self.spec;
        let fault = &spec.faults.0[i];
        if fault.kind().recorded() {
            recorder::lock(self.recorder).record(RecordKind::Fault {
                fault: fault.clone(),
                phase,
            });
        }
        effect::act(spec, i, phase == Phase::Begin, self);
        Ok(())
    }
}

impl Loop<'_, '_> {
    /// Redis's clock jumps (an NTP step): every key's expiry instant moves
    /// in spec time, so each lock is read afresh, as the fast engine does.
    fn redis_clock_jumps(&mut self, jump_ms: i64) {
        self.clock.offset_ms.fetch_add(jump_ms, Ordering::SeqCst);
        let mut rec = recorder::lock(self.recorder);
        rec.redis_offset_ms = rec.redis_offset_ms.saturating_add(jump_ms);
        drop(rec);
        self.shared
            .with_engine(|e| observe_all(self.recorder, e, ServerCause::Expiry));
    }

    /// Redis's process stops: its host crashes, so every socket closes
    /// (clients read end-of-stream, or a reset) and connecting is refused
    /// (turmoil drops a SYN to a port nobody listens on), and the engine
    /// forgets its clients and their subscriptions.
    fn redis_stops(&mut self) {
        self.sim.crash(REDIS);
        self.shared.drop_connections();
    }

    /// Redis's process starts again, unless a redis-down window is still
    /// open: with its keys (`keep_data`, a restart from a snapshot) or
    /// empty, as the fast engine's `restart_redis` leaves it.
    fn redis_starts(&mut self, keep_data: bool) {
        if !keep_data {
            let now = self.now();
            let replicas = &self.replicas;
            let sync = self.shared.with_engine(|e| {
                *e = primary_engine(self.spec, self.clock);
                replicas.apply_links(e);
                observe_all(self.recorder, e, ServerCause::Restart);
                e.full_sync()
            });
            // Its replicas resync from it: they lose every key too.
            if self.replicas.len() > 0 {
                self.replicas.send(now, sync);
            }
        }
        if self.redis_down == 0 {
            self.sim.bounce(REDIS);
        }
    }

    /// Streams the primary's writes since the last step to its replicas,
    /// and applies on each what has arrived by now.
    fn replicate(&mut self) {
        if self.replicas.len() == 0 {
            return;
        }
        let now = self.now();
        let (writes, ask) = self
            .shared
            .with_engine(|e| (e.take_writes(), e.take_ack_request()));
        self.replicas.send(now, writes);
        if ask {
            self.replicas.request_acks(now);
        }
        let acks = self.replicas.receive_due(now);
        self.shared.with_engine(|e| {
            for (r, offset) in acks {
                e.ack(r, offset);
            }
        });
        // A WAIT these acknowledgements satisfy answers now.
        self.shared.tick();
    }

    /// The primary fails as a stopped Redis does; what it had not yet
    /// sent, or had on its way to a replica, is lost.
    fn primary_fails(&mut self) {
        self.replicate();
        self.replicas.primary_failed();
        self.redis_down += 1;
        self.redis_stops();
    }

    /// Puts `promoted` (replica `k`) in the primary's place: Redis's view
    /// of every lock is recorded from it, and the old primary rejoins as
    /// replica `k`, with every replica resynced from the new one.
    pub(super) fn install_primary(&mut self, k: usize, promoted: Engine) {
        let (old, sync) = self.shared.with_engine(|e| {
            let old = std::mem::replace(e, promoted);
            observe_all(self.recorder, e, ServerCause::Failover);
            (old, e.full_sync())
        });
        self.replicas.rejoin(k, old, &sync);
    }

    /// Replica `k` (by default the most up to date) becomes the primary
    /// with what it had received, the old primary rejoins as a replica,
    /// every replica resyncs from the new one, and clients reconnect.
    fn promote(&mut self, k: Option<u32>) {
        self.redis_down = self.redis_down.saturating_sub(1);
        let mut fresh = Engine::new(self.clock.clone());
        self.spec.redis.configure(&mut fresh, true);
        if let Some((k, promoted)) = self.replicas.promote(k.map(|r| r as usize), fresh) {
            self.install_primary(k, promoted);
        }
        if self.redis_down == 0 {
            self.sim.bounce(REDIS);
        }
    }
}

/// Every lock seen so far is read afresh from `engine` after `cause`.
fn observe_all(recorder: &Shared, engine: &Engine, cause: ServerCause) {
    let mut rec = recorder::lock(recorder);
    let now = rec.now();
    for lock in rec.seen_locks() {
        let view = recorder::turmoil_view(engine, &lock, now, rec.redis_offset_ms);
        rec.observe(&lock, view, false, false, cause.clone(), None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::tests::{client, critical, spec, thread};
    use crate::{Fault, Run, run_turmoil};

    /// Two clients take turns on one lock with the watchdog, over turmoil:
    /// the same story as the fast engine's, and the same history twice.
    #[test]
    fn two_clients_take_turns() {
        let s = spec(vec![
            client("A", vec![thread(0, critical(15_000))]),
            client("B", vec![thread(100, critical(1_000))]),
        ]);
        let r = run_turmoil(&s).expect("runs");
        println!("{}", r.history);
        assert!(r.violations.is_empty(), "{:?}", r.violations);
        let again = run_turmoil(&s).expect("runs");
        assert_eq!(r.history.to_string(), again.history.to_string());
        let fast = crate::run(&s).expect("runs");
        println!("{}", fast.history);
    }

    /// A process restarted while Redis is down waits for it (explore
    /// seed 35 under fenced failed the whole run before): it connects
    /// once Redis is back and its script runs again.
    #[test]
    fn a_process_restarted_while_redis_is_down_waits_for_it() {
        let mut s = spec(vec![client("A", vec![thread(0, critical(5_000))])]);
        s.faults = crate::FaultPlan(vec![
            Fault::Crash(crate::faults::Crash {
                client: "A".into(),
                at_ms: 1_000,
                restart_after_ms: Some(500),
            }),
            Fault::RedisDown(crate::faults::RedisDown {
                at_ms: 1_000,
                duration_ms: 2_000,
                keep_data: false,
            }),
        ]);
        let r = run_turmoil(&s).expect("runs");
        let holds: Vec<u64> = r
            .history
            .records
            .iter()
            .filter(|rec| matches!(rec.kind, RecordKind::Hold { .. }))
            .map(|rec| rec.at.as_ms())
            .collect();
        assert_eq!(holds.len(), 2, "{}", r.history);
        assert!(holds[1] >= 3_000, "{}", r.history);
    }

    /// The Redis host times blocked commands out in simulated time:
    /// `WAIT 1 500` with no replica answers 0 after 500 ms of turmoil's
    /// clock (within the 10 ms timeout tick and the link's latency), and
    /// the `PING` pipelined behind it comes only then. Without the host's
    /// ticker the client waited for ever.
    #[test]
    fn the_redis_host_times_out_a_blocked_wait() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let s = spec(vec![]);
        let clock = Arc::new(SimClock::default());
        let shared = SharedEngine::new(primary_engine(&s, &clock));
        let mut sim = builder(&s).build();
        redis_host(&mut sim, shared, Gate::default(), BTreeMap::new());
        sim.client("c", async {
            let mut tcp = turmoil::net::TcpStream::connect((REDIS, PORT)).await?;
            let sent = turmoil::sim_elapsed().expect("inside the simulation");
            tcp.write_all(b"*3\r\n$4\r\nWAIT\r\n$1\r\n1\r\n$3\r\n500\r\n*1\r\n$4\r\nPING\r\n")
                .await?;
            let mut got = Vec::new();
            while !got.ends_with(b"+PONG\r\n") {
                let mut buf = [0u8; 64];
                let n = tcp.read(&mut buf).await?;
                assert!(n > 0, "closed after {got:?}");
                got.extend_from_slice(&buf[..n]);
            }
            let waited = turmoil::sim_elapsed().expect("inside") - sent;
            assert_eq!(got, b":0\r\n+PONG\r\n");
            assert!(
                (500..600).contains(&waited.as_millis()),
                "answered after {waited:?}"
            );
            Ok(())
        });
        sim.run().expect("the client finishes");
    }

    /// The fast engine's failover story over turmoil: an acquire that had
    /// not reached the replica is lost at the promotion and B takes the
    /// lock A believes it holds; with a short lag the replica had it.
    #[test]
    fn an_unreplicated_acquire_is_lost_on_turmoil_too() {
        use crate::model::fault::failover::tests::{failover_spec, lost_at_failover};
        let lost = run_turmoil(&failover_spec(5_000, 2_000)).expect("runs");
        assert!(lost_at_failover(&lost), "{}", lost.history);
        let mutex = |r: &Run| {
            r.violations
                .iter()
                .any(|v| v.invariant == crate::Invariant::MutualExclusion)
        };
        assert!(mutex(&lost), "{}", lost.history);
        let kept = run_turmoil(&failover_spec(10, 2_000)).expect("runs");
        assert!(!lost_at_failover(&kept), "{}", kept.history);
        assert!(!mutex(&kept), "{}", kept.history);
    }
}
