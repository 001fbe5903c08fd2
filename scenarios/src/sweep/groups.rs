//! explore's defects, grouped by signature (see [`crate::Defect`]): one
//! group per release and signature, with its run count and first seed.

use lockcore::Release;

use super::tally::Tally;
use crate::Finding;
pub(super) use crate::defect::DefectGroup as Group;

/// At most this many groups are kept; defects of further signatures are
/// counted, so memory stays flat however long the sweep.
pub(super) const MAX_GROUPS: usize = 1_000;

/// The groups in the order their first runs were found.
pub(super) struct Groups {
    groups: Tally<(Release, crate::Signature), Group>,
}

impl Default for Groups {
    fn default() -> Self {
        Groups {
            groups: Tally::new(MAX_GROUPS),
        }
    }
}

impl Groups {
    /// Adds each defect of `f` to its group.
    pub(super) fn offer(&mut self, f: &Finding) {
        for d in &f.defects {
            let first = || Group {
                model: f.profile,
                invariant: d.invariant,
                signature: d.signature.clone(),
                fixed_by: d.fixed_by.clone(),
                open_issue: d.open_issue,
                runs: 1,
                seed: f.seed,
                branch: f.branch.clone(),
                replay: f.replay_command(),
            };
            let key = (f.profile, d.signature.clone());
            self.groups.offer(key, first, |g| g.runs += 1);
        }
    }

    /// The groups, in the order found.
    pub(super) fn all(&self) -> &[Group] {
        self.groups.all()
    }

    /// Defective runs whose signature found no room.
    pub(super) fn overflow(&self) -> u64 {
        self.groups.overflow
    }

    /// Prints one paragraph per group.
    pub(super) fn print(&self, out: &mut dyn std::io::Write) {
        let groups = self.all();
        if groups.is_empty() {
            let _ = writeln!(out, "no defect: every violation has an explanation");
            return;
        }
        let _ = writeln!(out, "defects by signature ({}):", groups.len());
        for (n, g) in groups.iter().enumerate() {
            let _ = writeln!(out, "  {}. {}", n + 1, g.signature);
            let _ = writeln!(
                out,
                "     under {}: {} run(s); first: {}",
                g.model, g.runs, g.replay
            );
            let fix = crate::findings::fixed_by_text(g.fixed_by.as_ref(), g.open_issue);
            let _ = writeln!(out, "     upstream: {fix}");
        }
        if self.groups.overflow > 0 {
            let _ = writeln!(
                out,
                "  and {} defective run(s) of further signatures (more than {MAX_GROUPS})",
                self.groups.overflow
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Defect;
    use sim::Invariant;

    /// A signature of one step, a record of kind `kind`.
    fn signed(kind: &'static str) -> crate::Signature {
        crate::Signature {
            invariant: Invariant::MutualExclusion,
            steps: vec![crate::Step::Record { kind }],
        }
    }

    fn finding(seed: u64, kind: &'static str) -> Finding {
        let defect = Defect {
            invariant: Invariant::MutualExclusion,
            signature: signed(kind),
            fixed_by: None,
            open_issue: None,
        };
        super::super::finding_with(seed, vec![defect])
    }

    /// Runs with one signature fold into one group that keeps the first
    /// seed; a new signature opens a group after it.
    #[test]
    fn runs_fold_by_signature_in_order_found() {
        let mut g = Groups::default();
        g.offer(&finding(7, "crash"));
        g.offer(&finding(9, "drop"));
        g.offer(&finding(12, "crash"));
        let got: Vec<(String, u64, u64)> = g
            .all()
            .iter()
            .map(|g| (g.signature.to_string(), g.runs, g.seed))
            .collect();
        let line = |kind: &str| format!("mutual-exclusion: {kind}");
        assert_eq!(got, [(line("crash"), 2, 7), (line("drop"), 1, 9)]);
        assert_eq!(g.all()[0].replay, "locksim replay 7 --profile redisson");
    }
}
