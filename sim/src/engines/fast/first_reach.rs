//! When a run first passed each place of the lock's algorithm: the
//! instant a branch of it forks at (`crate::branch`). Noting it reads the
//! clients' machines after each event and changes nothing of the run.

use lockcore::{Reached, Sometimes};

use crate::SimTime;

/// The places passed so far, and the instant each was first passed, in
/// the order they were.
#[derive(Debug, Default)]
pub(crate) struct FirstReach {
    seen: Reached,
    at: Vec<(Sometimes, SimTime)>,
}

impl FirstReach {
    /// Notes the places of `now` not passed before as first passed at
    /// `when`.
    pub(crate) fn note(&mut self, now: Reached, when: SimTime) {
        if now == self.seen {
            return;
        }
        for place in now.iter().filter(|p| !self.seen.has(*p)) {
            self.at.push((place, when));
        }
        self.seen = now;
    }

    /// Each place passed, with the instant it was first passed.
    pub(crate) fn into_firsts(self) -> Vec<(Sometimes, SimTime)> {
        self.at
    }
}
