//! Prints the spec, timeline and violations of one generated seed.
//!
//! `cargo run -p sim --example timeline -- <seed>`
fn main() {
    let seed: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let spec = sim::generate(seed, None);
    println!("{}", serde_json::to_string(&spec).unwrap_or_default());
    match sim::run(&spec) {
        Ok(run) => {
            for (i, r) in run.history.records.iter().enumerate() {
                println!("{i:>4} {r}");
            }
            for v in &run.violations {
                println!("{v}");
            }
        }
        Err(e) => println!("refused: {e}"),
    }
}
