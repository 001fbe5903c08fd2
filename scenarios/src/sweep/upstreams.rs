//! explore's defective runs by the upstream issue each is attributed to:
//! every fix or open issue any run of the sweep names, with its run count
//! and first seed. A signature group is named by its first run, and
//! runs of one signature may take different paths (3.19.1's locks left
//! behind: #4822's or #4109's), so the groups alone would hide an issue
//! named only by later runs of a group (issue 48).

use lockcore::Release;
use serde::Serialize;

use super::tally::Tally;
use crate::{Finding, Fix, OpenIssue};

/// At most this many entries are kept (one per release and upstream
/// issue, so a few dozen in practice); runs naming further issues are
/// counted, so memory stays flat however long the sweep.
const MAX_UPSTREAMS: usize = 1_000;

/// The runs of one release attributed to one upstream issue.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(super) struct Upstream {
    /// The release (model) they ran under.
    pub(super) model: Release,
    /// The upstream issue (`#4822`, `#7272 (PR #7277, unmerged)`, an open
    /// `#4109`, or `unreported`); `None` for defects nothing names.
    pub(super) upstream: Option<String>,
    /// The fix that removes their defect, when one does.
    pub(super) fixed_by: Option<Fix>,
    /// Else the open issue whose path they took, if known.
    pub(super) open_issue: Option<OpenIssue>,
    /// How many runs had a defect attributed to it (a run counts once
    /// however many of its defects are).
    pub(super) runs: u64,
    /// The first of them.
    pub(super) seed: u64,
    /// The command that replays the first.
    pub(super) replay: String,
}

/// What identifies an attribution: the fix's switch and issue, or the
/// open issue.
type Key = (Release, Option<String>, Option<String>);

/// The entries, in the order their first runs were found.
pub(super) struct Upstreams {
    entries: Tally<Key, Upstream>,
}

impl Default for Upstreams {
    fn default() -> Self {
        Upstreams {
            entries: Tally::new(MAX_UPSTREAMS),
        }
    }
}

impl Upstreams {
    /// Counts `f` once under each attribution its defects have.
    pub(super) fn offer(&mut self, f: &Finding) {
        let mut seen: Vec<Key> = Vec::new();
        for d in &f.defects {
            let upstream = match (&d.fixed_by, d.open_issue) {
                (Some(fix), _) => Some(fix.upstream.clone()),
                (None, Some(open)) => Some(open.upstream.to_owned()),
                (None, None) => None,
            };
            let switch = d.fixed_by.as_ref().map(|fix| fix.switch.clone());
            let key = (f.profile, upstream.clone(), switch);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key.clone());
            let first = || Upstream {
                model: f.profile,
                upstream,
                fixed_by: d.fixed_by.clone(),
                open_issue: d.open_issue,
                runs: 1,
                seed: f.seed,
                replay: f.replay_command(),
            };
            self.entries.offer(key, first, |e| e.runs += 1);
        }
    }

    /// The entries, in the order found.
    pub(super) fn all(&self) -> &[Upstream] {
        self.entries.all()
    }

    /// Runs naming an issue that found no room.
    pub(super) fn overflow(&self) -> u64 {
        self.entries.overflow
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Defect;
    use sim::Invariant;

    fn defect(invariant: Invariant, upstream: Option<&str>) -> Defect {
        Defect {
            invariant,
            signature: crate::Signature {
                invariant,
                steps: Vec::new(),
            },
            fixed_by: upstream.map(|u| Fix {
                switch: "some-switch".to_owned(),
                upstream: u.to_owned(),
                release: "3.20.1".to_owned(),
            }),
            open_issue: None,
        }
    }

    use super::super::finding_with as finding;

    /// Runs are counted per issue, once each even when two of their
    /// defects name it; each issue keeps its first seed, and a defect
    /// nothing names is counted apart.
    #[test]
    fn runs_count_once_per_issue_with_the_first_seed() {
        let mut u = Upstreams::default();
        let (me, lw) = (Invariant::MutualExclusion, Invariant::LostWakeup);
        u.offer(&finding(
            3,
            vec![defect(me, Some("#4822")), defect(lw, Some("#4822"))],
        ));
        u.offer(&finding(5, vec![defect(me, Some("#6303"))]));
        u.offer(&finding(
            8,
            vec![defect(me, Some("#4822")), defect(lw, None)],
        ));
        let got: Vec<(Option<&str>, u64, u64)> = u
            .all()
            .iter()
            .map(|e| (e.upstream.as_deref(), e.runs, e.seed))
            .collect();
        assert_eq!(
            got,
            [(Some("#4822"), 2, 3), (Some("#6303"), 1, 5), (None, 1, 8)]
        );
        assert_eq!(u.all()[1].replay, "locksim replay 5 --profile redisson");
    }
}
