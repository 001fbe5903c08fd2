//! The world: every process, the network and the event loop.

use std::rc::Rc;

use bytes::Bytes;
use fake_redis::Value;
use lockcore::{LockClient, LockName, Purpose, RequestId, SwitchSet, TimerId, VecMap};
use rand_chacha::ChaCha8Rng;

use crate::engines::fast::network::{Network, Verdict};
use crate::engines::fast::process::{Process, Thread};
use crate::model::config::{PING_INTERVAL_MS, client_config, max_latency_ms, most_retries};
use crate::model::drop_cause::DropCause;
use crate::model::ended::Ended;
use crate::model::history::{Direction, Meta, Phase, RecordKind, ServerCause};
use crate::model::rng::{self, Stream};
use crate::model::script::Program;
use crate::{History, SimError, SimSpec, SimTime};

/// A message from a client to Redis.
#[derive(Debug, Clone)]
pub(crate) enum Up {
    Command {
        request: RequestId,
        purpose: Purpose,
        lock: LockName,
        args: lockcore::Command,
        /// The master it goes to (0 outside a cluster).
        shard: u16,
    },
    Subscribe {
        request: RequestId,
        channel: String,
        shard: u16,
    },
    Unsubscribe {
        channel: String,
        shard: u16,
    },
}

impl Down {
    /// What it is, for the timeline.
    fn label(&self) -> &'static str {
        match self {
            // The oracle tells a lost confirmation from a lost reply: a
            // waiter waits on it (`lost_subscription`).
            Down::Reply {
                value: Value::Array(words) | Value::Push(words),
                ..
            } if words.first() == Some(&Value::bulk("subscribe")) => "SUBSCRIBE confirmation",
            Down::Reply { .. } | Down::Failed { .. } => "reply",
            Down::Message { .. } => "message",
            Down::Closed => "connection close",
        }
    }
}

impl Up {
    /// The master it goes to.
    pub(crate) fn shard(&self) -> u16 {
        match self {
            Up::Command { shard, .. }
            | Up::Subscribe { shard, .. }
            | Up::Unsubscribe { shard, .. } => *shard,
        }
    }

    /// Whether it is a topology scan's `CLUSTER NODES`, whose fate is
    /// not recorded: it concerns no lock.
    fn is_scan(&self) -> bool {
        matches!(
            self,
            Up::Command {
                purpose: Purpose::Scan,
                ..
            }
        )
    }

    /// The command's name (`EVAL`, `SUBSCRIBE`) for the timeline.
    fn label(&self) -> String {
        match self {
            Up::Command { args, .. } => command_name(args),
            Up::Subscribe { .. } => "SUBSCRIBE".to_owned(),
            Up::Unsubscribe { .. } => "UNSUBSCRIBE".to_owned(),
        }
    }
}

/// A message from Redis to a client.
#[derive(Debug, Clone)]
pub(crate) enum Down {
    Reply {
        request: RequestId,
        value: Value,
    },
    /// The connection failed before a reply (Redis is down).
    Failed {
        request: RequestId,
        reason: String,
    },
    Message {
        channel: String,
        payload: Bytes,
    },
    /// Redis closed the connection (it restarted or went away): the
    /// client's reconnect resubscribes.
    Closed,
}

/// Something due at a virtual instant. Client events carry the life they
/// belong to: after a crash, the dead life's events are ignored.
#[derive(Debug, Clone)]
pub(crate) enum Ev {
    ThreadStart {
        c: u32,
        life: u32,
        t: u32,
        late: bool,
    },
    Wake {
        c: u32,
        life: u32,
        t: u32,
        late: bool,
    },
    Timer {
        c: u32,
        life: u32,
        timer: TimerId,
        /// The clock version it was armed under (a rate change re-arms).
        version: u32,
        late: bool,
    },
    AtClient {
        c: u32,
        life: u32,
        msg: Down,
    },
    AtServer {
        c: u32,
        life: u32,
        generation: u32,
        msg: Up,
    },
    FaultBegin(usize),
    FaultEnd(usize),
    /// The next write on its way to a replica arrives (ignored if the
    /// primary failed since it was sent: `epoch`).
    Replicate {
        shard: u16,
        replica: u32,
        epoch: u32,
    },
    Observe {
        lock: LockName,
        generation: u32,
    },
    /// `Thread.interrupt()` of thread `t`.
    Interrupt {
        c: u32,
        life: u32,
        t: u32,
    },
    /// Redis (master `.0` of a cluster) wakes for a blocked client's
    /// timeout (a `WAIT`).
    RedisTick(u16),
    /// A paused callback of the client goes on.
    Resume {
        c: u32,
        life: u32,
        step: lockcore::StepId,
    },
}

