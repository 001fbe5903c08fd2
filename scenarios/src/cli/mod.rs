//! The `locksim` command line: argument parsing and one module per command.
//! Each command writes to the given output and returns an [`Exit`] code, so
//! tests drive it without a process.

mod args;
mod explore;
mod report;
mod run;

use std::io::Write;

use clap::Parser;

pub use args::{Cli, Command, ExploreArgs, PlanFormat, ReplayArgs, ReportArgs, RunArgs};

/// The process exit code of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The outcome was as expected (0).
    AsExpected,
    /// The outcome was not as expected (1).
    Unexpected,
    /// Bad input: unknown scenario or profile, malformed file (2).
    BadInput,
}

impl Exit {
    /// The numeric code.
    pub fn code(self) -> i32 {
        match self {
            Exit::AsExpected => 0,
            Exit::Unexpected => 1,
            Exit::BadInput => 2,
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
    execute(&cli, &mut stdout.lock(), &mut stderr.lock()).code()
}

/// Runs `cli`, printing results to `out` and problems to `err`.
pub fn execute(cli: &Cli, out: &mut dyn Write, err: &mut dyn Write) -> Exit {
    let result = match &cli.command {
        Command::Scenarios => {
            list(out);
            Ok(Exit::AsExpected)
        }
        Command::Run(a) => run::run(a, out),
        Command::Replay(a) => run::replay(a, out),
        Command::Explore(a) => explore::explore(a, out, err),
        Command::Report(a) => report::report(a, out),
    };
    match result {
        Ok(exit) => exit,
        Err(e) => {
            let _ = writeln!(err, "locksim: {e}");
            Exit::BadInput
        }
    }
}

/// `locksim scenarios`.
fn list(out: &mut dyn Write) {
    let all = crate::builtins();
    let width = all.iter().map(|s| s.name.len()).max().unwrap_or(0);
    for s in all {
        let first = s.description.split(". ").next().unwrap_or("").trim_end_matches('.');
        let _ = writeln!(out, "{:<width$}  {first}.", s.name);
    }
}
