//! Which of explore's violations get shrunk: defects first.

use std::collections::BTreeSet;

use lockcore::Release;
use sim::Invariant;

use crate::Finding;

/// One violation to shrink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Pick {
    pub(super) seed: u64,
    /// The branch of the seed's run it is, if it is one.
    pub(super) branch: Option<sim::BranchPath>,
    pub(super) profile: Release,
    pub(super) invariant: Invariant,
    /// The oracle's cause (`defect`, `beyond-guarantee`, `misuse`): its
    /// shrinking keeps it, so a loss a fault explains does not shrink into
    /// a defect, nor a defect into a loss.
    pub(super) cause: &'static str,
}

impl Pick {
    /// Whether the oracle called it a defect.
    pub(super) fn defect(&self) -> bool {
        self.cause == "defect"
    }
}

/// The expected losses to shrink (defects are shrunk by signature, see
/// `groups`): the first violation of each (invariant, profile) that is
/// not a defect, in the order found, never more than the budget, so
/// memory stays flat however long the sweep.
pub(super) struct Picks {
    limit: usize,
    seen: BTreeSet<(Invariant, Release)>,
    picked: Vec<Pick>,
}

impl Picks {
    pub(super) fn new(limit: usize) -> Picks {
        Picks {
            limit,
            seen: BTreeSet::new(),
            picked: Vec::new(),
        }
    }

    /// Picks the first violation of each invariant and profile that is
    /// not a defect, while the budget lasts.
    pub(super) fn offer(&mut self, f: &Finding) {
        for b in &f.broken {
            if b.cause == sim::Cause::Defect
                || self.picked.len() >= self.limit
                || !self.seen.insert((b.invariant, f.profile))
            {
                continue;
            }
            self.picked.push(Pick {
                seed: f.seed,
                branch: f.branch.clone(),
                profile: f.profile,
                invariant: b.invariant,
                cause: b.cause.name(),
            });
        }
    }

    /// Whether nothing was picked.
    pub(super) fn is_empty(&self) -> bool {
        self.picked.is_empty()
    }

    /// The picks, in the order found.
    pub(super) fn in_order(self) -> Vec<Pick> {
        self.picked
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Broken;
    use sim::{Cause, SimTime};

    fn finding(seed: u64, invariant: Invariant, cause: Cause) -> Finding {
        Finding {
            seed,
            branch: None,
            profile: Release::REDISSON,
            broken: vec![Broken {
                invariant,
                at: SimTime::ZERO,
                detail: String::new(),
                cause,
            }],
            history_len: 0,
            workload: sim::Workload::CLASSIC,
            defects: Vec::new(),
            engine: sim::Engine::Fast,
        }
    }

    /// Defects are left to the groups; the first violation of each
    /// invariant is picked while the budget lasts.
    #[test]
    fn first_expected_loss_of_each_invariant_within_budget() {
        let misuse = Cause::Misuse { why: "x".into() };
        let mut p = Picks::new(2);
        p.offer(&finding(1, Invariant::MutualExclusion, Cause::Defect));
        p.offer(&finding(2, Invariant::MutualExclusion, misuse.clone()));
        p.offer(&finding(3, Invariant::MutualExclusion, misuse.clone()));
        p.offer(&finding(4, Invariant::LockLeftBehind, misuse.clone()));
        p.offer(&finding(5, Invariant::Liveness, misuse));
        let got: Vec<u64> = p.in_order().iter().map(|p| p.seed).collect();
        assert_eq!(got, [2, 4]);
    }
}