/// The whole simulated world of one run.
pub(crate) struct World<'s> {
    pub(crate) spec: &'s SimSpec,
    pub(crate) now: SimTime,
    pub(crate) queue: crate::engines::fast::queue::EventQueue<Ev>,
    pub(crate) procs: Vec<Process>,
    /// Redis: the primary, its replicas, paused or down; in a cluster
    /// (`[sim.redis] shards`), each master, in slot order (a cluster has
    /// no replicas: the replication and switchover paths read master 0).
    pub(crate) redis: Vec<crate::engines::fast::deployment::Deployment>,
    pub(crate) net: Network,
    pub(crate) fault_rngs: Vec<ChaCha8Rng>,
    /// Which client fault windows cover now.
    pub(crate) windows: crate::engines::fast::windows::Windows,
    pub(crate) uuid_rng: ChaCha8Rng,
    /// The resource behind each lock.
    pub(crate) resources: crate::engines::fast::resource::Resources,
    /// What has been recorded, and what recording needs.
    pub(crate) obs: crate::engines::fast::observe::Observer,
    /// Events taken off the queue so far (the run's work, for benchmarks).
    pub(crate) events: u64,
    /// The switches asked by clients that have since been replaced (a
    /// restart), and the timer tick's.
    pub(crate) switches_read: SwitchSet,
    /// The places of the lock passed by clients that have since been
    /// replaced (a restart): coverage, which changes nothing of the run.
    pub(crate) reached: lockcore::Reached,
    /// How many of the spec's reseeds have been applied.
    pub(crate) reseeded: usize,
    /// When each place of the lock was first passed.
    pub(crate) first_reach: crate::engines::fast::first_reach::FirstReach,
    /// The slots `slot-migration` faults have moved or are moving.
    pub(crate) moves: Vec<crate::engines::fast::slot_move::SlotMove>,
}

/// Events one instant of simulated time may take; the rest wait a
/// millisecond. A loop with nothing to wait on would otherwise hold time
/// still for ever: at zero latency, a fair-lock waiter told 0 (its own
/// deadline less its wait and now, before 3.32.0, #4705; a stale queue
/// head's `max(0, PTTL)` with the lock free, after it) tries again at
/// once, where a real client's round trips cost real time (3.20.0 seed
/// 2286 never ended). A hundred events an instant is about fifty round
/// trips a millisecond, a fast local network's; no run of the corpus
/// comes near it otherwise, so no other history moves.
pub(crate) const SAME_INSTANT_EVENTS: u32 = 100;

