//! The defects a configuration is exposed to: explored runs under the
//! user's release, settings and usage, each defect attributed from its
//! run alone (as `locksim explore` attributes it), grouped by the
//! upstream issue that explains it.

use std::collections::{BTreeMap, BTreeSet};

use lockcore::Release;
use rayon::prelude::*;
use serde::Serialize;
use sim::{Invariant, SimSpec, Workload};

use super::Tailor;
use crate::Settings;
use crate::{Defect, Scenario, SeedRange, explored_spec_with};

/// Where a defect stands upstream.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Status {
    /// A Redisson release removes it.
    Fixed {
        /// The upstream issue or commit.
        upstream: String,
        /// locksim's behaviour switch for it.
        switch: String,
        /// The first release with it.
        release: String,
    },
    /// Open upstream, with a fix proposed there that no release has
    /// merged (locksim models it as a switch and finds it removes it).
    ProposedFix {
        /// The upstream issue and pull request.
        upstream: String,
        /// locksim's behaviour switch for the proposed fix.
        switch: String,
    },
    /// Reported upstream and still open.
    Open {
        /// The upstream issue.
        upstream: String,
        /// What happens on its path.
        path: String,
    },
    /// Found by locksim and not reported upstream.
    Unreported {
        /// What happens on its path.
        path: String,
    },
    /// A defect that no fix and no known issue explains.
    Unattributed {
        /// What identifies it.
        signature: String,
    },
}

impl Status {
    pub(crate) fn of(d: &Defect) -> Status {
        if let Some(fix) = &d.fixed_by {
            if fix.release == crate::defect::UNRELEASED {
                return Status::ProposedFix {
                    upstream: fix.upstream.clone(),
                    switch: fix.switch.clone(),
                };
            }
            return Status::Fixed {
                upstream: fix.upstream.clone(),
                switch: fix.switch.clone(),
                release: fix.release.clone(),
            };
        }
        match d.open_issue {
            Some(open) if open.upstream == crate::open_issue::UNREPORTED => Status::Unreported {
                path: open.path.to_owned(),
            },
            Some(open) => Status::Open {
                upstream: open.upstream.to_owned(),
                path: open.path.to_owned(),
            },
            None => Status::Unattributed {
                signature: d.signature.to_string(),
            },
        }
    }

    /// Its title where it stands alone in a list, without the path line
    /// an exposure prints under it: a defect not reported upstream is
    /// told from the others by its path.
    pub fn name(&self) -> String {
        match self {
            Status::Unreported { path } => format!("not reported upstream: {path}"),
            other => other.title(),
        }
    }

    /// The release that removes it, if one does.
    pub fn fixed_in(&self) -> Option<lockcore::Version> {
        match self {
            Status::Fixed { release, .. } => release.parse().ok(),
            _ => None,
        }
    }

    /// A short title: `#4871 (unlock-latch), fixed in 3.24.0`.
    pub fn title(&self) -> String {
        match self {
            Status::ProposedFix { upstream, switch } if upstream == lockcore::NOT_REPORTED => {
                format!("{upstream} ({switch}), with a fix locksim proposes")
            }
            Status::ProposedFix { upstream, switch } => {
                format!("{upstream} ({switch}), open upstream with a fix proposed in no release")
            }
            Status::Fixed {
                upstream,
                switch,
                release,
            } => format!("{upstream} ({switch}), fixed in {release}"),
            Status::Open { upstream, .. } => format!("{upstream}, open upstream"),
            Status::Unreported { .. } => "not reported upstream".to_owned(),
            Status::Unattributed { signature } => format!("unattributed: {signature}"),
        }
    }
}

/// One upstream issue the configuration is exposed to.
#[derive(Debug, Clone, Serialize)]
pub struct Exposure {
    /// Where it stands upstream.
    #[serde(flatten)]
    pub status: Status,
    /// The invariants its runs broke.
    pub invariants: BTreeSet<Invariant>,
    /// How many runs showed it.
    pub runs: u64,
    /// Its first runs' seeds (at most [`SEEDS_KEPT`]).
    pub seeds: Vec<u64>,
    /// The command that replays its first run.
    pub replay: String,
    /// Its minimal scenario as a file's text (see [`Exposure::minimal`]).
    pub scenario: Option<String>,
    /// The first run's spec, as the user's clients would run it.
    #[serde(skip)]
    pub spec: SimSpec,
    /// The invariant its first run broke as this defect.
    #[serde(skip)]
    pub invariant: Invariant,
    /// The first run shrunk to the fewest faults that still show the
    /// defect, as a scenario file (`locksim run` it); set by
    /// [`Exposure::shrink`].
    #[serde(skip)]
    pub minimal: Option<Scenario>,
}

