//! The safety envelope of a lock configuration: for each
//! `lockWatchdogTimeout`, the longest stop-the-world pause, timer
//! starvation, partition, Redis pause and forward jump of Redis's clock
//! the holder's lock survives, and
//! how long another client waits to take over after the holder crashes.
//!
//! # How a point is found
//!
//! A probe is one two-client scenario: A locks with the watchdog and works
//! long past the fault; B waits in `lock()`. A fault of length `d` strikes
//! A (or Redis) at a phase `p` of A's renewal schedule: A's first renewal
//! period starts when its acquire returns, so `p` sweeps one period
//! (`lockWatchdogTimeout / 3`) from the start of the second one in even
//! steps. A survives when the key stays A's from its acquire until its
//! unlock (under `redisson-*`, losing it is a mutual-exclusion violation,
//! since B takes over; under `fenced`, A is told its lease is lost).
//!
//! Survival is monotone in `d` at a fixed phase (a longer fault only
//! delays renewals more), so the largest surviving `d` is found by
//! bisection to 1 ms. The **worst phase** is the one whose largest
//! surviving `d` is smallest. The limit falls as the phase nears the next
//! renewal and jumps back once the renewal is out (a sawtooth), so every
//! phase of an even grid over one period is bisected, and from the grid's
//! worst point the phase walks right in halving steps (down to 1 ms) for
//! as long as the limit keeps falling, which lands just before the jump.
//! This is done for several seeds (each draws its own latencies) and the
//! minimum kept. For a
//! pause it is the instant just before a renewal falls due: the last
//! refresh is then a full period old, so the pause can last only about
//! two thirds of the timeout. The takeover delay is the worst (largest)
//! time from A's crash to B's acquire over the same phases and seeds.

use lockcore::{LockName, Release};
use serde::Serialize;
use sim::{
    ClientSpec, DEFAULT_LOCK, Fault, FaultPlan, LatencyRange, RecordKind, ReleaseCause, Run,
    SimSpec, Step, ThreadSpec,
};

use sim::Invariant;

#[cfg(test)]
use crate::render_envelope_chart;
use crate::{Expectation, Expectations, InputError, Scenario};
use sim::steps;

/// What the envelope is computed for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvelopeConfig {
    /// The lock's profile (its Redisson release model).
    pub profile: Release,
    /// The `lockWatchdogTimeout` values, in ms.
    pub watchdogs_ms: Vec<u64>,
    /// One-way latency between each client and Redis.
    pub latency: LatencyRange,
    /// How many seeds each point is taken over (the worst counts).
    pub seeds: u64,
    /// How many phases of one renewal period are tried.
    pub phases: u64,
    /// The clients' settings (timeout, retries, ...) where they are not
    /// the release's defaults; the watchdog timeout is `watchdogs_ms`'s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings: Option<crate::Settings>,
}

impl EnvelopeConfig {
    /// The defaults: `redisson`, 1 s to 120 s, 1-5 ms latency, 2 seeds,
    /// 8 phases.
    pub fn new(profile: Release) -> EnvelopeConfig {
        EnvelopeConfig {
            profile,
            watchdogs_ms: vec![1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 60_000, 120_000],
            latency: LatencyRange {
                min_ms: 1,
                max_ms: 5,
            },
            seeds: 2,
            phases: 8,
            settings: None,
        }
    }

    /// Refuses what cannot be searched, with the accepted range.
    pub fn validate(&self) -> Result<(), InputError> {
        let bad = |message: String| Err(InputError::Envelope(message));
        if self.watchdogs_ms.is_empty() {
            return bad("give at least one lockWatchdogTimeout".to_owned());
        }
        if let Some(w) = self
            .watchdogs_ms
            .iter()
            .find(|w| !(MIN_WATCHDOG_MS..=MAX_WATCHDOG_MS).contains(*w))
        {
            return bad(format!(
                "lockWatchdogTimeout {w} ms is out of range: between {MIN_WATCHDOG_MS} and {MAX_WATCHDOG_MS} ms"
            ));
        }
        if self.latency.min_ms > self.latency.max_ms || self.latency.max_ms > 10_000 {
            return bad(format!(
                "latency {}-{} ms: min must not exceed max, and max is at most 10000 ms",
                self.latency.min_ms, self.latency.max_ms
            ));
        }
        if !(1..=32).contains(&self.seeds) || !(1..=64).contains(&self.phases) {
            return bad(format!(
                "seeds must be 1 to 32 and phases 1 to 64, got {} and {}",
                self.seeds, self.phases
            ));
        }
        Ok(())
    }
}

