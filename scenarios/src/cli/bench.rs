//! `locksim bench`.

use std::io::Write;
use std::path::Path;

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::cli::{Execute, Exit, Io};
use crate::{BenchConfig, InputError, TURMOIL_HEADING, section_of, with_section};

/// Measure the simulator's speed and write reports/PERFORMANCE.md.
#[derive(Debug, Args, PartialEq)]
pub struct BenchArgs {
    /// Where to write the figures.
    #[arg(long, default_value = "reports/PERFORMANCE.md")]
    pub out: PathBuf,
    /// A quick look (fewer, shorter batches) instead of the standard run.
    #[arg(long)]
    pub quick: bool,
    /// What to measure (its own choice, not `run`'s engine: a real Redis
    /// runs in real time, so there is no simulator speed to measure).
    #[arg(long, value_enum, default_value_t = BenchEngine::Fast)]
    pub engine: BenchEngine,
}

/// `locksim bench --engine`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BenchEngine {
    /// Every built-in scenario on the fast engine, and explore.
    Fast,
    /// The turmoil engine against a bare turmoil program with the same
    /// hosts and simulated time, in its own section of the file.
    Turmoil,
}


impl Execute for BenchArgs {
    fn execute(&self, io: &mut Io<'_>) -> Result<Exit, InputError> {
        bench(self, io.out)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Command, parse};

    /// `bench` stays on the fast engine unless told; `--engine turmoil`
    /// selects the turmoil benchmark.
    #[test]
    fn bench_arguments() {
        let bench = |args: &[&str]| match parse(args).unwrap().command {
            Command::Bench(b) => b,
            other => panic!("{other:?}"),
        };
        let plain = bench(&["bench"]);
        assert_eq!(plain.engine, BenchEngine::Fast);
        assert!(!plain.quick);
        let turmoil = bench(&["bench", "--engine", "turmoil", "--quick"]);
        assert_eq!(
            turmoil,
            BenchArgs {
                out: "reports/PERFORMANCE.md".into(),
                quick: true,
                engine: BenchEngine::Turmoil,
            }
        );
        let err = parse(&["bench", "--engine", "redis"]).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("fast, turmoil"), "{err}");
    }
}
