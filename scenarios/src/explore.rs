//! Random exploration: sim's generated spec for each seed, run and checked.

use std::collections::BTreeMap;

use lockcore::Profile;
use sim::{Invariant, Run, SimError, SimSpec};

use crate::Broken;

/// The spec explored for `seed`: sim's random scenario and fault plan,
/// with every client on `profile` (or a profile drawn from the seed).
pub fn explored_spec(seed: u64, profile: Option<Profile>) -> SimSpec {
    sim::generate(seed, profile)
}

/// Runs the spec explored for `seed`.
pub fn explore_seed(seed: u64, profile: Option<Profile>) -> Result<Run, SimError> {
    sim::run(&explored_spec(seed, profile))
}

/// A seed whose run broke at least one invariant.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The seed.
    pub seed: u64,
    /// The profile it ran under.
    pub profile: Profile,
    /// What broke.
    pub broken: Vec<Broken>,
    /// The history's hash, to tell a replay is the same run.
    pub history_hash: String,
}

impl Finding {
    /// The broken invariants, each once, in checker order.
    pub fn invariants(&self) -> Vec<Invariant> {
        Invariant::ALL
            .into_iter()
            .filter(|i| self.broken.iter().any(|b| b.invariant == *i))
            .collect()
    }

    /// The command that replays it.
    pub fn replay_command(&self) -> String {
        format!("locksim replay {} --profile {}", self.seed, self.profile)
    }
}

/// What a sweep over seeds found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Exploration {
    /// How many runs were made.
    pub runs: u64,
    /// Every run that broke an invariant, in seed then profile order.
    pub findings: Vec<Finding>,
    /// Seeds whose spec could not run (a bug in the generator), with why.
    pub errors: Vec<(u64, Profile, String)>,
}

impl Exploration {
    /// How many runs broke each invariant.
    pub fn by_invariant(&self) -> BTreeMap<Invariant, usize> {
        let mut counts = BTreeMap::new();
        for f in &self.findings {
            for inv in f.invariants() {
                *counts.entry(inv).or_insert(0) += 1;
            }
        }
        counts
    }

    /// How many runs of `profile` broke each invariant.
    pub fn by_invariant_of(&self, profile: Profile) -> BTreeMap<Invariant, usize> {
        let mut counts = BTreeMap::new();
        for f in self.findings.iter().filter(|f| f.profile == profile) {
            for inv in f.invariants() {
                *counts.entry(inv).or_insert(0) += 1;
            }
        }
        counts
    }

    /// Runs seed `seed` under `profile` and records what it found.
    pub fn add(&mut self, seed: u64, profile: Profile) {
        self.runs += 1;
        match explore_seed(seed, Some(profile)) {
            Ok(run) if !run.violations.is_empty() => {
                let outcome = crate::Outcome::of(&run);
                self.findings.push(Finding {
                    seed,
                    profile,
                    broken: outcome.broken,
                    history_hash: run.history.hash(),
                });
            }
            Ok(_) => {}
            Err(e) => self.errors.push((seed, profile, e.to_string())),
        }
    }
}

/// Explores `count` seeds from `from`, under `profile` or under every
/// profile; `progress` is called after each seed.
pub fn explore(
    from: u64,
    count: u64,
    profile: Option<Profile>,
    mut progress: impl FnMut(u64),
) -> Exploration {
    let profiles: Vec<Profile> = match profile {
        Some(p) => vec![p],
        None => Profile::ALL.to_vec(),
    };
    let mut found = Exploration::default();
    for seed in from..from.saturating_add(count) {
        for p in &profiles {
            found.add(seed, *p);
        }
        progress(seed);
    }
    found
}
