//! The documents' stop-the-world pause under the `fenced` profile: A's
//! lease runs out during a 40 s pause, B takes the lock and writes; A's
//! late write is refused by its fencing token.
//!
//! `cargo run -p sim --example fenced_pause`
use lockcore::{LockName, Release};
use sim::steps;
use sim::{ClientSpec, Fault, FaultPlan, LatencyRange, SimSpec, Step, ThreadSpec};

fn main() {
    let lock = LockName::new(sim::DEFAULT_LOCK).unwrap_or_else(|e| panic!("{e}"));
    let critical = |work_ms| {
        vec![
            Step::Lock(steps::Lock { lease_ms: None }),
            Step::Work(steps::Work { ms: work_ms }),
            Step::Write(steps::Write {}),
            Step::Unlock(steps::Unlock {}),
        ]
    };
    let client = |name: &str, start_ms, work_ms| {
        let thread = ThreadSpec {
            start_ms,
            lock: lock.clone(),
            steps: critical(work_ms),
            multi: None,
        };
        ClientSpec::new(name, vec![thread])
    };
    let spec = SimSpec {
        seed: 1,
        profile: Release::FENCED,
        watchdog_timeout_ms: 30_000,
        latency: LatencyRange::default(),
        clients: vec![client("A", 0, 5_000), client("B", 2_000, 1_000)],
        faults: FaultPlan(vec![Fault::Pause(sim::faults::Pause {
            client: "A".into(),
            at_ms: 1_000,
            duration_ms: 40_000,
        })]),
        horizon_ms: 60_000,
        redis: Default::default(),
        reseeds: Vec::new(),
    };
    match sim::run(&spec) {
        Ok(run) => {
            print!("{}", run.history);
            for v in &run.violations {
                println!("{v}");
            }
        }
        Err(e) => println!("refused: {e}"),
    }
}
