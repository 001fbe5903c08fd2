//! Running one spec to the end.

use lockcore::SwitchSet;
use serde::{Deserialize, Serialize};

use crate::engines::fast::world::World;
use crate::model::ended::Ended;
use crate::{
    Coverage, CutShort, History, Invariant, Point, RealRedis, SimError, SimSpec, SimTime, Violation,
};

/// The result of one run: the history and what the checkers found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// The spec that ran.
    pub spec: SimSpec,
    /// What happened.
    pub history: History,
    /// Broken invariants, in the order of `Invariant::ALL`, then by time.
    pub violations: Vec<Violation>,
    /// Threads still working at the horizon: the rest of their scripts
    /// was not tested.
    #[serde(default)]
    pub cut_short: Vec<CutShort>,
    /// How many events the engine handled (timers, messages, steps,
    /// faults): the run's work, which benchmarks divide time by.
    #[serde(default)]
    pub events: u64,
    /// How many commands Redis ran for the clients (their scripts, `WAIT`s
    /// and subscriptions, and a fault's `DEL`): what `locksim bench`
    /// multiplies fake-redis's cost per command by. Zero from the hosted
    /// engines, which do not count them, and in a run read back from JSON.
    #[serde(skip)]
    pub commands: u64,
    /// The behaviour switches the run's clients asked about (their
    /// [`lockcore::LockClient::switches_read`], and the timer tick's):
    /// run again under a release that differs only in other switches, the
    /// spec makes the same run. Every switch when the engine cannot tell
    /// (the hosted engines, a run read back from JSON).
    #[serde(skip, default = "SwitchSet::all")]
    pub switches_read: SwitchSet,
    /// The `sometimes` points the run reached ([`Coverage`]): counted
    /// after the run from its clients' lock and its history, so counting
    /// changes nothing of the run.
    #[serde(default)]
    pub coverage: Coverage,
    /// Keys the run left in Redis without a TTL that no invariant forbids
    /// ([`crate::Residue`]: the fenced lock's token keys, #6510): reported
    /// beside the violations, never as one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub residue: Vec<crate::Residue>,
    /// When the run first reached each point of its lock's algorithm, in
    /// the order it did (the fast engine's runs alone; empty from the
    /// hosted engines and in a run read back from JSON): where a branch
    /// of the run forks ([`crate::branch`]).
    #[serde(skip)]
    pub first_reached: Vec<(Point, SimTime)>,
}

/// Runs `spec` deterministically to its horizon and checks the history.
///
/// The same spec (seed included) always gives the same history, byte for
/// byte. A spec that cannot be simulated is refused before anything runs.
pub fn run(spec: &SimSpec) -> Result<Run, SimError> {
    run_owned(spec.clone())
}

/// [`run`] of a spec the caller gives up: the run keeps it as it is. A
/// sweep makes a spec for each seed and wants it back only with the
/// run, so copying it into the run was work for nothing (a clone of
/// every client, thread script and fault, for each run).
pub fn run_owned(spec: SimSpec) -> Result<Run, SimError> {
    run_judged_on(spec, &Invariant::ALL)
}

/// [`run_owned`], judged on `invariants` alone (see
/// [`crate::Engine::run_judged_on`]).
pub(crate) fn run_judged_on(spec: SimSpec, invariants: &[Invariant]) -> Result<Run, SimError> {
    crate::model::validate::validate_spec(&spec)?;
    let ended = World::new(&spec)?.run();
    Ok(judged_on(spec, ended, invariants))
}

/// Runs `spec` on the turmoil engine and checks the history, as [`run`]
/// does on the fast one.
pub fn run_turmoil(spec: &SimSpec) -> Result<Run, SimError> {
    let ended = crate::engines::hosted::play_turmoil(spec)?;
    Ok(judged(spec, ended))
}

/// Runs `spec` against a real Redis and checks the history.
pub fn run_real(spec: &SimSpec, opts: &RealRedis) -> Result<Run, SimError> {
    let ended = crate::engines::hosted::play_real(spec, opts)?;
    Ok(judged(spec, ended))
}

/// A finished history of `spec`, checked and each violation classified:
/// every engine's run ends here.
pub(crate) fn judged(spec: &SimSpec, ended: Ended) -> Run {
    judged_on(spec.clone(), ended, &Invariant::ALL)
}

