//! One seed under the release and under each mutant whose switch its run
//! asked about.

use std::collections::BTreeSet;

use lockcore::Release;
use sim::{Cause, Invariant, Run, SimSpec, Strategy, Workload};

use super::Mutant;
use crate::{Defect, explored_spec_with};

/// What one mutant's run of a seed showed, next to the release's run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Seen {
    /// The release's run never asked about the switch: the mutant's run
    /// is the same run.
    Unread,
    /// It asked, and the mutant's run is the release's, record for record.
    Same,
    /// The mutant's run differs.
    Changed {
        /// A defect of it is attributed to the removed fix.
        kill: bool,
        /// Its defects the release's run does not show and that are
        /// attributed elsewhere, as [`label`]s.
        others: Vec<String>,
    },
}

/// What one seed gave: each probed mutant's [`Seen`] (indexed as given),
/// or why the release's own run could not be made.
pub(super) type SeedSeen = Result<Vec<(usize, Seen)>, String>;

/// The spec the mutation sweep runs for `seed` under `release`:
/// `locksim explore`'s with the default workload, drawn by `strategy`.
pub(super) fn spec_of(seed: u64, release: Release, strategy: Strategy) -> SimSpec {
    let workload = Workload {
        strategy,
        ..Workload::default()
    };
    explored_spec_with(seed, Some(release), workload)
}

/// Runs `seed` under `release`, then under each of `mutants` (with its
/// index) whose switch that run asked about. A pure function of its
/// inputs.
pub(super) fn probe_seed(
    seed: u64,
    release: Release,
    strategy: Strategy,
    mutants: &[(usize, Mutant)],
) -> SeedSeen {
    let base_spec = spec_of(seed, release, strategy);
    let base = sim::run_owned(base_spec.clone()).map_err(|e| e.to_string())?;
    let base_defects: BTreeSet<Invariant> = defect_invariants(&base).collect();
    Ok(mutants
        .iter()
        .map(|&(i, m)| {
            let spec = spec_of(seed, m.mutated(), strategy);
            (i, probe_mutant(spec, m, (&base_spec, &base), &base_defects))
        })
        .collect())
}

fn probe_mutant(
    spec: SimSpec,
    m: Mutant,
    (base_spec, base): (&SimSpec, &Run),
    base_defects: &BTreeSet<Invariant>,
) -> Seen {
    // The generator may read the release too (a lock object the release
    // refuses is not drawn): a mutant whose spec differs is run whatever
    // the release's run asked.
    let mut same = base_spec.clone();
    same.profile = spec.profile;
    if spec == same && !base.switches_read.has(m.switch) {
        return Seen::Unread;
    }
    let Ok(run) = sim::run_owned(spec) else {
        // The release's spec ran, and the mutant's differs only in its
        // release: a refusal would be a bug in sim, shown as a change.
        return Seen::Changed {
            kill: false,
            others: vec!["not run".to_owned()],
        };
    };
    if run.history == base.history && run.violations == base.violations {
        return Seen::Same;
    }
    // Only a defect the release's run lacks can be the fix's: for one it
    // shows too, the release (the mutant plus the fix) still shows it,
    // so attribution cannot name the fix. Attributing only the new ones
    // skips the experiments of most changed runs and names the same.
    if defect_invariants(&run).all(|i| base_defects.contains(&i)) {
        return Seen::Changed {
            kill: false,
            others: Vec::new(),
        };
    }
    let defects = crate::defects_attributed(&run.spec, &run, &sim::Engine::Fast);
    let name = m.switch.name();
    let kill = defects
        .iter()
        .any(|d| d.fixed_by.as_ref().is_some_and(|f| f.switch == name));
    let others = defects
        .iter()
        .filter(|d| !base_defects.contains(&d.invariant))
        .filter(|d| d.fixed_by.as_ref().is_none_or(|f| f.switch != name))
        .map(label)
        .collect();
    Seen::Changed { kill, others }
}

/// The invariants `run` broke as defects.
fn defect_invariants(run: &Run) -> impl Iterator<Item = Invariant> + '_ {
    run.violations
        .iter()
        .filter(|v| v.cause == Cause::Defect)
        .map(|v| v.invariant)
}

/// A defect's attribution in a few words: `#4871 (unlock-latch)`,
/// `#7272 (open)`, `unreported (lock-left-behind)`, `unattributed
/// (mutual-exclusion)`.
pub(super) fn label(d: &Defect) -> String {
    if let Some(fix) = &d.fixed_by {
        return format!("{} ({})", fix.upstream, fix.switch);
    }
    match d.open_issue {
        Some(open) if open.upstream == crate::open_issue::UNREPORTED => {
            format!("unreported ({})", d.invariant)
        }
        Some(open) => format!("{} (open)", open.upstream),
        None => format!("unattributed ({})", d.invariant),
    }
}
