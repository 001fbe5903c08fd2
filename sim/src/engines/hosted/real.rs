//! The real-Redis engine: the spec's clients, as lockcore's async client,
//! against a real `redis-server`, in real time sped up by a time scale.
//!
//! Every duration of the spec (starts, work, leases, waits, fault times,
//! `lockWatchdogTimeout`, the lock's response timeout and retry interval)
//! is divided by the time scale, and every time the history shows is
//! multiplied back, so a 40 s scenario runs in 4 s at scale 10 and reads
//! as the spec. Each client reaches Redis through a loopback proxy of its
//! own, which carries out the network faults (see `proxy`). Redis is
//! observed through `MONITOR` (see `monitor`). With `[sim.redis] replicas`
//! the engine starts real replica processes and carries out the
//! replication faults on them as Sentinel does (see `real::nodes`). With
//! `[sim.redis] shards` it starts a real Redis Cluster of that many
//! masters, and each client reaches each master through a proxy of its
//! own, in cluster mode; with `masters`, that many standalone servers
//! that share nothing, each client reaching each one through a proxy of
//! its own, each lock on the master its `placement` names (see
//! `real::cluster`). The
//! run is real: its history is not deterministic, and the verdict is the
//! one to compare with the simulated engines'.
//!
//! # Layout
//!
//! - `effects`: the fault verbs on this engine.
//! - `clock_jump`: `clock-jump` as a script on the locks' TTLs.
//! - `deployment`: the primary and replica processes the engine starts.
//! - `nodes`: the servers during the run (control connections, the
//!   primary, whose `MONITOR` is replayed) and the replication faults.
//! - `relays`: each replica's link to the primary, through a relay that
//!   holds it while replication stalls.
//! - `sentinel`: Sentinel's `SLAVEOF` transaction, word for word.
//! - `replicated`: what real replicas cannot do (refused), and a promotion.
//! - `cluster`: a Redis Cluster's masters, or independent ones, and
//!   where each command goes.
//! - `timing`: the run's time zero on Redis's clock, and the poll that
//!   finds expiries (and measures the run's stalls).

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use lockcore::{Connect, RespTransport, Shard, TcpConnect, Transport};
use tokio::net::TcpStream;

use super::action::{self, Action};
use super::monitor::Shadow;
use super::process::{self, ClientHost, Slots};
use super::proxy::{Link, Proxy};
use super::recorder::{self, Recorder, Shared, TimeSource};
use crate::model::ended::Ended;
use crate::model::fault::effect;
use crate::model::history::{Phase, RecordKind};
use crate::{SimError, SimSpec, SimTime};

mod clock_jump;
mod cluster;
mod deployment;
mod effects;
mod nodes;
mod relays;
mod replicated;
mod sentinel;
mod timing;

use cluster::master_of;
use deployment::{Aof, Deployment};
use nodes::Nodes;
pub(crate) use replicated::refusal;

/// The longest wait for a connection to Redis.
const CONNECT_WITHIN: Duration = Duration::from_secs(5);
/// Real time the clients get to connect before the spec's time zero.
const BOOT: Duration = Duration::from_millis(200);
/// The longest one-way delay, in real ms, the checkers' bounds allow a
/// message to or from a real Redis on a busy machine (loopback is far
/// faster; a descheduled process is not), unless the run measured a
/// longer stall of its own thread (its expiry poll measures it).
pub const REAL_DELAY_MS: u64 = 2;

/// Which Redis the engine runs against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RedisTarget {
    /// `redis://HOST:PORT`: an existing server. The spec's lock keys are
    /// deleted first; use a Redis that holds nothing else you need.
    Url(String),
    /// A `redis-server` started on a free loopback port for the run and
    /// stopped after it.
    Spawn,
}

/// How the real-Redis engine runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealRedis {
    /// The server.
    pub target: RedisTarget,
    /// The spec runs this many times faster than written (1 to 100).
    pub time_scale: u64,
}

fn failed(reason: String) -> SimError {
    SimError::Engine {
        engine: "redis".to_owned(),
        reason,
    }
}

/// An AOF asked of a server the engine did not start: its persistence is
/// its own, so the run would not test what the spec says.
fn unspawned_aof() -> SimError {
    SimError::Unsupported {
        engine: "redis".to_owned(),
        what: "[sim.redis] appendonly = true on --redis redis://...: the engine sets AOF only on servers it starts; run it with --redis spawn".to_owned(),
    }
}

