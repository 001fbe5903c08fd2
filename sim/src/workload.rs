//! What generated scripts do with the lock, and which faults they meet.
//!
//! By default a generated run uses the lock as Redisson's documentation
//! says ([`Usage::Correct`]): the watchdog, or a lease well beyond the
//! work; an unlock after every acquire (as a `finally` would); waits that
//! are `lock()` or bounded `tryLock(wait)`; a `lockWatchdogTimeout` of a
//! second or more. Its faults are drawn swarm-style ([`SwarmKinds::Swarm`]):
//! each seed enables a random subset of the fault kinds, each with a random
//! intensity. After the last fault the run heals, and a probe client asks
//! for the lock: the liveness checker then holds the lock to becoming
//! acquirable again within a bound. Violations of such a run point at the
//! lock, or at a fault no lease survives, never at its script.
//!
//! [`Usage::Misuse`] is the generator `locksim explore` had first: it adds
//! explicit leases shorter than the work, forgotten unlocks, `forceUnlock`
//! and a 100 ms watchdog, and has no liveness phase. The regression corpus
//! of seeds was drawn from it ([`Workload::CLASSIC`]).

use std::collections::BTreeSet;

use lockcore::LockName;
use rand::{Rng, RngExt};

use crate::model::rng::between;
use crate::steps;
use crate::{ClientSpec, MAX_HORIZON_MS, SimSpec, Step, Strategy, SwarmKinds, ThreadSpec};

/// How generated scripts use the lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Usage {
    /// As documented, with a liveness phase after the faults.
    #[default]
    Correct,
    /// With the misuse patterns too (`--misuse`).
    Misuse,
}

/// What a generated run draws: its scripts' usage and its fault kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Workload {
    /// How scripts use the lock.
    pub usage: Usage,
    /// Which fault kinds the plan draws, and how.
    pub kinds: SwarmKinds,
    /// How each seed's scenario is drawn: uniform swarm (the default, the
    /// corpus's and docs' seeds) or a guided arm ([`Strategy`]).
    pub strategy: Strategy,
}

impl Workload {
    /// The first generator's: misuse included, the eight classic kinds.
    /// Explored seeds in the regression corpus keep their plans with it.
    pub const CLASSIC: Workload = Workload {
        usage: Usage::Misuse,
        kinds: SwarmKinds::Classic,
        strategy: Strategy::Uniform,
    };

    /// The workloads that draw none of the default kinds' settings (the
    /// clients', the connection mode, the server): the classic one (the
    /// regression corpus's) and `--kinds all`.
    #[cfg(test)]
    pub(crate) const UNSET: [Workload; 2] = [
        Workload::CLASSIC,
        Workload {
            usage: Usage::Correct,
            kinds: SwarmKinds::All,
            strategy: Strategy::Uniform,
        },
    ];

    /// The command-line flags that select it (none for the default), with
    /// a leading space: ` --misuse --kinds classic --strategy pct`.
    pub fn flags(self) -> String {
        let mut flags = String::new();
        if self.usage == Usage::Misuse {
            flags.push_str(" --misuse");
        }
        match self.kinds {
            SwarmKinds::Swarm => {}
            SwarmKinds::Classic => flags.push_str(" --kinds classic"),
            SwarmKinds::All => flags.push_str(" --kinds all"),
        }
        if self.strategy != Strategy::Uniform {
            flags.push_str(" --strategy ");
            flags.push_str(self.strategy.name());
        }
        flags
    }

    /// It with its strategy resolved to `seed`'s arm: the workload that
    /// draws `seed`'s scenario alone (a portfolio's seed replays with its
    /// arm, the same run).
    pub fn for_seed(self, seed: u64) -> Workload {
        Workload {
            strategy: self.strategy.arm(seed),
            ..self
        }
    }
}

/// Watchdog timeouts a correct script may run with: Redisson's default and
/// shorter ones whose renewal period (a third) still exceeds a round trip
/// plus the timer tick.
pub(crate) const CORRECT_WATCHDOGS_MS: [u64; 4] = [30_000, 10_000, 3_000, 1_000];

