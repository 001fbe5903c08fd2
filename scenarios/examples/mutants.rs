//! Issue 48's mutation score: each fix of 4.7.0 removed alone, each
//! mutant explored until its first kill over disjoint seed ranges.
//! Writes `reports/mutants.md`.
//!
//! ```text
//! cargo run --release -p locksim --example mutants [SEEDS] [RANGES] [THREADS] [FIRST_RANGE]
//! ```
//!
//! Range `k` (from `FIRST_RANGE`, default 0) is seeds `k*SEEDS..(k+1)*SEEDS`,
//! so runs with different `FIRST_RANGE`s measure disjoint ranges and their
//! tables can be put together.

use std::fmt::Write as _;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use locksim::SeedRange;
use locksim::mutants::{MutantVerdict, MutantsOptions, MutationReport, mutation_sweep};

/// The issue's bar: a range passes when at least this share of the
/// mutants is killed in it.
const PASS: f64 = 0.95;

fn main() {
    let arg = |i: usize, default: u64| {
        std::env::args()
            .nth(i)
            .map_or(default, |a| a.parse().expect("a number"))
    };
    let (seeds, ranges, threads, first) = (arg(1, 100_000), arg(2, 20), arg(3, 0), arg(4, 0));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(usize::try_from(threads).expect("a thread count"))
        .build()
        .expect("a pool");
    let release = "4.7.0".parse().expect("a release");
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let mut reports = Vec::new();
    for k in first..first + ranges {
        let range = SeedRange::new(k * seeds, seeds).expect("a range");
        let mut options = MutantsOptions::new(release, range).expect("4.7.0 has fixes");
        options.first = true;
        let report = mutation_sweep(&pool, &options, &stop, |_| {});
        eprintln!(
            "range {range}: {}/{} killed, {} equivalent, {} survived ({:.0?} so far)",
            report.killed,
            report.mutants.len(),
            report.equivalent,
            report.survived,
            started.elapsed()
        );
        reports.push(report);
        // Written after every range, so a run stopped early (the machine
        // is shared, a range of 100,000 seeds takes minutes) leaves the
        // ranges it measured, said as such.
        let done = reports.len() as u64;
        let md = markdown(&reports, (seeds, done, threads, first), started.elapsed());
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../reports/mutants.md");
        std::fs::write(path, &md).expect("reports/ is writable");
        if done == ranges {
            print!("{md}");
        }
    }
}

fn markdown(
    reports: &[MutationReport],
    (seeds, ranges, threads, first): (u64, u64, u64, u64),
    took: std::time::Duration,
) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Mutation score of 4.7.0\n");
    let _ = writeln!(
        md,
        "Written by `cargo run --release -p locksim --example mutants {seeds} {ranges} {threads} {first}` \
         (issue 48 item 5) in {:.0} s of wall time. Each fix in force in 4.7.0 (a switch whose \
         `fixes` is set) is removed alone, as `--without SWITCH` removes it, and the mutant is \
         explored with the default workload, seed by seed, until a run shows a defect that \
         explore's attribution names as fixed by that switch (`locksim mutants --first`). \
         Range k is seeds k*{seeds}..(k+1)*{seeds}, for k = {first}..{}. \
         `locksim mutants --redisson 4.7.0 --from F --seeds {seeds} --first` measures one range.\n",
        took.as_secs_f64(),
        first + ranges
    );
    let _ = writeln!(md, "## Per range\n");
    let _ = writeln!(
        md,
        "| range | killed | equivalent | survived | killed / all | killed / not equivalent | ≥ {:.0}% |\n|---|---:|---:|---:|---:|---:|---|",
        PASS * 100.0
    );
    let mut passed = 0;
    for r in reports {
        let pass = r.score >= PASS;
        passed += usize::from(pass);
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {:.1}% | {:.1}% | {} |",
            r.seeds,
            r.killed,
            r.equivalent,
            r.survived,
            r.score * 100.0,
            r.score_of_killable * 100.0,
            if pass { "yes" } else { "no" }
        );
    }
    let _ = writeln!(
        md,
        "\nRanges where at least {:.0}% of all mutants were killed: {passed} of {}.\n",
        PASS * 100.0,
        reports.len()
    );
    let _ = writeln!(md, "## Per mutant\n");
    let _ = writeln!(
        md,
        "Seeds-to-kill is the number of seeds from a range's first up to its first kill; the median \
         counts a range without a kill as never (`>` the range).\n"
    );
    let _ = writeln!(
        md,
        "| mutant (`--without`) | upstream | found / ranges | median seeds-to-kill | fewest | most | when not killed |\n|---|---|---:|---:|---:|---:|---|"
    );
    for (i, m) in reports[0].mutants.iter().enumerate() {
        let kills: Vec<Option<u64>> = reports.iter().map(|r| r.mutants[i].seeds_to_kill).collect();
        let found: Vec<u64> = kills.iter().flatten().copied().collect();
        let median = median(&kills).map_or(format!("> {seeds}"), |n| n.to_string());
        let (fewest, most) = match (found.iter().min(), found.iter().max()) {
            (Some(a), Some(b)) => (a.to_string(), b.to_string()),
            _ => ("-".to_owned(), "-".to_owned()),
        };
        let unkilled: Vec<String> = reports
            .iter()
            .filter_map(|r| match &r.mutants[i].verdict {
                MutantVerdict::Killed => None,
                v @ (MutantVerdict::Equivalent(why) | MutantVerdict::Survived(why)) => {
                    Some(format!("{} ({why})", v.name()))
                }
            })
            .collect();
        let mut seen = unkilled.clone();
        seen.dedup();
        let _ = writeln!(
            md,
            "| {} | {} | {}/{} | {median} | {fewest} | {most} | {} |",
            m.switch,
            m.upstream,
            found.len(),
            reports.len(),
            seen.join("; ")
        );
    }
    md
}

/// The median of `kills`, a range without a kill counting as more than
/// any: `None` when half or more of the ranges had none.
fn median(kills: &[Option<u64>]) -> Option<u64> {
    let mut sorted: Vec<u64> = kills.iter().map(|k| k.unwrap_or(u64::MAX)).collect();
    sorted.sort_unstable();
    let mid = sorted[(sorted.len() - 1) / 2];
    (mid != u64::MAX).then_some(mid)
}
