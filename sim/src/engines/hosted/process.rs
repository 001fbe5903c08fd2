//! A client process on a hosted engine: lockcore's async client, its
//! threads' scripts, its pause gate; and what the engines share around
//! it (configs, the horizon's bookkeeping).

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use lockcore::{
    ClusterTransport, Config, Connect, Lagged, RLock, RedissonClient, RespTransport, Tracer,
};
use tokio::task::AbortHandle;

use super::delay::Delay;
use super::gate::Gate;
use super::lateness::Lateness;
use super::local_time::{HostedClock, SharedClock};
use super::recorder::{self, Shared};
use super::thread;
use crate::engines::fast::process::Thread;
use crate::model::history::{Meta, RecordKind};
use crate::model::script::Program;
use crate::{CutShort, History, SimError, SimSpec, SimTime};

/// A client process's connections: one RESP transport per master of a
/// cluster (`[sim.redis] shards`), each command routed to its slot's
/// master; one outside a cluster.
pub(crate) type HostTransport = ClusterTransport<RespTransport>;

/// The engine's view of one client.
pub(crate) struct Slot {
    /// Its host name (turmoil) or label.
    pub(crate) host: String,
    pub(crate) life: u32,
    pub(crate) alive: bool,
    /// Closed while the process is paused.
    pub(crate) gate: Gate,
    /// Bumped when its clock changes rate: the process re-arms its lock's
    /// timers on its own runtime.
    pub(crate) rate: Gate,
    /// Its open starvation windows.
    pub(crate) starve: Lateness,
    /// Its open interleaving windows.
    pub(crate) interleave: Lateness,
    /// Its open delay windows: Redis's replies to it, its requests to
    /// Redis (the turmoil engine's; the real one delays in its proxy).
    pub(crate) replies: Delay,
    pub(crate) requests: Delay,
    pub(crate) threads: Vec<Rc<RefCell<Thread>>>,
    /// Each thread's lock handle in this life: how an interrupt reaches it.
    pub(crate) locks: Vec<RLock<HostTransport>>,
    /// Its tasks, for an engine that kills a process by aborting them.
    pub(crate) tasks: Vec<AbortHandle>,
    /// Its wall clock, when a fault of the plan moves it (else the client
    /// reads time since it started, as a client without clock faults
    /// always has).
    pub(crate) clock: Option<SharedClock>,
}

pub(crate) type Slots = Rc<Vec<RefCell<Slot>>>;

/// The verbs both hosted engines carry out alike, on the client's process.
impl Slot {
    /// A stop-the-world pause begins (`on`) or ends: the process's tasks
    /// wait at the gate.
    pub(crate) fn pause(&self, on: bool) {
        if on {
            self.gate.close()
        } else {
            self.gate.open()
        }
    }

    /// Starvation window `i` opens with `range_ms` (drawn in µs, as the
    /// fast engine draws it), or closes.
    pub(crate) fn starve(&self, i: usize, range_ms: Option<(u64, u64)>) {
        match range_ms {
            Some((min, max)) => self.starve.open(i, (min * 1_000, max * 1_000), 1),
            None => self.starve.close(i),
        }
    }

    /// Interleaving window `i` opens with `range_ms` (drawn in ms), or
    /// closes; the lock interleaves while any is open.
    pub(crate) fn interleave(&self, i: usize, range_ms: Option<(u64, u64)>) {
        match range_ms {
            Some(range) => {
                self.interleave.open(i, range, 1_000);
                if let Some(lock) = self.locks.first() {
                    lock.set_interleaving(true);
                }
            }
            None => {
                self.interleave.close(i);
                if let Some(lock) = self.locks.first().filter(|_| !self.interleave.is_open()) {
                    lock.set_interleaving(false);
                }
            }
        }
    }

    /// Thread `t` is interrupted now, or (with `after_call_ms`) that long
    /// into its next acquiring call (see `thread::call_step`).
    pub(crate) fn interrupt(&self, t: usize, after_call_ms: Option<u64>) {
        match after_call_ms {
            Some(after) => {
                if let Some(thread) = self.threads.get(t) {
                    thread.borrow_mut().interrupt_after = Some(after);
                }
            }
            None => {
                if let Some(lock) = self.locks.get(t) {
                    lock.interrupt(crate::engines::fast::process::thread_id(t));
                }
            }
        }
    }

    /// The wall clock steps by `ms` at `now` (the spec's time).
    pub(crate) fn step_clock(&self, now: SimTime, ms: i64) {
        if let Some(clock) = &self.clock {
            lock_clock(clock).step(now, ms);
        }
    }

    /// The clock's rate changes by `ppm` at `now`.
    pub(crate) fn drift_clock(&self, now: SimTime, ppm: i64) {
        if let Some(clock) = &self.clock {
            lock_clock(clock).drift(now, ppm);
        }
        // Timers armed at the old rate fire at the new one.
        self.rate.bump();
    }
}

