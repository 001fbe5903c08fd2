//! `locksim replay`: one explored seed again, with its timeline.

use std::io::Write;

use clap::Args;
use lockcore::Release;

use crate::cli::flags::{EngineArgs, Toggles, WorkloadArgs, parse_profile};
use crate::cli::run::print;
use crate::cli::{Execute, Exit, Io};
use crate::{InputError, Rerun, Scenario, Trial};

/// Rerun one explored seed and print its timeline.
#[derive(Debug, Args, PartialEq)]
pub struct ReplayArgs {
    /// The explored seed.
    pub seed: u64,
    /// The release it was explored under, an era name or a Redisson
    /// version (default: drawn from the seed, as sim's generator does).
    #[arg(long, visible_alias = "redisson", value_parser = parse_profile)]
    pub profile: Option<Release>,
    /// Switches toggled on the release.
    #[command(flatten)]
    pub toggles: Toggles,
    /// What it was explored with.
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Which engine runs it.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// A branch of its run, as explore prints it: AT_MS:CHILD forks
    /// joined by commas (the run up to each fork, fresh draws after it).
    #[arg(long, value_name = "PATH")]
    pub branch: Option<sim::BranchPath>,
    /// Print one JSON object instead of the timeline.
    #[arg(long)]
    pub json: bool,
}

impl Execute for ReplayArgs {
    fn execute(&self, io: &mut Io<'_>) -> Result<Exit, InputError> {
        replay(self, io.out)
    }
}

/// Reruns one explored seed. An explored run is expected to be safe.
fn replay(args: &ReplayArgs, out: &mut dyn Write) -> Result<Exit, InputError> {
    let workload = args.workload.workload();
    let engine = args.engine.engine_or(sim::Engine::Fast)?;
    let profile = args.toggles.apply(args.profile)?;
    let branch = args.branch.as_ref();
    let spec = crate::explored_branch_on(args.seed, profile, workload, &engine, branch)?;
    let name = match branch {
        Some(path) => format!("explored-{}-branch-{path}", args.seed),
        None => format!("explored-{}", args.seed),
    };
    let scenario = Scenario {
        name,
        description:
            "A random scenario and fault plan from sim's generator; every invariant should hold."
                .to_owned(),
        source: None,
        sim: spec,
        expect: Default::default(),
        history: None,
    };
    let trial = Trial::run_on(&scenario, None, None, engine)?;
    print(&trial, &scenario, Rerun::Replay(workload, args.branch.clone()), args.json, out);
    Ok(if trial.as_expected() {
        Exit::AsExpected
    } else {
        Exit::Unexpected
    })
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::flags::Kinds;
    use crate::cli::report::ReportArgs;
    use crate::cli::{Command, parse};

    /// replay and report parse their arguments.
    #[test]
    fn replay_and_report() {
        let cli = parse(&["replay", "17", "--profile", "redisson-legacy"]).unwrap();
        assert_eq!(
            cli.command,
            Command::Replay(ReplayArgs {
                seed: 17,
                profile: Some(Release::LEGACY),
                toggles: Toggles::default(),
                workload: WorkloadArgs {
                    misuse: false,
                    kinds: Kinds::Swarm,
                    strategy: None,
                },
                engine: EngineArgs::default(),
                branch: None,
                json: false,
            })
        );
        let cli = parse(&["replay", "17", "--misuse", "--kinds", "all"]).unwrap();
        let Command::Replay(a) = cli.command else {
            panic!("not replay")
        };
        assert_eq!(
            a.workload.workload(),
            sim::Workload {
                usage: sim::Usage::Misuse,
                kinds: sim::SwarmKinds::All,
                strategy: sim::Strategy::Uniform,
            }
        );
        let cli = parse(&["report", "--out", "/tmp/r"]).unwrap();
        assert_eq!(
            cli.command,
            Command::Report(ReportArgs {
                out: Some("/tmp/r".into()),
                engine: EngineArgs::default(),
            })
        );
        assert_eq!(parse(&["scenarios"]).unwrap().command, Command::Scenarios(crate::cli::scenarios::ScenariosArgs {}));
    }
}
