//! Where an explored seed's time goes: `locksim bench`'s parts of a seed
//! of the default workload, each timed alone, against issue 13's budget
//! of 50 µs a seed (20,000 seeds per second per core).
//!
//! Over the same seeds: generating their specs (`explored_spec_with`),
//! running them (judged, as `explore` runs them), and the checkers alone
//! over their histories. Then each side of a lock command alone, in a
//! loop of its own: fake-redis running an acquire, a renewal and an
//! unlock by `EVALSHA` ([`LockCycle`]), and lockcore taking, renewing and
//! releasing a lock with every reply given at once ([`ClientCycle`]).
//! Those costs, times the commands a seed sends, are floors for the two
//! sides' shares of a seed: in a run their code and data start colder,
//! between each other's and the simulator's. The four parts at their
//! best against the budget say how far off the goal is before the
//! simulator itself (network, event queue, observer, history) costs
//! anything. Like the rest of the benchmark, wall time is read between
//! calls, never inside a run.

use std::fmt::Write as _;
use std::sync::Arc;

use bytes::Bytes;
use fake_redis::{ConnId, Engine, LockScript, ManualClock, Value};
use lockcore::Release;
use sim::{Usage, Workload};

use crate::bench::{BenchConfig, median_us, timed};
use crate::{InputError, Spread};

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
    /// One lock command's round trip through lockcore alone (its call or
    /// timer, the command built, the reply read), ns.
    pub client_ns: f64,
}

impl SeedBudget {
    /// fake-redis's commands of a seed at their bare speed, µs.
    pub fn redis_floor_us(&self) -> f64 {
        self.commands_per_seed * self.command_ns / 1_000.0
    }

    /// lockcore's side of a seed's commands at its bare speed, µs.
    pub fn client_floor_us(&self) -> f64 {
        self.commands_per_seed * self.client_ns / 1_000.0
    }

    /// The parts timed alone that a seed cannot do without: its spec, its
    /// checkers, and its commands on both sides at their bare speed, µs.
    pub fn floor_us(&self) -> f64 {
        self.generate_us + self.check_us + self.redis_floor_us() + self.client_floor_us()
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
            (
                format!(
                    "of which lockcore at its bare speed ({:.1} commands × {:.0} ns)",
                    self.commands_per_seed, self.client_ns
                ),
                self.client_floor_us(),
            ),
            (
                "the four parts timed alone at their best: spec, checkers, fake-redis, lockcore"
                    .to_owned(),
                self.floor_us(),
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
            "\nA run and its judgement take {:.0} ns an event. The bare speeds are loops of \
             their own, warm: fake-redis running an acquire, a renewal and an unlock by \
             `EVALSHA` on one connection; lockcore taking, renewing and releasing a lock \
             with each reply given at once. In a run their code starts colder, between the \
             simulator's, so their true shares are larger; the rest of a run is the \
             simulator's own (the network, the event queue, the observer, the history).",
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
        let us = (0..batches)
            .map(|_| timed(&mut *f).1 * 1e6 / seeds as f64)
            .collect();
        Spread::of(us).median
    };
    let generate_us = median_per_seed(&mut || {
        std::hint::black_box(generate());
    });
    let mut pending: Vec<sim::SimSpec> = Vec::new();
    let run_us = (0..batches)
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
    let run_us = Spread::of(run_us).median;
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
        run_us,
        check_us,
        command_ns: per_command_ns(config, LockCycle::new()),
        client_ns: per_command_ns(config, ClientCycle::new()?),
    })
}

/// Three lock commands (an acquire, a renewal, an unlock), run over and
/// over on one side alone.
trait Cycle {
    /// One round; what it gives is kept from the optimizer.
    fn round(&mut self) -> usize;
}

/// One lock command of `cycle`, in ns: a third of a round's median time.
fn per_command_ns(config: &BenchConfig, mut cycle: impl Cycle) -> f64 {
    median_us(config, || {
        std::hint::black_box(cycle.round());
    }) * 1_000.0
        / 3.0
}

/// A lock taken, renewed and released on a fake-redis of its own, by the
/// scripts' SHA1s as Redisson 3.46+ sends them (the simulator's Redis has
/// them loaded, as this one does). The unlock is 3.22's, without the
/// 3.24+ latch: each latched unlock leaves a latch key of its own behind
/// until it expires, and this Redis's clock never moves, so a loop of
/// them would grow its keyspace round by round.
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

