//! `locksim bench`: how fast the simulator is, written to
//! `reports/PERFORMANCE.md`.
//!
//! Wall time is read here, between runs, never inside one: every run is
//! the same deterministic function of its spec as anywhere else. Each
//! figure is the median of several timed batches, each batch long enough
//! (about `batch_ms`) that the clock's resolution does not matter. The
//! file holds figures only, no date and no machine name, so a rerun on an
//! unchanged tree changes the figures and nothing else.

use std::fmt::Write as _;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use lockcore::Release;
use sim::{Usage, Workload};

use crate::{InputError, SeedBudget, SeedRange, Spread, Trial};

/// How long each measurement takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BenchConfig {
    /// Timed batches (and explore sweeps) per figure (the median is kept).
    pub batches: u32,
    /// About how long one batch lasts, in ms.
    pub batch_ms: u64,
    /// Seeds per explore sweep.
    pub explore_seeds: u64,
}

impl BenchConfig {
    /// The defaults: 5 batches of about 200 ms, sweeps of 2,000 seeds.
    pub fn standard() -> BenchConfig {
        BenchConfig {
            batches: 5,
            batch_ms: 200,
            explore_seeds: 2_000,
        }
    }

    /// A quick look: 3 batches of about 20 ms, sweeps of 200 seeds.
    pub fn quick() -> BenchConfig {
        BenchConfig {
            batches: 3,
            batch_ms: 20,
            explore_seeds: 200,
        }
    }
}

/// One built-in scenario's speed under `redisson`.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioSpeed {
    /// The scenario.
    pub name: String,
    /// Virtual time simulated, in ms.
    pub simulated_ms: u64,
    /// Events handled per run.
    pub events: u64,
    /// Median wall time per run, in µs.
    pub us_per_run: f64,
}

impl ScenarioSpeed {
    /// Simulated time over wall time.
    pub fn speedup(&self) -> f64 {
        self.simulated_ms as f64 * 1_000.0 / self.us_per_run.max(1e-9)
    }

    /// Wall time per event, in ns.
    pub fn ns_per_event(&self) -> f64 {
        self.us_per_run * 1_000.0 / self.events.max(1) as f64
    }
}

/// The benchmark's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct BenchReport {
    /// Every built-in scenario.
    pub scenarios: Vec<ScenarioSpeed>,
    /// `explore`'s speed on each measured workload.
    pub explore: Vec<ExploreSpeed>,
    /// How many threads "every core" was.
    pub threads: usize,
    /// Seeds per sweep.
    pub explore_seeds: u64,
    /// Sweeps per figure (the median is kept).
    pub sweeps: u32,
    /// A seed of the default workload, part by part.
    pub budget: SeedBudget,
}

/// `explore`'s speed on one workload, on one thread and on every core.
#[derive(Debug, Clone, PartialEq)]
pub struct ExploreSpeed {
    /// The command measured, without `--shrink 0`
    /// (`locksim explore --profile redisson`).
    pub command: &'static str,
    /// Runs per seed (each seed runs once under each profile explored).
    pub runs_per_seed: u64,
    /// Seeds per second on one thread.
    pub one_thread: f64,
    /// Seeds per second on every core.
    pub all_threads: f64,
}

/// The workloads `explore` is measured on: issue 13's goal holds on the
/// default workload and with `--misuse`; the command's own default (every
/// era, each seed under each) shows what a bare `locksim explore` costs.
const EXPLORED: [(&str, Option<Release>, Usage); 3] = [
    (
        "locksim explore --profile redisson",
        Some(Release::REDISSON),
        Usage::Correct,
    ),
    (
        "locksim explore --profile redisson --misuse",
        Some(Release::REDISSON),
        Usage::Misuse,
    ),
    ("locksim explore", None, Usage::Correct),
];

/// Issue 13's goal, in explored seeds per second per core.
const GOAL_SEEDS_PER_CORE: f64 = 20_000.0;