impl<'s> World<'s> {
    pub(crate) fn new(spec: &'s SimSpec) -> Result<World<'s>, SimError> {
        let mut world = World {
            spec,
            now: SimTime::ZERO,
            queue: crate::engines::fast::queue::EventQueue::new(),
            procs: Vec::with_capacity(spec.clients.len()),
            redis: crate::engines::fast::deployment::Deployment::all(spec),
            net: Network::new(spec.seed, spec.latency, spec.clients.len()),
            fault_rngs: (0..spec.faults.0.len())
                .map(|i| rng::stream(spec.seed, Stream::Fault(i)))
                .collect(),
            windows: crate::engines::fast::windows::Windows::new(
                &spec.faults.0,
                &spec
                    .clients
                    .iter()
                    .map(|c| c.name.clone())
                    .collect::<Vec<_>>(),
            ),
            uuid_rng: rng::stream(spec.seed, Stream::Uuids),
            resources: Default::default(),
            obs: crate::engines::fast::observe::Observer::new(),
            events: 0,
            switches_read: lockcore::TIMER_TICK_SWITCHES,
            reached: lockcore::Reached::EMPTY,
            reseeded: 0,
            first_reach: Default::default(),
            moves: Vec::new(),
        };
        for (i, f) in spec.faults.0.iter().enumerate() {
            world
                .queue
                .push(SimTime::from_ms(f.at_ms()), Ev::FaultBegin(i));
            if let Some(end) = f.end_ms() {
                world.queue.push(SimTime::from_ms(end), Ev::FaultEnd(i));
            }
        }
        for (c, cs) in spec.clients.iter().enumerate() {
            let watchdog_ms = cs.watchdog_timeout_ms.unwrap_or(spec.watchdog_timeout_ms);
            let config = client_config(spec, c)?;
            let uuid = rng::uuid(&mut world.uuid_rng);
            let threads = cs
                .threads
                .iter()
                .map(|t| {
                    let program = Rc::new(Program::compile(&t.steps));
                    Thread::new(t.object(), t.start_ms, program).with_multi(t.multi_lock())
                })
                .collect();
            world.procs.push(Process {
                name: cs.name.as_str().into(),
                life: 0,
                alive: true,
                watchdog_ms,
                machine: LockClient::new(uuid.clone(), config),
                threads,
                timers: Default::default(),
                clock: crate::engines::fast::clock::LocalClock::new(
                    crate::engines::fast::clock::epoch_of(spec),
                ),
                renewals: VecMap::new(),
                scans: VecMap::new(),
                paused: 0,
                deferred: Vec::new(),
                interleave: None,
            });
            world.start_process(c as u32, uuid);
        }
        Ok(world)
    }

    /// Records the start of process `c`'s current life and schedules its
    /// threads.
    pub(crate) fn start_process(&mut self, c: u32, uuid: String) {
        let p = &self.procs[c as usize];
        self.obs.register(uuid.clone(), p.name.clone(), p.life);
        let process = p.proc();
        let life = p.life;
        let starts: Vec<u64> = p.threads.iter().map(|t| t.start_ms).collect();
        self.record(RecordKind::Start { process, uuid });
        let now = self.local_now(c as usize);
        self.procs[c as usize].machine.start(now);
        self.pump(c as usize);
        for (t, start_ms) in starts.into_iter().enumerate() {
            self.queue.push(
                self.now.plus_ms(start_ms),
                Ev::ThreadStart {
                    c,
                    life,
                    t: t as u32,
                    late: false,
                },
            );
        }
    }

    pub(crate) fn record(&mut self, kind: RecordKind) {
        self.obs.record(self.now, kind);
    }

    /// Runs every event up to the horizon and returns the history and the
    /// threads the horizon cut short.
    pub(crate) fn run(mut self) -> Ended {
        let horizon = self.run_events();
        self.now = horizon;
        self.record_leftovers();
        self.record(RecordKind::End);
        let max_latency_ms = max_latency_ms(self.spec);
        let cut = crate::engines::fast::cut::cut_short(&self.procs);
        let history = History {
            meta: Meta {
                seed: self.spec.seed,
                horizon,
                max_latency_ms,
                max_timer_tick_ms: self
                    .procs
                    .iter()
                    .map(|p| p.machine.config().timer_tick.0)
                    .max()
                    .unwrap_or(0),
                clients: self.spec.clients.iter().map(|c| c.name.clone()).collect(),
                retries: most_retries(self.procs.iter().map(|p| p.machine.config())),
                acquire_once_ms: crate::model::config::acquire_once_of(
                    self.procs.iter().map(|p| {
                        let asked = (p.machine.switches_read()).has(lockcore::Switch::NoLockResend);
                        (p.machine.config(), asked)
                    }),
                    self.spec.latency.max_ms,
                ),
                probe: crate::model::config::probe_of(
                    self.procs.iter().map(|p| {
                        let read = p.machine.switches_read();
                        let asked = read.has(lockcore::Switch::WaitProbe)
                            || read.has(lockcore::Switch::JvmWaitProbe);
                        (p.machine.config(), asked)
                    }),
                    self.spec.latency.max_ms,
                ),
                script_load_ms: crate::model::config::script_load_of(self.spec.clients.iter().zip(
                    self.procs.iter().map(|p| {
                        let asked = (p.machine.switches_read()).has(lockcore::Switch::ScriptCache);
                        (p.machine.config(), asked)
                    }),
                )),
            },
            records: self.obs.into_records(),
        };
        let switches_read = self.procs.iter().fold(self.switches_read, |read, p| {
            read.union(p.machine.switches_read())
        });
        let reached = (self.procs.iter()).fold(self.reached, |r, p| r.union(p.machine.reached()));
        Ended {
            history,
            cut_short: cut,
            events: self.events,
            commands: self.redis.iter().map(|r| r.server.commands).sum(),
            switches_read,
            reached,
            first_reached: self.first_reach.into_firsts(),
        }
    }

    /// Handles every event up to the horizon, which it returns.
    pub(crate) fn run_events(&mut self) -> SimTime {
        let horizon = SimTime::from_ms(self.spec.horizon_ms);
        let (mut instant, mut same) = (SimTime::ZERO, 0u32);
        // The first event past the horizon ends the run (it and the rest
        // are dropped with the queue).
        while let Some((at, ev)) = self.queue.pop() {
            if at > horizon {
                break;
            }
            if at == instant {
                same += 1;
            } else {
                (instant, same) = (at, 0);
            }
            if same >= SAME_INSTANT_EVENTS {
                self.queue.push(at.plus_ms(1), ev);
                continue;
            }
            self.reseed_due(at);
            self.now = at;
            self.events += 1;
            self.handle(ev);
            let reached =
                (self.procs.iter()).fold(self.reached, |r, p| r.union(p.machine.reached()));
            self.first_reach.note(reached, at);
        }
        horizon
    }

    pub(crate) fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::ThreadStart { c, life, .. }
            | Ev::Wake { c, life, .. }
            | Ev::Timer { c, life, .. }
            | Ev::AtClient { c, life, .. }
            | Ev::Interrupt { c, life, .. }
            | Ev::Resume { c, life, .. } => {
                let p = &mut self.procs[c as usize];
                if !p.alive || p.life != life {
                    return;
                }
                if p.paused > 0 {
                    p.deferred.push(ev);
                    return;
                }
                if let Some(ev) = self.starve(c, ev) {
                    self.client_event(c, ev);
                }
            }
            Ev::AtServer {
                c,
                life,
                generation,
                msg,
            } => self.at_server(c, life, generation, msg),
            Ev::FaultBegin(i) => self.fault(i, Phase::Begin),
            Ev::FaultEnd(i) => self.fault(i, Phase::End),
            Ev::Replicate {
                shard,
                replica,
                epoch,
            } => self.replica_receives(shard, replica, epoch),
            Ev::RedisTick(shard) => crate::engines::fast::execution::redis_tick(self, shard),
            Ev::Observe { lock, generation } => {
                if generation == self.master_of(lock.as_str()).server.generation
                    && self.obs.expiry_due(&lock, self.now)
                {
                    self.observe(&lock, ServerCause::Expiry);
                }
            }
        }
    }

    /// Interrupts thread `t` of client `c` now (later if `c` is paused).
    pub(crate) fn interrupt(&mut self, c: usize, t: usize) {
        let life = self.procs[c].life;
        let (c, t) = (c as u32, t as u32);
        self.handle(Ev::Interrupt { c, life, t });
    }

    /// Sends a message on `c`'s link.
    pub(crate) fn send_up(&mut self, c: u32, msg: Up) {
        let p = &self.procs[c as usize];
        let life = p.life;
        let covering = self.windows.covering(c as usize, self.now.as_ms());
        let at = match self.net.send_covered(
            self.now,
            c as usize,
            Direction::Up,
            &self.spec.faults.0,
            covering,
            &mut self.fault_rngs,
        ) {
            Verdict::Deliver(at) => at,
            Verdict::Held(until) => {
                let (process, what) = (self.procs[c as usize].proc(), msg.label());
                let direction = Direction::Up;
                if !msg.is_scan() {
                    self.record(RecordKind::Held {
                        process,
                        direction,
                        what,
                        until,
                    });
                }
                until
            }
            Verdict::Drop(why) => {
                let what = msg.label();
                let process = self.procs[c as usize].proc();
                if !msg.is_scan() {
                    self.record(RecordKind::Drop {
                        process,
                        direction: Direction::Up,
                        what: what.to_owned(),
                        why,
                    });
                }
                return;
            }
        };
        let generation = self.redis[usize::from(msg.shard())].server.connections;
        self.queue.push(
            at,
            Ev::AtServer {
                c,
                life,
                generation,
                msg,
            },
        );
    }

    /// Sends a message from Redis to client life `(c, life)`.
    pub(crate) fn send_down(&mut self, c: u32, life: u32, msg: Down) {
        let covering = self.windows.covering(c as usize, self.now.as_ms());
        match self.net.send_covered(
            self.now,
            c as usize,
            Direction::Down,
            &self.spec.faults.0,
            covering,
            &mut self.fault_rngs,
        ) {
            Verdict::Deliver(at) => self.queue.push(at, Ev::AtClient { c, life, msg }),
            Verdict::Held(at) => {
                if self.is_scan_reply(c, &msg, false) {
                    return self.queue.push(at, Ev::AtClient { c, life, msg });
                }
                let client = self.procs[c as usize].name.clone();
                let process = crate::model::history::Proc { client, life };
                self.record(RecordKind::Held {
                    process,
                    direction: Direction::Down,
                    what: msg.label().to_owned(),
                    until: at,
                });
                self.queue.push(at, Ev::AtClient { c, life, msg });
            }
            Verdict::Drop(why) => {
                let what = msg.label();
                if self.is_scan_reply(c, &msg, true) {
                    return;
                }
                if matches!(msg, Down::Closed) {
                    // The client learns of a close it did not see at its
                    // next connection ping (Redisson's
                    // pingConnectionInterval), which fails either way: the
                    // connection is gone, or the network still is.
                    let at = self.now.plus_ms(PING_INTERVAL_MS);
                    self.queue.push(at, Ev::AtClient { c, life, msg });
                }
                let client = self.procs[c as usize].name.clone();
                let process = crate::model::history::Proc { client, life };
                self.record(RecordKind::Drop {
                    process,
                    direction: Direction::Down,
                    what: what.to_owned(),
                    why,
                });
            }
        }
    }

    pub(crate) fn at_server(&mut self, c: u32, life: u32, generation: u32, msg: Up) {
        let p = &self.procs[c as usize];
        if !p.alive || p.life != life {
            // The process died: the kernel closed its sockets.
            return;
        }
        let redis = &mut self.redis[usize::from(msg.shard())];
        if generation != redis.server.connections && redis.down == 0 {
            // Sent to a Redis that has restarted since: the connection is gone.
            if msg.is_scan() {
                return;
            }
            let process = p.proc();
            let what = msg.label();
            self.record(RecordKind::Drop {
                process,
                direction: Direction::Up,
                what,
                why: DropCause::ConnectionLost,
            });
            return;
        }
        if redis.down > 0 {
            self.refuse(c, life, msg);
            return;
        }
        if redis.paused > 0 {
            redis.waiting.push((c, life, generation, msg));
            return;
        }
        crate::engines::fast::execution::execute(self, c, life, msg);
    }
}

