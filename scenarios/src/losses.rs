//! Expected losses: explore's violations that are not defects, counted by
//! cause: beyond the guarantee, by the kind of fault the oracle blamed,
//! and misuse. Counts only, with the first run of each, so a sweep of any
//! length keeps flat memory.

use std::collections::{BTreeMap, BTreeSet};

use lockcore::Release;
use sim::Cause;

use crate::Finding;
use crate::explain::{explaining_fault, fault_kind};

/// Explore's expected losses, by cause and model.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Losses {
    /// Runs per (cause, model); a run counts once per cause it shows.
    counts: BTreeMap<(String, Release), u64>,
    /// The first run of each cause: its replay command.
    first: BTreeMap<String, String>,
}

impl Losses {
    /// Counts the expected losses of `f` (its defects are counted apart).
    pub(crate) fn offer(&mut self, f: &Finding) {
        let mut causes = BTreeSet::new();
        // The spec is made again only for a run that needs its faults
        // named; generating it costs far less than the run did.
        let mut spec = None;
        for b in &f.broken {
            let label = match &b.cause {
                Cause::Defect => continue,
                Cause::Misuse { .. } => "misuse".to_owned(),
                Cause::BeyondGuarantee { .. } => {
                    let spec = spec.get_or_insert_with(|| {
                        f.spec().unwrap_or_else(|_| {
                            crate::explored_spec_on(f.seed, Some(f.profile), f.workload, &f.engine)
                        })
                    });
                    match explaining_fault(spec, &b.cause) {
                        Some(fault) => format!("beyond-guarantee: {}", fault_kind(fault)),
                        None => "beyond-guarantee: (no fault named)".to_owned(),
                    }
                }
            };
            causes.insert(label);
        }
        for cause in causes {
            self.first
                .entry(cause.clone())
                .or_insert_with(|| f.replay_command());
            *self.counts.entry((cause, f.profile)).or_insert(0) += 1;
        }
    }

    /// Each cause, in name order (beyond-guarantee's kinds, then misuse,
    /// shown even when no run was a misuse), with its runs under each of
    /// `models` and its first run's replay (none for no run).
    pub(crate) fn rows(&self, models: &[Release]) -> Vec<(String, Vec<u64>, Option<String>)> {
        let mut causes: BTreeMap<String, Option<String>> = self
            .first
            .iter()
            .map(|(cause, first)| (cause.clone(), Some(first.clone())))
            .collect();
        causes.entry("misuse".to_owned()).or_insert(None);
        causes
            .into_iter()
            .map(|(cause, first)| {
                let counts = models
                    .iter()
                    .map(|m| self.counts.get(&(cause.clone(), *m)).copied().unwrap_or(0))
                    .collect();
                (cause, counts, first)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seeds 0..40 under redisson: every expected loss is counted under a
    /// named fault kind or misuse, each cause keeps its first run, and a
    /// run is counted once per cause however many invariants it broke.
    #[test]
    fn losses_are_counted_by_fault_kind() {
        let mut losses = Losses::default();
        let mut runs_with_losses = 0;
        for seed in 0..40 {
            let spec = crate::explored_spec_with(seed, Some(Release::REDISSON), Default::default());
            let run = sim::run(&spec).unwrap();
            let broken: Vec<crate::Broken> = crate::Outcome::broken_of(&run);
            if broken.iter().any(|b| b.cause != Cause::Defect) {
                runs_with_losses += 1;
            }
            losses.offer(&Finding {
                seed,
                branch: None,
                profile: Release::REDISSON,
                broken,
                history_len: 0,
                workload: Default::default(),
                defects: Vec::new(),
                engine: sim::Engine::Fast,
            });
        }
        let rows = losses.rows(&[Release::REDISSON]);
        assert!(!rows.is_empty());
        for (cause, counts, first) in &rows {
            assert!(
                cause == "misuse" || cause.starts_with("beyond-guarantee: "),
                "{cause}"
            );
            assert!(counts[0] <= runs_with_losses);
            assert!(counts[0] >= 1 || cause == "misuse", "{cause}");
            match first {
                Some(first) => assert!(first.starts_with("locksim replay "), "{first}"),
                None => assert_eq!(cause, "misuse"),
            }
        }
        assert!(
            rows.iter()
                .all(|(c, ..)| c != "beyond-guarantee: (no fault named)"),
            "{rows:?}"
        );
    }
}
