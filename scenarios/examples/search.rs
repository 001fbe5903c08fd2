//! Issue 48 item 4's yardstick: the portfolio (with its branches at rare
//! points) against uniform swarm, per known defect and release, over
//! disjoint seed ranges. Writes `reports/search.md`.
//!
//! ```text
//! cargo run --release -p locksim --example search [SEEDS] [RANGES] [THREADS] [RELEASES]
//! ```
//!
//! Range `k` is seeds `k*SEEDS..(k+1)*SEEDS` for `k < RANGES`; each is
//! swept as `locksim explore --redisson R --from k*SEEDS --seeds SEEDS
//! --strategy S` sweeps it (with its attribution), once with `uniform` and
//! once with `portfolio`. A defect is the upstream issue (fix or open
//! issue) its runs are attributed to. A portfolio seed that reaches a rare
//! point costs its run and its branches' runs, so each defect has two
//! rates: per seed (the seeds with a run of it, the seed's or a branch's,
//! over the seeds swept) and per run (its runs over all runs made); and
//! found/RANGES, the ranges with at least one such run. `RELEASES` is a
//! comma-separated list (default: the releases of the rarest defects of
//! issue 48).

use std::collections::{BTreeMap, BTreeSet};
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
const RELEASES: &str = "3.27.1,3.44.0,4.7.0,3.12.4,3.13.6,3.16.8";

const STRATEGIES: [Strategy; 2] = [Strategy::Uniform, Strategy::Portfolio];

/// Per strategy, per defect: in each range, the seeds with a run of it
/// and its runs.
type Counts = BTreeMap<(Strategy, String), Vec<(u64, u64)>>;

/// Per strategy: the runs made over every range.
type Made = BTreeMap<Strategy, u64>;

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
        let (counts, made) = sweep_release(&pool, release, seeds, ranges);
        eprintln!("{release}: done ({:.0?} so far)", started.elapsed());
        table(&mut md, release, (&counts, &made), seeds, ranges);
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
fn sweep_release(
    pool: &rayon::ThreadPool,
    release: Release,
    seeds: u64,
    ranges: u64,
) -> (Counts, Made) {
    let mut counts = Counts::new();
    let mut made = Made::new();
    let stop = AtomicBool::new(false);
    for strategy in STRATEGIES {
        let workload = Workload {
            strategy,
            ..Workload::default()
        };
        for k in 0..ranges {
            let range = SeedRange::new(k * seeds, seeds).expect("a range");
            // Per defect: the seeds with a run of it, and its runs.
            let mut found: BTreeMap<String, (BTreeSet<u64>, u64)> = BTreeMap::new();
            let swept = explore_workload_on(
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
                            let (seeds, runs) = found.entry(l).or_default();
                            seeds.insert(f.seed);
                            *runs += 1;
                        }
                    }
                },
            );
            *made.entry(strategy).or_insert(0) += swept.runs;
            for (l, (s, runs)) in found {
                counts
                    .entry((strategy, l))
                    .or_insert_with(|| vec![(0, 0); ranges as usize])[k as usize] =
                    (s.len() as u64, runs);
            }
        }
    }
    (counts, made)
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
         quarter PCT, and up to {} branches of each run that reaches a rare point). A \
         defect is the upstream issue its runs are attributed to. Seeds: the seeds with a \
         run of it (the seed's own or a branch's), and their rate over the {} seeds swept \
         per strategy; runs: its runs, and their rate over all the runs made (a seed that \
         branches costs more than one run); found: the ranges with a run of it.\n",
        list.join(","),
        sim::branch::BUDGET,
        seeds * ranges
    );
    md
}

fn table(
    md: &mut String,
    release: Release,
    (counts, made): (&Counts, &Made),
    seeds: u64,
    ranges: u64,
) {
    let _ = writeln!(md, "\n## {release}\n");
    let total = seeds * ranges;
    let runs_of = |s| made.get(&s).copied().unwrap_or(0);
    let _ = writeln!(
        md,
        "Runs made: uniform {} ({total} seeds), portfolio {} ({:.3} runs a seed).\n",
        runs_of(Strategy::Uniform),
        runs_of(Strategy::Portfolio),
        runs_of(Strategy::Portfolio) as f64 / total as f64
    );
    let _ = writeln!(
        md,
        "| defect | uniform seeds | uniform rate | uniform found/{ranges} | portfolio seeds | \
         portfolio rate/seed | portfolio runs | portfolio rate/run | portfolio found/{ranges} |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    let mut defects: Vec<&String> = counts.keys().map(|(_, l)| l).collect();
    defects.sort();
    defects.dedup();
    if defects.is_empty() {
        let _ = writeln!(md, "| (no defect) | | | | | | | | |");
    }
    for d in defects {
        let _ = write!(md, "| {d} |");
        for s in STRATEGIES {
            let per = counts.get(&(s, d.clone()));
            let seeds_with: u64 = per.map_or(0, |v| v.iter().map(|(n, _)| n).sum());
            let runs: u64 = per.map_or(0, |v| v.iter().map(|(_, r)| r).sum());
            let found = per.map_or(0, |v| v.iter().filter(|(n, _)| *n > 0).count());
            let per_seed = seeds_with as f64 / total as f64;
            if s == Strategy::Uniform {
                let _ = write!(md, " {seeds_with} | {per_seed:.1e} | {found} |");
            } else {
                let per_run = runs as f64 / runs_of(s).max(1) as f64;
                let _ = write!(
                    md,
                    " {seeds_with} | {per_seed:.1e} | {runs} | {per_run:.1e} | {found} |"
                );
            }
        }
        let _ = writeln!(md);
    }
}
