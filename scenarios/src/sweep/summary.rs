//! explore's summary: the seeds covered, counts by invariant and by
//! cause for each profile, as text or as one JSON object.

use std::collections::BTreeMap;
use std::io::Write;

use lockcore::Release;
use serde::Serialize;

use super::groups::Group;
use super::upstreams::{Upstream, Upstreams};
use crate::{CoverageRow, Exploration, Finding};

/// What the runs do, for the header and summary: ` (correct usage, swarm
/// faults)`, with the strategy when it is not uniform swarm.
pub(super) fn workload_label(workload: sim::Workload) -> String {
    let usage = match workload.usage {
        sim::Usage::Correct => "correct usage",
        sim::Usage::Misuse => "misuse too",
    };
    let kinds = match workload.kinds {
        sim::SwarmKinds::Swarm => "swarm faults",
        sim::SwarmKinds::Classic => "the classic faults",
        sim::SwarmKinds::All => "every fault kind",
    };
    let strategy = match workload.strategy {
        sim::Strategy::Uniform => "",
        sim::Strategy::Directed => ", directed swarm",
        sim::Strategy::Pct => ", PCT change points",
        sim::Strategy::Portfolio => ", portfolio: uniform, directed, PCT",
    };
    format!(" ({usage}, {kinds}{strategy})")
}

/// The profiles a sweep runs each seed under.
pub(super) fn profiles(profile: Option<Release>) -> Vec<Release> {
    match profile {
        Some(p) => vec![p],
        None => Release::ERAS.to_vec(),
    }
}

pub(super) fn profile_label(profile: Option<Release>) -> String {
    match profile {
        Some(p) => p.to_string(),
        None => "every profile".to_owned(),
    }
}

/// Each broken invariant with its cause: `mutual-exclusion (defect)`, and
/// a defect's upstream fix: `mutual-exclusion (defect, fixed by #6303)`,
/// or the open issue whose path it took (`open upstream: #4109`, or
/// `not reported upstream`).
pub(super) fn names(f: &Finding) -> String {
    let mut names: Vec<String> = f
        .broken
        .iter()
        .map(|b| {
            let defect = f
                .defects
                .iter()
                .find(|d| d.invariant == b.invariant && b.cause == sim::Cause::Defect);
            let fix = match defect.map(|d| (d.fixed_by.as_ref(), d.open_issue)) {
                Some((Some(fix), _)) => format!(", {}", fix.label()),
                Some((None, Some(open))) => format!(", {}", open.status()),
                _ => String::new(),
            };
            format!("{} ({}{fix})", b.invariant.name(), b.cause.name())
        })
        .collect();
    names.dedup();
    names.join(", ")
}

