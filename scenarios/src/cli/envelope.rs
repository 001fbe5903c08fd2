//! `locksim envelope`.

use std::io::Write;
use std::path::PathBuf;

use sim::LatencyRange;

use clap::Args;
use lockcore::Release;

use crate::cli::flags::{Toggles, parse_profile};
use crate::cli::{Execute, Exit, Io};
use crate::{EnvelopeConfig, InputError, render_envelope_chart};

/// The safety envelope of a configuration: the longest pause,
/// starvation, partition and Redis pause the lock survives, per
/// lockWatchdogTimeout, and the takeover delay after a crash.
#[derive(Debug, Args, PartialEq)]
pub struct EnvelopeArgs {
    /// The lock's release: an era name or a Redisson version.
    #[arg(long, visible_alias = "redisson", value_parser = parse_profile, default_value = "redisson")]
    pub profile: Release,
    /// Switches toggled on the release.
    #[command(flatten)]
    pub toggles: Toggles,
    /// The lockWatchdogTimeout values to search, in ms, comma separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1000,2000,5000,10000,20000,30000,60000,120000"
    )]
    pub watchdog_ms: Vec<u64>,
    /// One-way latency between each client and Redis, `MIN-MAX` in ms.
    #[arg(long, value_parser = parse_latency, default_value = "1-5")]
    pub latency: (u64, u64),
    /// How many seeds each point is taken over (the worst counts).
    #[arg(long, default_value_t = 2)]
    pub seeds: u64,
    /// How many phases of one renewal period are tried.
    #[arg(long, default_value_t = 8)]
    pub phases: u64,
    /// Print the envelope as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write the chart (SVG) to this file.
    #[arg(long)]
    pub chart: Option<PathBuf>,
}

fn parse_latency(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s.split_once('-').unwrap_or((s, s));
    let num = |t: &str| {
        t.trim()
            .parse::<u64>()
            .map_err(|_| format!("latency must be `MIN-MAX` in ms (e.g. 1-5), got '{s}'"))
    };
    Ok((num(a)?, num(b)?))
}


impl Execute for EnvelopeArgs {
    fn execute(&self, io: &mut Io<'_>) -> Result<Exit, InputError> {
        envelope(self, io.out)
    }
}

/// Searches the envelope and prints its table (or JSON); writes the chart
/// when asked.
pub(super) fn envelope(args: &EnvelopeArgs, out: &mut dyn Write) -> Result<Exit, InputError> {
    let config = EnvelopeConfig {
        profile: args
            .toggles
            .apply(Some(args.profile))?
            .unwrap_or(args.profile),
        watchdogs_ms: args.watchdog_ms.clone(),
        latency: LatencyRange {
            min_ms: args.latency.0,
            max_ms: args.latency.1,
        },
        seeds: args.seeds,
        settings: None,
        phases: args.phases,
    };
    let env = crate::envelope(&config)?;
    if args.json {
        let text = serde_json::to_string_pretty(&env).unwrap_or_default();
        let _ = writeln!(out, "{text}");
    } else {
        let _ = write!(out, "{}", env.table());
    }
    if let Some(path) = &args.chart {
        std::fs::write(path, render_envelope_chart(&env)).map_err(|e| InputError::Unwritable {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        let _ = writeln!(out, "chart written to {}", path.display());
    }
    Ok(Exit::AsExpected)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::cli::{Cli, Exit, execute};

    fn envelope(args: &[&str]) -> (Exit, String, String) {
        let argv = ["locksim", "envelope"].iter().chain(args.iter()).copied();
        let cli = Cli::try_parse_from(argv).expect("parses");
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let exit = execute(&cli, &mut out, &mut err);
        (
            exit,
            String::from_utf8_lossy(&out).into_owned(),
            String::from_utf8_lossy(&err).into_owned(),
        )
    }

    /// The table for one timeout, and the chart written where asked.
    #[test]
    fn prints_the_table_and_writes_the_chart() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let chart = dir.path().join("envelope.svg");
        let chart_arg = chart.to_string_lossy().into_owned();
        let (exit, out, _) = envelope(&[
            "--watchdog-ms",
            "3000",
            "--phases",
            "2",
            "--seeds",
            "1",
            "--chart",
            &chart_arg,
        ]);
        assert_eq!(exit, Exit::AsExpected, "{out}");
        assert!(out.contains("safety envelope of redisson"), "{out}");
        assert!(out.contains("      3.000s"), "{out}");
        let svg = std::fs::read_to_string(&chart).expect("chart written");
        assert!(svg.starts_with("<svg"), "{svg}");
    }

    /// An impossible range is refused with exit 2 and the accepted range;
    /// a malformed latency is a usage error.
    #[test]
    fn bad_input_exits_2() {
        let (exit, _, err) = envelope(&["--watchdog-ms", "5"]);
        assert_eq!(exit, Exit::BadInput);
        assert!(err.contains("between 30 and 3600000 ms"), "{err}");
        let argv = ["locksim", "envelope", "--latency", "fast"];
        let e = Cli::try_parse_from(argv).unwrap_err().to_string();
        assert!(e.contains("latency must be `MIN-MAX`"), "{e}");
    }
}
