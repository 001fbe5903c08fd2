//! Which engine runs a spec: the fast discrete-event one, turmoil's
//! simulated network with the code a user ships, or a real Redis.

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

use crate::{Invariant, RealRedis, RedisTarget, Run, SimError, SimSpec};

/// The time scale of the real-Redis engine unless told otherwise.
pub const DEFAULT_TIME_SCALE: u64 = 10;

/// An engine that runs a [`SimSpec`] and judges its history.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Engine {
    /// The discrete-event engine: lockcore's sans-IO machine and
    /// fake-redis's engine, driven directly ([`crate::run`]).
    #[default]
    Fast,
    /// lockcore's async client over RESP on turmoil's TCP, against
    /// fake-redis's RESP server ([`crate::run_turmoil`]).
    Turmoil,
    /// lockcore's async client against a real `redis-server`, in real
    /// time sped up ([`crate::run_real`]); not deterministic.
    Redis(RealRedis),
}

impl Engine {
    /// The engines' names, in order.
    pub const NAMES: [&'static str; 3] = ["fast", "turmoil", "redis"];

    /// Runs `spec` on this engine.
    pub fn run(&self, spec: &SimSpec) -> Result<Run, SimError> {
        match self {
            Engine::Fast => crate::run(spec),
            Engine::Turmoil => crate::run_turmoil(spec),
            Engine::Redis(real) => crate::run_real(spec, real),
        }
    }

    /// [`Engine::run`] of a spec the caller gives up (the run keeps it:
    /// see [`crate::run_owned`]).
    pub fn run_owned(&self, spec: SimSpec) -> Result<Run, SimError> {
        match self {
            Engine::Fast => crate::run_owned(spec),
            _ => self.run(&spec),
        }
    }

    /// [`Engine::run`], its violations those of `invariants` alone: a
    /// caller that asks about some invariants (attribution asks whether a
    /// release shows the defects its run showed) spares the fast engine
    /// the other checkers. The other engines run every checker and keep
    /// the asked ones' findings.
    pub fn run_judged_on(&self, spec: SimSpec, invariants: &[Invariant]) -> Result<Run, SimError> {
        match self {
            Engine::Fast => crate::run::run_judged_on(spec, invariants),
            _ => {
                let mut run = self.run(&spec)?;
                run.violations.retain(|v| invariants.contains(&v.invariant));
                Ok(run)
            }
        }
    }

    /// Its name on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Engine::Fast => "fast",
            Engine::Turmoil => "turmoil",
            Engine::Redis(_) => "redis",
        }
    }

    /// Whether it can carry out `fault` (the fast engine carries out every
    /// kind).
    pub fn takes(&self, fault: &crate::Fault) -> bool {
        match self {
            Engine::Fast => true,
            Engine::Turmoil => {
                crate::engines::hosted::takes(crate::engines::hosted::Kinds::Turmoil, fault)
            }
            Engine::Redis(_) => {
                crate::engines::hosted::takes(crate::engines::hosted::Kinds::Redis, fault)
            }
        }
    }

    /// Why this engine cannot run `spec` (a fault it cannot carry out, a
    /// latency range a real network cannot take), checked before anything
    /// runs; `None` when it can.
    pub fn refuses(&self, spec: &SimSpec) -> Option<SimError> {
        match self {
            Engine::Fast => None,
            Engine::Turmoil => {
                crate::engines::hosted::plan(spec, crate::engines::hosted::Kinds::Turmoil).err()
            }
            Engine::Redis(opts) => crate::engines::hosted::real_refusal(spec, opts),
        }
    }

    /// `spec` with the faults this engine cannot carry out left out: how
    /// `explore` and `replay` draw runs for it (each fault kind draws from
    /// its own stream, so leaving one out changes no other).
    pub fn fit(&self, mut spec: SimSpec) -> SimSpec {
        spec.faults.0.retain(|f| self.takes(f));
        spec
    }

    /// Whether the same spec always gives the same history on it.
    pub fn is_deterministic(&self) -> bool {
        !matches!(self, Engine::Redis(_))
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Engine {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl FromStr for Engine {
    type Err = String;

    /// `fast`, `turmoil`, or `redis` (a spawned `redis-server` at the
    /// default time scale, until told otherwise).
    fn from_str(s: &str) -> Result<Engine, String> {
        match s {
            "fast" => Ok(Engine::Fast),
            "turmoil" => Ok(Engine::Turmoil),
            "redis" => Ok(Engine::Redis(RealRedis {
                target: RedisTarget::Spawn,
                time_scale: DEFAULT_TIME_SCALE,
            })),
            _ => Err(format!(
                "unknown engine '{s}': the engines are fast, turmoil and redis"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_are_refused() {
        for name in Engine::NAMES {
            assert_eq!(name.parse::<Engine>().map(|e| e.name()), Ok(name));
        }
        let error = "postgres".parse::<Engine>().unwrap_err();
        assert!(error.contains("fast, turmoil and redis"), "{error}");
    }

    /// A run judged on some invariants finds what the whole judgement
    /// finds of those, nothing else, with the same history: over swarm
    /// seeds until several broke two invariants or more.
    #[test]
    fn judging_on_some_invariants_keeps_their_findings() {
        let mut several = 0;
        for seed in 0..400 {
            let spec = crate::swarm::generate(seed, None);
            let Ok(whole) = Engine::Fast.run(&spec) else {
                continue;
            };
            let mut broken: Vec<Invariant> = whole.violations.iter().map(|v| v.invariant).collect();
            broken.dedup();
            several += usize::from(broken.len() >= 2);
            let (first, rest) = broken.split_at(broken.len().min(1));
            for asked in [first, rest, &[]] {
                let part = Engine::Fast
                    .run_judged_on(spec.clone(), asked)
                    .expect("it ran whole");
                let kept: Vec<_> = whole
                    .violations
                    .iter()
                    .filter(|v| asked.contains(&v.invariant))
                    .collect();
                assert_eq!(
                    part.violations.iter().collect::<Vec<_>>(),
                    kept,
                    "seed {seed}"
                );
                assert_eq!(part.history, whole.history, "seed {seed}");
            }
        }
        assert!(several >= 3, "only {several} seeds broke two invariants");
    }
}
