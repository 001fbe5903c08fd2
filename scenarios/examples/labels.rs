//! Issue 48's figure: 0 mismatches between a seed's label alone and
//! inside a 100,000-seed range, over 10,000 sampled seeds of three
//! releases. Writes `reports/labels.md`.
//!
//! ```text
//! cargo run --release -p locksim --example labels [SEEDS] [SAMPLE] [THREADS]
//! ```

use std::fmt::Write as _;

use locksim::{SeedRange, check_labels, sample_seeds};

const RELEASES: [&str; 3] = ["3.19.1", "3.17.0", "4.7.0"];

fn main() {
    let arg = |i: usize, default: u64| {
        std::env::args()
            .nth(i)
            .map_or(default, |a| a.parse().expect("a number"))
    };
    let (seeds, sampled, threads) = (arg(1, 100_000), arg(2, 10_000), arg(3, 0));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(usize::try_from(threads).expect("a thread count"))
        .build()
        .expect("a pool");
    let range = SeedRange::new(0, seeds).expect("a range");
    let mut md = String::new();
    let _ = writeln!(md, "# A seed's label alone and inside a range\n");
    let _ = writeln!(
        md,
        "Written by `cargo run --release -p locksim --example labels {seeds} {sampled} {threads}` \
         (issue 48). For each release, seeds {range} are explored as one sweep; {sampled} seeds \
         of the range, drawn at random (draw 48), are then each explored alone \
         (`locksim explore --redisson R --from SEED --seeds 1`), and the two findings are \
         compared: what broke, with which cause, and each defect's signature, fix or open \
         issue.\n"
    );
    let _ = writeln!(
        md,
        "| release | range | seeds compared | with a defect | mismatches |\n|---|---|---:|---:|---:|"
    );
    let mut total = 0;
    for release in RELEASES {
        let release = release.parse().expect("a release");
        let sample = sample_seeds(range, usize::try_from(sampled).expect("a count"), 48);
        let check = check_labels(&pool, release, range, &sample);
        eprintln!("{release}: {check:?}");
        total += check.mismatches.len();
        let _ = writeln!(
            md,
            "| {release} | {range} | {} | {} | {} |",
            check.sampled,
            check.with_defects,
            check.mismatches.len()
        );
    }
    let _ = writeln!(md, "\nMismatches in all: {total}.");
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../reports/labels.md");
    std::fs::write(path, &md).expect("reports/ is writable");
    print!("{md}");
}