/// The smallest timeout searched: the watchdog renews every third of it.
pub const MIN_WATCHDOG_MS: u64 = 30;
/// The largest: probes run for a few timeouts, within sim's day.
pub const MAX_WATCHDOG_MS: u64 = 3_600_000;

/// What a probe does to A or to Redis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Probe {
    /// A stop-the-world pause of A.
    Pause,
    /// A's timers run late by `d` (CPU starvation).
    Starve,
    /// A's link to Redis drops everything.
    Partition,
    /// Redis executes no command.
    RedisPause,
    /// Redis's clock jumps forward by `d`.
    ClockJump,
}

impl Probe {
    /// Every probe, in table order.
    pub const ALL: [Probe; 5] = [
        Probe::Pause,
        Probe::Starve,
        Probe::Partition,
        Probe::RedisPause,
        Probe::ClockJump,
    ];

    /// The column name.
    pub fn name(self) -> &'static str {
        match self {
            Probe::Pause => "pause",
            Probe::Starve => "starve",
            Probe::Partition => "partition",
            Probe::RedisPause => "redis-pause",
            Probe::ClockJump => "clock-jump",
        }
    }

    /// The fault of length `d` at `at_ms` (none for a clock jump of 0,
    /// which moves nothing).
    fn fault(self, at_ms: u64, d: u64, watchdog_ms: u64) -> Option<Fault> {
        let client = "A".to_owned();
        Some(match self {
            Probe::Pause => Fault::Pause(sim::faults::Pause {
                client,
                at_ms,
                duration_ms: d.max(1),
            }),
            // The window covers the renewals that fall in it; each runs
            // `d` late.
            Probe::Starve => Fault::Starve(sim::faults::Starve {
                client,
                at_ms,
                duration_ms: watchdog_ms,
                min_delay_ms: d,
                max_delay_ms: d,
            }),
            Probe::Partition => Fault::Partition(sim::faults::Partition {
                client,
                at_ms,
                duration_ms: d.max(1),
            }),
            Probe::RedisPause => Fault::RedisPause(sim::faults::RedisPause {
                at_ms,
                duration_ms: d.max(1),
            }),
            Probe::ClockJump => Fault::ClockJump(sim::faults::ClockJump {
                at_ms,
                jump_ms: i64::try_from(d).ok().filter(|j| *j > 0)?,
            }),
        })
    }

    /// The longest fault tried: beyond it every configuration breaks.
    fn ceiling(self, watchdog_ms: u64) -> u64 {
        match self {
            Probe::Starve => (2 * watchdog_ms).min(MAX_DELAY_MS),
            _ => 3 * watchdog_ms + 30_000,
        }
    }
}

/// sim's longest starvation delay.
const MAX_DELAY_MS: u64 = sim::MAX_DELAY_MS;

/// The largest fault of one kind the hold survives, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Limit {
    /// The longest surviving fault, in ms (at the worst phase and seed).
    pub survives_ms: u64,
    /// Whether even the ceiling survived (then `survives_ms` is a lower bound).
    pub at_ceiling: bool,
    /// The worst phase, in ms after the second renewal period began.
    pub phase_ms: u64,
    /// The seed that gave it.
    pub seed: u64,
}

/// One `lockWatchdogTimeout`'s row of the envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    /// `lockWatchdogTimeout`, in ms.
    pub watchdog_ms: u64,
    /// Per probe, in [`Probe::ALL`] order.
    pub limits: Vec<(Probe, Limit)>,
    /// The worst delay from the holder's crash to another client's acquire, in ms.
    pub takeover_ms: u64,
}

/// The whole envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Envelope {
    /// What it was computed for.
    pub config: EnvelopeConfig,
    /// One row per timeout, in the order given.
    pub rows: Vec<Row>,
}

