//! explore's defects, grouped by signature (see [`crate::Defect`]): one
//! group per release and signature, with its run count and first seed.

use std::collections::BTreeMap;

use lockcore::Release;

use crate::Finding;
pub(super) use crate::defect::DefectGroup as Group;

/// At most this many groups are kept; defects of further signatures are
/// counted, so memory stays flat however long the sweep.
pub(super) const MAX_GROUPS: usize = 1_000;

/// The groups in the order their first runs were found.
#[derive(Default)]
pub(super) struct Groups {
    groups: Vec<Group>,
    index: BTreeMap<(Release, crate::Signature), usize>,
    /// Defective runs whose signature found no room.
    pub(super) overflow: u64,
}

impl Groups {
    /// Adds each defect of `f` to its group.
    pub(super) fn offer(&mut self, f: &Finding) {
        for d in &f.defects {
            let key = (f.profile, d.signature.clone());
            if let Some(&i) = self.index.get(&key) {
                self.groups[i].runs += 1;
            } else if self.groups.len() < MAX_GROUPS {
                self.index.insert(key, self.groups.len());
                self.groups.push(Group {
                    model: f.profile,
                    invariant: d.invariant,
                    signature: d.signature.clone(),
                    fixed_by: d.fixed_by.clone(),
                    open_issue: d.open_issue,
                    runs: 1,
                    seed: f.seed,
                    replay: f.replay_command(),
                });
            } else {
                self.overflow += 1;
            }
        }
    }

    /// The groups, in the order found.
    pub(super) fn all(&self) -> &[Group] {
        &self.groups
    }

    /// Prints one paragraph per group.
    pub(super) fn print(&self, out: &mut dyn std::io::Write) {
        if self.groups.is_empty() {
            let _ = writeln!(out, "no defect: every violation has an explanation");
            return;
        }
        let _ = writeln!(out, "defects by signature ({}):", self.groups.len());
        for (n, g) in self.groups.iter().enumerate() {
            let _ = writeln!(out, "  {}. {}", n + 1, g.signature);
            let _ = writeln!(
                out,
                "     under {}: {} run(s); first: {}",
                g.model, g.runs, g.replay
            );
            let fix = crate::findings::fixed_by_text(g.fixed_by.as_ref(), g.open_issue);
            let _ = writeln!(out, "     upstream: {fix}");
        }
        if self.overflow > 0 {
            let _ = writeln!(
                out,
                "  and {} defective run(s) of further signatures (more than {MAX_GROUPS})",
                self.overflow
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
        Finding {
            seed,
            profile: Release::REDISSON,
            broken: Vec::new(),
            history_len: 0,
            workload: sim::Workload::default(),
            defects: vec![Defect {
                invariant: Invariant::MutualExclusion,
                signature: signed(kind),
                fixed_by: None,
                open_issue: None,
            }],
            engine: sim::Engine::Fast,
        }
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
