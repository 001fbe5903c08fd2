//! `locksim report`.

use std::io::Write;

use crate::cli::{Exit, ReportArgs};
use crate::{InputError, history_matrix, report_files, run_matrix, write_report};

/// Runs the matrix, writes the report, and prints the matrix's summary.
pub(super) fn report(args: &ReportArgs, out: &mut dyn Write) -> Result<Exit, InputError> {
    let matrix = run_matrix(&crate::builtins())?;
    let history = history_matrix(&crate::history())?;
    let files = report_files(&matrix, &history);
    write_report(&args.out, &files)?;
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
    let _ = writeln!(
        out,
        "wrote {} files to {}; {} run(s) not as expected",
        files.len(),
        args.out.display(),
        unexpected
    );
    Ok(if unexpected == 0 {
        Exit::AsExpected
    } else {
        Exit::Unexpected
    })
}