/// Computes the envelope of `config`.
pub fn envelope(config: &EnvelopeConfig) -> Result<Envelope, InputError> {
    config.validate()?;
    let rows = config
        .watchdogs_ms
        .iter()
        .map(|&w| row(config, w))
        .collect::<Result<_, _>>()?;
    Ok(Envelope {
        config: config.clone(),
        rows,
    })
}

fn row(config: &EnvelopeConfig, watchdog_ms: u64) -> Result<Row, InputError> {
    let mut limits = Vec::new();
    for probe in Probe::ALL {
        let mut worst: Option<Limit> = None;
        for seed in 0..config.seeds {
            let mut best: Option<Limit> = None;
            for phase_ms in phases(config, watchdog_ms) {
                let l = limit(config, watchdog_ms, probe, phase_ms, seed)?;
                if best.as_ref().is_none_or(|w| l.survives_ms < w.survives_ms) {
                    best = Some(l);
                }
            }
            let Some(mut best) = best else { continue };
            // The limit falls as the phase nears the next renewal and jumps
            // back up once the renewal is sent: walk right from the grid's
            // worst point in halving steps while it keeps falling.
            let mut step = (watchdog_ms / 3 / config.phases).max(1);
            while step > 1 {
                step /= 2;
                let l = limit(config, watchdog_ms, probe, best.phase_ms + step, seed)?;
                if l.survives_ms < best.survives_ms {
                    best = l;
                }
            }
            if worst
                .as_ref()
                .is_none_or(|w| best.survives_ms < w.survives_ms)
            {
                worst = Some(best);
            }
        }
        if let Some(w) = worst {
            limits.push((probe, w));
        }
    }
    let mut takeover_ms = 0;
    for seed in 0..config.seeds {
        for phase_ms in phases(config, watchdog_ms) {
            takeover_ms = takeover_ms.max(takeover(config, watchdog_ms, phase_ms, seed)?);
        }
    }
    Ok(Row {
        watchdog_ms,
        limits,
        takeover_ms,
    })
}

/// The phases tried: even steps over one renewal period.
fn phases(config: &EnvelopeConfig, watchdog_ms: u64) -> impl Iterator<Item = u64> {
    let period = watchdog_ms / 3;
    let n = config.phases;
    (0..n).map(move |k| period * k / n)
}

/// Bisects the longest surviving fault at one phase and seed.
fn limit(
    config: &EnvelopeConfig,
    watchdog_ms: u64,
    probe: Probe,
    phase_ms: u64,
    seed: u64,
) -> Result<Limit, InputError> {
    let survives = |d: u64| -> Result<bool, InputError> {
        let spec = probe_spec(config, watchdog_ms, Some((probe, phase_ms, d)), seed);
        Ok(held_throughout(&run(&spec)?))
    };
    let ceiling = probe.ceiling(watchdog_ms);
    let found = |survives_ms, at_ceiling| Limit {
        survives_ms,
        at_ceiling,
        phase_ms,
        seed,
    };
    if survives(ceiling)? {
        return Ok(found(ceiling, true));
    }
    if !survives(0)? {
        return Ok(found(0, false));
    }
    let (mut lo, mut hi) = (0, ceiling);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if survives(mid)? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(found(lo, false))
}

/// The delay from A's crash to B's acquire, with A crashing at the phase.
fn takeover(
    config: &EnvelopeConfig,
    watchdog_ms: u64,
    phase_ms: u64,
    seed: u64,
) -> Result<u64, InputError> {
    let mut spec = probe_spec(config, watchdog_ms, None, seed);
    if let Some(settings) = &config.settings {
        spec.clients
            .iter_mut()
            .for_each(|c| settings.apply_client(c));
    }
    let tick_ms = sim::client_timer_tick_ms(&spec, 0);
    let at_ms = fault_start(config, watchdog_ms, phase_ms, tick_ms);
    spec.faults = FaultPlan(vec![Fault::Crash(sim::faults::Crash {
        client: "A".into(),
        at_ms,
        restart_after_ms: None,
    })]);
    let run = run(&spec)?;
    let acquired = run.history.records.iter().find_map(|r| match &r.kind {
        RecordKind::Hold { who, .. } if *who.client == *"B" => Some(r.at.as_ms()),
        _ => None,
    });
    Ok(acquired.map_or(spec.horizon_ms, |t| t.saturating_sub(at_ms)))
}

