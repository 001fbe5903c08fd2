//! Runs generated seeds and counts violations per invariant, with the
//! first few of each: a quick look at what the swarm finds.
//!
//! `cargo run --release -p sim --example violations [seeds]`
use std::collections::BTreeMap;

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000);
    let mut found: BTreeMap<&str, Vec<(u64, String)>> = BTreeMap::new();
    for seed in 0..n {
        let Ok(run) = sim::run(&sim::generate(seed, None)) else {
            continue;
        };
        for v in &run.violations {
            found
                .entry(v.invariant.name())
                .or_default()
                .push((seed, v.to_string()));
        }
    }
    for (name, list) in &found {
        println!("{name}: {}", list.len());
        for (seed, v) in list.iter().take(3) {
            println!("  seed {seed}: {v}");
        }
    }
}
