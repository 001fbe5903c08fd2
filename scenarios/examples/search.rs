//! Issue 48 item 4's yardstick: the portfolio against uniform swarm, per
//! known defect and release, over disjoint seed ranges. Writes
//! `reports/search.md`.
//!
//! ```text
//! cargo run --release -p locksim --example search [SEEDS] [RANGES] [THREADS] [RELEASES]
//! ```
//!
//! Range `k` is seeds `k*SEEDS..(k+1)*SEEDS` for `k < RANGES`; each is
//! swept as `locksim explore --redisson R --from k*SEEDS --seeds SEEDS
//! --strategy S` sweeps it (with its attribution), once with `uniform` and
//! once with `portfolio`. A defect is the upstream issue (fix or open
//! issue) its runs are attributed to; its hit rate is its runs over all
//! seeds swept, and found/RANGES the ranges with at least one such run.
//! `RELEASES` is a comma-separated list (default: the releases of the
//! rarest defects of issue 48).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use lockcore::Release;
use locksim::{Defect, SeedRange, SweepEvent, explore_workload_on};
use sim::{Strategy, Workload};

/// The releases of the rarest defects issue 48 names: #2669 (3.12.4),
/// #3194 (3.13.6), the 3.17.0 subscribe-failure path (3.16.8), #5761
/// (3.27.1), #6472 and #6506 (3.44.0), the count-down unlock not reported
/// upstream (4.7.0).
const RELEASES: &str = "3.12.4,3.13.6,3.16.8,3.27.1,3.44.0,4.7.0";

const STRATEGIES: [Strategy; 2] = [Strategy::Uniform, Strategy::Portfolio];

/// Per strategy, per defect: the runs in each range.
type Counts = BTreeMap<(Strategy, String), Vec<u64>>;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, default: u64| {
        args.get(i)
            .map_or(default, |a| a.parse().expect("a number"))
    };
    let (seeds, ranges, threads) = (arg(1, 10_000), arg(2, 20), arg(3, 1));
    let releases: Vec<Release> = args
        .get(4)
        .map_or(RELEASES, String::as_str)
        .split(',')
        .map(|r| r.parse().expect("a release"))
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(usize::try_from(threads).expect("a thread count"))
        .build()
        .expect("a pool");
    let started = Instant::now();
    let mut md = header(seeds, ranges, threads, &releases);
    for &release in &releases {
        let counts = sweep_release(&pool, release, seeds, ranges);
        eprintln!("{release}: done ({:.0?} so far)", started.elapsed());
        table(&mut md, release, &counts, seeds, ranges);
        // Written after every release, so a run stopped early leaves the
        // releases it measured.
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../reports/search.md");
        std::fs::write(path, &md).expect("reports/ is writable");
    }
    let _ = writeln!(
        md,
        "\nWall time: {:.0} s on {threads} thread(s).",
        started.elapsed().as_secs_f64()
    );
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../reports/search.md");
    std::fs::write(path, &md).expect("reports/ is writable");
    print!("{md}");
}

/// Every range of `release` under each strategy.
fn sweep_release(pool: &rayon::ThreadPool, release: Release, seeds: u64, ranges: u64) -> Counts {
    let mut counts = Counts::new();
    let stop = AtomicBool::new(false);
    for strategy in STRATEGIES {
        let workload = Workload {
            strategy,
            ..Workload::default()
        };
        for k in 0..ranges {
            let range = SeedRange::new(k * seeds, seeds).expect("a range");
            let mut runs: BTreeMap<String, u64> = BTreeMap::new();
            explore_workload_on(
                pool,
                range,
                Some(release),
                (workload, &sim::Engine::Fast),
                &stop,
                |e| {
                    if let SweepEvent::Found(f) = e {
                        let mut labels: Vec<String> = f.defects.iter().map(label).collect();
                        labels.sort();
                        labels.dedup();
                        for l in labels {
                            *runs.entry(l).or_insert(0) += 1;
                        }
                    }
                },
            );
            for (l, n) in runs {
                counts
                    .entry((strategy, l))
                    .or_insert_with(|| vec![0; ranges as usize])[k as usize] = n;
            }
        }
    }
    counts
}

/// A defect's name: the upstream issue and switch of its fix, the open
/// issue whose path it took, or its invariant when nothing names it.
fn label(d: &Defect) -> String {
    match (&d.fixed_by, &d.open_issue) {
        (Some(fix), _) => format!("{} (`{}`)", fix.upstream, fix.switch),
        (None, Some(open)) => open.status(),
        (None, None) => format!("unnamed {}", d.invariant),
    }
}

fn header(seeds: u64, ranges: u64, threads: u64, releases: &[Release]) -> String {
    let list: Vec<String> = releases.iter().map(|r| r.to_string()).collect();
    let mut md = String::new();
    let _ = writeln!(md, "# Guided search against uniform swarm\n");
    let _ = writeln!(
        md,
        "Written by `cargo run --release -p locksim --example search {seeds} {ranges} \
         {threads} {}` (issue 48 item 4). For each release, {ranges} disjoint ranges of \
         {seeds} seeds (range k is seeds k*{seeds}..(k+1)*{seeds}) are swept as `locksim \
         explore --redisson R --from F --seeds {seeds} --strategy S` sweeps them, with \
         `uniform` and with `portfolio` (half the seeds uniform, a quarter directed, a \
         quarter PCT). A defect is the upstream issue its runs are attributed to; the hit \
         rate is its runs over the {} seeds swept per strategy, found is the ranges with a \
         run of it.\n",
        list.join(","),
        seeds * ranges
    );
    md
}

fn table(md: &mut String, release: Release, counts: &Counts, seeds: u64, ranges: u64) {
    let _ = writeln!(md, "\n## {release}\n");
    let _ = writeln!(
        md,
        "| defect | uniform runs | uniform rate | uniform found/{ranges} | portfolio runs | \
         portfolio rate | portfolio found/{ranges} |\n|---|---:|---:|---:|---:|---:|---:|"
    );
    let mut defects: Vec<&String> = counts.keys().map(|(_, l)| l).collect();
    defects.sort();
    defects.dedup();
    if defects.is_empty() {
        let _ = writeln!(md, "| (no defect) | | | | | | |");
    }
    let total = (seeds * ranges) as f64;
    for d in defects {
        let _ = write!(md, "| {d} |");
        for s in STRATEGIES {
            let per = counts.get(&(s, d.clone()));
            let runs: u64 = per.map_or(0, |v| v.iter().sum());
            let found = per.map_or(0, |v| v.iter().filter(|n| **n > 0).count());
            let _ = write!(md, " {runs} | {:.1e} | {found} |", runs as f64 / total);
        }
        let _ = writeln!(md);
    }
}
