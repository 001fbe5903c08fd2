//! `locksim compare`.

use std::io::Write;

use clap::Args;
use lockcore::Release;

use crate::cli::flags::{EngineArgs, Toggles, parse_profile};
use crate::cli::{Execute, Exit, Io};
use crate::{Comparison, InputError};

/// Run one scenario on the fast and turmoil engines and show their
/// verdicts and key event times side by side (exit 1 if they differ).
#[derive(Debug, Args, PartialEq)]
pub struct CompareArgs {
    /// A built-in scenario's name, or the path of a scenario file.
    pub scenario: String,
    /// The seed (default: the scenario's own).
    #[arg(long)]
    pub seed: Option<u64>,
    /// The release: an era name or a Redisson version; default: the
    /// scenario's own.
    #[arg(long, visible_alias = "redisson", value_parser = parse_profile)]
    pub profile: Option<Release>,
    /// Switches toggled on the release.
    #[command(flatten)]
    pub toggles: Toggles,
    /// The engine compared with the fast one (default: turmoil).
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}


impl Execute for CompareArgs {
    fn execute(&self, io: &mut Io<'_>) -> Result<Exit, InputError> {
        compare(self, io.out)
    }
}

/// Runs one scenario on the fast and turmoil engines and prints both
/// side by side; exit 1 when they disagree.
pub(super) fn compare(args: &CompareArgs, out: &mut dyn Write) -> Result<Exit, InputError> {
    let scenario = crate::load(&args.scenario)?;
    let profile = args.toggles.apply(args.profile)?;
    let other = args.engine.engine_or(sim::Engine::Turmoil)?;
    let comparison = Comparison::run(&scenario, args.seed, profile, other)?;
    if args.json {
        let _ = writeln!(out, "{}", comparison.to_json());
    } else {
        let _ = out.write_all(comparison.render().as_bytes());
    }
    Ok(if comparison.agrees() {
        Exit::AsExpected
    } else {
        Exit::Unexpected
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::cli::{Cli, Exit, execute};

    fn run(args: &[&str]) -> (Exit, String, String) {
        let cli = Cli::try_parse_from(args).expect("parses");
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let exit = execute(&cli, &mut out, &mut err);
        (
            exit,
            String::from_utf8_lossy(&out).into_owned(),
            String::from_utf8_lossy(&err).into_owned(),
        )
    }

    /// The documents' pause on both engines: the same verdict, key events
    /// within the tolerance.
    #[test]
    fn the_documents_pause_agrees() {
        let (exit, out, err) = run(&["locksim", "compare", "stw-pause"]);
        assert_eq!(exit, Exit::AsExpected, "{out}{err}");
        assert!(out.contains("the engines agree"), "{out}");
        assert!(out.contains("fast") && out.contains("turmoil"), "{out}");
    }

    /// `--redis` without `--engine redis`, and a bad `--redis`: one line,
    /// exit 2, before anything runs.
    #[test]
    fn redis_flags_need_the_redis_engine() {
        let cases: [(&[&str], &str); 3] = [
            (
                &["compare", "stw-pause", "--redis", "spawn"],
                "go with --engine redis",
            ),
            (
                &[
                    "run",
                    "stw-pause",
                    "--engine",
                    "redis",
                    "--redis",
                    "localhost:1",
                ],
                "expected redis://HOST:PORT or spawn",
            ),
            (
                &["run", "stw-pause", "--engine", "redis", "--time-scale", "0"],
                "between 1 and 100",
            ),
        ];
        for (args, want) in cases {
            let args: Vec<&str> = std::iter::once("locksim")
                .chain(args.iter().copied())
                .collect();
            let (exit, _, err) = run(&args);
            assert_eq!(exit, Exit::BadInput, "{args:?}");
            assert!(err.contains(want), "{args:?}: {err}");
        }
    }

    /// A fault turmoil cannot inject: one clear line, exit 2.
    #[test]
    fn a_fault_turmoil_cannot_inject_is_refused() {
        let lossy = crate::builtin::LOSSY_LINK;
        let (exit, out, err) = run(&["locksim", "compare", lossy]);
        assert_eq!(exit, Exit::BadInput, "{out}{err}");
        assert!(err.contains("turmoil engine cannot run"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
