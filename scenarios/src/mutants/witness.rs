//! Whether the model can show a mutant at all: the history scenario of
//! its fix (`scenarios/history/`), run under the mutant.
//!
//! A history scenario proves its fix on the releases either side of it.
//! It is run under the mutant given the affected release's switches that
//! fix nothing (its timer tick, its thread queue, its retry pauses), since
//! a scenario's timing is written for that release: 4.7.0's random tick
//! alone can move a callback out of the window the scenario aims at. If it
//! still breaks, the defect is reachable with every other fix of the
//! release in force and a search that missed it has a gap. If it holds,
//! later fixes may have closed the defect's path, or the scenario may
//! only have missed its window: a hint, which the report shows, never a
//! verdict of equivalence.

use serde::Serialize;
use sim::Cause;

use super::Mutant;
use crate::{Scenario, Trial, history};

/// What a mutant's history scenario gave under the mutant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Witness {
    /// The history scenario.
    pub scenario: String,
    /// The release it ran under: the mutant with the affected release's
    /// switches that fix nothing.
    pub release: String,
    /// Whether it broke its row's invariant as a defect there (on its
    /// own seed).
    pub breaks: bool,
}

/// The first history scenario of `m`'s fix, run under the mutant; `None`
/// when the fix has none.
pub(super) fn witness(m: Mutant) -> Option<Witness> {
    let scenario: Scenario = history().into_iter().find(|s| {
        s.history
            .as_ref()
            .is_some_and(|h| h.switch == m.switch.name())
    })?;
    let row = scenario.history.clone()?;
    let release = crate::defect::like(m.mutated(), row.affected);
    let breaks = Trial::run(&scenario, None, Some(release)).is_ok_and(|t| {
        t.run
            .violations
            .iter()
            .any(|v| v.invariant == row.breaks && v.cause == Cause::Defect)
    });
    Some(Witness {
        scenario: scenario.name,
        release: release.to_string(),
        breaks,
    })
}