/// The seeds covered, the run counts, and one row per broken invariant
/// with a column per explored profile, so the profiles can be compared.
pub(super) fn summary(
    found: &Exploration,
    profile: Option<Release>,
    kinds: &str,
    out: &mut dyn Write,
) {
    let covered = if !found.interrupted() {
        format!("explored seeds {}", found.range)
    } else if found.next == found.range.from() {
        format!("interrupted: explored no seed of {}", found.range)
    } else {
        format!(
            "interrupted: explored seeds {}..{} of {}",
            found.range.from(),
            found.next,
            found.range
        )
    };
    let failed = match found.failed {
        0 => String::new(),
        n => format!(", {n} could not run"),
    };
    let failed = match found.refused {
        0 => failed,
        n => format!("{failed}, {n} not made (the engine refuses a fault of their plan)"),
    };
    let branches = match found.branches {
        0 => String::new(),
        n => format!(" ({n} of them branches)"),
    };
    let _ = writeln!(
        out,
        "{covered} under {}{kinds}: {} runs{branches}, {} with violations{failed}",
        profile_label(profile),
        found.runs,
        found.violating
    );
    let profiles = profiles(profile);
    let _ = write!(out, "  {:<22}", "runs broken");
    for p in &profiles {
        let _ = write!(out, " {:>16}", p.to_string());
    }
    let _ = writeln!(out);
    let per: Vec<_> = profiles.iter().map(|p| found.by_invariant_of(*p)).collect();
    for inv in found.by_invariant().keys() {
        let _ = write!(out, "  {:<22}", inv.name());
        for counts in &per {
            let _ = write!(out, " {:>16}", counts.get(inv).copied().unwrap_or(0));
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "  runs by worst cause (a defect first)");
    for cause in ["defect", "beyond-guarantee", "misuse"] {
        let _ = write!(out, "  {cause:<22}");
        for p in &profiles {
            let _ = write!(out, " {:>16}", found.by_cause_of(*p, cause));
        }
        let _ = writeln!(out);
    }
    // Not a finding: a key no invariant forbids, counted apart (and only
    // shown when a run left one, so sweeps without a fenced lock read as
    // before).
    if profiles.iter().any(|p| found.left_of(*p) > 0) {
        let _ = writeln!(
            out,
            "  runs leaving a key without a TTL ({}, open upstream; not a finding)",
            sim::TOKEN_KEY_ISSUE
        );
        let _ = write!(out, "  {:<22}", "fenced token key");
        for p in &profiles {
            let _ = write!(out, " {:>16}", found.left_of(*p));
        }
        let _ = writeln!(out);
    }
}

/// `explore --json`: one object with the sweep, its counts and its defects.
#[derive(Serialize)]
pub(super) struct Report<'a> {
    /// The seeds asked for, as `from..end`.
    pub(super) seeds: String,
    /// The first seed not explored (the end when the sweep finished).
    pub(super) next: u64,
    /// Whether Ctrl-C stopped it.
    pub(super) interrupted: bool,
    /// The workload's flags (empty for the default).
    pub(super) workload: String,
    /// Runs made (branches included), of them branches of a seed's run,
    /// with violations, that could not run.
    pub(super) runs: u64,
    pub(super) branches: u64,
    pub(super) violating: u64,
    pub(super) failed: u64,
    /// Per model: runs by worst cause, and runs breaking each invariant.
    pub(super) by_cause: BTreeMap<String, BTreeMap<&'static str, u64>>,
    /// Per model: runs that left a key without a TTL (the fenced lock's
    /// token key, #6510), none when no run did: not findings.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(super) left: BTreeMap<String, u64>,
    pub(super) by_invariant: BTreeMap<String, BTreeMap<String, u64>>,
    /// The defects, by signature, each with its shrunk scenario; a
    /// group's `fixed_by` or `open_issue` is its first run's.
    pub(super) defects: Vec<DefectReport<'a>>,
    /// Every upstream issue a defective run was attributed to, by
    /// model, with its runs and first seed (each run attributed alone).
    pub(super) upstreams: &'a [Upstream],
    /// Defective runs naming an issue past the list's room.
    pub(super) upstreams_overflow: u64,
    /// Per model and `sometimes` point: the runs that reached it, the
    /// first seed, and whether it is rare (fewer than 1 in 10,000 runs).
    pub(super) coverage: Vec<CoverageRow>,
}

/// One defect group in `--json`.
#[derive(Serialize)]
pub(super) struct DefectReport<'a> {
    #[serde(flatten)]
    pub(super) group: &'a Group,
    /// The shrunk scenario file (TOML), when shrinking ran.
    pub(super) shrunk: Option<String>,
}

impl<'a> Report<'a> {
    /// The report of `found` under `profile`.
    pub(super) fn new(
        found: &Exploration,
        (profile, workload): (Option<Release>, sim::Workload),
        defects: Vec<DefectReport<'a>>,
        upstreams: &'a Upstreams,
    ) -> Report<'a> {
        let (mut by_cause, mut by_invariant) = (BTreeMap::new(), BTreeMap::new());
        let mut left = BTreeMap::new();
        for p in profiles(profile) {
            if found.left_of(p) > 0 {
                left.insert(p.to_string(), found.left_of(p));
            }
            let causes = ["defect", "beyond-guarantee", "misuse"]
                .into_iter()
                .map(|c| (c, found.by_cause_of(p, c)))
                .collect();
            by_cause.insert(p.to_string(), causes);
            let invariants = found
                .by_invariant_of(p)
                .into_iter()
                .map(|(i, n)| (i.name().to_owned(), n))
                .collect();
            by_invariant.insert(p.to_string(), invariants);
        }
        Report {
            seeds: found.range.to_string(),
            next: found.next,
            interrupted: found.interrupted(),
            workload: workload.flags().trim().to_owned(),
            runs: found.runs,
            branches: found.branches,
            violating: found.violating,
            failed: found.failed,
            by_cause,
            left,
            by_invariant,
            defects,
            upstreams: upstreams.all(),
            upstreams_overflow: upstreams.overflow(),
            coverage: found.coverage.rows(),
        }
    }
}
