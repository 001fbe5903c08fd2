//! The `locksim` command line: one module per subcommand, each owning its
//! clap arguments and what it does with them, and a [`Command`] enum that
//! only dispatches. Each command writes to the given output and returns an
//! [`Exit`] code, so tests drive it without a process.
//!
//! # Adding a subcommand
//!
//! Write `cli/NAME.rs` with a documented `#[derive(clap::Args)]` struct
//! (its doc comment is the subcommand's help) that implements [`Execute`],
//! then add one line `Name(NAME::NameArgs),` to the `commands!` list
//! below. The module, the enum variant and its dispatch are generated from
//! that line; help and the shell completions follow from clap, and
//! `every_subcommand_is_listed_everywhere` checks they do.

mod flags;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::{Parser, Subcommand};

use crate::InputError;

/// Deterministic simulation of Redisson's RLock and its watchdog.
#[derive(Debug, Parser, PartialEq)]
#[command(name = "locksim", version = env!("LOCKSIM_VERSION"), about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// What a subcommand's arguments do when run.
pub trait Execute {
    /// Runs the subcommand, printing results to `io.out` and problems to
    /// `io.err`; an error is bad input (exit 2), printed by the caller.
    fn execute(&self, io: &mut Io<'_>) -> Result<Exit, InputError>;
}

/// Where a subcommand writes, and the flag a long one polls for Ctrl-C.
pub struct Io<'a> {
    /// Results.
    pub out: &'a mut dyn Write,
    /// Problems and progress.
    pub err: &'a mut dyn Write,
    /// Set by Ctrl-C; a sweep stops at the next seed boundary.
    pub interrupt: &'a AtomicBool,
}

/// Declares the subcommands: one line each, `Variant(module::Args)`. It
/// declares the module, the [`Command`] variant (whose help is the args
/// struct's doc comment) and the variant's dispatch to [`Execute`].
macro_rules! commands {
    ($($variant:ident($module:ident::$args:ident),)*) => {
        $(pub mod $module;)*

        /// The subcommands.
        #[derive(Debug, Subcommand, PartialEq)]
        pub enum Command {
            $(
                #[allow(missing_docs)]
                $variant($module::$args),
            )*
        }

        impl Command {
            fn execute(&self, io: &mut Io<'_>) -> Result<Exit, InputError> {
                match self {
                    $(Command::$variant(args) => args.execute(io),)*
                }
            }
        }
    };
}

commands! {
    Scenarios(scenarios::ScenariosArgs),
    Run(run::RunArgs),
    Compare(compare::CompareArgs),
    Explore(explore::ExploreArgs),
    Replay(replay::ReplayArgs),
    Report(report::ReportArgs),
    Envelope(envelope::EnvelopeArgs),
    Audit(audit::AuditArgs),
    Mutants(mutants::MutantsArgs),
    Bench(bench::BenchArgs),
    Versions(versions::VersionsArgs),
    Completions(completions::CompletionsArgs),
    Schema(schema::SchemaArgs),
}

/// The process exit code of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The outcome was as expected (0).
    AsExpected,
    /// The outcome was not as expected (1).
    Unexpected,
    /// Bad input: unknown scenario or profile, malformed file, a path that
    /// cannot be written, an empty or overflowing seed range (2).
    BadInput,
    /// Stopped by Ctrl-C before the end (130, what a shell reports for a
    /// process that SIGINT ended, so scripts see the same either way).
    Interrupted,
}

impl Exit {
    /// The numeric code.
    pub fn code(self) -> i32 {
        match self {
            Exit::AsExpected => 0,
            Exit::Unexpected => 1,
            Exit::BadInput => 2,
            Exit::Interrupted => 130,
        }
    }
}

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with 0; usage errors to stderr with 2.
            let _ = e.print();
            return e.exit_code();
        }
    };
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let mut err = stderr.lock();
    // Only a sweep has anything to say when stopped; every other command
    // keeps Ctrl-C's default, which ends it at once.
    if matches!(cli.command, Command::Explore(_) | Command::Mutants(_)) {
        catch_ctrl_c(&mut err);
    }
    execute_with_interrupt(&cli, &INTERRUPTED, &mut stdout.lock(), &mut err).code()
}

