//! `locksim run`.

use std::io::Write;

use clap::Args;
use lockcore::Release;

use crate::cli::flags::{EngineArgs, Toggles, parse_profile};
use crate::cli::{Execute, Exit, Io};
use crate::{InputError, Rerun, Scenario, Trial, render_trial};

/// Run one scenario (a built-in name or a TOML file) and judge it.
#[derive(Debug, Args, PartialEq)]
pub struct RunArgs {
    /// A built-in scenario's name, or the path of a scenario file.
    pub scenario: String,
    /// The seed (default: the scenario's own).
    #[arg(long)]
    pub seed: Option<u64>,
    /// The release: an era name or a Redisson version (`--redisson 3.23.4`);
    /// default: the scenario's own.
    #[arg(long, visible_alias = "redisson", value_parser = parse_profile)]
    pub profile: Option<Release>,
    /// Switches toggled on the release.
    #[command(flatten)]
    pub toggles: Toggles,
    /// Which engine runs it.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Print one JSON object instead of the timeline.
    #[arg(long)]
    pub json: bool,
}


impl Execute for RunArgs {
    fn execute(&self, io: &mut Io<'_>) -> Result<Exit, InputError> {
        run(self, io.out)
    }
}

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

/// Prints a trial's timeline and verdict, or its JSON.
pub(super) fn print(trial: &Trial, scenario: &Scenario, rerun: Rerun, json: bool, out: &mut dyn Write) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse};

    /// `run` takes a name, a seed, a profile and --json; defaults leave the
    /// scenario's own seed and profile in place.
    #[test]
    fn run_arguments() {
        let cli = parse(&[
            "run",
            "stw-pause",
            "--seed",
            "42",
            "--profile",
            "fenced",
            "--engine",
            "turmoil",
            "--json",
        ])
        .unwrap();
        assert_eq!(
            cli.command,
            Command::Run(RunArgs {
                scenario: "stw-pause".into(),
                seed: Some(42),
                profile: Some(Release::FENCED),
                toggles: Toggles::default(),
                engine: EngineArgs {
                    engine: Some(sim::Engine::Turmoil),
                    ..Default::default()
                },
                json: true,
            })
        );
        let cli = parse(&["run", "x.toml"]).unwrap();
        assert_eq!(
            cli.command,
            Command::Run(RunArgs {
                scenario: "x.toml".into(),
                seed: None,
                profile: None,
                toggles: Toggles::default(),
                engine: EngineArgs::default(),
                json: false,
            })
        );
    }

    /// An unknown engine is a usage error naming the engines.
    #[test]
    fn unknown_engine_is_a_usage_error() {
        let err = parse(&["run", "stw-pause", "--engine", "postgres"]).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("fast, turmoil and redis"), "{err}");
    }

    /// An unknown profile is a usage error (exit code 2) whose message
    /// lists the valid profiles.
    #[test]
    fn unknown_profile_is_a_usage_error() {
        let err = parse(&["run", "stw-pause", "--profile", "redis"]).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        let text = err.to_string();
        assert!(
            text.contains("unknown release 'redis'")
                && text.contains("redisson-batched")
                && text.contains("3.0.0 to 4.7.0"),
            "{text}"
        );
    }

    /// A seed that is not a number, and a missing scenario, are usage errors.
    #[test]
    fn bad_seed_and_missing_scenario() {
        assert_eq!(
            parse(&["run", "stw-pause", "--seed", "abc"])
                .unwrap_err()
                .exit_code(),
            2
        );
        assert_eq!(parse(&["run"]).unwrap_err().exit_code(), 2);
        assert_eq!(parse(&["replay", "-1"]).unwrap_err().exit_code(), 2);
    }
}