fn lock_clock(
    clock: &SharedClock,
) -> std::sync::MutexGuard<'_, crate::engines::fast::clock::LocalClock> {
    clock.lock().unwrap_or_else(|e| e.into_inner())
}

/// A client's host name.
pub(crate) fn client_host(client: &str) -> String {
    format!("client-{client}")
}

/// Each client's slot; `scale` as the engine runs the spec.
pub(crate) fn slots(spec: &SimSpec, scale: u64) -> Slots {
    Rc::new(
        spec.clients
            .iter()
            .map(|cs| {
                RefCell::new(Slot {
                    host: client_host(&cs.name),
                    life: 0,
                    alive: true,
                    gate: Gate::default(),
                    rate: Gate::default(),
                    starve: Lateness::new(spec.seed, scale),
                    interleave: Lateness::new(spec.seed, scale),
                    replies: Delay::default(),
                    requests: Delay::default(),
                    threads: Vec::new(),
                    locks: Vec::new(),
                    tasks: Vec::new(),
                    clock: clock_of(spec),
                })
            })
            .collect(),
    )
}

/// A client's clock, when a fault of `spec` moves a client's clock: as
/// the fast engine's, a day ahead of true time, the same for every client.
fn clock_of(spec: &SimSpec) -> Option<SharedClock> {
    let epoch = crate::engines::fast::clock::epoch_of(spec);
    (epoch > 0).then(|| {
        std::sync::Arc::new(std::sync::Mutex::new(
            crate::engines::fast::clock::LocalClock::new(epoch),
        ))
    })
}

/// Each client's lock config with every duration divided by `scale`, and
/// its `lockWatchdogTimeout` as the spec says it.
pub(crate) fn configs(spec: &SimSpec, scale: u64) -> Result<Vec<(Config, u64)>, SimError> {
    spec.clients
        .iter()
        .enumerate()
        .map(|(c, cs)| {
            let watchdog_ms = cs.watchdog_timeout_ms.unwrap_or(spec.watchdog_timeout_ms);
            let invalid = |e: lockcore::LockError| {
                SimError::InvalidSpec(format!("client '{}': {e}", cs.name))
            };
            let config = crate::model::config::client_config(spec, c)?;
            if scale <= 1 {
                return Ok((config, watchdog_ms));
            }
            let scaled = |ms: lockcore::Millis| (ms.0 / scale).max(1);
            let mut builder = Config::builder();
            builder
                .release(config.release)
                .watchdog_timeout(scaled(config.watchdog_timeout))
                .response_timeout(scaled(config.response_timeout))
                .retry_attempts(config.retry_attempts)
                .retry_interval(scaled(config.retry_interval))
                .retry_delay(config.retry_delay.scaled(scale))
                // Replicas make every lock script wait for them (`WAIT`),
                // for a scaled `slavesSyncTimeout`.
                .replicas(config.replicas)
                .cluster_proxy(config.cluster_proxy)
                .cluster_shards(config.cluster_shards)
                // Independent masters: each lock on its placed master.
                .masters(config.masters, config.placement.clone())
                .time_scale(scale)
                .mode(config.mode)
                .spin_back_off(config.spin_back_off)
                .spin_seed(config.spin_seed)
                .slaves_sync_timeout(scaled(config.slaves_sync_timeout))
                .jitter_seed(config.jitter_seed)
                .watchdog_batch_size(config.watchdog_batch_size)
                .timer_tick(scaled(config.timer_tick))
                // The fair lock's thread wait is a duration too: a crashed
                // waiter's place lapses after it.
                .fair_lock_wait_timeout(scaled(
                    config
                        .fair_lock_wait_timeout
                        .unwrap_or_else(|| lockcore::fair_thread_wait(config.release)),
                ));
            Ok((builder.build().map_err(invalid)?, watchdog_ms))
        })
        .collect()
}

/// What one client's software needs; it runs once per life.
pub(crate) struct ClientHost<C> {
    pub(crate) c: usize,
    pub(crate) spec: Rc<SimSpec>,
    pub(crate) config: Config,
    pub(crate) watchdog_ms: u64,
    pub(crate) recorder: Shared,
    pub(crate) slots: Slots,
    /// Opens this life's connections, named after the process: to each
    /// master, in slot order (to the one Redis outside a cluster).
    pub(crate) connect: Rc<dyn Fn(String) -> Vec<C>>,
    /// How long before its scripts start the first life connects.
    pub(crate) boot: Duration,
    /// The spec runs this many times faster than written.
    pub(crate) scale: u64,
}

