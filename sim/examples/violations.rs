//! Runs generated seeds and counts violations per invariant, with the
//! first few of each: a quick look at what the swarm finds.
//!
//! `cargo run --release -p sim --example violations [seeds] [workload] [profile]`:
//! workload `correct` (the default: correct usage, swarm faults), `classic`
//! (`sim::Workload::CLASSIC`) or `all` (misuse, every kind once); with a
//! profile (`redisson`, `fenced`, ...), every client on it.
use std::collections::BTreeMap;

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000);
    let workload = match std::env::args().nth(2).as_deref() {
        Some("all") => sim::Workload {
            usage: sim::Usage::Misuse,
            kinds: sim::SwarmKinds::All,
            strategy: sim::Strategy::Uniform,
        },
        Some("classic") => sim::Workload::CLASSIC,
        _ => sim::Workload::default(),
    };
    let profile = std::env::args().nth(3).and_then(|p| {
        lockcore::Release::ERAS
            .into_iter()
            .find(|q| q.to_string() == p)
    });
    let mut found: BTreeMap<&str, Vec<(u64, String)>> = BTreeMap::new();
    let mut refused = 0;
    for seed in 0..n {
        let Ok(run) = sim::run(&sim::generate_with(seed, profile, workload)) else {
            refused += 1;
            continue;
        };
        for v in &run.violations {
            found
                .entry(v.invariant.name())
                .or_default()
                .push((seed, v.to_string()));
        }
    }
    println!("{n} seeds, {refused} refused");
    for (name, list) in &found {
        println!("{name}: {}", list.len());
        for (seed, v) in list.iter().take(3) {
            println!("  seed {seed}: {v}");
        }
    }
}
