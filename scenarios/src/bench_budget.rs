//! Where an explored seed's time goes: `locksim bench`'s parts of a seed
//! of the default workload, each timed alone, against issue 13's budget
//! of 50 µs a seed (20,000 seeds per second per core).
//!
//! Over the same seeds: generating their specs (`explored_spec_with`), running them (judged, as
//! `explore` runs them), the checkers alone over their histories, and
//! fake-redis alone running the lock's own commands (an acquire, a
//! renewal, an unlock, by `EVALSHA`) in a loop of its own. That last
//! cost, times the commands a seed sends, is a floor for fake-redis's
//! share of a seed: in a run its code and data start colder, between
//! lockcore's and the simulator's. Like the rest of the benchmark, wall
//! time is read between calls, never inside a run.

use std::fmt::Write as _;
use std::sync::Arc;

use bytes::Bytes;
use fake_redis::{ConnId, Engine, LockScript, ManualClock, Value};
use lockcore::Release;
use sim::{Usage, Workload};

use crate::InputError;
use crate::bench::{BenchConfig, batch_us, calls_for, timed};

/// Issue 13's budget for one explored seed, in µs (20,000 a second).
pub const SEED_BUDGET_US: f64 = 1e6 / 20_000.0;

/// The parts of an explored seed of `locksim explore --profile redisson`,
/// each timed alone (µs and ns are medians of timed batches).
#[derive(Debug, Clone, PartialEq)]
pub struct SeedBudget {
    /// Seeds measured (`0..seeds`).
    pub seeds: u64,
    /// Events handled per seed, on average.
    pub events_per_seed: f64,
    /// Commands Redis ran per seed, on average ([`sim::Run::commands`]).
    pub commands_per_seed: f64,
    /// Generating a seed's spec, µs.
    pub generate_us: f64,
    /// Running a spec, judged (`sim::run_owned`), µs.
    pub run_us: f64,
    /// The checkers alone over a run's history (`sim::check_all`), µs.
    pub check_us: f64,
    /// One lock command on fake-redis alone, ns.
    pub command_ns: f64,
}

impl SeedBudget {
    /// fake-redis's commands of a seed at their bare speed, µs.
    pub fn redis_floor_us(&self) -> f64 {
        self.commands_per_seed * self.command_ns / 1_000.0
    }

    /// The markdown section, given `explore`'s own figure (seeds per
    /// second on one thread).
    pub fn markdown(&self, explore_one_thread: f64, batches: u32) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "\n## Where a seed's time goes (`locksim explore --profile redisson`, seeds 0 to {})\n\n\
             Each part timed alone over the same seeds, the median of {batches} batches, \
             against issue 13's budget of {SEED_BUDGET_US:.0} µs a seed (20000 seeds per \
             second per core). A seed is {:.0} events and {:.1} commands to Redis on average.\n\n\
             | part | µs per seed | of the budget |\n|---|---:|---:|",
            self.seeds.saturating_sub(1),
            self.events_per_seed,
            self.commands_per_seed
        );
        let explore_us = 1e6 / explore_one_thread.max(1e-9);
        let rows = [
            (
                "generating its spec (`locksim::explored_spec_with`)".to_owned(),
                self.generate_us,
            ),
            (
                "running it, judged (`sim::run_owned`)".to_owned(),
                self.run_us,
            ),
            (
                "of which the checkers (`sim::check_all`)".to_owned(),
                self.check_us,
            ),
            (
                format!(
                    "of which fake-redis at its bare speed ({:.1} commands × {:.0} ns)",
                    self.commands_per_seed, self.command_ns
                ),
                self.redis_floor_us(),
            ),
            ("`explore` on one thread, all told".to_owned(), explore_us),
        ];
        for (part, us) in rows {
            let _ = writeln!(
                s,
                "| {part} | {us:.1} | {:.0}% |",
                us * 100.0 / SEED_BUDGET_US
            );
        }
        let _ = writeln!(
            s,
            "\nA run and its judgement take {:.0} ns an event. fake-redis's bare speed is a \
             loop of an acquire, a renewal and an unlock by `EVALSHA` on one connection, \
             warm; in a run its code starts colder, so its true share is larger.",
            self.run_us * 1_000.0 / self.events_per_seed.max(1e-9)
        );
        s
    }
}

