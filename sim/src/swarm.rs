//! Random but reasonable scenarios from a seed, for exploration and for
//! the determinism tests.

use lockcore::{LockName, Release};
use rand::{Rng, RngExt};
use rand_chacha::ChaCha8Rng;

use crate::directed::Bias;
use crate::model::fault::{Draw, GENERATORS, Generator};
use crate::model::rng::{self, Stream, between};
use crate::steps;
use crate::workload::{
    CORRECT_WATCHDOGS_MS, Usage, Workload, add_liveness_phase, after_a_sleep, correct_script,
};
use crate::{
    ClientSpec, DEFAULT_LOCK, Fault, FaultPlan, LatencyRange, SimSpec, Step, Strategy, ThreadSpec,
};

/// Watchdog timeouts to draw from: Redisson's default, shorter ones, and
/// the documents' tiny 100 ms.
const WATCHDOGS_MS: [u64; 5] = [30_000, 10_000, 3_000, 1_000, 100];

/// Which fault kinds a generated plan draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SwarmKinds {
    /// Swarm testing, as FoundationDB's simulator and TigerBeetle's VOPR
    /// do: each kind is enabled with probability [`SWARM_CHANCE`], from a
    /// stream of its own, and an enabled kind strikes one to three times
    /// (its intensity), each strike at a time, on a client and with fields
    /// of its own. A strike the plan cannot take (a failover overlapping
    /// another) is left out. Each seed so explores its own mix of faults.
    #[default]
    Swarm,
    /// 0-4 faults among the first eight kinds (crash to redis-pause),
    /// drawn from the swarm's own stream, as `locksim explore` first did:
    /// explored seeds and the regression corpus keep their plans.
    Classic,
    /// Every kind, each from a random stream of its own named after it:
    /// each kind is in the plan (once) with probability [`KIND_CHANCE`],
    /// at a time and with fields drawn from its stream. Adding a kind
    /// leaves the plan of every seed that does not draw it as it was.
    /// Redis gets one or two replicas when a kind needs them.
    All,
}

/// The chance that the every-kind swarm puts a given kind in a plan (about
/// three and a half faults a plan with twenty-four kinds).
pub const KIND_CHANCE: f64 = 0.15;

/// The chance that a swarm plan with a fault on one master of a cluster
/// (`shard-pause`, `shard-restart`, `shard-failover`) makes Redis a
/// cluster, so that about one seed in five of the default workload runs
/// on one; otherwise the fault is dropped.
pub const CLUSTER_CHANCE: f64 = 0.4;

/// The chance that the swarm enables a given kind (about six kinds of
/// twenty-four a seed, twelve strikes).
pub const SWARM_CHANCE: f64 = 0.25;

/// The chance that a generated scenario (any kinds but `classic`) uses two
/// locks: each client's second thread takes [`SECOND_LOCK`], so one
/// client holds two locks at once, as Redisson's renewal map and batched
/// round (3.44+) see it, and each lock has its own contenders.
pub const TWO_LOCKS_CHANCE: f64 = 0.5;

/// The chance that a generated scenario (any kinds but `classic`) has one
/// client call Redisson's async API (`lockAsync`, `tryLockAsync`), whose
/// waiters wait by a listener rather than on the latch (the race of
/// #5761, before 3.28.0).
pub const ASYNC_CHANCE: f64 = 0.25;

/// The name of the second lock of a two-lock scenario.
pub const SECOND_LOCK: &str = "redisson:lock2";

/// A random scenario drawn from `seed`: 2-4 clients of 1-2 threads each,
/// lock / try-lock / work / write / unlock scripts, a watchdog timeout
/// from a few choices (small ones included), a latency range, and 0-4
/// faults of the classic kinds at random times; the horizon is 60-120 s.
/// `profile` fixes every client's profile, otherwise each run draws one.
///
/// The spec carries `seed` too, so running it reproduces the same run.
pub fn generate(seed: u64, profile: Option<Release>) -> SimSpec {
    generate_with(seed, profile, Workload::CLASSIC)
}