/// What the engine does to `spec`'s faults, or why it cannot run `spec`.
pub(crate) fn plan(spec: &SimSpec) -> Result<Vec<(u64, Action)>, SimError> {
    let actions = action::plan(spec, action::Kinds::Redis)?;
    if spec.latency != crate::LatencyRange::default() {
        return Err(SimError::Unsupported {
            engine: "redis".to_owned(),
            what: format!(
                "latency {}-{}ms: a real Redis's latency is the real network's; run it on the fast or turmoil engine",
                spec.latency.min_ms, spec.latency.max_ms
            ),
        });
    }
    if spec.redis.version != fake_redis::RedisVersion::V7_0 {
        // The installed server is 7.0.15: a scenario written for another
        // release line must not pass silently on it.
        return Err(SimError::Unsupported {
            engine: "redis".to_owned(),
            what: format!(
                "[sim.redis] version = \"{}\": the engine runs the installed redis-server, which is Redis 7.0; run it on the fast or turmoil engine",
                spec.redis.version
            ),
        });
    }
    replicated::check(spec)?;
    if spec.redis.appendonly && spec.redis.has_masters() {
        // The AOF is set on the primary of a deployment alone, one server:
        // several masters would run as one.
        return Err(SimError::Unsupported {
            engine: "redis".to_owned(),
            what: "[sim.redis] appendonly = true with shards or masters: the engine sets AOF only on a single primary; run it on the fast engine, or without appendonly".to_owned(),
        });
    }
    Ok(actions)
}

/// Runs `spec` against a real Redis, for the judge (`crate::run_real`).
pub(crate) fn play(spec: &SimSpec, opts: &RealRedis) -> Result<Ended, SimError> {
    crate::model::validate::validate_spec(spec)?;
    if !(1..=100).contains(&opts.time_scale) {
        return Err(SimError::Invalid {
            field: "time_scale".to_owned(),
            reason: format!("must be between 1 and 100, got {}", opts.time_scale),
        });
    }
    let actions = plan(spec)?;
    let (replicas, shards, independent) =
        (spec.redis.replicas, spec.redis.shards, spec.redis.masters);
    let aof = Aof {
        primary: spec.redis.appendonly,
        replicas: spec.redis.replica_appendonly,
    };
    // Several masters (a cluster, or independent ones) on a url.
    if let Some(refused) = cluster::refusal(spec, opts) {
        return Err(refused);
    }
    let (spawned, deployment) = match &opts.target {
        RedisTarget::Url(_) if replicas > 0 => return Err(replicated::not_spawned(replicas)),
        RedisTarget::Url(_) if aof.primary => return Err(unspawned_aof()),
        RedisTarget::Url(_) => (None, None),
        RedisTarget::Spawn if replicas > 0 || aof.primary => {
            (None, Some(RefCell::new(Deployment::start(replicas, aof)?)))
        }
        RedisTarget::Spawn if shards > 0 => (
            Some(super::spawn::SpawnedRedis::start_masters(shards)?),
            None,
        ),
        // Standalone servers, no `CLUSTER` setup: they share nothing.
        RedisTarget::Spawn if independent > 0 => (
            Some(super::spawn::SpawnedRedis::start_standalone(independent)?),
            None,
        ),
        RedisTarget::Spawn if spec.redis.proxy => {
            (Some(super::spawn::SpawnedRedis::start_cluster()?), None)
        }
        RedisTarget::Spawn => (Some(super::spawn::SpawnedRedis::start()?), None),
    };
    let masters = match (&opts.target, &spawned, &deployment) {
        (RedisTarget::Url(url), ..) => vec![vec![
            TcpConnect::new(url)
                .map_err(|e| failed(e.to_string()))?
                .target(),
        ]],
        // One master each, without replicas.
        (_, Some(server), _) => server.addrs().into_iter().map(|a| vec![a]).collect(),
        (_, None, Some(d)) => {
            let d = d.borrow();
            vec![(0..d.len()).map(|i| d.addr(i)).collect()]
        }
        (_, None, None) => unreachable!("a spawned target always has a server"),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| failed(format!("no tokio runtime: {e}")))?;
    let local = tokio::task::LocalSet::new();
    let run = Driver {
        spec,
        actions: &actions,
        masters,
        deployment: deployment.as_ref(),
        scale: opts.time_scale,
    };
    let (history, cut) = local.block_on(&runtime, run.drive())?;
    drop(local);
    drop(runtime);
    drop(spawned);
    drop(deployment);
    Ok(Ended::hosted(history, cut, 0))
}

