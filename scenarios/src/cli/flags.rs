//! Flag groups more than one subcommand shares (`--profile`'s parser,
//! `--with`/`--without`, `--engine`, the explored workload), flattened
//! into each subcommand's own arguments.

use clap::{Args, ValueEnum};
use lockcore::{Release, Switch};

use crate::InputError;

/// An engine name, with the known ones in the error.
pub fn parse_engine(s: &str) -> Result<sim::Engine, String> {
    s.parse()
}

/// `--engine`, `--redis` and `--time-scale`.
#[derive(Debug, Args, PartialEq, Default)]
pub struct EngineArgs {
    /// The engine: `fast` (the default; the discrete-event simulator),
    /// `turmoil` (lockcore's async client over RESP on turmoil's simulated
    /// TCP, against fake-redis's server) or `redis` (the async client
    /// against a real redis-server, in real time; not deterministic).
    #[arg(long, value_parser = parse_engine)]
    pub engine: Option<sim::Engine>,
    /// `--engine redis`: `redis://HOST:PORT` of a Redis whose keys named
    /// like the scenario's locks may be deleted, or `spawn` (the default)
    /// to start a redis-server on a free loopback port for the run.
    #[arg(long, value_name = "URL|spawn")]
    pub redis: Option<String>,
    /// `--engine redis`: run the scenario this many times faster than
    /// written (1 to 100; default 10): a 40 s scenario takes 4 s.
    #[arg(long)]
    pub time_scale: Option<u64>,
}

impl EngineArgs {
    /// The engine these flags name (`default` when none).
    pub fn engine_or(&self, default: sim::Engine) -> Result<sim::Engine, crate::InputError> {
        let engine = self.engine.clone().unwrap_or(default);
        let sim::Engine::Redis(mut real) = engine else {
            if self.redis.is_some() || self.time_scale.is_some() {
                return Err(crate::InputError::EngineFlags(
                    "--redis and --time-scale go with --engine redis".to_owned(),
                ));
            }
            return Ok(engine);
        };
        match self.redis.as_deref() {
            None | Some("spawn") => real.target = sim::RedisTarget::Spawn,
            Some(url) if url.starts_with("redis://") => {
                real.target = sim::RedisTarget::Url(url.to_owned())
            }
            Some(other) => {
                return Err(crate::InputError::EngineFlags(format!(
                    "--redis {other}: expected redis://HOST:PORT or spawn"
                )));
            }
        }
        if let Some(scale) = self.time_scale {
            if !(1..=100).contains(&scale) {
                return Err(crate::InputError::EngineFlags(format!(
                    "--time-scale {scale}: must be between 1 and 100"
                )));
            }
            real.time_scale = scale;
        }
        Ok(sim::Engine::Redis(real))
    }
}

/// What generated runs do: how scripts use the lock, which faults they meet.
#[derive(Debug, Args, PartialEq, Clone, Copy)]
pub struct WorkloadArgs {
    /// Add the misuse patterns to the scripts (leases shorter than the
    /// work, forgotten unlocks, forceUnlock, a 100 ms watchdog) and drop
    /// the liveness phase.
    #[arg(long)]
    pub misuse: bool,
    /// Which fault kinds the plans draw.
    #[arg(long, value_enum, default_value_t = Kinds::Swarm)]
    pub kinds: Kinds,
    /// How each seed's scenario is drawn: `uniform` swarm, `directed`
    /// (weighted toward rare `sometimes` points' preconditions), `pct`
    /// (uniform plus callback-ordering change points) or `portfolio`
    /// (each seed one arm, uniform for half). Default: `portfolio` for
    /// `explore` and `mutants`, `uniform` for `replay` (a replay command
    /// names any other arm).
    #[arg(long, value_enum)]
    pub strategy: Option<StrategyArg>,
}

impl WorkloadArgs {
    /// sim's workload, with the strategy asked for or else `uniform`.
    pub fn workload(self) -> sim::Workload {
        self.workload_or(sim::Strategy::Uniform)
    }

    /// sim's workload, with the strategy asked for or else `default`.
    pub fn workload_or(self, default: sim::Strategy) -> sim::Workload {
        sim::Workload {
            strategy: self.strategy.map_or(default, StrategyArg::strategy),
            usage: if self.misuse {
                sim::Usage::Misuse
            } else {
                sim::Usage::Correct
            },
            kinds: match self.kinds {
                Kinds::Swarm => sim::SwarmKinds::Swarm,
                Kinds::Classic => sim::SwarmKinds::Classic,
                Kinds::All => sim::SwarmKinds::All,
            },
        }
    }
}

/// `--strategy`: how explored scenarios are drawn ([`sim::Strategy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StrategyArg {
    /// Uniform swarm, as explore drew every seed before strategies.
    Uniform,
    /// Fault kinds and workload features weighted toward one rare
    /// `sometimes` point's preconditions a seed.
    Directed,
    /// Uniform swarm plus up to three PCT change points in the order of a
    /// client's callbacks.
    Pct,
    /// Each seed one arm: uniform for half, directed and PCT a quarter each.
    Portfolio,
}

impl StrategyArg {
    /// sim's strategy.
    pub fn strategy(self) -> sim::Strategy {
        match self {
            StrategyArg::Uniform => sim::Strategy::Uniform,
            StrategyArg::Directed => sim::Strategy::Directed,
            StrategyArg::Pct => sim::Strategy::Pct,
            StrategyArg::Portfolio => sim::Strategy::Portfolio,
        }
    }
}

/// Which fault kinds explored plans draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Kinds {
    /// Swarm testing: each seed enables a random subset of every kind,
    /// each struck one to three times.
    Swarm,
    /// 0-4 faults of the first eight kinds, as explore first drew them
    /// (with `--misuse`, the regression corpus's seeds keep their plans).
    Classic,
    /// Every kind, each in the plan at most once, from a stream of its own.
    All,
}

pub(super) fn parse_profile(s: &str) -> Result<Release, String> {
    s.parse::<Release>().map_err(|e| e.to_string())
}

fn parse_switch(s: &str) -> Result<Switch, String> {
    s.parse::<Switch>().map_err(|e| e.to_string())
}

/// `--with NAME` / `--without NAME`: a what-if on the release chosen with
/// `--profile` or `--redisson`.
#[derive(Debug, Args, PartialEq, Default)]
pub struct Toggles {
    /// Turn a behaviour switch on (`locksim versions` lists them); needs
    /// --profile or --redisson.
    #[arg(long = "with", value_parser = parse_switch)]
    pub with: Vec<Switch>,
    /// Turn a behaviour switch off; needs --profile or --redisson.
    #[arg(long = "without", value_parser = parse_switch)]
    pub without: Vec<Switch>,
}

impl Toggles {
    /// The release with the toggles applied, or why they cannot be.
    pub fn apply(&self, release: Option<Release>) -> Result<Option<Release>, InputError> {
        if self.with.is_empty() && self.without.is_empty() {
            return Ok(release);
        }
        let Some(release) = release else {
            return Err(InputError::TogglesWithoutRelease);
        };
        let release = self.with.iter().fold(release, |r, &w| r.with(w));
        Ok(Some(
            self.without.iter().fold(release, |r, &w| r.without(w)),
        ))
    }
}