/// A random scenario drawn from `seed` for `workload`: its scripts use the
/// lock as [`Usage`] says and its fault plan is drawn from its kinds; a
/// correct workload ends with a liveness phase (see [`Usage::Correct`]).
/// Workloads of the same usage have the same clients and scripts.
///
/// The workload's [`crate::Strategy`] picks the seed's arm: the uniform
/// swarm's chances, the directed arm's ([`crate::directed`]) or the
/// uniform swarm plus PCT change points ([`crate::pct`]).
pub fn generate_with(seed: u64, profile: Option<Release>, workload: Workload) -> SimSpec {
    generate_typed(seed, profile, workload, crate::LOCK_TYPES, true)
}

/// [`generate_with`] drawing its locks' types from `types`, and a
/// multi-lock when `multi` (the tests compare registrations and draws).
pub(crate) fn generate_typed(
    seed: u64,
    profile: Option<Release>,
    workload: Workload,
    types: &[crate::LockType],
    multi: bool,
) -> SimSpec {
    let arm = workload.strategy.arm(seed);
    let bias = Bias::of(seed, arm);
    let mut r = rng::stream(seed, Stream::Swarm);
    let profile = profile.unwrap_or_else(|| Release::ERAS[r.random_range(0..Release::ERAS.len())]);
    let watchdogs: &[u64] = match workload.usage {
        Usage::Misuse => &WATCHDOGS_MS,
        Usage::Correct => &CORRECT_WATCHDOGS_MS,
    };
    let watchdog_timeout_ms = watchdogs[r.random_range(0..watchdogs.len())];
    let min_ms = r.random_range(0..=5);
    let latency = LatencyRange {
        min_ms,
        max_ms: min_ms + r.random_range(0..=20),
    };
    let horizon_ms = r.random_range(60..=120) * 1_000;
    let span = horizon_ms * 2 / 3;
    let lock = LockName::new(DEFAULT_LOCK).unwrap_or_else(|_| unreachable!());
    let names = ["A", "B", "C", "D"];
    let n_clients = r.random_range(2..=4);
    let clients: Vec<ClientSpec> = names[..n_clients]
        .iter()
        .map(|name| {
            let n_threads = r.random_range(1..=2);
            let threads = (0..n_threads)
                .map(|_| ThreadSpec {
                    start_ms: r.random_range(0..=span / 4),
                    lock: lock.clone(),
                    steps: match workload.usage {
                        Usage::Misuse => script(&mut r, watchdog_timeout_ms),
                        Usage::Correct => correct_script(&mut r, watchdog_timeout_ms),
                    },
                    multi: None,
                })
                .collect();
            ClientSpec::new(*name, threads)
        })
        .collect();
    let mut spec = SimSpec {
        seed,
        profile,
        watchdog_timeout_ms,
        latency,
        clients,
        faults: FaultPlan::default(),
        horizon_ms,
        redis: Default::default(),
        reseeds: Vec::new(),
    };
    if workload.kinds != SwarmKinds::Classic {
        take_second_lock(&mut spec, bias.two_locks);
        if workload.usage == Usage::Correct {
            crate::workload::nest_holds(&mut spec, bias.nesting);
        }
        use_async_api(&mut spec, bias.async_api);
        crate::lock_types::draw_lock_types(&mut spec, types);
        if multi {
            crate::multi_locks::draw_multi(&mut spec);
        }
        if workload.kinds == SwarmKinds::Swarm {
            crate::client_settings::draw_settings(&mut spec);
        }
    }
    match workload.kinds {
        SwarmKinds::Classic => {
            let n_faults = r.random_range(0..=4);
            spec.faults.0 = (0..n_faults)
                .map(|_| {
                    let client = names[r.random_range(0..n_clients)];
                    fault(&mut r, client, span)
                })
                .collect();
        }
        SwarmKinds::All => every_kind(&mut spec, &names[..n_clients], span, GENERATORS),
        SwarmKinds::Swarm => swarm(&mut spec, &names[..n_clients], span, &bias),
    }
    crate::lock_types::aim_deletes(&mut spec, types);
    if arm == Strategy::Pct {
        crate::pct::add_change_points(&mut spec);
    }
    if workload.usage == Usage::Correct {
        // After the plan: a relay may add a fault over its hand-off.
        if workload.kinds != SwarmKinds::Classic {
            crate::workload::relay_threads(&mut spec, bias.relay);
        }
        add_liveness_phase(&mut spec);
        crate::lock_types::probe_lock_types(&mut spec, crate::PROBE, types);
    }
    // Last, so that the liveness probe's client reaches Redis as the
    // others do.
    if workload.kinds == SwarmKinds::Swarm {
        crate::client_settings::draw_mode(&mut spec);
        crate::server_settings::draw_server(&mut spec);
        crate::client_settings::draw_endpoint(&mut spec);
        crate::server_settings::draw_proxy(&mut spec);
    }
    spec
}