/// One correct critical section, sometimes repeated, after a sleep:
/// acquire (the watchdog, or a lease of twice the work plus at least a
/// second), work, write, unlock.
pub(crate) fn correct_script(r: &mut impl Rng, watchdog_ms: u64) -> Vec<Step> {
    let work_ms = between(r, 10, 3 * watchdog_ms.min(10_000));
    let lease_ms = r
        .random_bool(0.3)
        .then(|| 2 * work_ms + between(r, 1_000, 10_000));
    let acquire = if r.random_bool(0.5) {
        Step::Lock(steps::Lock { lease_ms })
    } else {
        Step::TryLock(steps::TryLock {
            wait_ms: Some(r.random_range(100..=20_000)),
            lease_ms,
        })
    };
    let body = vec![
        acquire,
        Step::Work(steps::Work { ms: work_ms }),
        Step::Write(steps::Write {}),
        Step::Unlock(steps::Unlock {}),
    ];
    after_a_sleep(r, body)
}

/// A critical section `body` after a sleep of up to 2 s, repeated two to
/// four times in 40% of scripts (both generators draw it so).
pub(crate) fn after_a_sleep(r: &mut impl Rng, body: Vec<Step>) -> Vec<Step> {
    let sleep = Step::Sleep(steps::Sleep {
        ms: r.random_range(0..=2_000),
    });
    if r.random_bool(0.4) {
        vec![
            sleep,
            Step::Repeat(steps::Repeat {
                times: r.random_range(2..=4),
                steps: body,
            }),
        ]
    } else {
        let mut steps = vec![sleep];
        steps.extend(body);
        steps
    }
}

/// The chance that a correct-usage scenario (any kinds but `classic`)
/// has one thread take its lock re-entrantly: inside its critical
/// section it locks twice more with the same lease and unlocks twice, all
/// within the outer hold's work (the paths of #3194 and #5623, which
/// need a re-entrant hold after a renewal's error or an unlock that only
/// counts down).
pub const NESTING_CHANCE: f64 = 0.3;

/// With `chance` ([`NESTING_CHANCE`] in the uniform swarm), drawn from a stream of its own so that every
/// other draw of the seed stays as it was, one thread's first critical
/// section `acquire, work, ...` becomes `acquire, work (10% to 60% of
/// it), lock, work 5%, lock, work 5%, unlock, work 5%, unlock, work the
/// rest, ...`: the same total work, the same lease on each hold, each
/// inner hold in a block of its own so that its failure skips only it.
pub(crate) fn nest_holds(spec: &mut SimSpec, chance: f64) {
    let mut r = crate::model::rng::stream(spec.seed, crate::model::rng::Stream::SwarmNesting);
    if !r.random_bool(chance) {
        return;
    }
    let c = r.random_range(0..spec.clients.len());
    let Some(client) = spec.clients.get_mut(c) else {
        return;
    };
    let t = r.random_range(0..client.threads.len());
    let percent = r.random_range(10..=60);
    if let Some(thread) = client.threads.get_mut(t) {
        nest_first(&mut thread.steps, percent);
    }
}

/// Nests the first `acquire, work` pair of `steps` (inside a repeat too),
/// the first inner hold `percent` into the work; whether it found one.
fn nest_first(steps: &mut Vec<Step>, percent: u64) -> bool {
    for i in 0..steps.len() {
        if let Step::Repeat(steps::Repeat { steps: inner, .. }) = &mut steps[i] {
            if nest_first(inner, percent) {
                return true;
            }
            continue;
        }
        let (Some(acquire), Some(Step::Work(steps::Work { ms }))) =
            (steps.get(i), steps.get(i + 1))
        else {
            continue;
        };
        if !acquire.is_acquire() {
            continue;
        }
        let lease_ms = acquire.lease_ms();
        // The first inner hold comes 10% to 60% into the work (after some
        // renewals, perhaps a failed one), each step after it 5% apart.
        let first = ms * percent / 100;
        let step = ms / 20;
        let rest = ms - first - 3 * step;
        let work = |ms| Step::Work(steps::Work { ms });
        // Each inner hold in a repeat of one round: an inner acquire that
        // fails skips its own round only, and the outer unlock still runs
        // (a `finally`).
        let once = |steps| Step::Repeat(steps::Repeat { times: 1, steps });
        let innermost = once(vec![
            Step::Lock(steps::Lock { lease_ms }),
            work(step),
            Step::Unlock(steps::Unlock {}),
        ]);
        let nested = [
            work(first),
            once(vec![
                Step::Lock(steps::Lock { lease_ms }),
                work(step),
                innermost,
                work(step),
                Step::Unlock(steps::Unlock {}),
            ]),
            work(rest),
        ];
        steps.splice(i + 1..i + 2, nested);
        return true;
    }
    false
}