/// Times the parts of seeds `0..config.explore_seeds` of the default
/// workload.
pub fn seed_budget(config: &BenchConfig) -> Result<SeedBudget, InputError> {
    let seeds = config.explore_seeds.max(1);
    let workload = Workload {
        usage: Usage::Correct,
        ..Workload::default()
    };
    let generate = || -> Vec<sim::SimSpec> {
        (0..seeds)
            .map(|seed| crate::explored_spec_with(seed, Some(Release::REDISSON), workload))
            .collect()
    };
    let specs = generate();
    let runs = specs
        .iter()
        .map(|spec| {
            sim::run(spec).map_err(|e| InputError::Invalid {
                origin: format!("explored seed {}", spec.seed),
                location: None,
                message: e.to_string(),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let per_seed = |total: u64| total as f64 / seeds as f64;
    let batches = config.batches.max(1);
    let median_per_seed = |f: &mut dyn FnMut()| {
        let mut us: Vec<f64> = (0..batches)
            .map(|_| timed(&mut *f).1 * 1e6 / seeds as f64)
            .collect();
        us.sort_by(f64::total_cmp);
        us[us.len() / 2]
    };
    let generate_us = median_per_seed(&mut || {
        std::hint::black_box(generate());
    });
    let mut pending: Vec<sim::SimSpec> = Vec::new();
    let mut run_us: Vec<f64> = (0..batches)
        .map(|_| {
            pending.clone_from(&specs);
            let (_, secs) = timed(|| {
                for spec in pending.drain(..) {
                    let _ = std::hint::black_box(sim::run_owned(spec));
                }
            });
            secs * 1e6 / seeds as f64
        })
        .collect();
    run_us.sort_by(f64::total_cmp);
    let check_us = median_per_seed(&mut || {
        for run in &runs {
            std::hint::black_box(sim::check_all(&run.history));
        }
    });
    Ok(SeedBudget {
        seeds,
        events_per_seed: per_seed(runs.iter().map(|r| r.events).sum()),
        commands_per_seed: per_seed(runs.iter().map(|r| r.commands).sum()),
        generate_us,
        run_us: run_us[run_us.len() / 2],
        check_us,
        command_ns: command_ns(config),
    })
}

/// One lock command on fake-redis alone, in ns: the median over
/// `config.batches` batches of [`LockCycle::run`], a third of a cycle.
fn command_ns(config: &BenchConfig) -> f64 {
    let mut cycle = LockCycle::new();
    let calls = calls_for(config, timed(|| cycle.run()).1);
    let mut ns: Vec<f64> = (0..config.batches.max(1))
        .map(|_| {
            batch_us(calls, || {
                std::hint::black_box(cycle.run());
            }) * 1_000.0
                / 3.0
        })
        .collect();
    ns.sort_by(f64::total_cmp);
    ns[ns.len() / 2]
}

/// A lock taken, renewed and released on a fake-redis of its own, by the
/// scripts' SHA1s as Redisson 3.46+ sends them (the simulator's Redis has
/// them loaded, as this one does).
struct LockCycle {
    engine: Engine,
    conn: ConnId,
    commands: [Vec<Bytes>; 3],
}

impl LockCycle {
    fn new() -> LockCycle {
        let mut engine = Engine::new(Arc::new(ManualClock::new(1_700_000_000_000)));
        engine.load_lock_scripts();
        let conn = engine.connect();
        let word = |w: &str| Bytes::copy_from_slice(w.as_bytes());
        let (key, field, lease) = (word("lock"), word("uuid:1"), word("30000"));
        let script = |s: LockScript, keys: &[&Bytes], args: &[&Bytes]| {
            [
                word("EVALSHA"),
                word(&s.sha1()),
                word(&keys.len().to_string()),
            ]
            .into_iter()
            .chain(keys.iter().chain(args).map(|w| (*w).clone()))
            .collect()
        };
        let (channel, message, publish) = (
            word("redisson_lock__channel:{lock}"),
            word("0"),
            word("PUBLISH"),
        );
        LockCycle {
            engine,
            conn,
            commands: [
                script(LockScript::Acquire, &[&key], &[&lease, &field]),
                script(LockScript::Renew, &[&key], &[&lease, &field]),
                script(
                    LockScript::UnlockPublishArg,
                    &[&key, &channel],
                    &[&message, &lease, &field, &publish],
                ),
            ],
        }
    }

    /// The three commands' first replies.
    fn run(&mut self) -> [Option<Value>; 3] {
        let LockCycle {
            engine,
            conn,
            commands,
        } = self;
        commands
            .each_ref()
            .map(|c| engine.execute(*conn, c).replies.into_iter().next())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The loop fake-redis is timed on does what a lock does, every time
    /// round: the acquire takes the free lock (nil), the renewal finds it
    /// held by its field (1), the unlock releases it (1), leaving it free
    /// for the next round.
    #[test]
    fn the_lock_cycle_takes_renews_and_releases() {
        let mut cycle = LockCycle::new();
        for _ in 0..3 {
            assert_eq!(
                cycle.run(),
                [Some(Value::Nil), Some(Value::Int(1)), Some(Value::Int(1))]
            );
        }
    }

    /// Every part is measured over real runs: the seeds send commands and
    /// handle events, and each time is positive. No time is asserted
    /// beyond that.
    #[test]
    fn the_budget_times_every_part() {
        let config = BenchConfig {
            batches: 1,
            batch_ms: 1,
            explore_seeds: 3,
        };
        let b = seed_budget(&config).unwrap();
        assert_eq!(b.seeds, 3);
        assert!(
            b.events_per_seed > 0.0 && b.commands_per_seed > 0.0,
            "{b:?}"
        );
        for us in [b.generate_us, b.run_us, b.check_us, b.command_ns] {
            assert!(us > 0.0, "{b:?}");
        }
        let md = b.markdown(1_000.0, 1);
        assert!(
            md.contains("| `explore` on one thread, all told | 1000.0 | 2000% |"),
            "{md}"
        );
        assert!(md.contains("seeds 0 to 2"), "{md}");
    }
}