/// How many runs the shrinking of one exposure may take.
const SHRINK_BUDGET: usize = 200;

impl Exposure {
    /// Shrinks its first run into [`Exposure::minimal`]: `n` numbers it
    /// among the audit's exposures.
    pub fn shrink(&mut self, release: Release, n: usize) {
        let shrunk = crate::shrink_as(&self.spec, self.invariant, Some("defect"), SHRINK_BUDGET);
        let mut scenario = crate::shrunk_scenario(&shrunk.spec, self.invariant, release, true);
        scenario.name = format!("audit-{n}-{}", scenario.name);
        scenario.description = format!(
            "Seed {} of locksim audit under {release}, with the audited settings and usage: {}. Its fault plan is shrunk as far as {} still breaks as a defect.",
            self.spec.seed,
            self.status.title(),
            self.invariant
        );
        self.scenario = Some(scenario.to_toml());
        self.minimal = Some(scenario);
    }

    /// The file its minimal scenario is written to in a report.
    pub fn file(&self, n: usize) -> String {
        format!("exposure-{n}.toml")
    }
}

/// How many seeds an exposure lists.
pub const SEEDS_KEPT: usize = 5;

/// What a sweep of one release gave.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Sweep {
    /// Runs made.
    pub runs: u64,
    /// Runs that broke an invariant, by the oracle's cause.
    pub by_cause: BTreeMap<String, u64>,
    /// Seeds whose spec the user's settings make invalid (left out).
    pub refused: u64,
    /// The defects, by where they stand upstream.
    pub exposures: Vec<Exposure>,
}

/// Seeds run in parallel at a time (results are folded in seed order).
const BATCH: u64 = 256;

/// The run of `seed` as the user's application would make it.
pub fn audited_spec(seed: u64, release: Release, settings: &Settings, tailor: &Tailor) -> SimSpec {
    let mut spec = explored_spec_with(seed, Some(release), Workload::default());
    settings.apply(&mut spec);
    tailor.apply(&mut spec);
    spec
}

/// What one seed gave: its causes and defects, or nothing to count.
type Seen = Option<(&'static str, Vec<Defect>, SimSpec)>;

/// Explores `range` under `release`: a pure function of its inputs,
/// whatever the number of threads.
pub fn sweep(range: SeedRange, release: Release, settings: &Settings, tailor: &Tailor) -> Sweep {
    let mut out = Sweep::default();
    let mut by: BTreeMap<Status, Exposure> = BTreeMap::new();
    let mut start = range.from();
    while start < range.end() {
        let end = start.saturating_add(BATCH).min(range.end());
        let seen: Vec<(u64, Option<Seen>)> = (start..end)
            .into_par_iter()
            .map(|seed| (seed, probe(seed, release, settings, tailor)))
            .collect();
        for (seed, seen) in seen {
            let Some(seen) = seen else {
                out.refused += 1;
                continue;
            };
            out.runs += 1;
            let Some((cause, defects, spec)) = seen else {
                continue;
            };
            *out.by_cause.entry(cause.to_owned()).or_insert(0) += 1;
            for d in defects {
                let e = by.entry(Status::of(&d)).or_insert_with(|| Exposure {
                    status: Status::of(&d),
                    invariants: BTreeSet::new(),
                    runs: 0,
                    seeds: Vec::new(),
                    replay: String::new(),
                    scenario: None,
                    spec: spec.clone(),
                    invariant: d.invariant,
                    minimal: None,
                });
                e.invariants.insert(d.invariant);
                if e.seeds.last() != Some(&seed) {
                    e.runs += 1;
                    if e.seeds.len() < SEEDS_KEPT {
                        e.seeds.push(seed);
                    }
                }
            }
        }
        start = end;
    }
    out.exposures = by.into_values().collect();
    out
}

/// Runs one seed: `None` when the settings make its spec invalid.
fn probe(seed: u64, release: Release, settings: &Settings, tailor: &Tailor) -> Option<Seen> {
    let spec = audited_spec(seed, release, settings, tailor);
    sim::validate_spec(&spec).ok()?;
    let run = sim::run(&spec).ok()?;
    if run.violations.is_empty() {
        return Some(None);
    }
    // The run's worst cause, as explore counts it: one per run.
    let worst = crate::explore::worst_cause(run.violations.iter().map(|v| v.cause.name()));
    let defects = crate::defects_of(&spec, &run);
    Some(Some((worst, defects, spec)))
}