/// The chance that a generated scenario (any kinds but `classic`) has one
/// client hand over between its threads: its second thread calls its
/// first acquire just as its first thread's first critical section ends,
/// as a pipeline's next stage would. On one lock the second thread joins
/// the renewal entry the first one's unlock is leaving (#6844's race); on
/// two, its new lock arrives while the unlock empties the keys a batched
/// round is reading (#6472, #6506).
pub const RELAY_CHANCE: f64 = 0.3;

/// With `chance` ([`RELAY_CHANCE`] in the uniform swarm), drawn from a stream of its own so that every
/// other draw of the seed stays as it was, one client with two threads
/// starts its second thread's first acquire within a few round trips of
/// its first thread's first unlock (its first sleep is dropped). In
/// [`RELAY_INTERLEAVE_CHANCE`] of them the plan also gets an `interleave`
/// window on that client over the hand-off, so that its callbacks can
/// cross there; the window is the application's scheduling, which the
/// oracle never blames, so it can only bring out defects.
pub(crate) fn relay_threads(spec: &mut SimSpec, chance: f64) {
    let mut r = crate::model::rng::stream(spec.seed, crate::model::rng::Stream::SwarmRelay);
    if !r.random_bool(chance) {
        return;
    }
    let pairs: Vec<usize> = (0..spec.clients.len())
        .filter(|&c| spec.clients[c].threads.len() >= 2)
        .collect();
    if pairs.is_empty() {
        return;
    }
    let c = pairs[r.random_range(0..pairs.len())];
    let lag = r.random_range(0..=60u64);
    let horizon_ms = spec.horizon_ms;
    let threads = &mut spec.clients[c].threads;
    let Some(until) = first_unlock_ms(&threads[0].steps) else {
        return;
    };
    let start = (threads[0].start_ms + until + lag).saturating_sub(20);
    // The hand-off must leave the relayed section time to run before the
    // horizon (threads start within the first sixth of it).
    if start >= horizon_ms / 2 {
        return;
    }
    let second = &mut threads[1];
    second.start_ms = start;
    drop_first_sleep(&mut second.steps);
    if r.random_bool(RELAY_INTERLEAVE_CHANCE) {
        let at_ms = start.saturating_sub(r.random_range(0..=2_000));
        spec.faults
            .0
            .push(crate::Fault::Interleave(crate::model::fault::Interleave {
                client: spec.clients[c].name.clone(),
                at_ms,
                duration_ms: r.random_range(2_000..=6_000),
                min_delay_ms: 0,
                max_delay_ms: r.random_range(50..=300),
            }));
        if crate::model::validate::validate_faults(spec).is_err() {
            spec.faults.0.pop();
        }
    }
}

/// The share of relaying seeds whose plan gets an `interleave` window over
/// the hand-off (see [`relay_threads`]).
pub const RELAY_INTERLEAVE_CHANCE: f64 = 0.5;

/// When a script first calls `unlock`, in ms of sleep and work from its
/// start (the first round of a repeat), if it does.
fn first_unlock_ms(steps: &[Step]) -> Option<u64> {
    let mut at = 0u64;
    for step in steps {
        match step {
            Step::Sleep(steps::Sleep { ms }) | Step::Work(steps::Work { ms }) => at += ms,
            Step::Unlock(steps::Unlock {}) => return Some(at),
            Step::Repeat(steps::Repeat { steps, .. }) => {
                return first_unlock_ms(steps).map(|more| at + more);
            }
            _ => {}
        }
    }
    None
}

/// Zeroes the sleep a script opens with.
fn drop_first_sleep(steps: &mut [Step]) {
    if let Some(Step::Sleep(steps::Sleep { ms })) = steps.first_mut() {
        *ms = 0;
    }
}

/// The probe's name: a client no fault touches.
pub const PROBE: &str = "P";

/// How long after heal the run goes on, in leases plus a grace: long
/// enough for the liveness checker's bound (a lease plus 10 s) to pass
/// twice.
fn liveness_window_ms(spec: &SimSpec) -> u64 {
    let lease = spec
        .clients
        .iter()
        .flat_map(|c| &c.threads)
        .flat_map(|t| leases(&t.steps))
        .chain([spec.watchdog_timeout_ms])
        .max()
        .unwrap_or(spec.watchdog_timeout_ms);
    2 * (lease + crate::judge::check::liveness::GRACE_MS)
}