/// With `chance` ([`TWO_LOCKS_CHANCE`] in the uniform swarm), drawn from
/// a stream of its own so that every other draw of the seed stays as it
/// was, each client's second thread locks [`SECOND_LOCK`] instead of the
/// default lock.
fn take_second_lock(spec: &mut SimSpec, chance: f64) {
    let mut r = rng::stream(spec.seed, Stream::SwarmLocks);
    if !r.random_bool(chance) {
        return;
    }
    let second = LockName::new(SECOND_LOCK).unwrap_or_else(|_| unreachable!());
    for thread in spec.clients.iter_mut().filter_map(|c| c.threads.get_mut(1)) {
        thread.lock = second.clone();
    }
}

/// With `chance` ([`ASYNC_CHANCE`] in the uniform swarm), drawn from a
/// stream of its own, one client's acquires go through the async API.
fn use_async_api(spec: &mut SimSpec, chance: f64) {
    let mut r = rng::stream(spec.seed, Stream::SwarmApi);
    if !r.random_bool(chance) {
        return;
    }
    let c = r.random_range(0..spec.clients.len());
    for thread in &mut spec.clients[c].threads {
        to_async(&mut thread.steps);
    }
}

/// `steps` with `lock` and `try-lock` as `lock-async` and `try-lock-async`.
fn to_async(steps: &mut [Step]) {
    replace_steps(steps, &|step| match step {
        Step::Lock(steps::Lock { lease_ms }) => Some(Step::LockAsync(steps::LockAsync {
            lease_ms: *lease_ms,
        })),
        Step::TryLock(steps::TryLock { wait_ms, lease_ms }) => {
            Some(Step::TryLockAsync(steps::TryLockAsync {
                wait_ms: *wait_ms,
                lease_ms: *lease_ms,
            }))
        }
        _ => None,
    });
}

/// Replaces each step (inside repeats too) for which `with` gives one.
fn replace_steps(steps: &mut [Step], with: &impl Fn(&Step) -> Option<Step>) {
    for step in steps {
        if let Some(body) = step.kind_mut().body_mut() {
            replace_steps(body, with);
        } else if let Some(new) = with(step) {
            *step = new;
        }
    }
}

/// The swarm's plan (see [`SwarmKinds::Swarm`]), each kind enabled with
/// `bias`'s chance for it ([`SWARM_CHANCE`] in the uniform swarm).
fn swarm(spec: &mut SimSpec, clients: &[&str], span: u64, bias: &Bias) {
    let mut strikes = Vec::new();
    for (name, generate) in GENERATORS {
        let mut r = rng::stream(spec.seed, Stream::SwarmKind(rng::kind_number(name)));
        if !r.random_bool(bias.kind_chance(name)) {
            continue;
        }
        for _ in 0..r.random_range(1..=3) {
            let client = clients[r.random_range(0..clients.len())];
            let threads = threads_of(spec, client);
            strikes.push(drawn(&mut r, *generate, client, threads, span));
        }
    }
    let on_masters = split_cluster_faults(&mut strikes);
    // Several masters take the faults on one master, and replicas for
    // each when one of those fails over; the faults on Redis's one
    // primary's replicas are then refused.
    let several = crate::server_settings::give_shards(spec, &on_masters, CLUSTER_CHANCE);
    give_replicas(spec, if several { &on_masters } else { &strikes });
    keep_valid(spec, strikes);
    keep_valid(spec, on_masters);
}

