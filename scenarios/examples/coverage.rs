//! Issue 48 item 3's yardstick: how many runs of the default workload
//! reach each declared `sometimes` point, per release. Writes
//! `reports/coverage.md`; the points below 1·10⁻⁴ are what a directed
//! search (item 4) must reach more often.
//!
//! ```text
//! cargo run --release -p locksim --example coverage [SEEDS] [THREADS]
//! ```
//!
//! A run's coverage is a property of the run alone, so the runs are made
//! without explore's attribution experiments (which never change a run's
//! points) and counted in seed order, as `locksim explore --coverage`
//! counts them.

use std::fmt::Write as _;

use lockcore::Release;
use locksim::{CoverageCounts, RARE_PER, explored_spec_with, is_rare};
use rayon::prelude::*;
use sim::{Coverage, Point, Workload};

const RELEASES: [&str; 4] = ["3.8.0", "3.23.4", "3.44.0", "4.7.0"];

/// Seeds made in parallel at a time, then counted in order.
const BATCH: u64 = 4_096;

fn main() {
    let arg = |i: usize, default: u64| {
        std::env::args()
            .nth(i)
            .map_or(default, |a| a.parse().expect("a number"))
    };
    let (seeds, threads) = (arg(1, 100_000), arg(2, 0));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(usize::try_from(threads).expect("a thread count"))
        .build()
        .expect("a pool");
    let releases: Vec<Release> = RELEASES
        .iter()
        .map(|r| r.parse().expect("a release"))
        .collect();
    let mut counts = CoverageCounts::default();
    for &release in &releases {
        let mut start = 0;
        while start < seeds {
            let end = (start + BATCH).min(seeds);
            let batch: Vec<Option<Coverage>> = pool.install(|| {
                (start..end)
                    .into_par_iter()
                    .map(|seed| {
                        let spec = explored_spec_with(seed, Some(release), Workload::default());
                        sim::run_owned(spec).ok().map(|run| run.coverage)
                    })
                    .collect()
            });
            for (seed, reached) in (start..end).zip(batch) {
                counts.add(release, seed, reached.expect("every explored seed runs"));
            }
            start = end;
        }
        eprintln!("{release}: {seeds} seeds counted");
    }
    let md = report(&counts, &releases, seeds, threads);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../reports/coverage.md");
    std::fs::write(path, &md).expect("reports/ is writable");
    print!("{md}");
}

fn report(counts: &CoverageCounts, releases: &[Release], seeds: u64, threads: u64) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Coverage of the `sometimes` points\n");
    let _ = writeln!(
        md,
        "Written by `cargo run --release -p locksim --example coverage {seeds} {threads}` \
         (issue 48 item 3): seeds 0..{seeds} of the default workload (`locksim explore \
         --redisson R --seeds {seeds} --coverage` counts the same runs), runs that reached \
         each point out of {seeds}. A point is rare below 1 run in {RARE_PER} (**bold**). \
         Points are declared in `sim/src/judge/coverage.rs`; their meanings are in \
         docs/src/explore.md.\n"
    );
    let _ = write!(md, "| point |");
    for r in releases {
        let _ = write!(md, " {r} |");
    }
    let _ = write!(md, "\n|---|");
    for _ in releases {
        let _ = write!(md, "---:|");
    }
    let _ = writeln!(md);
    for &point in Point::ALL {
        let _ = write!(md, "| `{}` |", point.name());
        for &r in releases {
            let n = counts.of(r, point).map_or(0, |c| c.runs);
            if is_rare(n, counts.runs_of(r)) {
                let _ = write!(md, " **{n}** |");
            } else {
                let _ = write!(md, " {n} |");
            }
        }
        let _ = writeln!(md);
    }
    let _ = writeln!(md, "\n## Below 1·10⁻⁴\n");
    for &r in releases {
        let rare: Vec<String> = Point::ALL
            .iter()
            .filter_map(|&p| {
                let n = counts.of(r, p).map_or(0, |c| c.runs);
                is_rare(n, counts.runs_of(r)).then(|| match counts.of(r, p) {
                    Some(c) => format!("`{}` {n} (first seed {})", p.name(), c.seed),
                    None => format!("`{}` never", p.name()),
                })
            })
            .collect();
        let list = if rare.is_empty() {
            "none".to_owned()
        } else {
            rare.join(", ")
        };
        let _ = writeln!(md, "- {r}: {list}");
    }
    md
}
