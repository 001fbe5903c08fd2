//! `locksim run` and `locksim replay`.

use std::io::Write;

use crate::cli::{Exit, ReplayArgs, RunArgs};
use crate::{InputError, Rerun, Scenario, Trial, render_trial};

/// Runs one scenario and prints its timeline and verdict (or JSON).
pub(super) fn run(args: &RunArgs, out: &mut dyn Write) -> Result<Exit, InputError> {
    let scenario = crate::load(&args.scenario)?;
    let profile = args.toggles.apply(args.profile)?;
    let engine = args.engine.engine_or(sim::Engine::Fast)?;
    let trial = Trial::run_on(&scenario, args.seed, profile, engine)?;
    print(
        &trial,
        &scenario,
        Rerun::Scenario(args.scenario.clone()),
        args.json,
        out,
    );
    Ok(if trial.as_expected() {
        Exit::AsExpected
    } else {
        Exit::Unexpected
    })
}

/// Reruns one explored seed. An explored run is expected to be safe.
pub(super) fn replay(args: &ReplayArgs, out: &mut dyn Write) -> Result<Exit, InputError> {
    let workload = args.workload.workload();
    let engine = args.engine.engine_or(sim::Engine::Fast)?;
    let profile = args.toggles.apply(args.profile)?;
    let spec = crate::explored_spec_on(args.seed, profile, workload, &engine);
    let scenario = Scenario {
        name: format!("explored-{}", args.seed),
        description:
            "A random scenario and fault plan from sim's generator; every invariant should hold."
                .to_owned(),
        source: None,
        sim: spec,
        expect: Default::default(),
        history: None,
    };
    let trial = Trial::run_on(&scenario, None, None, engine)?;
    print(&trial, &scenario, Rerun::Replay(workload), args.json, out);
    Ok(if trial.as_expected() {
        Exit::AsExpected
    } else {
        Exit::Unexpected
    })
}

fn print(trial: &Trial, scenario: &Scenario, rerun: Rerun, json: bool, out: &mut dyn Write) {
    if json {
        let value = serde_json::to_string(&trial.to_json()).unwrap_or_default();
        let _ = writeln!(out, "{value}");
    } else {
        let text = render_trial(
            trial,
            &scenario.description,
            scenario.source.as_deref(),
            &rerun,
        );
        let _ = out.write_all(text.as_bytes());
    }
}
