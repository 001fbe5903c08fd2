//! Work done by the checkers, counted in elementary steps rather than
//! timed, so a test can hold every checker to a cost linear (or n log n)
//! in the history.

use std::cell::Cell;

use crate::History;
use crate::model::history::Record;

/// What the checkers tick as they go: a record visited, or one probe of
/// a binary search. Generic, so that [`crate::check_all`] (every explored
/// run) counts nothing at no cost, and [`crate::check_all_counted`] counts
/// with [`Work`]: ticking a shared counter on every visit was a hundredth
/// of an explored seed.
pub(crate) trait Count {
    /// Counts `n` steps.
    fn tick(&self, n: u64);

    /// The history's records with their indexes, each visit counted.
    fn records<'w, 'h: 'w>(
        &'w self,
        history: &'h History,
    ) -> impl Iterator<Item = (usize, &'h Record)> + 'w {
        history.iter().inspect(|_| self.tick(1))
    }

    /// Counts one binary search over `len` items (its probes).
    fn search(&self, len: usize) {
        self.tick(u64::from(usize::BITS - len.leading_zeros()) + 1);
    }
}

/// A counter of elementary steps; [`crate::check_all_counted`] reports
/// the total.
#[derive(Debug, Default)]
pub(crate) struct Work(Cell<u64>);

impl Count for Work {
    fn tick(&self, n: u64) {
        self.0.set(self.0.get().saturating_add(n));
    }
}

impl Work {
    /// The steps counted so far.
    pub(crate) fn total(&self) -> u64 {
        self.0.get()
    }
}

/// No counting: what every run's checkers use.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Uncounted;

impl Count for Uncounted {
    fn tick(&self, _: u64) {}
}

#[cfg(test)]
mod tests {
    use crate::steps;
    use proptest::prelude::*;

    use crate::{SimSpec, Step, check_all_counted, generate};

    /// A generated spec made `k` times longer: every thread repeats its
    /// script `k` times, and the horizon grows to match.
    fn scaled(seed: u64, k: u32) -> SimSpec {
        let mut spec = generate(seed, None);
        for c in &mut spec.clients {
            for t in &mut c.threads {
                let steps = std::mem::take(&mut t.steps);
                t.steps = vec![Step::Repeat(steps::Repeat { times: k, steps })];
            }
        }
        spec.horizon_ms *= u64::from(k);
        spec
    }

    /// The bound every history must meet: a constant number of visits per
    /// record per checker, plus a few binary searches per record.
    fn bound(records: usize) -> u64 {
        let n = records as u64 + 2;
        12 * n * (u64::from(u64::BITS - n.leading_zeros()) + 1)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Issue 10: the lost-wakeup checker once scanned the whole history
        /// for every waiting call (two clients doing 32,000 rounds took
        /// 187 s). Over random scripts and fault plans scaled up 1, 8 and
        /// 64 times, the checkers' counted work stays within
        /// O(n log n) of the history's length, and grows with it, not
        /// with its square.
        #[test]
        fn checker_work_is_n_log_n(seed in any::<u64>()) {
            let mut last: Option<(usize, u64)> = None;
            for k in [1, 8, 64] {
                let run = crate::run(&scaled(seed, k)).expect("generated specs are valid");
                let n = run.history.len();
                let (_, work) = check_all_counted(&run.history);
                prop_assert!(work <= bound(n), "k={k}: {work} steps for {n} records");
                if let Some((n0, w0)) = last {
                    // Per record, work may grow by the log factor only.
                    let per0 = w0 as f64 / n0.max(1) as f64;
                    let per = work as f64 / n.max(1) as f64;
                    prop_assert!(per <= per0 * 2.0 + 6.0, "k={k}: {per:.1}/record after {per0:.1}");
                }
                last = Some((n, work));
            }
        }
    }
}