/// Set by the first Ctrl-C; a sweep polls it between seeds.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Makes the first Ctrl-C set [`INTERRUPTED`] and the second end the
/// process, so a seed that never finished would not trap the user.
fn catch_ctrl_c(err: &mut dyn Write) {
    let set = ctrlc::set_handler(|| {
        if INTERRUPTED.swap(true, Ordering::SeqCst) {
            std::process::exit(Exit::Interrupted.code());
        }
    });
    if let Err(e) = set {
        // Not fatal: Ctrl-C then ends the sweep at once, as it used to.
        let _ = writeln!(
            err,
            "locksim: cannot catch Ctrl-C ({e}); an interrupted sweep prints no summary"
        );
    }
}

/// Runs `cli`, printing results to `out` and problems to `err`.
pub fn execute(cli: &Cli, out: &mut dyn Write, err: &mut dyn Write) -> Exit {
    execute_with_interrupt(cli, &AtomicBool::new(false), out, err)
}

/// Runs `cli` like [`execute`]; a sweep stops at the first seed boundary
/// after `interrupt` is set, prints what it found so far and how to resume,
/// and exits with [`Exit::Interrupted`].
pub fn execute_with_interrupt(
    cli: &Cli,
    interrupt: &AtomicBool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Exit {
    let mut io = Io {
        out,
        err,
        interrupt,
    };
    let result = cli.command.execute(&mut io);
    let err = io.err;
    match result {
        Ok(exit) => exit,
        Err(e) => {
            let _ = writeln!(err, "locksim: {e}");
            Exit::BadInput
        }
    }
}

/// Parses `args` as the command line after `locksim`.
#[cfg(test)]
pub(crate) fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(std::iter::once("locksim").chain(args.iter().copied()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(args: &[&str]) -> (Exit, String, String) {
        let cli =
            Cli::try_parse_from(std::iter::once("locksim").chain(args.iter().copied())).unwrap();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let exit = execute(&cli, &mut out, &mut err);
        (
            exit,
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    /// Writes `text` to `name` in a fresh directory, and returns the
    /// directory (removed when dropped, also while a failing test unwinds)
    /// and the file's path.
    fn temp_file(name: &str, text: &str) -> (tempfile::TempDir, String) {
        let dir = tempfile::Builder::new()
            .prefix("locksim-cli-test-")
            .tempdir()
            .unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        (dir, path.display().to_string())
    }

    /// Test files used to be left in the system temp dir after every run:
    /// now the directory goes away when the test ends, whether it passes
    /// or panics.
    #[test]
    fn temp_files_are_removed_even_when_a_test_fails() {
        let (dir, path) = temp_file("a.toml", "x");
        let kept = dir.path().to_owned();
        assert!(std::path::Path::new(&path).is_file());
        drop(dir);
        assert!(!kept.exists(), "{} left behind", kept.display());

        let failing = std::panic::catch_unwind(|| {
            let (dir, _) = temp_file("b.toml", "x");
            let kept = dir.path().to_owned();
            // Handed out before the panic, as a failing assertion would.
            std::panic::panic_any(kept);
        });
        let kept = failing
            .unwrap_err()
            .downcast::<std::path::PathBuf>()
            .unwrap();
        assert!(!kept.exists(), "{} left behind", kept.display());
    }

    /// A built-in scenario that gives what it expects exits 0, printing the
    /// seed and settings before the timeline and the verdict after it.
    #[test]
    fn run_builtin_as_expected() {
        let (exit, out, _) = exec(&["run", "watchdog-serializes", "--profile", "redisson"]);
        assert_eq!(exit, Exit::AsExpected);
        let seed = out.find("\nseed      1").unwrap();
        let timeline = out.find("--- timeline").unwrap();
        let verdict = out.find("--- verdict").unwrap();
        assert!(seed < timeline && timeline < verdict, "{out}");
        assert!(out.contains("result    as expected"), "{out}");
    }

    /// A violation ends with the reproduce line, even when expected.
    #[test]
    fn violation_ends_with_reproduce_line() {
        let (exit, out, _) = exec(&["run", "stw-pause", "--seed", "3", "--profile", "redisson"]);
        assert_eq!(exit, Exit::AsExpected, "{out}");
        assert_eq!(
            out.lines().last(),
            Some("reproduce with: locksim run stw-pause --seed 3 --profile redisson")
        );
    }

    /// An unknown scenario is bad input: exit 2, a message on stderr, nothing on stdout.
    #[test]
    fn unknown_scenario_exits_2() {
        let (exit, out, err) = exec(&["run", "no-such-thing"]);
        assert_eq!(exit, Exit::BadInput);
        assert!(out.is_empty());
        assert!(
            err.starts_with("locksim: unknown scenario 'no-such-thing'"),
            "{err}"
        );
    }

    /// A directory given as the scenario is bad input, and the message
    /// says it is a directory (it used to say "no such file").
    #[test]
    fn directory_as_scenario_exits_2_saying_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_str().unwrap();
        let (exit, out, err) = exec(&["run", path]);
        assert_eq!((exit, out.as_str()), (Exit::BadInput, ""));
        assert_eq!(
            err,
            format!("locksim: {path} is a directory, not a scenario file\n")
        );
    }

    /// A malformed file is bad input, reported with its line and field.
    #[test]
    fn malformed_file_exits_2_with_line() {
        let (_dir, path) = temp_file(
            "bad.toml",
            "name = \"x\"\ndescription = \"y\"\n[sim]\nseed = -1\nclients = []\n",
        );
        let (exit, _, err) = exec(&["run", &path]);
        assert_eq!(exit, Exit::BadInput);
        assert!(
            err.contains("line 4") && err.contains("field `sim.seed`"),
            "{err}"
        );
    }

    /// A file whose expectation the run does not meet exits 1 and says why.
    #[test]
    fn unexpected_outcome_exits_1() {
        let text = r#"
name = "never-safe"
description = "one client locks and never unlocks, but expects safety"
[sim]
seed = 1
horizon_ms = 20000
[[sim.clients]]
name = "A"
[[sim.clients.threads]]
steps = [{ step = "lock" }]
[expect.default]
verdict = "safe"
"#;
        let (_dir, path) = temp_file("never-safe.toml", text);
        let (exit, out, _) = exec(&["run", &path, "--profile", "fenced"]);
        assert_eq!(exit, Exit::Unexpected, "{out}");
        assert!(
            out.contains("NOT as expected") && out.contains("lock-left-behind"),
            "{out}"
        );
        assert!(
            out.ends_with(&format!(
                "reproduce with: locksim run {path} --seed 1 --profile fenced\n"
            )),
            "{out}"
        );
    }

    /// `--json` prints one JSON object and nothing else.
    #[test]
    fn run_json_is_one_object() {
        let (exit, out, _) = exec(&["run", "client-crash", "--json"]);
        assert_eq!(exit, Exit::AsExpected);
        assert_eq!(out.lines().count(), 1);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["verdict"], "safe");
        assert_eq!(v["as_expected"], true);
    }

    /// explore prints one replay line per violating run, the summary
    /// table, and a shrunk scenario file for the first violation; it exits 1
    /// when any run broke an invariant and 0 when none did.
    #[test]
    fn explore_output() {
        let (exit, out, _) = exec(&[
            "explore",
            "--strategy",
            "uniform",
            "--seeds",
            "6",
            "--profile",
            "redisson",
            "--shrink",
            "1",
        ]);
        assert!(
            out.starts_with(
                "exploring seeds 0..6 under redisson (correct usage, swarm faults): 6 runs; "
            ) && out.contains(
                "\nexplored seeds 0..6 under redisson (correct usage, swarm faults): 6 runs, "
            ),
            "{out}"
        );
        let replays: Vec<&str> = out
            .lines()
            .filter(|l| l.trim_start().starts_with("locksim replay "))
            .collect();
        assert_eq!(exit == Exit::Unexpected, !replays.is_empty(), "{out}");
        for l in &replays {
            assert!(l.contains("--profile redisson    # "), "{l}");
        }
        if !replays.is_empty() {
            assert!(
                out.contains("\nshrunk seed ") && out.contains("[sim]"),
                "{out}"
            );
        }
    }

    /// Every registered subcommand has help text of its own (its args
    /// struct's doc comment, not a flattened group's) and is listed by
    /// `locksim --help` with it and by the guide's command-line page
    /// (`docs/src/cli.md`) as `locksim NAME`. (The shell
    /// completions are checked in `completions`.) A subcommand registered
    /// without a doc comment, hidden from help, or missing from the page
    /// fails here.
    #[test]
    fn every_subcommand_is_listed_everywhere() {
        use clap::CommandFactory;
        let mut cli = Cli::command();
        let help = cli.render_help().to_string();
        let page = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/src/cli.md");
        let page = std::fs::read_to_string(page).expect("the guide's command-line page");
        let names: Vec<_> = cli.get_subcommands().map(|c| c.get_name()).collect();
        assert!(names.contains(&"explore") && names.len() >= 10, "{names:?}");
        for sub in cli.get_subcommands() {
            let name = sub.get_name();
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            let first = about.lines().next().unwrap_or_default();
            assert!(!first.is_empty(), "`{name}` has no help text");
            assert!(
                !first.contains("--with NAME"),
                "`{name}` shows a flag group's doc: {first}"
            );
            let line = format!("  {name} ");
            assert!(
                help.lines()
                    .any(|l| l.starts_with(&line) && l.contains(first.trim_end_matches('.'))),
                "`locksim --help` does not list `{name}` with its help:\n{help}"
            );
            assert!(
                page.contains(&format!("locksim {name}")),
                "docs/src/cli.md does not mention `locksim {name}`"
            );
        }
    }

    /// `--version` names the package version and, in a git checkout, the
    /// commit the binary was built from, as `git rev-parse --short HEAD`
    /// prints it.
    #[test]
    fn version_names_the_commit() {
        let err = Cli::try_parse_from(["locksim", "--version"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::DisplayVersion);
        let text = err.to_string();
        let plain = format!("locksim {}", env!("CARGO_PKG_VERSION"));
        let head = std::process::Command::new("git")
            .args(["rev-parse", "--short", "HEAD"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
        match head {
            Some(commit) => assert_eq!(text, format!("{plain} ({commit})\n")),
            None => assert_eq!(text, format!("{plain}\n")),
        }
    }

    /// `scenarios` lists every built-in scenario, one line each.
    #[test]
    fn scenarios_lists_builtins() {
        let (exit, out, _) = exec(&["scenarios"]);
        assert_eq!(exit, Exit::AsExpected);
        assert_eq!(out.lines().count(), crate::builtin_names().count());
        assert!(out.lines().any(|l| l.starts_with("stw-pause ")), "{out}");
    }

    /// replay reruns an explored seed: same seed and profile, same history.
    #[test]
    fn replay_is_deterministic() {
        let (_, a, _) = exec(&["replay", "7", "--profile", "redisson", "--json"]);
        let (_, b, _) = exec(&["replay", "7", "--profile", "redisson", "--json"]);
        assert_eq!(a, b);
        let v: serde_json::Value = serde_json::from_str(&a).unwrap();
        assert_eq!(
            (v["seed"].as_u64(), v["profile"].as_str()),
            (Some(7), Some("redisson"))
        );
    }
}
