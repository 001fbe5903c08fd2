//! Attribution shared within a sweep.
//!
//! Naming a defect's fix makes the run again under other releases, which
//! cost about 40% of a sweep when every defective run was attributed. The
//! report keeps one attribution per release and signature anyway (a
//! group's, its first run's), so a sweep attributes only the first run,
//! in seed order, of each signature, and gives later runs of the
//! signature that run's fix or open issue. Which runs are attributed
//! depends on the seed range alone, never on the number of threads.

use std::collections::{BTreeMap, BTreeSet};

use lockcore::Release;
use rayon::prelude::*;
use sim::Run;

use crate::open_issue::OpenIssue;
use crate::{Finding, Fix, Signature};

/// At most this many signatures are remembered (each a short string):
/// past it, a run of a new signature is attributed on its own, so memory
/// stays flat over any sweep.
const MAX_KNOWN: usize = 100_000;

/// A finding of a batch, with the run it came from (its spec in it)
/// while it may still need attributing.
pub(crate) type Pending = (Finding, Option<Run>);

/// The attributions a sweep has made, by release and signature.
#[derive(Default)]
pub(crate) struct Attributions {
    known: BTreeMap<(Release, Signature), (Option<Fix>, Option<OpenIssue>)>,
}

impl Attributions {
    /// Attributes the defects of `batch` (findings in seed then profile
    /// order): runs of a signature not known yet are attributed on
    /// `pool` (or the current one), the rest copy the first run's.
    pub(crate) fn settle(
        &mut self,
        batch: Vec<Pending>,
        engine: &sim::Engine,
        pool: Option<&rayon::ThreadPool>,
    ) -> Vec<Finding> {
        // The signatures whose first run is in this batch, as many as the
        // memo has room for; a run of a signature past that is attributed
        // on its own.
        let room = MAX_KNOWN.saturating_sub(self.known.len());
        let mut claimed = BTreeSet::new();
        let need: Vec<bool> = batch
            .iter()
            .map(|(f, _)| {
                let mut need = false;
                for d in &f.defects {
                    let key = (f.profile, d.signature.clone());
                    if self.known.contains_key(&key) || claimed.contains(&key) {
                        continue;
                    }
                    if claimed.len() < room {
                        claimed.insert(key);
                    }
                    need = true;
                }
                need
            })
            .collect();
        let work = || -> Vec<Finding> {
            batch
                .into_par_iter()
                .zip(need)
                .map(|((mut f, kept), need)| {
                    if let (true, Some(run)) = (need, kept) {
                        f.defects = crate::defects_attributed(&run.spec, &run, engine);
                    }
                    f
                })
                .collect()
        };
        let mut findings = match pool {
            Some(pool) => pool.install(work),
            None => work(),
        };
        for f in &mut findings {
            self.learn(f);
        }
        findings
    }

    /// Gives `f`'s defects the attribution of their signature's first
    /// run, or remembers theirs when `f` is that run.
    fn learn(&mut self, f: &mut Finding) {
        for d in &mut f.defects {
            let key = (f.profile, d.signature.clone());
            match self.known.get(&key) {
                Some((fix, open)) => {
                    d.fixed_by = fix.clone();
                    d.open_issue = *open;
                }
                None if self.known.len() < MAX_KNOWN => {
                    self.known.insert(key, (d.fixed_by.clone(), d.open_issue));
                }
                None => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;
    use crate::{SeedRange, SweepEvent};

    /// A sweep attributes the first run of each signature exactly as
    /// attributing that run alone does, and gives every later run of the
    /// signature the same fix or open issue.
    #[test]
    fn later_runs_of_a_signature_take_the_first_runs_attribution() {
        let stop = AtomicBool::new(false);
        let mut findings = Vec::new();
        crate::explore(
            SeedRange::new(0, 150).expect("a range"),
            Some(Release::REDISSON),
            &stop,
            |e| {
                if let SweepEvent::Found(f) = e {
                    findings.push(f.clone());
                }
            },
        );
        let engine = sim::Engine::Fast;
        let mut first: BTreeMap<Signature, (Option<Fix>, Option<OpenIssue>)> = BTreeMap::new();
        let mut later = 0;
        for f in &findings {
            let spec = crate::explored_spec_on(f.seed, Some(f.profile), f.workload, &engine);
            let run = engine.run(&spec).expect("an explored spec runs");
            let alone = crate::defects_attributed(&spec, &run, &engine);
            for (d, own) in f.defects.iter().zip(&alone) {
                assert_eq!(d.signature, own.signature, "seed {}", f.seed);
                let got = (d.fixed_by.clone(), d.open_issue);
                match first.get(&d.signature) {
                    Some(want) => {
                        later += 1;
                        assert_eq!(&got, want, "seed {}: {}", f.seed, d.signature);
                    }
                    None => {
                        assert_eq!(
                            got,
                            (own.fixed_by.clone(), own.open_issue),
                            "seed {}",
                            f.seed
                        );
                        first.insert(d.signature.clone(), got);
                    }
                }
            }
        }
        assert!(
            !first.is_empty() && later > 0,
            "{} signatures, {later} later runs: the test shows nothing",
            first.len()
        );
    }
}
