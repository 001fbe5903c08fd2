//! `locksim bench`.

use std::io::Write;
use std::path::Path;

use crate::cli::{BenchArgs, BenchEngine, Exit};
use crate::{BenchConfig, InputError, TURMOIL_HEADING, section_of, with_section};

/// Measures, prints the figures and writes them to `args.out`: the whole
/// file on the fast engine (keeping the turmoil section), the turmoil
/// section alone on the turmoil engine (keeping the rest).
pub(super) fn bench(args: &BenchArgs, out: &mut dyn Write) -> Result<Exit, InputError> {
    let config = if args.quick {
        BenchConfig::quick()
    } else {
        BenchConfig::standard()
    };
    let existing = read_existing(&args.out)?;
    let (text, file) = match args.engine {
        BenchEngine::Fast => {
            let text = crate::bench(&config)?.markdown();
            let file = with_section(
                &text,
                TURMOIL_HEADING,
                section_of(&existing, TURMOIL_HEADING),
            );
            (text, file)
        }
        BenchEngine::Turmoil => {
            let text = crate::bench_turmoil(&config, &crate::builtins())?.markdown();
            let file = with_section(&existing, TURMOIL_HEADING, Some(&text));
            (text, file)
        }
    };
    let _ = write!(out, "{text}");
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| InputError::Unwritable {
            path: dir.display().to_string(),
            reason: e.to_string(),
        })?;
    }
    std::fs::write(&args.out, file).map_err(|e| InputError::Unwritable {
        path: args.out.display().to_string(),
        reason: e.to_string(),
    })?;
    let _ = writeln!(out, "\nwritten to {}", args.out.display());
    Ok(Exit::AsExpected)
}

/// The file as it is, or nothing when there is none yet.
fn read_existing(path: &Path) -> Result<String, InputError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(InputError::Unreadable {
            path: path.display().to_string(),
            reason: e.to_string(),
        }),
    }
}
