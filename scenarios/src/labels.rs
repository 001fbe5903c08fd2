//! Whether a seed's label is a function of its run: each sampled seed's
//! finding (what broke, each defect's signature, fix or open issue)
//! explored alone, against the same seed's finding inside a sweep of a
//! whole range (issue 48: 3.19.1 seed 51272 was "open upstream: #4109"
//! alone and "fixed by #4822" inside seeds 0..60000).
//!
//! `cargo test` checks a few thousand seeds
//! (`attribution::tests`); `cargo run --release --example labels` checks
//! 10,000 sampled seeds of three releases inside 100,000-seed ranges and
//! writes the figures to `reports/labels.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::AtomicBool;

use lockcore::Release;
use rand::SeedableRng;
use rand::seq::index::sample;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use sim::Workload;

use crate::{Finding, SeedRange, SweepEvent};

/// What a check of one release's labels found.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelCheck {
    /// The release swept.
    pub release: Release,
    /// The range swept.
    pub range: SeedRange,
    /// How many seeds were compared.
    pub sampled: usize,
    /// How many of them had a defect (attributed) inside the range.
    pub with_defects: usize,
    /// The seeds whose finding alone differs from theirs inside the
    /// range, in seed order (none when labels are a function of the run).
    pub mismatches: Vec<u64>,
}

/// `count` distinct seeds of `range`, drawn from `draw` (the same draw,
/// the same seeds), in seed order.
pub fn sample_seeds(range: SeedRange, count: usize, draw: u64) -> Vec<u64> {
    let len = usize::try_from(range.count()).unwrap_or(usize::MAX);
    let mut rng = ChaCha8Rng::seed_from_u64(draw);
    let mut seeds: Vec<u64> = sample(&mut rng, len, count.min(len))
        .into_iter()
        .map(|i| range.from() + i as u64)
        .collect();
    seeds.sort_unstable();
    seeds
}

/// Sweeps `range` under `release` on `pool`, then explores each seed of
/// `seeds` (seeds of `range`) alone, and compares their findings.
pub fn check_labels(
    pool: &rayon::ThreadPool,
    release: Release,
    range: SeedRange,
    seeds: &[u64],
) -> LabelCheck {
    check_labels_with(pool, (release, Workload::default()), range, seeds)
}

/// [`check_labels`] of runs drawn from `workload`: a portfolio's seed
/// with its branches (each compared with the same branch explored alone).
pub fn check_labels_with(
    pool: &rayon::ThreadPool,
    (release, workload): (Release, Workload),
    range: SeedRange,
    seeds: &[u64],
) -> LabelCheck {
    let wanted: BTreeSet<u64> = seeds.iter().copied().collect();
    let stop = AtomicBool::new(false);
    let mut inside: BTreeMap<u64, Vec<Finding>> = BTreeMap::new();
    let on = (workload, &sim::Engine::Fast);
    crate::explore_workload_on(pool, range, Some(release), on, &stop, |e| {
        if let SweepEvent::Found(f) = e
            && wanted.contains(&f.seed)
        {
            inside.entry(f.seed).or_default().push(f.clone());
        }
    });
    let alone: Vec<Vec<Finding>> = pool.install(|| {
        seeds
            .par_iter()
            .map(|&seed| explored_alone(pool, seed, release, workload))
            .collect()
    });
    let mismatches = seeds
        .iter()
        .zip(&alone)
        .filter(|(seed, alone)| inside.get(seed).map_or(&[][..], Vec::as_slice) != alone.as_slice())
        .map(|(seed, _)| *seed)
        .collect();
    LabelCheck {
        release,
        range,
        sampled: seeds.len(),
        with_defects: (inside.values().flatten())
            .filter(|f| !f.defects.is_empty())
            .count(),
        mismatches,
    }
}

/// `locksim explore --from SEED --seeds 1`'s findings (its run's and its
/// branches').
fn explored_alone(
    pool: &rayon::ThreadPool,
    seed: u64,
    release: Release,
    workload: Workload,
) -> Vec<Finding> {
    let stop = AtomicBool::new(false);
    let mut found = Vec::new();
    let one = SeedRange::new(seed, 1).expect("one seed is a range");
    let on = (workload, &sim::Engine::Fast);
    crate::explore_workload_on(pool, one, Some(release), on, &stop, |e| {
        if let SweepEvent::Found(f) = e {
            found.push(f.clone());
        }
    });
    found
}