/// A connection named after its process, reconnecting as fast as the
/// time scale asks.
struct Named {
    tcp: TcpConnect,
    name: String,
    scale: u64,
}

impl Connect for Named {
    type Stream = TcpStream;

    fn target(&self) -> String {
        self.tcp.target()
    }

    async fn open(&self) -> std::io::Result<TcpStream> {
        self.tcp.open().await
    }

    fn client_name(&self) -> Option<String> {
        Some(self.name.clone())
    }

    fn reconnect_delay(&self, attempt: u32) -> Duration {
        lockcore::reconnect_delay(attempt) / self.scale.max(1) as u32
    }
}

/// What the driver injects faults through.
#[derive(Clone, Copy)]
struct Faults<'a> {
    /// Each master's servers, and locksim's own connection to each: the
    /// primary and its replicas with one master, one each with several.
    masters: &'a [Nodes<'a>],
    /// Each client's proxy link (the rules of all its proxies).
    links: &'a [Rc<Link>],
}

struct Driver<'a> {
    spec: &'a SimSpec,
    actions: &'a [(u64, Action)],
    /// Each master's servers' `HOST:PORT`s, the primary's first: one
    /// master with one Redis, in slot order in a cluster, by number for
    /// independent masters.
    masters: Vec<Vec<String>>,
    /// The processes, when the engine started replicas.
    deployment: Option<&'a RefCell<Deployment>>,
    scale: u64,
}

async fn within<T>(
    what: &str,
    target: &str,
    f: impl Future<Output = Result<T, String>>,
) -> Result<T, SimError> {
    match tokio::time::timeout(CONNECT_WITHIN, f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(failed(format!("{what} {target}: {e}"))),
        Err(_) => Err(failed(format!(
            "{what} {target}: no answer within {}s",
            CONNECT_WITHIN.as_secs()
        ))),
    }
}

fn words(w: &[&str]) -> Vec<Bytes> {
    w.iter().map(|w| Bytes::from(w.to_string())).collect()
}

/// What a restart without persistence loses: every key and the script
/// cache.
fn lose_everything() -> [Vec<Bytes>; 2] {
    [words(&["FLUSHALL"]), words(&["SCRIPT", "FLUSH"])]
}