/// Every explicit lease in `steps`.
fn leases(steps: &[Step]) -> Vec<u64> {
    steps
        .iter()
        .flat_map(|s| match s {
            Step::Repeat(steps::Repeat { steps, .. }) => leases(steps),
            s if s.is_acquire() => s.lease_ms().into_iter().collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// The liveness phase: the instant the last fault's effect ends (heal), a
/// probe client with a thread for each lock of the scenario that takes
/// it then (and writes, and unlocks), and a horizon far enough after it
/// to judge.
pub(crate) fn add_liveness_phase(spec: &mut SimSpec) {
    let heal = spec
        .faults
        .0
        .iter()
        .map(|f| f.effect_end_ms().unwrap_or(f.at_ms()))
        .max()
        .unwrap_or(0);
    let start_ms = heal.max(spec.horizon_ms * 2 / 3);
    let locks: BTreeSet<&LockName> = spec
        .clients
        .iter()
        .flat_map(|c| &c.threads)
        .flat_map(|t| match &t.multi {
            Some(multi) => multi.locks.iter().collect(),
            None => vec![&t.lock],
        })
        .collect();
    let threads = locks
        .into_iter()
        .map(|lock| ThreadSpec {
            start_ms,
            lock: lock.clone(),
            steps: vec![
                Step::Lock(steps::Lock { lease_ms: None }),
                Step::Work(steps::Work { ms: 100 }),
                Step::Write(steps::Write {}),
                Step::Unlock(steps::Unlock {}),
            ],
            multi: None,
        })
        .collect();
    spec.clients.push(ClientSpec::new(PROBE, threads));
    let end = start_ms.saturating_add(liveness_window_ms(spec));
    spec.horizon_ms = spec.horizon_ms.max(end).min(MAX_HORIZON_MS);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread's critical section held three deep: the first inner hold
    /// `percent` into the work, the others 5% apart, the same lease on
    /// each, each inner hold in a block of one round (so a failed inner
    /// acquire still reaches the outer unlock), the total work unchanged.
    #[test]
    fn a_nested_section_keeps_its_work_and_lease() {
        let lock = Step::Lock(steps::Lock {
            lease_ms: Some(5_000),
        });
        let mut steps = vec![
            lock.clone(),
            Step::Work(steps::Work { ms: 1_000 }),
            Step::Write(steps::Write {}),
            Step::Unlock(steps::Unlock {}),
        ];
        assert!(nest_first(&mut steps, 20));
        let once = |steps| Step::Repeat(steps::Repeat { times: 1, steps });
        let work = |ms| Step::Work(steps::Work { ms });
        let expected = vec![
            lock.clone(),
            work(200),
            once(vec![
                lock.clone(),
                work(50),
                once(vec![lock.clone(), work(50), Step::Unlock(steps::Unlock {})]),
                work(50),
                Step::Unlock(steps::Unlock {}),
            ]),
            work(650),
            Step::Write(steps::Write {}),
            Step::Unlock(steps::Unlock {}),
        ];
        assert_eq!(steps, expected);
        assert!(!nest_first(&mut vec![Step::Write(steps::Write {})], 20));
    }

    /// Whether `steps` hold a repeat of one round that starts with a
    /// `lock` (of any form): a nested hold.
    fn nests(steps: &[Step]) -> bool {
        steps.iter().any(|s| {
            let nested = matches!(s, Step::Repeat(r) if r.times == 1 && matches!(
                r.steps.first(),
                Some(Step::Lock(_) | Step::LockInterruptibly(_) | Step::LockAsync(_))
            ));
            nested || nests(s.body())
        })
    }

    /// About 30% of correct seeds nest one thread's holds; `--misuse`
    /// never does.
    #[test]
    fn some_correct_seeds_nest_a_threads_holds() {
        let deep = |w: Workload, seed| {
            let spec = crate::generate_with(seed, None, w);
            let threads = spec.clients.iter().flat_map(|c| &c.threads);
            threads.into_iter().any(|t| nests(&t.steps))
        };
        let misuse = Workload {
            usage: Usage::Misuse,
            kinds: SwarmKinds::Swarm,
            strategy: Strategy::Uniform,
        };
        let nested = (0..300).filter(|s| deep(Workload::default(), *s)).count();
        assert!((50..=130).contains(&nested), "{nested} of 300 seeds nest");
        assert!(!(0..300).any(|s| deep(misuse, s)));
    }

    /// A script's first unlock comes after its sleeps and work, inside a
    /// repeat's first round too.
    #[test]
    fn the_first_unlock_is_after_the_sleep_and_work_before_it() {
        let work = |ms| Step::Work(steps::Work { ms });
        let section = vec![
            Step::Lock(steps::Lock { lease_ms: None }),
            work(300),
            Step::Unlock(steps::Unlock {}),
        ];
        let mut steps = vec![Step::Sleep(steps::Sleep { ms: 50 })];
        steps.push(Step::Repeat(steps::Repeat {
            times: 3,
            steps: section.clone(),
        }));
        assert_eq!(first_unlock_ms(&steps), Some(350));
        assert_eq!(first_unlock_ms(&section), Some(300));
        assert_eq!(first_unlock_ms(&[Step::Write(steps::Write {})]), None);
        drop_first_sleep(&mut steps);
        assert_eq!(first_unlock_ms(&steps), Some(300));
    }

    /// About 30% of seeds relay: one client with two threads starts its
    /// second thread as its first thread first unlocks, with no sleep
    /// before its first acquire, half of them with an interleave window on
    /// that client over the hand-off; nothing else of the spec changes.
    #[test]
    fn some_seeds_relay_between_a_clients_threads() {
        let mut relayed = 0;
        let mut eligible = 0;
        let mut interleaved = 0;
        for seed in 0..400 {
            let spec = crate::generate_with(seed, None, Workload::CLASSIC);
            let mut after = spec.clone();
            relay_threads(&mut after, RELAY_CHANCE);
            let changed: Vec<usize> = (0..spec.clients.len())
                .filter(|&c| spec.clients[c] != after.clients[c])
                .collect();
            let pairs = spec.clients.iter().any(|c| c.threads.len() == 2);
            eligible += usize::from(pairs);
            if changed.is_empty() {
                continue;
            }
            relayed += 1;
            assert_eq!(changed.len(), 1, "seed {seed}");
            let (c, t) = (changed[0], &after.clients[changed[0]].threads);
            let until = t[0].start_ms + first_unlock_ms(&t[0].steps).unwrap();
            assert!(
                (until.saturating_sub(20)..=until + 40).contains(&t[1].start_ms),
                "seed {seed}"
            );
            assert!(matches!(
                t[1].steps.first(),
                Some(Step::Sleep(steps::Sleep { ms: 0 }))
            ));
            // At most one fault more: an interleave on that client over
            // the hand-off.
            let added = &after.faults.0[spec.faults.0.len()..];
            assert!(added.len() <= 1, "seed {seed}");
            if let Some(crate::Fault::Interleave(i)) = added.first() {
                interleaved += 1;
                assert_eq!(i.client, after.clients[c].name);
                assert!(i.at_ms <= t[1].start_ms && t[1].start_ms < i.at_ms + i.duration_ms);
            } else {
                assert!(added.is_empty(), "seed {seed}: {added:?}");
            }
            let mut back = after.clone();
            back.faults.0.truncate(spec.faults.0.len());
            back.clients[c].threads[1].start_ms = spec.clients[c].threads[1].start_ms;
            back.clients[c].threads[1].steps = spec.clients[c].threads[1].steps.clone();
            assert_eq!(back, spec, "seed {seed}");
        }
        let share = relayed as f64 / eligible as f64;
        assert!(
            (0.2..=0.4).contains(&share),
            "{relayed} of {eligible} seeds relay"
        );
        let share = interleaved as f64 / relayed as f64;
        assert!(
            (0.3..=0.7).contains(&share),
            "{interleaved} of {relayed} interleave"
        );
    }

    /// The flags name what differs from the default, in replay order.
    #[test]
    fn flags_name_what_differs_from_the_default() {
        assert_eq!(Workload::default().flags(), "");
        assert_eq!(Workload::CLASSIC.flags(), " --misuse --kinds classic");
        let all = Workload {
            usage: Usage::Correct,
            kinds: SwarmKinds::All,
            strategy: Strategy::Uniform,
        };
        assert_eq!(all.flags(), " --kinds all");
    }
}
