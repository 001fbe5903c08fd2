//! Random but reasonable scenarios from a seed, for exploration and for
//! the determinism tests.

use lockcore::{LockName, Release};
use rand::{Rng, RngExt};
use rand_chacha::ChaCha8Rng;

use crate::fault::{Draw, GENERATORS, Generator};
use crate::rng::{self, Stream, between};
use crate::{ClientSpec, DEFAULT_LOCK, Fault, FaultPlan, LatencyRange, SimSpec, Step, ThreadSpec};

/// Watchdog timeouts to draw from: Redisson's default, shorter ones, and
/// the documents' tiny 100 ms.
const WATCHDOGS_MS: [u64; 5] = [30_000, 10_000, 3_000, 1_000, 100];

/// Which fault kinds a generated plan draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SwarmKinds {
    /// 0-4 faults among the first eight kinds (crash to redis-pause),
    /// drawn from the swarm's own stream, as `locksim explore` always has:
    /// explored seeds and the regression corpus keep their plans.
    #[default]
    Classic,
    /// Every kind, each from a random stream of its own named after it:
    /// each kind is in the plan (once) with probability [`KIND_CHANCE`],
    /// at a time and with fields drawn from its stream. Adding a kind
    /// leaves the plan of every seed that does not draw it as it was.
    /// Redis gets one or two replicas when a kind needs them.
    All,
}

/// The chance that the every-kind swarm puts a given kind in a plan (about
/// two and a half faults a plan with seventeen kinds).
pub const KIND_CHANCE: f64 = 0.15;

/// A random scenario drawn from `seed`: 2-4 clients of 1-2 threads each,
/// lock / try-lock / work / write / unlock scripts, a watchdog timeout
/// from a few choices (small ones included), a latency range, and 0-4
/// faults of the classic kinds at random times; the horizon is 60-120 s.
/// `profile` fixes every client's profile, otherwise each run draws one.
///
/// The spec carries `seed` too, so running it reproduces the same run.
pub fn generate(seed: u64, profile: Option<Release>) -> SimSpec {
    generate_with(seed, profile, SwarmKinds::Classic)
}

/// [`generate`], with the fault plan drawn from `kinds`. The clients and
/// their scripts are the same for both.
pub fn generate_with(seed: u64, profile: Option<Release>, kinds: SwarmKinds) -> SimSpec {
    let mut r = rng::stream(seed, Stream::Swarm);
    let profile = profile.unwrap_or_else(|| Release::ERAS[r.random_range(0..Release::ERAS.len())]);
    let watchdog_timeout_ms = WATCHDOGS_MS[r.random_range(0..WATCHDOGS_MS.len())];
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
            ClientSpec {
                name: (*name).to_owned(),
                profile: None,
                watchdog_timeout_ms: None,
                threads: (0..n_threads)
                    .map(|_| ThreadSpec {
                        start_ms: r.random_range(0..=span / 4),
                        lock: lock.clone(),
                        steps: script(&mut r, watchdog_timeout_ms),
                    })
                    .collect(),
            }
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
    };
    match kinds {
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
    }
    spec
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
        spec.faults.0.push(drawn(&mut r, *generate, client, span));
    }
    if spec.faults.0.iter().any(|f| f.kind().needs_replicas()) {
        let mut r = rng::stream(spec.seed, Stream::SwarmRedis);
        spec.redis.replicas = r.random_range(1..=2);
    }
}

/// One critical section (acquire, work, write, maybe unlock), sometimes
/// repeated, with a sleep before it.
fn script(r: &mut impl Rng, watchdog_ms: u64) -> Vec<Step> {
    let lease_ms = r
        .random_bool(0.3)
        .then(|| between(r, 50, 2 * watchdog_ms.min(10_000)));
    let acquire = if r.random_bool(0.5) {
        Step::Lock { lease_ms }
    } else {
        Step::TryLock {
            wait_ms: r.random_bool(0.8).then(|| r.random_range(100..=20_000)),
            lease_ms,
        }
    };
    let mut body = vec![
        acquire,
        Step::Work {
            ms: between(r, 10, 3 * watchdog_ms.min(10_000)),
        },
        Step::Write,
    ];
    // Mostly unlock; sometimes forget (experiment 1) or force-unlock.
    match r.random_range(0..10) {
        0 => {}
        1 => body.push(Step::ForceUnlock),
        _ => body.push(Step::Unlock),
    }
    let sleep = Step::Sleep {
        ms: r.random_range(0..=2_000),
    };
    if r.random_bool(0.4) {
        vec![
            sleep,
            Step::Repeat {
                times: r.random_range(2..=4),
                steps: body,
            },
        ]
    } else {
        let mut steps = vec![sleep];
        steps.extend(body);
        steps
    }
}

/// A classic fault: its time and length, then its kind, from the swarm's
/// stream.
fn fault(r: &mut ChaCha8Rng, client: &str, span: u64) -> Fault {
    let at_ms = r.random_range(0..=span);
    let duration_ms = between(r, 100, 15_000);
    let kinds = &GENERATORS[..crate::fault::SWARM_KINDS];
    let (_, generate) = kinds[r.random_range(0..kinds.len())];
    generate(
        r,
        Draw {
            client: client.to_owned(),
            at_ms,
            duration_ms,
        },
    )
}

/// A fault of `generate`'s kind on `client`, its time, length and fields
/// drawn from `r`.
fn drawn(r: &mut ChaCha8Rng, generate: Generator, client: &str, span: u64) -> Fault {
    let at_ms = r.random_range(0..=span);
    let duration_ms = between(r, 100, 15_000);
    generate(
        r,
        Draw {
            client: client.to_owned(),
            at_ms,
            duration_ms,
        },
    )
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
            assert_eq!(crate::validate::validate_spec(&a), Ok(()), "seed {seed}");
        }
        assert_ne!(generate(1, None), generate(2, None));
        assert_eq!(generate(3, Some(Release::FENCED)).profile, Release::FENCED);
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
            let a = generate_with(seed, None, SwarmKinds::All);
            assert_eq!(a, generate_with(seed, None, SwarmKinds::All));
            assert_eq!(a.clients, generate(seed, None).clients);
            assert_eq!(crate::validate::validate_spec(&a), Ok(()), "seed {seed}");
            for f in &a.faults.0 {
                drawn.insert(kind_name(f));
                assert!(!f.kind().needs_replicas() || a.redis.replicas > 0);
            }
        }
        assert_eq!(drawn.len(), GENERATORS.len());
    }

    /// Issue 9: adding a kind leaves the plan of every seed that does not
    /// draw it as it was, and changes nothing but its own fault in those
    /// that do. The registration without kind `k` stands for the one
    /// before `k` was added (wherever it was added: a shared stream would
    /// shift every later kind's draws).
    #[test]
    fn adding_a_kind_keeps_other_seeds_plans() {
        for (k, &(added, _)) in GENERATORS.iter().enumerate() {
            let mut older = GENERATORS.to_vec();
            older.remove(k);
            let mut drew = 0;
            for seed in 0..100 {
                let all = generate_with(seed, None, SwarmKinds::All);
                let mut before = all.clone();
                before.faults.0.clear();
                before.redis = Default::default();
                let names = &["A", "B", "C", "D"][..all.clients.len()];
                every_kind(&mut before, names, all.horizon_ms * 2 / 3, &older);
                let mut others = all.faults.0.clone();
                others.retain(|f| kind_name(f) != added);
                assert_eq!(before.faults.0, others, "seed {seed} without {added}");
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