/// Measures every built-in scenario and `explore`.
pub fn bench(config: &BenchConfig) -> Result<BenchReport, InputError> {
    let mut scenarios = Vec::new();
    for s in crate::builtins() {
        let once = Trial::run(&s, None, Some(Release::REDISSON))?;
        let us_per_run = median_us(config, || {
            let _ = sim::run(&once.run.spec);
        });
        scenarios.push(ScenarioSpeed {
            name: s.name.clone(),
            simulated_ms: once.run.spec.horizon_ms,
            events: once.run.events,
            us_per_run,
        });
    }
    let threads = rayon::current_num_threads();
    let mut explore = Vec::new();
    for (command, profile, usage) in EXPLORED {
        let workload = Workload {
            usage,
            ..Workload::default()
        };
        explore.push(ExploreSpeed {
            command,
            runs_per_seed: if profile.is_some() {
                1
            } else {
                Release::ERAS.len() as u64
            },
            one_thread: seeds_per_second(config, 1, profile, workload)?,
            all_threads: seeds_per_second(config, threads, profile, workload)?,
        });
    }
    Ok(BenchReport {
        scenarios,
        explore,
        threads,
        explore_seeds: config.explore_seeds,
        sweeps: config.batches.max(1),
        budget: crate::bench_budget::seed_budget(config)?,
    })
}

/// The median over `config.batches` of the time per call of `f`, in µs,
/// each batch calling it as often as fits in about `config.batch_ms`.
pub(crate) fn median_us(config: &BenchConfig, mut f: impl FnMut()) -> f64 {
    let calls = calls_per_batch(config, &mut f);
    let per_call = (0..config.batches.max(1))
        .map(|_| batch_us(calls, &mut f))
        .collect();
    Spread::of(per_call).median
}

/// How many calls of `f` fill about `config.batch_ms`, from one timed
/// call (which also warms it up); at least one.
fn calls_per_batch(config: &BenchConfig, f: impl FnOnce()) -> u64 {
    calls_for(config, timed(f).1)
}

/// How many calls fill about `config.batch_ms` when one takes `secs`.
pub(crate) fn calls_for(config: &BenchConfig, secs: f64) -> u64 {
    ((config.batch_ms as f64 / 1_000.0) / secs.max(1e-7)).clamp(1.0, 1e7) as u64
}

/// `f`'s result and how long it took, in seconds.
pub(crate) fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let start = Instant::now();
    let value = f();
    (value, start.elapsed().as_secs_f64())
}

/// One batch of `calls` calls of `f`: the wall time per call, in µs.
pub(crate) fn batch_us(calls: u64, mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    for _ in 0..calls {
        f();
    }
    start.elapsed().as_secs_f64() * 1e6 / calls.max(1) as f64
}

/// Explored seeds per second on `threads` threads: the median of
/// `config.batches` sweeps of `config.explore_seeds` seeds each (one sweep
/// is short, and a shared machine's speed drifts between sweeps).
fn seeds_per_second(
    config: &BenchConfig,
    threads: usize,
    profile: Option<Release>,
    workload: Workload,
) -> Result<f64, InputError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| InputError::Threads(e.to_string()))?;
    let range = SeedRange::new(0, config.explore_seeds.max(1))?;
    let engine = (workload, &sim::Engine::Fast);
    let rates = (0..config.batches.max(1))
        .map(|_| {
            let stop = AtomicBool::new(false);
            let ((), secs) = timed(|| {
                let _ = crate::explore_workload_on(&pool, range, profile, engine, &stop, |_| {});
            });
            range.count() as f64 / secs.max(1e-9)
        })
        .collect();
    Ok(Spread::of(rates).median)
}

/// How the measuring binary was built: the figures of a profile-guided
/// build (`.ci/pgo` sets `LOCKSIM_PGO` for its final build) and of a plain
/// one differ by more than this machine's noise, so the file says which.
fn build() -> &'static str {
    match option_env!("LOCKSIM_PGO") {
        Some(_) => "profile-guided (`bash .ci/pgo`)",
        None => "`cargo build --release` (a profile-guided build, `bash .ci/pgo`, runs faster)",
    }
}