/// When a fault at `phase_ms` starts: the second renewal period begins
/// one period after A's acquire returned (at most two latencies in), when
/// A's timer fires (up to a tick, `tick_ms`, late).
fn fault_start(config: &EnvelopeConfig, watchdog_ms: u64, phase_ms: u64, tick_ms: u64) -> u64 {
    2 * config.latency.max_ms + watchdog_ms / 3 + tick_ms + phase_ms
}

/// The probe scenario: A holds with the watchdog for long after the fault;
/// B waits in `lock()`.
pub fn probe_spec(
    config: &EnvelopeConfig,
    watchdog_ms: u64,
    fault: Option<(Probe, u64, u64)>,
    seed: u64,
) -> SimSpec {
    let lock = LockName::new(DEFAULT_LOCK).unwrap_or_else(|_| unreachable!());
    let longest = Probe::ALL
        .iter()
        .map(|p| p.ceiling(watchdog_ms))
        .max()
        .unwrap_or(0);
    // The longest tick any release has: A works long enough for all.
    let start = fault_start(config, watchdog_ms, watchdog_ms / 3, 100);
    let work_ms = start + longest + 2 * watchdog_ms + 1_000;
    let thread = |start_ms, steps| ThreadSpec {
        start_ms,
        lock: lock.clone(),
        steps,
        multi: None,
    };
    let critical = |work| {
        vec![
            Step::Lock(steps::Lock { lease_ms: None }),
            Step::Work(steps::Work { ms: work }),
            Step::Write(steps::Write {}),
            Step::Unlock(steps::Unlock {}),
        ]
    };
    let client = |name: &str, t| ClientSpec::new(name, vec![t]);
    let b_start = 2 * config.latency.max_ms + 2;
    let mut spec = SimSpec {
        seed,
        profile: config.profile,
        watchdog_timeout_ms: watchdog_ms,
        latency: config.latency,
        clients: vec![
            client("A", thread(0, critical(work_ms))),
            client("B", thread(b_start, critical(1))),
        ],
        faults: FaultPlan(Vec::new()),
        horizon_ms: work_ms + 2 * watchdog_ms + 60_000,
        redis: Default::default(),
        reseeds: Vec::new(),
    };
    if let Some(settings) = &config.settings {
        spec.clients
            .iter_mut()
            .for_each(|c| settings.apply_client(c));
    }
    let tick_ms = sim::client_timer_tick_ms(&spec, 0);
    spec.faults = FaultPlan(
        fault
            .and_then(|(p, phase, d)| {
                p.fault(
                    fault_start(config, watchdog_ms, phase, tick_ms),
                    d,
                    watchdog_ms,
                )
            })
            .into_iter()
            .collect(),
    );
    spec
}

fn run(spec: &SimSpec) -> Result<Run, InputError> {
    sim::run(spec).map_err(|e| InputError::Envelope(e.to_string()))
}

/// Whether Redis kept the key A's from A's acquire until A's unlock.
pub fn held_throughout(run: &Run) -> bool {
    let mut holding = false;
    for r in &run.history.records {
        match &r.kind {
            RecordKind::Hold { who, .. } if *who.client == *"A" => holding = true,
            RecordKind::Release { who, cause, .. } if *who.client == *"A" => {
                return *cause == ReleaseCause::Unlock;
            }
            RecordKind::Server { holder, .. }
                if holding && holder.as_ref().is_none_or(|h| *h.client != *"A") =>
            {
                return false;
            }
            _ => {}
        }
    }
    holding
}