/// [`judged`] by the checkers of `invariants` alone.
fn judged_on(spec: SimSpec, ended: Ended, invariants: &[Invariant]) -> Run {
    let Ended {
        history,
        cut_short,
        events,
        commands,
        switches_read,
        reached,
        first_reached,
    } = ended;
    let coverage = Coverage::of(&spec, &history, reached);
    let mut violations = crate::judge::check::check_only(&history, invariants);
    for v in &mut violations {
        v.cause = crate::classify(&spec, &history, v);
    }
    let residue = crate::judge::residue::residue(&history);
    Run {
        spec,
        history,
        violations,
        cut_short,
        events,
        commands,
        switches_read,
        coverage,
        residue,
        first_reached: first_reached
            .into_iter()
            .map(|(place, at)| (Point::of_place(place), at))
            .collect(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::history::RecordKind;
    use crate::steps;
    use crate::{
        ClientSpec, DEFAULT_LOCK, Fault, FaultPlan, LatencyRange, SimTime, Step, ThreadSpec,
    };
    use lockcore::{LockName, Release};

    pub(crate) fn thread(start_ms: u64, steps: Vec<Step>) -> ThreadSpec {
        ThreadSpec {
            start_ms,
            lock: LockName::new(DEFAULT_LOCK).expect("non-empty"),
            steps,
            multi: None,
        }
    }

    pub(crate) fn client(name: &str, threads: Vec<ThreadSpec>) -> ClientSpec {
        ClientSpec::new(name, threads)
    }

    /// The run of `clients` under `release` for `horizon_ms`, with
    /// `faults`.
    pub(crate) fn run_under(
        release: &str,
        clients: Vec<ClientSpec>,
        horizon_ms: u64,
        faults: Vec<Fault>,
    ) -> Run {
        let mut s = spec(clients);
        s.profile = release.parse().expect("a release");
        s.horizon_ms = horizon_ms;
        s.faults = FaultPlan(faults);
        run(&s).expect("valid")
    }

    /// The cause of each of `run`'s violations of `invariant`, by name.
    pub(crate) fn causes(run: &Run, invariant: crate::Invariant) -> Vec<&'static str> {
        let v = run.violations.iter().filter(|v| v.invariant == invariant);
        v.map(|v| v.cause.name()).collect()
    }

    pub(crate) fn spec(clients: Vec<ClientSpec>) -> SimSpec {
        SimSpec {
            seed: 7,
            profile: Release::REDISSON,
            watchdog_timeout_ms: 30_000,
            latency: LatencyRange::default(),
            clients,
            faults: FaultPlan::default(),
            horizon_ms: 60_000,
            redis: Default::default(),
            reseeds: Vec::new(),
        }
    }

    pub(crate) fn critical(work_ms: u64) -> Vec<Step> {
        vec![
            Step::Lock(steps::Lock { lease_ms: None }),
            Step::Work(steps::Work { ms: work_ms }),
            Step::Write(steps::Write {}),
            Step::Unlock(steps::Unlock {}),
        ]
    }

    /// Two clients take turns on one lock with the watchdog: B waits while
    /// A works 15 s (renewed at 10 s), then gets it. No invariant breaks.
    #[test]
    fn two_clients_take_turns() {
        let s = spec(vec![
            client("A", vec![thread(0, critical(15_000))]),
            client("B", vec![thread(100, critical(1_000))]),
        ]);
        let r = run(&s).expect("valid spec");
        println!("{}", r.history);
        assert!(r.violations.is_empty(), "{:?}", r.violations);
    }

    /// A run counts the commands Redis ran for its clients: a lone client
    /// working 15 s under a 30 s watchdog sends its acquire, one renewal
    /// (at 10 s) and its unlock; a second client that must wait adds six:
    /// an acquire that finds the lock held, its subscription, the acquire
    /// after subscribing (still held), the one the unlock message wakes,
    /// its unsubscription and its unlock.
    #[test]
    fn a_run_counts_the_commands_redis_ran() {
        let alone = run(&spec(vec![client("A", vec![thread(0, critical(15_000))])])).unwrap();
        assert_eq!(renewals(&alone.history).len(), 1);
        assert_eq!(alone.commands, 3);
        let two = run(&spec(vec![
            client("A", vec![thread(0, critical(15_000))]),
            client("B", vec![thread(100, critical(1_000))]),
        ]))
        .unwrap();
        assert_eq!(two.commands, 9, "{}", two.history);
    }

    /// A run notes the switches its clients asked about: two clients
    /// taking turns ask the unlock latch's (each unlock's script depends
    /// on it) and the timer tick's, never `no-lock-resend`, which only a
    /// timed-out acquire or unlock asks; and the same spec under a
    /// release that differs only there makes the same history.
    #[test]
    fn a_run_notes_the_switches_it_asked() {
        use lockcore::Switch;
        let s = spec(vec![
            client("A", vec![thread(0, critical(15_000))]),
            client("B", vec![thread(100, critical(1_000))]),
        ]);
        let r = run(&s).expect("valid spec");
        assert!(r.switches_read.has(Switch::UnlockLatch));
        assert!(r.switches_read.has(Switch::FixedTimerTick));
        assert!(!r.switches_read.has(Switch::NoLockResend));
        let mut other = s.clone();
        other.profile = s.profile.with(Switch::NoLockResend);
        assert_eq!(run(&other).expect("valid").history, r.history);
    }

    pub(crate) fn records<'h>(
        h: &'h History,
        pick: impl Fn(&RecordKind) -> bool + 'h,
    ) -> impl Iterator<Item = &'h crate::Record> + 'h {
        h.records.iter().filter(move |r| pick(&r.kind))
    }

    pub(crate) fn renewals(h: &History) -> Vec<SimTime> {
        records(h, |k| matches!(k, RecordKind::RenewSent { .. }))
            .map(|r| r.at)
            .collect()
    }

    pub(crate) fn holder_changes(h: &History) -> Vec<(SimTime, Option<String>)> {
        records(h, |k| matches!(k, RecordKind::Server { .. }))
            .map(|r| match &r.kind {
                RecordKind::Server { holder, .. } => (r.at, holder.as_ref().map(|w| w.to_string())),
                _ => unreachable!(),
            })
            .collect()
    }

    /// A, under `release`, locks at `start_ms` and never unlocks; Redis
    /// has one replica; `faults` strike in an 8 s run.
    pub(crate) fn one_holder_replicated(
        release: &str,
        start_ms: u64,
        faults: Vec<Fault>,
    ) -> SimSpec {
        let mut s = spec(vec![client("A", vec![thread(start_ms, never_unlock())])]);
        s.horizon_ms = 8_000;
        s.profile = release.parse().expect("a release");
        s.redis.replicas = 1;
        s.faults = FaultPlan(faults);
        s
    }

    /// `s` run on the fast engine, or on turmoil's.
    pub(crate) fn run_on(s: &SimSpec, on_turmoil: bool) -> Run {
        let r = if on_turmoil {
            crate::run_turmoil(s)
        } else {
            run(s)
        };
        r.expect("a valid spec")
    }

    /// The field `s`'s validation refuses.
    pub(crate) fn refused_field(s: &SimSpec) -> String {
        match run(s) {
            Err(SimError::Invalid { field, .. }) => field,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    pub(crate) fn never_unlock() -> Vec<Step> {
        vec![
            Step::Lock(steps::Lock { lease_ms: None }),
            Step::Work(steps::Work { ms: 100_000 }),
        ]
    }

    /// The documents' experiment 1: lock() and never unlock; the thread
    /// finishes while the watchdog keeps the lock. lock-left-behind fires.
    #[test]
    fn never_unlocking_leaves_the_lock_behind() {
        let mut s = spec(vec![client(
            "A",
            vec![thread(
                0,
                vec![
                    Step::Lock(steps::Lock { lease_ms: None }),
                    Step::Write(steps::Write {}),
                ],
            )],
        )]);
        s.horizon_ms = 40_000;
        let r = run(&s).expect("valid");
        let kinds: Vec<_> = r.violations.iter().map(|v| v.invariant).collect();
        assert_eq!(
            kinds,
            vec![crate::Invariant::LockLeftBehind],
            "{}",
            r.history
        );
        // The watchdog kept it: renewals at 10, 20 and 30 s.
        assert_eq!(renewals(&r.history).len(), 3);
    }

    /// A lease shorter than the work (documents 002/004): the key expires,
    /// B acquires while A still believes it holds; mutual exclusion breaks
    /// and A's unlock fails with Redisson's exact message.
    #[test]
    fn short_lease_breaks_mutual_exclusion() {
        let lease = |steps: &mut Vec<Step>| {
            steps[0] = Step::Lock(steps::Lock {
                lease_ms: Some(1_000),
            })
        };
        let mut a = critical(3_000);
        lease(&mut a);
        let s = spec(vec![
            client("A", vec![thread(0, a)]),
            client("B", vec![thread(100, critical(3_000))]),
        ]);
        let r = run(&s).expect("valid");
        assert!(
            r.violations
                .iter()
                .any(|v| v.invariant == crate::Invariant::MutualExclusion),
            "{}",
            r.history
        );
        let errors = r.history.unlock_errors();
        assert_eq!(errors.len(), 1, "{}", r.history);
        assert!(
            errors[0]
                .message
                .starts_with("attempt to unlock lock, not locked by current thread by node id: ")
        );
    }

    /// One seed, one history: two runs of a spec hash the same, and the
    /// timeline is identical text.
    #[test]
    fn same_spec_same_history() {
        let s = crate::generate(42, None);
        let a = run(&s).expect("valid");
        let b = run(&s).expect("valid");
        assert_eq!(a.history.hash(), b.history.hash());
        assert_eq!(a.history.to_string(), b.history.to_string());
        assert_eq!(a.history.hash().len(), 40);
    }

    /// Bad specs get clear errors naming the field, never a panic.
    #[test]
    fn bad_specs_are_refused() {
        let ok = || spec(vec![client("A", vec![thread(0, critical(10))])]);
        let invalid = |s: SimSpec, field: &str, needle: &str| match run(&s) {
            Err(SimError::Invalid { field: f, reason }) => {
                assert_eq!(f, field, "{reason}");
                assert!(reason.contains(needle), "{reason}");
            }
            other => panic!("expected Invalid({field}: {needle}), got {other:?}"),
        };
        let mut s = ok();
        s.faults = FaultPlan(vec![Fault::Pause(crate::model::fault::Pause {
            client: "Z".into(),
            at_ms: 0,
            duration_ms: 1,
        })]);
        invalid(s, "faults[0].client", "unknown client 'Z' (clients: A)");
        let mut s = ok();
        s.latency = LatencyRange {
            min_ms: 9,
            max_ms: 1,
        };
        invalid(s, "latency", "min 9 ms is greater than max 1 ms");
        let mut s = ok();
        s.faults = FaultPlan(vec![Fault::DropRate(crate::model::fault::DropRate {
            client: "A".into(),
            at_ms: 0,
            duration_ms: 1,
            probability: 1.5,
        })]);
        invalid(s, "faults[0].probability", "between 0 and 1");
        invalid(spec(vec![]), "clients", "between 1 and 1000 clients");
        invalid(
            spec(vec![client("A", vec![])]),
            "clients[0].threads",
            "no threads",
        );
        let mut s = ok();
        s.watchdog_timeout_ms = 2;
        invalid(s, "watchdog_timeout_ms", "between 3 and");
        let mut s = ok();
        s.clients[0].threads[0].steps = vec![Step::Repeat(steps::Repeat {
            times: u32::MAX,
            steps: vec![Step::Write(steps::Write {})],
        })];
        invalid(s, "clients", "at most 1000000");
    }

    /// Issue 10: specs that would run without testing what they say are
    /// refused: a fault at or after the horizon never fires, a horizon of
    /// 0 runs nothing, a thread starting at the horizon never runs, a
    /// restart after the horizon never happens, a zero-length window.
    #[test]
    fn specs_that_test_nothing_are_refused() {
        let ok = || spec(vec![client("A", vec![thread(0, critical(10))])]);
        let field = |s: SimSpec| refused_field(&s);
        let mut s = ok();
        s.faults = FaultPlan(vec![Fault::RedisRestart(
            crate::model::fault::RedisRestart {
                at_ms: s.horizon_ms,
            },
        )]);
        assert_eq!(field(s), "faults[0].at_ms");
        let mut s = ok();
        s.horizon_ms = 0;
        assert_eq!(field(s), "horizon_ms");
        let mut s = ok();
        s.clients[0].threads[0].start_ms = s.horizon_ms;
        assert_eq!(field(s), "clients[0].threads[0].start_ms");
        let mut s = ok();
        s.faults = FaultPlan(vec![Fault::Crash(crate::model::fault::Crash {
            client: "A".into(),
            at_ms: 10,
            restart_after_ms: Some(s.horizon_ms),
        })]);
        assert_eq!(field(s), "faults[0].restart_after_ms");
        let mut s = ok();
        s.faults = FaultPlan(vec![Fault::Pause(crate::model::fault::Pause {
            client: "A".into(),
            at_ms: 10,
            duration_ms: 0,
        })]);
        assert_eq!(field(s), "faults[0].duration_ms");
        let mut s = ok();
        s.clients[0].threads[0].steps = vec![Step::Repeat(steps::Repeat {
            times: 0,
            steps: vec![Step::Write(steps::Write {})],
        })];
        assert_eq!(field(s), "clients[0].threads[0].steps[0].times");
    }

    /// Issue 10: a lease of `i64::MAX` ms made the acquire's PEXPIRE fail
    /// after its HINCRBY, so the key never expired. Leases, waits and the
    /// watchdog timeout are bounded by what Redis accepts, and the error
    /// gives the range; the largest accepted lease still expires.
    #[test]
    fn leases_are_bounded_by_what_redis_accepts() {
        let with_lease = |ms: u64| {
            let mut s = spec(vec![client(
                "A",
                vec![thread(
                    0,
                    vec![Step::Lock(steps::Lock { lease_ms: Some(ms) })],
                )],
            )]);
            s.horizon_ms = 1_000;
            s
        };
        match run(&with_lease(i64::MAX as u64)) {
            Err(SimError::Invalid { field, reason }) => {
                assert_eq!(field, "clients[0].threads[0].steps[0].lease_ms");
                assert!(
                    reason.contains(&format!("between 1 and {}", crate::MAX_LEASE_MS)),
                    "{reason}"
                );
            }
            other => panic!("expected the lease refused, got {other:?}"),
        }
        let r = run(&with_lease(crate::MAX_LEASE_MS)).expect("the largest lease is accepted");
        let held = r.history.records.iter().any(|rec| {
            matches!(&rec.kind, RecordKind::Server { holder: Some(_), ttl_ms, .. } if *ttl_ms > 0)
        });
        assert!(held, "the acquire set an expiry:\n{}", r.history);
    }

    /// Issue 10: names are identifiers. A newline could forge timeline
    /// lines; `B/t1` would read as client B's thread 1.
    #[test]
    fn names_must_be_identifiers() {
        for bad in [
            "B/t1",
            "A~1",
            "x\n--- verdict",
            "",
            " A",
            "1A",
            &"A".repeat(33),
        ] {
            let s = spec(vec![client(bad, vec![thread(0, critical(10))])]);
            match run(&s) {
                Err(SimError::Invalid { field, reason }) => {
                    assert_eq!(field, "clients[0].name");
                    assert!(reason.contains(crate::NAME_RULE), "{reason}");
                }
                other => panic!("{bad:?} accepted: {other:?}"),
            }
        }
        for good in ["A", "client_2", "db-writer"] {
            let s = spec(vec![client(good, vec![thread(0, critical(10))])]);
            assert!(run(&s).is_ok(), "{good}");
        }
    }

    fn any_u64() -> impl proptest::strategy::Strategy<Value = u64> {
        use proptest::prelude::*;
        prop_oneof![3 => 0u64..50, 3 => 0u64..5_000, 1 => Just(u64::MAX), 1 => any::<u64>()]
    }

    fn any_step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        let opt = || proptest::option::of(any_u64());
        let leaf = prop_oneof![
            opt().prop_map(|lease_ms| Step::Lock(steps::Lock { lease_ms })),
            (opt(), opt()).prop_map(|(wait_ms, lease_ms)| Step::TryLock(steps::TryLock {
                wait_ms,
                lease_ms
            })),
            any_u64().prop_map(|ms| Step::Work(steps::Work { ms })),
            Just(Step::Write(steps::Write {})),
            Just(Step::Unlock(steps::Unlock {})),
            Just(Step::ForceUnlock(steps::ForceUnlock {})),
            any_u64().prop_map(|ms| Step::Sleep(steps::Sleep { ms })),
        ];
        leaf.prop_recursive(2, 12, 4, |inner| {
            (
                prop_oneof![9 => 0u32..4, 1 => any::<u32>()],
                proptest::collection::vec(inner, 0..4),
            )
                .prop_map(|(times, steps)| Step::Repeat(steps::Repeat { times, steps }))
        })
    }

    fn any_fault() -> impl proptest::strategy::Strategy<Value = Fault> {
        use proptest::prelude::*;
        let who = prop_oneof![Just("A".to_owned()), Just("B".to_owned())];
        let small = || prop_oneof![9 => 0u64..3_000, 1 => any_u64()];
        (
            who,
            any_u64(),
            any_u64(),
            small(),
            small(),
            prop_oneof![9 => 0.0f64..=1.0, 1 => -1.0f64..2.0],
            0..13u8,
        )
            .prop_map(|(client, at_ms, d, lo, extra, probability, kind)| {
                let hi = lo.wrapping_add(extra);
                match kind {
                    0 => Fault::Crash(crate::model::fault::Crash {
                        client,
                        at_ms,
                        restart_after_ms: Some(d),
                    }),
                    1 => Fault::Pause(crate::model::fault::Pause {
                        client,
                        at_ms,
                        duration_ms: d,
                    }),
                    2 => Fault::Starve(crate::model::fault::Starve {
                        client,
                        at_ms,
                        duration_ms: d,
                        min_delay_ms: lo,
                        max_delay_ms: hi,
                    }),
                    3 => Fault::Partition(crate::model::fault::Partition {
                        client,
                        at_ms,
                        duration_ms: d,
                    }),
                    4 => Fault::DropRate(crate::model::fault::DropRate {
                        client,
                        at_ms,
                        duration_ms: d,
                        probability,
                    }),
                    5 => Fault::Latency(crate::model::fault::Latency {
                        client,
                        at_ms,
                        duration_ms: d,
                        min_ms: lo,
                        max_ms: hi,
                    }),
                    6 => Fault::RedisRestart(crate::model::fault::RedisRestart { at_ms }),
                    8 => Fault::ClockSkew(crate::model::fault::ClockSkew {
                        client,
                        at_ms,
                        duration_ms: d,
                        skew_ms: (lo as i64).wrapping_sub(hi as i64),
                    }),
                    10 => Fault::Failover(crate::model::fault::Failover {
                        at_ms,
                        duration_ms: d,
                        replica: (lo % 4 == 0).then_some(hi as u32),
                    }),
                    11 => Fault::ReplicationDrop(crate::model::fault::ReplicationDrop {
                        at_ms,
                        duration_ms: d,
                        replica: (lo % 4 == 0).then_some(hi as u32),
                    }),
                    9 => Fault::ClockDrift(crate::model::fault::ClockDrift {
                        client,
                        at_ms,
                        duration_ms: d,
                        drift_ppm: (lo as i64).wrapping_mul(1_000).wrapping_sub(hi as i64),
                    }),
                    12 => Fault::ReplicaDown(crate::model::fault::ReplicaDown {
                        at_ms,
                        duration_ms: d,
                        replica: (hi % 3) as u32,
                    }),
                    _ => Fault::RedisPause(crate::model::fault::RedisPause {
                        at_ms,
                        duration_ms: d,
                    }),
                }
            })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// Any spec, however extreme its numbers (u64::MAX leases, inverted
        /// ranges, probabilities outside 0..=1, huge repeats), either runs
        /// or is refused with an error: run() never panics.
        #[test]
        fn any_spec_runs_or_is_refused(
            seed: u64,
            wd in proptest::prop_oneof![9 => 3u64..50_000, 1 => any_u64()],
            lo in proptest::prop_oneof![9 => 0u64..20, 1 => any_u64()],
            extra in proptest::prop_oneof![9 => 0u64..50, 1 => any_u64()],
            steps in proptest::collection::vec(any_step(), 0..6),
            faults in proptest::collection::vec(any_fault(), 0..4),
            horizon in 0u64..20_000,
        ) {
            let mut s = spec(vec![
                client("A", vec![thread(0, steps.clone())]),
                client("B", vec![thread(5, steps)]),
            ]);
            s.seed = seed;
            s.watchdog_timeout_ms = wd;
            // Mostly ordered ranges; the wrapping add sometimes inverts them.
            s.latency = LatencyRange { min_ms: lo, max_ms: lo.wrapping_add(extra) };
            s.faults = FaultPlan(faults);
            s.horizon_ms = horizon;
            s.redis.replicas = (seed % 3) as u32;
            match run(&s) {
                Ok(r) if r.violations.iter().any(|v| v.events.iter().any(|&e| e >= r.history.len())) => {
                    proptest::prop_assert!(false, "a violation cites a record that does not exist: {:?}", r.violations);
                }
                Ok(r) => proptest::prop_assert_eq!(r.history.hash(), run(&s).expect("ran once").history.hash()),
                Err(e) => proptest::prop_assert!(!e.to_string().is_empty()),
            }
        }
    }
}