/// Takes the faults on one master of a cluster out of `plan`, to be kept
/// after the others: when they make Redis a cluster, the faults on the
/// replicas of one primary are refused.
/// The kinds are registered last, so their places (and so every fault's
/// stream) stay as drawn.
fn split_cluster_faults(plan: &mut Vec<Fault>) -> Vec<Fault> {
    let (on_masters, others) = std::mem::take(plan)
        .into_iter()
        .partition(|f| f.kind().needs_cluster());
    *plan = others;
    on_masters
}

/// One or two replicas for Redis when a fault of `plan` needs them.
fn give_replicas(spec: &mut SimSpec, plan: &[Fault]) {
    if plan.iter().any(|f| f.kind().needs_replicas()) {
        let mut r = rng::stream(spec.seed, Stream::SwarmRedis);
        spec.redis.replicas = r.random_range(1..=2);
    }
}

/// The every-kind plan: each kind of `kinds` draws, from its own stream,
/// whether it strikes and how.
fn every_kind(spec: &mut SimSpec, clients: &[&str], span: u64, kinds: &[(&str, Generator)]) {
    for (name, generate) in kinds {
        let mut r = rng::stream(spec.seed, Stream::SwarmKind(rng::kind_number(name)));
        if !r.random_bool(KIND_CHANCE) {
            continue;
        }
        let client = clients[r.random_range(0..clients.len())];
        let threads = threads_of(spec, client);
        spec.faults
            .0
            .push(drawn(&mut r, *generate, client, threads, span));
    }
    let mut plan = std::mem::take(&mut spec.faults.0);
    let on_masters = split_cluster_faults(&mut plan);
    let replicas = spec.redis.replicas;
    let several = crate::server_settings::give_shards(spec, &on_masters, 1.0);
    give_replicas(spec, if several { &on_masters } else { &plan });
    keep_valid(spec, plan);
    keep_valid(spec, on_masters);
    // A seed whose only fault on replicas was refused runs as one that
    // drew none.
    if !spec.faults.0.iter().any(|f| f.kind().needs_replicas()) {
        spec.redis.replicas = replicas;
    }
}

/// Adds each fault of `plan` that the spec, with the faults kept before
/// it, takes: a drawn fault can name a replica Redis lacks, or meet
/// another kind's window it must not (a replica's link down across a
/// promotion). The setting and the faults already there are checked
/// once, then each new fault against them.
fn keep_valid(spec: &mut SimSpec, plan: Vec<Fault>) {
    let valid = crate::model::validate::validate_setting(spec).is_ok()
        && crate::model::validate::validate_faults(spec).is_ok();
    for fault in plan {
        spec.faults.0.push(fault);
        if !valid || crate::model::validate::validate_last_fault(spec).is_err() {
            spec.faults.0.pop();
        }
    }
}

/// One critical section (acquire, work, write, maybe unlock), sometimes
/// repeated, with a sleep before it.
fn script(r: &mut impl Rng, watchdog_ms: u64) -> Vec<Step> {
    let lease_ms = r
        .random_bool(0.3)
        .then(|| between(r, 50, 2 * watchdog_ms.min(10_000)));
    let acquire = if r.random_bool(0.5) {
        Step::Lock(steps::Lock { lease_ms })
    } else {
        Step::TryLock(steps::TryLock {
            wait_ms: r.random_bool(0.8).then(|| r.random_range(100..=20_000)),
            lease_ms,
        })
    };
    let mut body = vec![
        acquire,
        Step::Work(steps::Work {
            ms: between(r, 10, 3 * watchdog_ms.min(10_000)),
        }),
        Step::Write(steps::Write {}),
    ];
    // Mostly unlock; sometimes forget (experiment 1) or force-unlock.
    match r.random_range(0..10) {
        0 => {}
        1 => body.push(Step::ForceUnlock(steps::ForceUnlock {})),
        _ => body.push(Step::Unlock(steps::Unlock {})),
    }
    after_a_sleep(r, body)
}

