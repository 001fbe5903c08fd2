//! Runs generated seeds and prints the slowest, for tuning the engine.
//!
//! `cargo run --release -p sim --example swarm_stats [seeds]`
fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let mut total = std::time::Duration::ZERO;
    let mut worst = (0, std::time::Duration::ZERO, 0);
    let mut records = 0;
    for seed in 0..n {
        let spec = sim::generate(seed, None);
        let t = std::time::Instant::now();
        let run = sim::run(&spec).expect("generated specs are valid");
        let d = t.elapsed();
        total += d;
        records += run.history.len();
        if d > worst.1 {
            worst = (seed, d, run.history.len());
        }
    }
    println!(
        "{n} seeds in {total:?} ({:?} each, {records} records); slowest: seed {} in {:?} ({} records)",
        total / n.max(1) as u32,
        worst.0,
        worst.1,
        worst.2
    );
}
