//! A sweep's coverage: for each profile and each declared `sometimes`
//! point ([`sim::Point`]), how many runs reached it and the first seed
//! that did.
//!
//! Runs are counted in seed then profile order, as the sweep hands them
//! over, so the counts and first seeds are the same whatever the number
//! of threads the runs were made on. The table is one row per point and
//! profile, so its size does not grow with the number of seeds.

use std::collections::BTreeMap;
use std::io::Write;

use lockcore::Release;
use serde::Serialize;
use sim::{Coverage, Point};

/// A point is rare when fewer than one run in this many reached it: the
/// yardstick a guided search (issue 48 item 4) aims at.
pub const RARE_PER: u64 = 10_000;

/// The runs of one profile that reached one point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PointCount {
    /// How many runs reached it.
    pub runs: u64,
    /// The first seed that did.
    pub seed: u64,
}

/// The coverage of a sweep, per profile.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CoverageCounts {
    /// Runs counted, per profile.
    runs: BTreeMap<Release, u64>,
    /// Runs reaching each point, per profile.
    points: BTreeMap<(Release, Point), PointCount>,
}

/// One point's row for one profile: what `--coverage` prints and
/// `--json` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CoverageRow {
    /// The profile (model) the runs ran under.
    pub model: Release,
    /// The point.
    pub point: Point,
    /// How many runs reached it.
    pub runs: u64,
    /// The first seed that did, if any.
    pub seed: Option<u64>,
    /// Whether fewer than one run in [`RARE_PER`] reached it (never
    /// reached included).
    pub rare: bool,
}

impl CoverageCounts {
    /// Counts one run of `profile` (seed `seed`) that reached `reached`;
    /// runs must come in seed order for the first seeds to be the sweep's.
    pub fn add(&mut self, profile: Release, seed: u64, reached: Coverage) {
        *self.runs.entry(profile).or_insert(0) += 1;
        for point in reached.iter() {
            self.points
                .entry((profile, point))
                .and_modify(|c| c.runs += 1)
                .or_insert(PointCount { runs: 1, seed });
        }
    }

    /// How many runs of `profile` were counted.
    pub fn runs_of(&self, profile: Release) -> u64 {
        self.runs.get(&profile).copied().unwrap_or(0)
    }

    /// The runs of `profile` that reached `point`, and the first seed.
    pub fn of(&self, profile: Release, point: Point) -> Option<PointCount> {
        self.points.get(&(profile, point)).copied()
    }

    /// Every point's row for each profile counted, profiles in order and
    /// points in declaration order.
    pub fn rows(&self) -> Vec<CoverageRow> {
        let mut rows = Vec::new();
        for (&model, &runs) in &self.runs {
            for &point in Point::ALL {
                let count = self.of(model, point);
                let reached = count.map_or(0, |c| c.runs);
                rows.push(CoverageRow {
                    model,
                    point,
                    runs: reached,
                    seed: count.map(|c| c.seed),
                    rare: is_rare(reached, runs),
                });
            }
        }
        rows
    }
}

impl CoverageCounts {
    /// `explore --coverage`'s text: per profile, each point's runs and
    /// first seed, then a warning naming the rare points.
    pub fn print(&self, out: &mut dyn Write) {
        for (&model, &runs) in &self.runs {
            let _ = writeln!(
                out,
                "coverage under {model} ({runs} runs): runs that reached each point, and the first seed"
            );
            let rows: Vec<CoverageRow> = self
                .rows()
                .into_iter()
                .filter(|r| r.model == model)
                .collect();
            for r in &rows {
                let first = match r.seed {
                    Some(seed) => format!("first seed {seed}"),
                    None => "never reached".to_owned(),
                };
                let _ = writeln!(out, "  {:<32} {:>9}  {first}", r.point.name(), r.runs);
            }
            let rare: Vec<String> = rows
                .iter()
                .filter(|r| r.rare)
                .map(|r| format!("{} ({})", r.point.name(), r.runs))
                .collect();
            if !rare.is_empty() {
                let _ = writeln!(
                    out,
                    "warning: under {model}, {} of {} points reached in fewer than 1 of {RARE_PER} runs: {}",
                    rare.len(),
                    rows.len(),
                    rare.join(", ")
                );
            }
        }
    }
}

/// Whether `reached` of `runs` is fewer than one in [`RARE_PER`]
/// (`reached * RARE_PER < runs`, or none at all).
pub fn is_rare(reached: u64, runs: u64) -> bool {
    reached == 0 || u128::from(reached) * u128::from(RARE_PER) < u128::from(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// First seeds are the first counted, counts add up per profile, and a
    /// point below one in ten thousand (or never reached) is rare.
    #[test]
    fn counts_first_seeds_and_rarity() {
        let mut c = CoverageCounts::default();
        let crash = Coverage::EMPTY.with(Point::CrashWhileHolding);
        let both = crash.with(Point::RenewalFailed);
        c.add(Release::REDISSON, 4, crash);
        c.add(Release::REDISSON, 5, both);
        c.add(Release::FENCED, 5, Coverage::EMPTY);
        assert_eq!(
            c.of(Release::REDISSON, Point::CrashWhileHolding),
            Some(PointCount { runs: 2, seed: 4 })
        );
        assert_eq!(
            c.of(Release::REDISSON, Point::RenewalFailed),
            Some(PointCount { runs: 1, seed: 5 })
        );
        assert_eq!(c.runs_of(Release::FENCED), 1);
        let rows = c.rows();
        assert_eq!(rows.len(), 2 * Point::ALL.len());
        assert!(
            rows.iter()
                .filter(|r| r.model == Release::FENCED)
                .all(|r| r.rare)
        );
        assert!(!is_rare(1, 10_000));
        assert!(is_rare(1, 10_001));
        assert!(is_rare(0, 1));
    }
}