/// A classic fault: its time and length, then its kind, from the swarm's
/// stream.
fn fault(r: &mut ChaCha8Rng, client: &str, span: u64) -> Fault {
    let at_ms = r.random_range(0..=span);
    let duration_ms = between(r, 100, 15_000);
    let kinds = &GENERATORS[..crate::model::fault::SWARM_KINDS];
    let (_, generate) = kinds[r.random_range(0..kinds.len())];
    generate(
        r,
        Draw {
            client: client.to_owned(),
            threads: 1,
            at_ms,
            duration_ms,
        },
    )
}

/// A fault of `generate`'s kind on `client`, its time, length and fields
/// drawn from `r`.
fn drawn(r: &mut ChaCha8Rng, generate: Generator, client: &str, threads: u32, span: u64) -> Fault {
    let at_ms = r.random_range(0..=span);
    let duration_ms = between(r, 100, 15_000);
    generate(
        r,
        Draw {
            client: client.to_owned(),
            threads,
            at_ms,
            duration_ms,
        },
    )
}

/// How many threads the client called `name` runs (at least 1).
pub(crate) fn threads_of(spec: &SimSpec, name: &str) -> u32 {
    let n = spec
        .clients
        .iter()
        .find(|c| c.name == name)
        .map_or(1, |c| c.threads.len());
    u32::try_from(n).unwrap_or(u32::MAX).max(1)
}