impl BenchReport {
    /// `reports/PERFORMANCE.md`: figures only, no date, no machine.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# locksim performance\n\nWritten by `cargo run --release -- bench`. Each figure is the \
             median of several timed batches on the machine that ran it; a rerun on an unchanged \
             tree changes only the figures.\n\nBuild: {}.\n",
            build()
        );
        let _ = writeln!(
            s,
            "## Built-in scenarios (profile `redisson`, each scenario's seed)\n\n\
             | scenario | simulated | events | µs per run | × real time | ns per event |\n\
             |---|---:|---:|---:|---:|---:|"
        );
        for sc in &self.scenarios {
            let _ = writeln!(
                s,
                "| {} | {:.0} s | {} | {:.1} | {:.0} | {:.0} |",
                sc.name,
                sc.simulated_ms as f64 / 1_000.0,
                sc.events,
                sc.us_per_run,
                sc.speedup(),
                sc.ns_per_event()
            );
        }
        let _ = writeln!(
            s,
            "\n## Exploration (each command with `--shrink 0`, {} seeds a sweep)\n\n\
             Seeds per second on one thread and on every core ({} threads), each the median \
             of {} sweeps; without `--profile`, each seed runs under every era. Issue 13's \
             goal: {:.0} seeds per second per core on the default workload and with \
             `--misuse`.\n\n\
             | command | runs per seed | 1 thread | all threads | per thread | goal |\n\
             |---|---:|---:|---:|---:|---|",
            self.explore_seeds, self.threads, self.sweeps, GOAL_SEEDS_PER_CORE
        );
        for e in &self.explore {
            let goal = if e.runs_per_seed > 1 {
                "-"
            } else if e.one_thread >= GOAL_SEEDS_PER_CORE {
                "met"
            } else {
                "not met"
            };
            let _ = writeln!(
                s,
                "| `{}` | {} | {:.0} | {:.0} | {:.0} | {} |",
                e.command,
                e.runs_per_seed,
                e.one_thread,
                e.all_threads,
                e.all_threads / self.threads.max(1) as f64,
                goal
            );
        }
        if let Some(default) = self.explore.first() {
            s.push_str(&self.budget.markdown(default.one_thread, self.sweeps));
        }
        let _ = writeln!(
            s,
            "\nThe turmoil engine's figures, against a bare turmoil program: \
             `cargo run --release -- bench --engine turmoil` (its section follows once it has run)."
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report has a row per built-in scenario with the figures a
    /// reader needs, and no date or machine name (so a rerun on an
    /// unchanged tree only changes figures). No timing is asserted.
    #[test]
    fn report_lists_every_scenario_and_explore() {
        let config = BenchConfig {
            batches: 1,
            batch_ms: 1,
            explore_seeds: 4,
        };
        let r = bench(&config).unwrap();
        assert_eq!(r.scenarios.len(), crate::builtins().len());
        assert!(
            r.scenarios
                .iter()
                .all(|s| s.events > 0 && s.simulated_ms > 0)
        );
        let md = r.markdown();
        for s in crate::builtins() {
            assert!(md.contains(&format!("| {} |", s.name)), "{}", s.name);
        }
        assert!(md.contains("seeds per second"));
        // Test builds are never profile-guided: the file says so.
        assert!(md.contains("Build: `cargo build --release`"), "{md}");
        // Every measured workload has its row, the goal judged on one.
        assert_eq!(r.explore.len(), EXPLORED.len());
        for (command, _, _) in EXPLORED {
            assert!(md.contains(&format!("| `{command}` |")), "{command}");
        }
        assert!(md.contains("not met") || md.contains("| met |"));
        // The default workload's seed, part by part.
        assert!(md.contains("## Where a seed's time goes"), "{md}");
    }
}