/// Loads `RLock`'s scripts, as the other engines' Redis starts with them
/// (a Redis Redisson clients have used before; see `LockScript::RLOCK`).
async fn load_lock_scripts(control: &RespTransport) -> Result<(), String> {
    for script in fake_redis::LockScript::RLOCK {
        let load = vec![
            Bytes::from_static(b"SCRIPT"),
            Bytes::from_static(b"LOAD"),
            Bytes::from_static(script.text().as_bytes()),
        ];
        control
            .send(Shard(0), &load)
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

impl<'a> Driver<'a> {
    async fn drive(self) -> Result<(crate::History, Vec<crate::CutShort>), SimError> {
        let masters = self.connect().await?;
        masters[0].wait_synced().await?;
        self.reset(&masters).await?;
        let target = masters[0].primary_addr().to_owned();
        let (zero, zero_unix_us) = timing::calibrate(masters[0].control(), &target).await?;
        let recorder: Shared = std::sync::Arc::new(std::sync::Mutex::new(Recorder::new(self.spec)));
        recorder::lock(&recorder).time = TimeSource::Real {
            zero: zero.into_std(),
            scale: self.scale,
        };
        let redis = &self.spec.redis;
        let shadow = Rc::new(RefCell::new(Shadow::new(zero_unix_us, self.scale, redis)));
        for master in &masters {
            master.monitor_primary(&recorder, &shadow).await?;
        }
        let slots = process::slots(self.spec, self.scale);
        let spec = Rc::new(self.spec.clone());
        let (links, proxies) = self.proxies(&masters).await?;
        let hosts = self.hosts(&spec, &recorder, &slots, &proxies)?;
        for host in &hosts {
            start(host, &slots);
        }
        let stall = timing::watch_expiries(&recorder, &shadow, zero);
        for (at, action) in self.actions {
            tokio::time::sleep_until(zero + Duration::from_millis(at / self.scale)).await;
            let faults = Faults {
                masters: &masters,
                links: &links,
            };
            self.act(*action, &faults, (&recorder, &shadow), &slots, &hosts)
                .await;
        }
        let horizon = zero + Duration::from_millis(self.spec.horizon_ms / self.scale);
        tokio::time::sleep_until(horizon).await;
        shadow.borrow_mut().flush(&mut recorder::lock(&recorder));
        for slot in slots.iter() {
            slot.borrow().tasks.iter().for_each(|t| t.abort());
        }
        self.leftovers(&masters, &recorder).await?;
        let (mut history, cut) = process::finish(self.spec, &recorder, &slots);
        // Real messages take real time, which the scale magnifies; the
        // checkers' bounds allow the longest stall the run measured.
        let stall_ms = u64::try_from(stall.get().as_millis()).unwrap_or(u64::MAX);
        let real_delay = REAL_DELAY_MS.max(stall_ms).saturating_mul(self.scale);
        history.meta.max_latency_ms = history.meta.max_latency_ms.max(real_delay);
        Ok((history, cut))
    }

    /// Connects to each master's servers.
    async fn connect(&self) -> Result<Vec<Nodes<'a>>, SimError> {
        let mut masters = Vec::new();
        for (i, addrs) in self.masters.iter().enumerate() {
            let nodes = Nodes::connect(addrs.clone(), self.deployment, self.scale, i).await?;
            masters.push(nodes);
        }
        Ok(masters)
    }

    /// Deletes the spec's lock keys, each on its master, and loads the
    /// lock scripts on every master.
    async fn reset(&self, masters: &[Nodes<'_>]) -> Result<(), SimError> {
        for lock in &self.spec.clients {
            for t in &lock.threads {
                let master = &masters[master_of(self.spec, t.lock.as_str())];
                let del = words(&["DEL", t.lock.as_str()]);
                within("cannot reset the lock on", master.primary_addr(), async {
                    let reply = master.control().send(Shard(0), &del).await;
                    reply.map_err(|e| e.to_string())
                })
                .await?;
            }
        }
        // On the primary only, as the other engines' Redis: Redis 7 does
        // not replicate `SCRIPT LOAD`, so a replica promoted later starts
        // with an empty script cache, where a batch resent to it across
        // the failover meets `NOSCRIPT`. On every master of several.
        for master in masters {
            let target = master.primary_addr().to_owned();
            let load = load_lock_scripts(master.control());
            within("cannot load the lock scripts on", &target, load).await?;
        }
        Ok(())
    }

    /// Each client's link (the rules its network faults set) and its
    /// proxies under it, one to each master.
    async fn proxies(
        &self,
        masters: &[Nodes<'_>],
    ) -> Result<(Vec<Rc<Link>>, Vec<Vec<TcpConnect>>), SimError> {
        let mut links = Vec::new();
        let mut proxies = Vec::new();
        for c in 0..self.spec.clients.len() {
            let link = Rc::new(Link {
                scale: self.scale,
                ..Link::default()
            });
            let mut own = Vec::new();
            for (m, master) in masters.iter().enumerate() {
                let mut stream = crate::model::rng::stream(
                    self.spec.seed,
                    crate::model::rng::Stream::Link(c as u32),
                );
                // Another master's proxy draws further down the stream.
                stream.set_word_pos((m as u128) << 60);
                let (upstream, outage) = (master.upstream.clone(), master.outage.clone());
                let proxy = Proxy::start(upstream, link.clone(), outage, stream)
                    .await
                    .map_err(|e| failed(format!("cannot start the loopback proxy: {e}")))?;
                let url = format!("redis://{}", proxy.addr);
                own.push(TcpConnect::new(&url).map_err(|e| failed(e.to_string()))?);
            }
            proxies.push(own);
            links.push(link);
        }
        Ok((links, proxies))
    }

    /// At the horizon, the family keys the locks left, read on each
    /// master.
    async fn leftovers(&self, masters: &[Nodes<'_>], recorder: &Shared) -> Result<(), SimError> {
        let Some(command) = crate::model::leftover::command(self.spec) else {
            return Ok(());
        };
        for master in masters {
            let target = master.primary_addr().to_owned();
            let reply = within("cannot read the lock's leftover keys on", &target, async {
                let reply = master.control().send(Shard(0), &command).await;
                reply.map_err(|e| e.to_string())
            })
            .await?;
            let at = crate::SimTime::from_ms(self.spec.horizon_ms);
            recorder::lock(recorder).leftovers(self.spec, at, &reply);
        }
        Ok(())
    }

    fn hosts(
        &self,
        spec: &Rc<SimSpec>,
        recorder: &Shared,
        slots: &Slots,
        proxies: &[Vec<TcpConnect>],
    ) -> Result<Vec<ClientHost<Named>>, SimError> {
        let configs = process::configs(self.spec, self.scale)?;
        let scale = self.scale;
        Ok(configs
            .into_iter()
            .enumerate()
            .map(|(c, (config, watchdog_ms))| {
                let tcps = proxies[c].clone();
                ClientHost {
                    c,
                    spec: spec.clone(),
                    config,
                    watchdog_ms,
                    recorder: recorder.clone(),
                    slots: slots.clone(),
                    connect: Rc::new(move |name: String| {
                        (tcps.iter())
                            .map(|tcp| Named {
                                tcp: tcp.clone(),
                                name: name.clone(),
                                scale,
                            })
                            .collect()
                    }),
                    boot: BOOT,
                    scale: self.scale,
                }
            })
            .collect())
    }

    async fn act(
        &self,
        action: Action,
        faults: &Faults<'_>,
        (recorder, shadow): (&Shared, &Rc<RefCell<Shadow>>),
        slots: &Slots,
        hosts: &[ClientHost<Named>],
    ) {
        let (i, begin) = match action {
            Action::Begin(i) => (i, true),
            Action::End(i) => (i, false),
        };
        let fault = &self.spec.faults.0[i];
        if fault.kind().recorded() {
            let phase = if begin { Phase::Begin } else { Phase::End };
            let at = if begin {
                Some(fault.at_ms())
            } else {
                fault.end_ms()
            };
            let kind = RecordKind::Fault {
                fault: fault.clone(),
                phase,
            };
            recorder::lock(recorder).record_at(SimTime::from_ms(at.unwrap_or(0)), kind);
        }
        let mut fx = effects::RealEffects {
            spec: self.spec,
            scale: self.scale,
            faults,
            recorder,
            slots,
            hosts,
            commands: Vec::new(),
            promotion: None,
        };
        effect::act(self.spec, i, begin, &mut fx);
        // In the order the verbs asked: a restart's FLUSHALL goes after
        // the proxies cut every connection. Each to its masters.
        for (to, command) in fx.commands {
            let reached = faults.masters.iter().enumerate();
            for (_, master) in reached.filter(|(i, _)| to.reaches(*i)) {
                let _ = master.control().send(Shard(0), &command).await;
            }
        }
        if let Some(p) = fx.promotion {
            replicated::promote(&faults.masters[0], p, recorder, shadow).await;
        }
    }
}

/// Starts a life of a client: its software task, killed by a crash.
fn start(host: &ClientHost<Named>, slots: &Slots) {
    let host = host.clone();
    let c = host.c;
    let task = tokio::task::spawn_local(async move {
        if let Err(e) = host.software().await {
            tracing::warn!(client = c, error = %e, "client process failed");
        }
    });
    slots[c].borrow_mut().tasks.push(task.abort_handle());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::tests::{client, critical, spec, thread};

    /// A scenario for another Redis release line is refused by name: the
    /// installed server is 7.0, and a run on it would pass for a run of
    /// the release asked for. An AOF is the engine's to set, so it is
    /// refused on a server the engine did not start.
    #[test]
    fn other_versions_and_an_unspawned_aof_are_refused() {
        let base = spec(vec![client("A", vec![thread(0, critical(1_000))])]);
        let mut s = base.clone();
        s.redis.version = fake_redis::RedisVersion::V6_2;
        let Err(SimError::Unsupported { what, .. }) = plan(&s) else {
            panic!("6.2 must be refused");
        };
        assert!(what.starts_with("[sim.redis] version = \"6.2\""), "{what}");
        assert!(what.contains("Redis 7.0"), "{what}");
        let mut s = base;
        s.redis.appendonly = true;
        assert!(plan(&s).is_ok(), "the engine starts a server with an AOF");
        let url = RealRedis {
            target: RedisTarget::Url("redis://127.0.0.1:1".to_owned()),
            time_scale: 1,
        };
        let Err(SimError::Unsupported { what, .. }) = play(&s, &url) else {
            panic!("an AOF on a server the engine did not start must be refused");
        };
        assert!(what.starts_with("[sim.redis] appendonly = true"), "{what}");
    }
}