impl<C> Clone for ClientHost<C> {
    fn clone(&self) -> Self {
        ClientHost {
            c: self.c,
            spec: self.spec.clone(),
            config: self.config.clone(),
            watchdog_ms: self.watchdog_ms,
            recorder: self.recorder.clone(),
            slots: self.slots.clone(),
            connect: self.connect.clone(),
            boot: self.boot,
            scale: self.scale,
        }
    }
}

impl<C: Connect> ClientHost<C> {
    /// Connects to every master, trying again with Redisson's
    /// reconnection delays while one refuses (a process restarted while
    /// Redis is down waits for it, as an application that retries its
    /// startup would).
    async fn connect(&self, name: String) -> HostTransport {
        let mut attempt = 0;
        loop {
            let mut masters = Vec::new();
            let mut delay = lockcore::reconnect_delay(attempt);
            for connect in (self.connect)(name.clone()) {
                delay = connect.reconnect_delay(attempt);
                match RespTransport::connect_with(connect).await {
                    Ok(transport) => masters.push(transport),
                    Err(e) => {
                        tracing::debug!(error = %e, attempt, "process start: no Redis yet");
                        masters.clear();
                        break;
                    }
                }
            }
            if !masters.is_empty() {
                return ClusterTransport::new(masters);
            }
            tokio::time::sleep(delay).await;
            attempt = attempt.saturating_add(1);
        }
    }

    /// Starts the process: records its start, connects, starts its
    /// threads, then follows its pause gate for ever.
    pub(crate) async fn software(self) -> Result<(), Box<dyn std::error::Error>> {
        let c = self.c;
        let mut start = tokio::time::Instant::now();
        let (life, gate, rate, starve, interleave) = {
            let s = self.slots[c].borrow();
            (
                s.life,
                s.gate.clone(),
                s.rate.clone(),
                s.starve.clone(),
                s.interleave.clone(),
            )
        };
        if life == 0 {
            // Scripts start at time zero, after the boot phase.
            start += self.boot;
        }
        let (uuid, name) = {
            let mut rec = recorder::lock(&self.recorder);
            let uuid = rec.start(c, life);
            (uuid, rec.proc(c).to_string())
        };
        let specs = &self.spec.clients[c].threads;
        let threads: Vec<Rc<RefCell<Thread>>> = specs
            .iter()
            .map(|t| {
                let program = Rc::new(Program::compile(&t.steps));
                let thread = Thread::new(t.object(), t.start_ms, program);
                Rc::new(RefCell::new(thread))
            })
            .collect();
        {
            let mut slot = self.slots[c].borrow_mut();
            slot.threads = threads.clone();
            slot.locks.clear();
        }
        let transport = self.connect(name).await;
        let traced = self.recorder.clone();
        let tracer: Tracer =
            Box::new(move |_, trace| recorder::lock(&traced).trace(c, life, trace));
        let client = RedissonClient::with_tracer(uuid, self.config.clone(), transport, tracer);
        if let Some(clock) = self.slots[c].borrow().clock.clone() {
            // The spec's time zero, in this life's runtime: the scripts'
            // start for the first life (after the boot phase), else now
            // less the spec's time elapsed.
            let zero = if life == 0 {
                start
            } else {
                let spec_now = recorder::lock(&self.recorder).now();
                let elapsed = Duration::from_micros(spec_now.0 / self.scale);
                tokio::time::Instant::now()
                    .checked_sub(elapsed)
                    .unwrap_or(start)
            };
            client.set_clock(std::sync::Arc::new(HostedClock {
                clock,
                zero,
                scale: self.scale,
            }));
        }
        let lagging = starve.clone();
        client.set_lag(Box::new(move |what| match what {
            Lagged::Timer => lagging.lag(),
            Lagged::Callback => interleave.lag(),
        }));
        for (t, (ts, thread)) in specs.iter().zip(threads).enumerate() {
            let lock = client.lock_object(ts.object());
            {
                let mut slot = self.slots[c].borrow_mut();
                if slot.locks.is_empty() && slot.interleave.is_open() {
                    // A new life inside an interleave window.
                    lock.set_interleaving(true);
                }
                slot.locks.push(lock.clone());
            }
            let multi = (ts.multi_lock())
                .and_then(|m| client.multi_lock(m.kind(), m.locks().to_vec()).ok());
            let ctx = thread::Ctx {
                multi,
                c,
                t,
                watchdog_ms: self.watchdog_ms,
                scale: self.scale,
                recorder: self.recorder.clone(),
                gate: gate.clone(),
                starve: starve.clone(),
                thread,
            };
            let begin = start + Duration::from_millis(ts.start_ms / self.scale);
            let task = tokio::task::spawn_local(async move {
                tokio::time::sleep_until(begin).await;
                ctx.starve.late().await;
                thread::run(ctx, lock).await;
            });
            self.slots[c].borrow_mut().tasks.push(task.abort_handle());
        }
        // The pause gate: the lock's own code stops and resumes with the
        // threads (replies, messages and timers wait, in order); and the
        // clock's rate changes, which re-arm the lock's timers.
        let (mut seen, mut seen_rate) = (0, rate.changes());
        loop {
            tokio::select! {
                biased;
                closed = gate.changed(&mut seen) => {
                    if closed {
                        client.freeze();
                    } else {
                        client.thaw().await;
                    }
                }
                _ = rate.changed(&mut seen_rate) => client.clock_changed(),
            }
        }
    }
}

