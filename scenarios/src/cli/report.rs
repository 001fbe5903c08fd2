//! `locksim report`.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::cli::flags::EngineArgs;
use crate::cli::{Execute, Exit, Io};
use crate::{InputError, history_matrix_on, report_files_on, run_matrix_on, write_report};

/// Run every built-in scenario under every profile and write reports/.
#[derive(Debug, Args, PartialEq)]
pub struct ReportArgs {
    /// Where to write the report (default `reports`, or `reports/ENGINE`
    /// on another engine, so the committed report stays the fast
    /// engine's).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The engine.
    #[command(flatten)]
    pub engine: EngineArgs,
}


impl Execute for ReportArgs {
    fn execute(&self, io: &mut Io<'_>) -> Result<Exit, InputError> {
        report(self, io.out)
    }
}

/// Runs the matrix, writes the report, and prints the matrix's summary.
pub(super) fn report(args: &ReportArgs, out: &mut dyn Write) -> Result<Exit, InputError> {
    let engine = args.engine.engine_or(sim::Engine::Fast)?;
    let dir = match (&args.out, &engine) {
        (Some(dir), _) => dir.clone(),
        (None, sim::Engine::Fast) => PathBuf::from("reports"),
        (None, other) => Path::new("reports").join(other.name()),
    };
    let (matrix, mut refused) = run_matrix_on(&crate::builtins(), &engine)?;
    let (history, refused_history) = history_matrix_on(&crate::history(), &engine)?;
    refused.extend(refused_history);
    let files = report_files_on(&matrix, &history, &engine, &refused);
    write_report(&dir, &files)?;
    let mut unexpected = 0;
    for (s, trials) in matrix.iter().chain(&history) {
        let cells: Vec<String> = trials
            .iter()
            .map(|t| {
                if !t.as_expected() {
                    unexpected += 1;
                }
                format!(
                    "{}:{}{}",
                    t.profile,
                    t.verdict(),
                    if t.as_expected() { "" } else { "(!)" }
                )
            })
            .collect();
        let _ = writeln!(out, "{:<32} {}", s.name, cells.join("  "));
    }
    for r in &refused {
        let _ = writeln!(out, "{:<32} not run: {}", r.scenario, r.reason);
    }
    let _ = writeln!(
        out,
        "wrote {} files to {}; {} run(s) not as expected",
        files.len(),
        dir.display(),
        unexpected
    );
    Ok(if unexpected == 0 {
        Exit::AsExpected
    } else {
        Exit::Unexpected
    })
}
