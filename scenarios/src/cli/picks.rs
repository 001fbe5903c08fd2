//! Which of explore's violations get shrunk: defects first.

use std::collections::BTreeSet;

use lockcore::Release;
use sim::Invariant;

use crate::Finding;

/// One violation to shrink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Pick {
    pub(super) seed: u64,
    pub(super) profile: Release,
    pub(super) invariant: Invariant,
    /// Whether the oracle called it a defect (its shrinking keeps that).
    pub(super) defect: bool,
}

/// The violations to shrink: the first defect and the first violation of
/// each (invariant, profile) in the order found, defects displacing the
/// others when the budget is full, so a small budget still covers every
/// kind of failure, and never more than the budget, so memory stays flat
/// however long the sweep.
pub(super) struct Picks {
    limit: usize,
    seen: BTreeSet<(Invariant, Release, bool)>,
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

    /// The first violation of each invariant and profile, and the first
    /// defect of each: a defect takes the place of the latest pick that
    /// is not one when the limit is reached.
    pub(super) fn offer(&mut self, f: &Finding) {
        for b in &f.broken {
            let defect = b.cause == sim::Cause::Defect;
            if self.limit == 0 || self.seen.contains(&(b.invariant, f.profile, defect)) {
                continue;
            }
            let pick = Pick {
                seed: f.seed,
                profile: f.profile,
                invariant: b.invariant,
                defect,
            };
            if self.picked.len() < self.limit {
                self.picked.push(pick);
            } else if let Some(i) = defect.then(|| self.picked.iter().rposition(|p| !p.defect)) {
                let Some(i) = i else { continue };
                self.picked[i] = pick;
            } else {
                continue;
            }
            self.seen.insert((b.invariant, f.profile, defect));
        }
    }

    /// Whether nothing was picked.
    pub(super) fn is_empty(&self) -> bool {
        self.picked.is_empty()
    }

    /// The picks, defects first, each group in the order found.
    pub(super) fn in_order(mut self) -> Vec<Pick> {
        self.picked.sort_by_key(|p| !p.defect);
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
            profile: Release::REDISSON,
            broken: vec![Broken {
                invariant,
                at: SimTime::ZERO,
                detail: String::new(),
                cause,
            }],
            history_hash: String::new(),
            kinds: sim::SwarmKinds::Classic,
        }
    }

    /// With a budget of one, a later defect displaces the first misuse,
    /// and defects come out first.
    #[test]
    fn defects_displace_and_lead() {
        let misuse = Cause::Misuse { why: "x".into() };
        let mut p = Picks::new(2);
        p.offer(&finding(1, Invariant::MutualExclusion, misuse.clone()));
        p.offer(&finding(2, Invariant::LockLeftBehind, misuse));
        p.offer(&finding(3, Invariant::MutualExclusion, Cause::Defect));
        let got: Vec<(u64, bool)> = p.in_order().iter().map(|p| (p.seed, p.defect)).collect();
        assert_eq!(got, [(3, true), (1, false)]);
    }
}
