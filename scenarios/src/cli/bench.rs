//! `locksim bench`.

use std::io::Write;

use crate::cli::{BenchArgs, Exit};
use crate::{BenchConfig, InputError};

/// Measures, prints the figures and writes them to `args.out`.
pub(super) fn bench(args: &BenchArgs, out: &mut dyn Write) -> Result<Exit, InputError> {
    let config = if args.quick {
        BenchConfig::quick()
    } else {
        BenchConfig::standard()
    };
    let report = crate::bench(&config)?;
    let text = report.markdown();
    let _ = write!(out, "{text}");
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| InputError::Unwritable {
            path: dir.display().to_string(),
            reason: e.to_string(),
        })?;
    }
    std::fs::write(&args.out, text).map_err(|e| InputError::Unwritable {
        path: args.out.display().to_string(),
        reason: e.to_string(),
    })?;
    let _ = writeln!(out, "\nwritten to {}", args.out.display());
    Ok(Exit::AsExpected)
}