impl World<'_> {
    /// Whether `msg` to client `c` answers a topology scan (whose fate
    /// is not recorded); a `dropped` one is forgotten.
    fn is_scan_reply(&mut self, c: u32, msg: &Down, dropped: bool) -> bool {
        let (Down::Reply { request, .. } | Down::Failed { request, .. }) = msg else {
            return false;
        };
        let scans = &mut self.procs[c as usize].scans;
        if dropped {
            scans.remove(request).is_some()
        } else {
            scans.get(request).is_some()
        }
    }

    /// Redis is down: the message finds no server. A request fails fast
    /// with a connection error (as a refused connection does); the failure
    /// travels back on the link like a reply.
    fn refuse(&mut self, c: u32, life: u32, msg: Up) {
        let process = self.procs[c as usize].proc();
        if !msg.is_scan() {
            self.record(RecordKind::Drop {
                process,
                direction: Direction::Up,
                what: msg.label(),
                why: DropCause::Refused,
            });
        }
        if let Up::Command { request, .. } | Up::Subscribe { request, .. } = msg {
            let reason = "connection refused (redis down)".to_owned();
            self.send_down(c, life, Down::Failed { request, reason });
        }
    }

    /// Redis restarts without persistence: every key and connection is
    /// lost; commands waiting for a pause are gone too.
    /// Every live client is told its connections closed (a RST, carried
    /// like any message from Redis, so a partition can hide it until the
    /// client's next connection ping).
    ///
    /// A command Redis ran but had not answered (a `WAIT` that blocked, and
    /// what was queued behind it) fails first, as Redisson's
    /// `CommandsQueue.channelInactive` fails the commands sent on a channel
    /// that closed (and as the RESP transport of the other engines does).
    pub(crate) fn close_connections(&mut self) {
        self.close_connections_of(0..self.redis.len());
    }

    /// The connections to `masters` close: the replies they owe fail,
    /// and every client learns of the close (and resubscribes).
    pub(crate) fn close_connections_of(&mut self, masters: std::ops::Range<usize>) {
        let forfeit: Vec<_> = (self.redis[masters].iter_mut())
            .flat_map(|r| r.forfeit())
            .collect();
        for owed in forfeit {
            let (c, life) = owed.client;
            if self.procs[c as usize].alive && self.procs[c as usize].life == life {
                let reason = "connection closed with the command in flight".to_owned();
                let request = owed.request;
                self.send_down(c, life, Down::Failed { request, reason });
            }
        }
        let lives: Vec<(u32, u32)> = self
            .procs
            .iter()
            .enumerate()
            .filter(|(_, p)| p.alive)
            .map(|(c, p)| (c as u32, p.life))
            .collect();
        for (c, life) in lives {
            self.send_down(c, life, Down::Closed);
        }
    }

    pub(crate) fn restart_redis(&mut self) {
        self.restart_masters(0..self.redis.len());
    }

    /// `masters` restart without persistence.
    pub(crate) fn restart_masters(&mut self, masters: std::ops::Range<usize>) {
        for redis in &mut self.redis[masters.clone()] {
            redis.server.restart();
            redis.waiting.clear();
        }
        // Its replicas resync from it: they lose every key too.
        self.resync_replicas(masters);
        self.observe_all(ServerCause::Restart);
    }
}