impl Envelope {
    /// A scenario file at one point of the envelope: `probe` at its worst
    /// phase and seed for `row`, lasting the longest surviving length, or
    /// 1 ms more with `over`. The first must hold mutual exclusion and the
    /// second (under `redisson-*`) break it, as its expectation says, so
    /// `locksim run` checks the point.
    pub fn boundary_scenario(&self, row: &Row, probe: Probe, over: bool) -> Option<Scenario> {
        let (_, limit) = row.limits.iter().find(|(p, _)| *p == probe)?;
        let d = limit.survives_ms + u64::from(over);
        let sim = probe_spec(
            &self.config,
            row.watchdog_ms,
            Some((probe, limit.phase_ms, d)),
            limit.seed,
        );
        let breaks = over && !self.config.profile.has(lockcore::Switch::Fencing);
        let mut expect = Expectation::default();
        if breaks {
            expect.violated = vec![Invariant::MutualExclusion];
        } else {
            expect.held = vec![Invariant::MutualExclusion];
        }
        expect.why = Some(format!(
            "envelope point: a {} of {d} ms at lockWatchdogTimeout {} ms",
            probe.name(),
            row.watchdog_ms
        ));
        Some(Scenario {
            name: format!(
                "envelope-{}-{}ms-{}",
                probe.name(),
                row.watchdog_ms,
                if over { "over" } else { "limit" }
            ),
            description: format!(
                "A holds with the watchdog and B waits; a {} of {d} ms strikes at the worst phase of A's renewal schedule.",
                probe.name()
            ),
            source: Some("locksim envelope".to_owned()),
            sim,
            expect: Expectations {
                default: Some(expect),
                ..Expectations::default()
            },
            history: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Trial;

    fn small(profile: Release) -> EnvelopeConfig {
        EnvelopeConfig {
            watchdogs_ms: vec![30_000],
            seeds: 1,
            phases: 4,
            ..EnvelopeConfig::new(profile)
        }
    }

    /// At the default 30 s timeout, the worst-phase pause the lock survives
    /// is about two thirds of the timeout (the last refresh is a renewal
    /// period old when the pause begins), and a crashed holder's lock is
    /// taken over after about the timeout.
    #[test]
    fn pause_limit_is_two_thirds_of_the_timeout() {
        let env = envelope(&small(Release::REDISSON)).unwrap();
        let row = &env.rows[0];
        let (_, pause) = &row.limits[0];
        assert!((19_500..=20_500).contains(&pause.survives_ms), "{pause:?}");
        assert!((29_900..=30_100).contains(&row.takeover_ms), "{row:?}");
        assert!(env.table().contains("30.000s"), "{}", env.table());
        assert!(render_envelope_chart(&env).contains("longest pause survived"));
    }

    /// Points of the envelope, checked as `locksim run` checks a file:
    /// each kind's limit holds mutual exclusion and 1 ms more breaks it.
    #[test]
    fn envelope_points_replay_as_scenarios() {
        let env = envelope(&small(Release::REDISSON)).unwrap();
        let row = &env.rows[0];
        for probe in [
            Probe::Pause,
            Probe::Partition,
            Probe::RedisPause,
            Probe::ClockJump,
        ] {
            for over in [false, true] {
                let s = env.boundary_scenario(row, probe, over).unwrap();
                let file = Scenario::parse(&s.to_toml(), &s.name).unwrap();
                let t = Trial::run(&file, None, None).unwrap();
                assert!(t.as_expected(), "{}: {:?}", s.name, t.mismatches);
            }
        }
    }

    /// Impossible ranges and values are refused with the accepted range.
    #[test]
    fn bad_configurations_are_refused() {
        let mut c = small(Release::REDISSON);
        c.watchdogs_ms = vec![5];
        let e = envelope(&c).unwrap_err().to_string();
        assert!(e.contains("between 30 and 3600000 ms"), "{e}");
        let mut c = small(Release::REDISSON);
        c.watchdogs_ms.clear();
        assert!(envelope(&c).is_err());
        let mut c = small(Release::REDISSON);
        c.latency = LatencyRange {
            min_ms: 9,
            max_ms: 2,
        };
        assert!(
            envelope(&c)
                .unwrap_err()
                .to_string()
                .contains("min must not exceed max")
        );
        let mut c = small(Release::REDISSON);
        c.seeds = 0;
        assert!(envelope(&c).is_err());
    }
}
