//! The bare turmoil program of a scenario, as a process of its own, to
//! time from outside against `locksim run NAME --engine turmoil` (the
//! in-process comparison is `locksim bench --engine turmoil`).
//!
//! `cargo run --release -p locksim --example turmoil_bare -- NAME`
//! (a built-in scenario or a scenario file; profile `redisson`, as the
//! benchmark runs it).
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some(name) = std::env::args().nth(1) else {
        eprintln!("usage: turmoil_bare NAME (a built-in scenario or a scenario file)");
        return ExitCode::from(2);
    };
    let spec = match locksim::load(&name) {
        Ok(s) => s.spec(None, Some(lockcore::Release::REDISSON)),
        Err(e) => {
            eprintln!("turmoil_bare: {e}");
            return ExitCode::from(2);
        }
    };
    match sim::run_turmoil_bare(&spec) {
        Ok(run) => {
            println!(
                "{name}: {} hosts, {} steps, {} connections",
                spec.clients.len() + 1,
                run.steps,
                run.connections
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("turmoil_bare: {name}: {e}");
            ExitCode::from(2)
        }
    }
}