/// The history at the horizon, and the threads it cut short.
pub(crate) fn finish(spec: &SimSpec, recorder: &Shared, slots: &Slots) -> (History, Vec<CutShort>) {
    let mut rec = recorder::lock(recorder);
    let horizon = SimTime::from_ms(spec.horizon_ms);
    rec.loop_now = horizon;
    // A real Redis goes on after the horizon; what it did then is not the run's.
    rec.records.retain(|r| r.at <= horizon);
    rec.record_at(horizon, RecordKind::End);
    let mut records = std::mem::take(&mut rec.records);
    // Hosts run one after another, each at its own instants.
    records.sort_by_key(|r| r.at);
    let mut cut = Vec::new();
    for (c, slot) in slots.iter().enumerate() {
        let slot = slot.borrow();
        if !slot.alive {
            continue;
        }
        for (t, thread) in slot.threads.iter().enumerate() {
            let thread = thread.borrow();
            if !thread.done {
                cut.push(crate::engines::fast::cut::of_thread(rec.who(c, t), &thread));
            }
        }
    }
    let history = History {
        meta: Meta {
            seed: spec.seed,
            horizon: SimTime::from_ms(spec.horizon_ms),
            max_latency_ms: crate::model::config::max_latency_ms(spec),
            max_timer_tick_ms: crate::model::config::max_timer_tick_ms(spec),
            clients: spec.clients.iter().map(|c| c.name.clone()).collect(),
            retries: crate::model::config::retries(spec),
            acquire_once_ms: crate::model::config::acquire_once_ms(spec),
            probe: crate::model::config::probe(spec),
            script_load_ms: crate::model::config::script_load_ms(spec),
        },
        records,
    };
    (history, cut)
}

#[cfg(test)]
mod tests {
    use super::configs;

    /// Scaling a client's config for the real engine divides its
    /// durations and keeps every other setting: the connection mode, the
    /// cluster proxy, the cluster's masters, the independent masters and
    /// their placement, the spin back-off and its seed, the replicas, the
    /// batch size (a setting dropped here would run silently as
    /// Redisson's default on that engine alone).
    #[test]
    fn scaling_keeps_every_setting_but_durations() {
        let spec: crate::SimSpec = serde_json::from_value(serde_json::json!({
            "seed": 1,
            "profile": "4.7.0",
            "redis": { "proxy": true },
            "clients": [{
                "name": "A",
                "mode": "sentinel",
                "spin_back_off": "constant",
                "watchdog_batch_size": 7,
                "threads": [{ "steps": [{ "step": "lock" }] }]
            }]
        }))
        .expect("a spec");
        let (one, _) = configs(&spec, 1).expect("configs").remove(0);
        let (ten, watchdog_ms) = configs(&spec, 10).expect("configs").remove(0);
        assert_eq!(watchdog_ms, 30_000);
        assert_eq!(ten.watchdog_timeout.0, one.watchdog_timeout.0 / 10);
        assert_eq!(ten.response_timeout.0, one.response_timeout.0 / 10);
        assert_eq!(ten.mode, lockcore::ServerMode::Sentinel);
        assert!(ten.cluster_proxy);
        assert_eq!(ten.spin_back_off, lockcore::BackOff::Constant);
        assert_eq!(ten.spin_seed, one.spin_seed);
        assert_eq!(ten.jitter_seed, one.jitter_seed);
        assert_eq!(ten.watchdog_batch_size, 7);
        assert_eq!(ten.release, one.release);
        let mut sharded = spec;
        sharded.redis.proxy = false;
        sharded.redis.shards = 3;
        sharded.clients[0].mode = None;
        let (ten, _) = configs(&sharded, 10).expect("configs").remove(0);
        assert_eq!(ten.cluster_shards, 3);
        let mut placed = sharded;
        placed.redis.shards = 0;
        placed.redis.masters = 2;
        placed.clients[0].threads[0].lock = lockcore::LockName::new("b").expect("a name");
        placed.redis.placement = lockcore::Placement::new([("b".to_owned(), 1)]);
        let (ten, _) = configs(&placed, 10).expect("configs").remove(0);
        assert_eq!((ten.masters, &ten.placement), (2, &placed.redis.placement));
    }
}