impl Cycle for LockCycle {
    fn round(&mut self) -> usize {
        self.run().len()
    }
}

/// A lock taken, renewed once by its watchdog and released by a lockcore
/// client of Redisson's current release alone, every reply given at once
/// as Redis gives it (nil to the acquire, 1 to the renewal and the
/// unlock), every output drained as the simulator drains it.
struct ClientCycle {
    machine: lockcore::LockClient,
    lock: lockcore::LockName,
    now: lockcore::Millis,
    /// Timers set and not cancelled: the renewal's, between the acquire
    /// and the unlock.
    timers: Vec<(lockcore::TimerId, lockcore::Millis)>,
    /// Commands sent in the last round.
    sent: usize,
}

impl ClientCycle {
    fn new() -> Result<ClientCycle, InputError> {
        let invalid = |e: lockcore::LockError| InputError::Invalid {
            origin: "bench".to_owned(),
            location: None,
            message: e.to_string(),
        };
        let config = lockcore::Config::builder()
            .release(Release::REDISSON)
            .build()
            .map_err(invalid)?;
        Ok(ClientCycle {
            machine: lockcore::LockClient::new("b7f1c0de-0000-4000-8000-000000000001", config),
            lock: lockcore::LockName::new("lock").map_err(invalid)?,
            now: lockcore::Millis(0),
            timers: Vec::new(),
            sent: 0,
        })
    }

    /// Drains the machine's outputs, answering every command at once,
    /// until it has nothing more to say.
    fn drain(&mut self) {
        use lockcore::{Output, Purpose, Value};
        while let Some(out) = self.machine.poll() {
            match out {
                Output::Send {
                    request, purpose, ..
                } => {
                    self.sent += 1;
                    let reply = match purpose {
                        Purpose::Acquire => Value::Nil,
                        _ => Value::Int(1),
                    };
                    self.machine.on_reply(self.now, request, Ok(reply));
                }
                Output::SetTimer { timer, at } => self.timers.push((timer, at)),
                Output::CancelTimer { timer } => self.timers.retain(|(t, _)| *t != timer),
                Output::Step { step } => self.machine.resume(self.now, step),
                _ => {}
            }
        }
    }
}

impl Cycle for ClientCycle {
    fn round(&mut self) -> usize {
        let thread = lockcore::ThreadId(1);
        self.sent = 0;
        let lock = lockcore::Call::Lock { lease: None };
        let _ = self.machine.call(self.now, thread, self.lock.clone(), lock);
        self.drain();
        // The watchdog's renewal: the one timer left once the acquire's
        // response timeout was cancelled.
        if let Some((timer, at)) = self.timers.pop() {
            self.now = at;
            self.machine.on_timer(at, timer);
            self.drain();
        }
        let unlock = lockcore::Call::Unlock;
        let _ = self
            .machine
            .call(self.now, thread, self.lock.clone(), unlock);
        self.drain();
        self.sent
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

    /// lockcore's loop does what the simulator's client does, every time
    /// round: three commands sent (an acquire, a renewal, an unlock), the
    /// renewal timer fired and none left behind, so a long benchmark
    /// holds no more timers or requests than a short one.
    #[test]
    fn the_client_cycle_sends_three_commands_and_leaves_no_timer() {
        let mut cycle = ClientCycle::new().unwrap();
        let mut at = Vec::new();
        for _ in 0..3 {
            assert_eq!(cycle.round(), 3);
            assert!(cycle.timers.is_empty(), "{:?}", cycle.timers);
            assert!(!cycle.machine.is_busy(lockcore::ThreadId(1)));
            at.push(cycle.now);
        }
        // Each round's renewal comes a third of the watchdog timeout
        // (30 s) after the round before's.
        assert_eq!(at[1].0 - at[0].0, 10_000, "{at:?}");
        assert_eq!(at[2].0 - at[1].0, 10_000, "{at:?}");
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
        for us in [
            b.generate_us,
            b.run_us,
            b.check_us,
            b.command_ns,
            b.client_ns,
        ] {
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
