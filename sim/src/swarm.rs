//! Random but reasonable scenarios from a seed, for exploration and for
//! the determinism tests.

use lockcore::{LockName, Profile};
use rand::{Rng, RngExt};
use rand_chacha::ChaCha8Rng;

use crate::rng::{self, Stream, between};
use crate::{ClientSpec, DEFAULT_LOCK, Fault, FaultPlan, LatencyRange, SimSpec, Step, ThreadSpec};

/// Watchdog timeouts to draw from: Redisson's default, shorter ones, and
/// the documents' tiny 100 ms.
const WATCHDOGS_MS: [u64; 5] = [30_000, 10_000, 3_000, 1_000, 100];

/// A random scenario drawn from `seed`: 2-4 clients of 1-2 threads each,
/// lock / try-lock / work / write / unlock scripts, a watchdog timeout
/// from a few choices (small ones included), a latency range, and 0-4
/// faults of every kind at random times; the horizon is 60-120 s.
/// `profile` fixes every client's profile, otherwise each run draws one.
///
/// The spec carries `seed` too, so running it reproduces the same run.
pub fn generate(seed: u64, profile: Option<Profile>) -> SimSpec {
    let mut r = rng::stream(seed, Stream::Swarm);
    let profile = profile.unwrap_or_else(|| Profile::ALL[r.random_range(0..Profile::ALL.len())]);
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
    let n_faults = r.random_range(0..=4);
    let faults = (0..n_faults)
        .map(|_| {
            let client = names[r.random_range(0..n_clients)];
            fault(&mut r, client, span)
        })
        .collect();
    SimSpec {
        seed,
        profile,
        watchdog_timeout_ms,
        latency,
        clients,
        faults: FaultPlan(faults),
        horizon_ms,
        redis: Default::default(),
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

fn fault(r: &mut ChaCha8Rng, client: &str, span: u64) -> Fault {
    let at_ms = r.random_range(0..=span);
    let duration_ms = between(r, 100, 15_000);
    let kinds = &crate::fault::GENERATORS[..crate::fault::SWARM_KINDS];
    let generate = kinds[r.random_range(0..kinds.len())];
    generate(
        r,
        crate::fault::Draw {
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
        assert_eq!(generate(3, Some(Profile::Fenced)).profile, Profile::Fenced);
    }
}