impl World<'_> {
    /// The master that serves `key` (its slot's in a cluster, its
    /// placement's on independent masters; the only one otherwise).
    pub(crate) fn master_of(
        &mut self,
        key: &str,
    ) -> &mut crate::engines::fast::deployment::Deployment {
        let shard = self.shard_of(key);
        &mut self.redis[usize::from(shard)]
    }

    /// The index of the master that serves `key`: its slot's (or the
    /// master a `slot-migration` moves its slot to, once it holds the
    /// key), its placement's on independent masters, the only one
    /// otherwise.
    pub(crate) fn shard_of(&self, key: &str) -> u16 {
        let home = self.spec.redis.route(key);
        if self.moves.is_empty() {
            return home;
        }
        crate::engines::fast::slot_move::serving(self, key).unwrap_or(home)
    }
}

/// The command's name (`EVAL`, `PUBLISH`) for the timeline.
pub(crate) fn command_name(args: &[Bytes]) -> String {
    args.first()
        .map(|a| lockcore::lossy_text(a).to_uppercase())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    /// 3.20.0 seed 2286 runs at zero latency, and a fair-lock waiter
    /// queued there is told its own deadline less its wait and now, 0
    /// for a whole client millisecond, so it tries again at once: before
    /// an instant's events were bounded, simulated time stood still and
    /// the run never ended. It ends now, and the instant that held it
    /// took no more than its share.
    #[test]
    fn a_retry_loop_at_zero_latency_ends() {
        let release: lockcore::Release = "3.20.0".parse().expect("a release");
        // `locksim replay 2286 --redisson 3.20.0`'s workload.
        let workload = crate::Workload {
            usage: crate::Usage::Correct,
            kinds: crate::SwarmKinds::Swarm,
            strategy: crate::Strategy::Uniform,
        };
        let spec = crate::swarm::generate_with(2286, Some(release), workload);
        assert_eq!((spec.latency.min_ms, spec.latency.max_ms), (0, 0));
        let run = crate::run(&spec).expect("the run");
        let fair = run.history.records.iter().any(|r| {
            matches!(&r.kind, crate::RecordKind::Call { lock, .. }
                if lock.kind() == lockcore::LockKind::Fair)
        });
        assert!(fair, "seed 2286 no longer draws the fair lock");
        assert!(run.events < 1_000_000, "{} events", run.events);
    }
}