/// [`generate_with`] with no multi-lock drawn (the multi draw's tests).
#[cfg(test)]
pub(crate) fn generate_without_multi(seed: u64, workload: Workload) -> SimSpec {
    generate_typed(seed, None, workload, crate::LOCK_TYPES, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same seed gives the same scenario, and generated scenarios are
    /// valid specs within the documented bounds.
    #[test]
    fn generation_is_reproducible_and_valid() {
        for seed in 0..200 {
            let a = generate(seed, None);
            assert_eq!(a, generate(seed, None));
            assert!((2..=4).contains(&a.clients.len()));
            assert!(a.faults.0.len() <= 4);
            assert!((60_000..=120_000).contains(&a.horizon_ms));
            assert_eq!(
                crate::model::validate::validate_spec(&a),
                Ok(()),
                "seed {seed}"
            );
        }
        assert_ne!(generate(1, None), generate(2, None));
        assert_eq!(generate(3, Some(Release::FENCED)).profile, Release::FENCED);
    }

    /// The every-kind plan with the first generator's scripts.
    const ALL: Workload = Workload {
        usage: Usage::Misuse,
        kinds: SwarmKinds::All,
        strategy: Strategy::Uniform,
    };

    /// The default workload: valid specs; scripts that unlock every
    /// acquire, leases beyond their work, no forceUnlock, watchdogs of a
    /// second or more; a swarm of several kinds; a probe after the last
    /// fault, with a horizon that leaves the liveness checker room.
    #[test]
    fn correct_workloads_use_the_lock_as_documented() {
        let mut kinds = std::collections::BTreeSet::new();
        for seed in 0..300 {
            let a = generate_with(seed, None, Workload::default());
            assert_eq!(a, generate_with(seed, None, Workload::default()));
            assert_eq!(
                crate::model::validate::validate_spec(&a),
                Ok(()),
                "seed {seed}"
            );
            assert!(a.watchdog_timeout_ms >= 1_000);
            let probe = a.clients.last().unwrap();
            assert_eq!(probe.name, crate::PROBE);
            let heal = a
                .faults
                .0
                .iter()
                .map(|f| f.effect_end_ms().unwrap_or(f.at_ms()))
                .max();
            assert!(probe.threads[0].start_ms >= heal.unwrap_or(0));
            assert!(a.horizon_ms >= probe.threads[0].start_ms + 2 * a.watchdog_timeout_ms);
            for c in &a.clients {
                for t in &c.threads {
                    let count = |f: &dyn Fn(&Step) -> bool| count_steps(&t.steps, f);
                    assert_eq!(
                        count(&|s| matches!(s, Step::ForceUnlock(_))),
                        0,
                        "seed {seed}"
                    );
                    assert_eq!(
                        count(&|s| s.is_acquire()),
                        count(&|s| matches!(s, Step::Unlock(_))),
                        "seed {seed}"
                    );
                }
            }
            kinds.extend(a.faults.0.iter().map(kind_name));
        }
        assert_eq!(kinds.len(), GENERATORS.len(), "{kinds:?}");
    }

    /// Half the seeds (from a stream of their own) use two locks: each
    /// client's second thread takes the second lock, the probe takes each
    /// lock, and nothing else of the spec changes. `--kinds classic` keeps
    /// one lock, so the regression seeds keep their plans.
    #[test]
    fn some_seeds_use_two_locks_and_nothing_else_changes() {
        let second = LockName::new(SECOND_LOCK).unwrap();
        let mut two = 0;
        for seed in 0..200 {
            // A multi-lock's constituents are the other draw's (its test).
            let a = generate_without_multi(seed, Workload::default());
            let mut one = a.clone();
            take_second_lock_back(&mut one);
            let probe = a.clients.last().unwrap();
            if one == a {
                assert_eq!(probe.threads.len(), 1, "seed {seed}");
                continue;
            }
            two += 1;
            for c in &a.clients[..a.clients.len() - 1] {
                for (i, t) in c.threads.iter().enumerate() {
                    assert_eq!(t.lock == second, i == 1, "seed {seed}");
                }
            }
            let probed: Vec<&str> = probe.threads.iter().map(|t| t.lock.as_str()).collect();
            assert_eq!(probed, [DEFAULT_LOCK, SECOND_LOCK], "seed {seed}");
            let classic = generate(seed, None);
            assert!(
                classic
                    .clients
                    .iter()
                    .flat_map(|c| &c.threads)
                    .all(|t| t.lock != second)
            );
        }
        assert!(
            (70..=130).contains(&two),
            "{two} of 200 seeds use two locks"
        );
    }

    /// A quarter of the seeds (from a stream of their own) have one client
    /// on the async API, for all its acquires; `--kinds classic` never
    /// does. (That nothing else changes is checked with the classic
    /// clients in `every_kind_plans_are_valid_and_draw_every_kind`.)
    #[test]
    fn some_seeds_use_the_async_api() {
        let mut on_async = 0;
        for seed in 0..400 {
            let a = generate_with(seed, None, Workload::default());
            let clients: Vec<String> = a.clients.iter().map(|c| format!("{c:?}")).collect();
            let async_clients = clients.iter().filter(|c| c.contains("Async")).count();
            assert!(async_clients <= 1, "seed {seed}");
            if async_clients == 1 {
                on_async += 1;
                let client = clients.iter().find(|c| c.contains("Async")).unwrap();
                assert!(!client.contains("TryLock {") && !client.contains(" Lock {"));
            }
            assert!(!format!("{:?}", generate(seed, None)).contains("Async"));
        }
        assert!(
            (60..=140).contains(&on_async),
            "{on_async} of 400 seeds use the async API"
        );
    }

    /// How many of `steps` (inside repeats too, once each) satisfy `f`.
    fn count_steps(steps: &[Step], f: &dyn Fn(&Step) -> bool) -> usize {
        steps
            .iter()
            .map(|s| usize::from(f(s)) + count_steps(s.body(), f))
            .sum()
    }

    /// `steps` with the async acquires as their blocking forms.
    fn to_blocking(steps: &mut [Step]) {
        replace_steps(steps, &|step| match step {
            Step::LockAsync(steps::LockAsync { lease_ms }) => Some(Step::Lock(steps::Lock {
                lease_ms: *lease_ms,
            })),
            Step::TryLockAsync(steps::TryLockAsync { wait_ms, lease_ms }) => {
                Some(Step::TryLock(steps::TryLock {
                    wait_ms: *wait_ms,
                    lease_ms: *lease_ms,
                }))
            }
            _ => None,
        });
    }

    /// `spec` as it would be with one lock: every thread on the default
    /// lock, the probe with one thread.
    fn take_second_lock_back(spec: &mut SimSpec) {
        let default = LockName::new(DEFAULT_LOCK).unwrap();
        for t in spec.clients.iter_mut().flat_map(|c| &mut c.threads) {
            t.lock = default.clone();
        }
        if let Some(probe) = spec.clients.last_mut() {
            probe.threads.truncate(1);
        }
    }

    /// A fault's variant name (`Failover`), as the registration names it.
    fn kind_name(f: &Fault) -> String {
        let debug = format!("{f:?}");
        debug.split('(').next().unwrap_or_default().to_owned()
    }

    /// The every-kind swarm: valid specs, the same clients as the classic
    /// one, every kind drawn by some seed, and replicas whenever a kind
    /// needs them.
    #[test]
    fn every_kind_plans_are_valid_and_draw_every_kind() {
        let mut drawn = std::collections::BTreeSet::new();
        for seed in 0..400 {
            let a = generate_without_multi(seed, ALL);
            assert_eq!(a, generate_without_multi(seed, ALL));
            let drew = generate_with(seed, None, ALL);
            assert_eq!(crate::model::validate::validate_spec(&drew), Ok(()));
            let mut one_lock = a.clients.clone();
            for t in one_lock.iter_mut().flat_map(|c| &mut c.threads) {
                t.lock = LockName::new(DEFAULT_LOCK).unwrap();
                // A drawn lock type's acquires, back on RLock (a spin
                // lock's async forms to RLock's async forms first).
                replace_steps(&mut t.steps, &|s| s.on_object(lockcore::LockKind::Lock));
                to_blocking(&mut t.steps);
            }
            assert_eq!(one_lock, generate(seed, None).clients);
            assert_eq!(
                crate::model::validate::validate_spec(&a),
                Ok(()),
                "seed {seed}"
            );
            for f in &a.faults.0 {
                drawn.insert(kind_name(f));
                assert!(!f.kind().needs_replicas() || a.redis.replicas > 0);
            }
        }
        assert_eq!(drawn.len(), GENERATORS.len());
    }

    /// Issue 9: adding a kind leaves the plan of every seed that does not
    /// draw it as it was, and changes nothing but its own fault in those
    /// that do (and drops a fault the plan refuses beside it). The registration without kind `k` stands for the one
    /// before `k` was added (wherever it was added: a shared stream would
    /// shift every later kind's draws).
    #[test]
    fn adding_a_kind_keeps_other_seeds_plans() {
        for (k, &(added, _)) in GENERATORS.iter().enumerate() {
            let mut older = GENERATORS.to_vec();
            older.remove(k);
            let mut drew = 0;
            for seed in 0..100 {
                let all = generate_with(seed, None, ALL);
                let mut before = all.clone();
                before.faults.0.clear();
                // The multi-lock's independent masters come before the
                // plan: kept.
                before.redis = crate::RedisSpec {
                    masters: all.redis.masters,
                    placement: all.redis.placement.clone(),
                    ..Default::default()
                };
                let names = &["A", "B", "C", "D"][..all.clients.len()];
                every_kind(&mut before, names, all.horizon_ms * 2 / 3, &older);
                let mut others = all.faults.0.clone();
                others.retain(|f| kind_name(f) != added);
                // A fault that cannot stand beside the added kind's (a
                // replica's link down across a promotion) is dropped
                // with it only.
                let mut kept = before.faults.0.clone();
                kept.retain(|f| {
                    let beside = others.contains(f);
                    if !beside {
                        let mut with = all.clone();
                        with.faults.0.push(f.clone());
                        let refused = crate::model::validate::validate_last_fault(&with);
                        assert!(refused.is_err(), "seed {seed}: {f:?} was dropped");
                    }
                    beside
                });
                assert_eq!(kept, others, "seed {seed} without {added}");
                if others.len() == all.faults.0.len() {
                    assert_eq!(before, all, "seed {seed} without {added}");
                } else {
                    drew += 1;
                }
            }
            assert!(drew > 0, "no seed drew {added}");
        }
    }
}
