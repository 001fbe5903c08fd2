//! The mutation sweep: every mutant of a release over a seed range.

use std::sync::atomic::{AtomicBool, Ordering};

use lockcore::Release;
use rayon::prelude::*;

use super::probe::{SeedSeen, probe_seed};
use super::score::{MutantScore, MutationReport};
use super::{Mutant, mutants_of};
use crate::{InputError, SeedRange};

/// What to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MutantsOptions {
    /// The release whose fixes are removed (4.7.0, the newest, by default).
    pub release: Release,
    /// The seeds each mutant is explored on.
    pub range: SeedRange,
    /// Stop exploring a mutant at its first kill (its killing runs are
    /// then 1, and its other counts cover the seeds up to the kill).
    pub first: bool,
    /// How each seed's scenario is drawn (the library's default is
    /// uniform swarm; `locksim mutants` defaults to the portfolio).
    pub strategy: sim::Strategy,
}

impl MutantsOptions {
    /// The options, or why the release has nothing to measure.
    pub fn new(release: Release, range: SeedRange) -> Result<MutantsOptions, InputError> {
        if mutants_of(release).is_empty() {
            return Err(InputError::NoFixes(release.to_string()));
        }
        Ok(MutantsOptions {
            release,
            range,
            first: false,
            strategy: sim::Strategy::Uniform,
        })
    }
}

/// Seeds run in parallel at a time: a stop is seen between batches, and
/// with `first` a killed mutant is dropped from the next one.
const BATCH: u64 = 64;

/// Explores every mutant of `o.release` over `o.range` on `pool`, telling
/// `progress` each seed done; `stop` is polled between batches. The
/// report is a pure function of the options (and of where a stop fell),
/// whatever the pool's size.
pub fn mutation_sweep(
    pool: &rayon::ThreadPool,
    o: &MutantsOptions,
    stop: &AtomicBool,
    mut progress: impl FnMut(u64),
) -> MutationReport {
    let mut scores: Vec<MutantScore> = mutants_of(o.release)
        .into_iter()
        .map(MutantScore::new)
        .collect();
    let (mut failed, mut first_failure) = (0, None);
    let mut start = o.range.from();
    while start < o.range.end() && !stop.load(Ordering::SeqCst) {
        let end = start.saturating_add(BATCH).min(o.range.end());
        let active: Vec<(usize, Mutant)> = scores
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.done)
            .map(|(i, s)| (i, s.mutant))
            .collect();
        let seen: Vec<SeedSeen> = pool.install(|| {
            (start..end)
                .into_par_iter()
                .map(|seed| probe_seed(seed, o.release, o.strategy, &active))
                .collect()
        });
        for (seed, seen) in (start..end).zip(seen) {
            match seen {
                Ok(seen) => {
                    let nth = seed - o.range.from() + 1;
                    for (i, s) in seen {
                        scores[i].add(seed, nth, &s, (o.first, o.strategy));
                    }
                }
                Err(reason) => {
                    failed += 1;
                    first_failure.get_or_insert(format!("seed {seed}: {reason}"));
                }
            }
            progress(seed);
        }
        start = end;
    }
    let mut report = MutationReport {
        release: o.release.to_string(),
        seeds: o.range.to_string(),
        next: start,
        interrupted: start < o.range.end(),
        failed,
        first_failure,
        mutants: scores,
        killed: 0,
        equivalent: 0,
        survived: 0,
        score: 0.0,
        score_of_killable: 0.0,
    };
    report.tally();
    report
}
