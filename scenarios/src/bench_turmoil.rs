//! `locksim bench --engine turmoil`: the turmoil engine's time per run
//! against a bare turmoil program with the same hosts and simulated time
//! ([`sim::run_turmoil_bare`]), for issue 14's goal of at most 1.5x.
//!
//! The engine and the bare program run in alternating batches (engine,
//! bare, engine, bare, ...), so a change in the machine's speed during the
//! measurement hits both alike, and each pair of batches gives a ratio.
//! Wall time is read between runs, never inside one. The figures go into
//! their own section of `reports/PERFORMANCE.md`, which the plain `bench`
//! keeps when it rewrites the rest.

use std::fmt::Write as _;

use lockcore::Release;
use sim::SimError;

use crate::bench::{batch_us, calls_for, timed};
use crate::{BenchConfig, InputError, Scenario};

/// Issue 14's goal: the engine's time per run over the bare program's.
pub const TURMOIL_GOAL: f64 = 1.5;

/// The heading of the turmoil section in `reports/PERFORMANCE.md`.
pub const TURMOIL_HEADING: &str = "## The turmoil engine against a bare turmoil program";

/// The minimum, median and maximum of a figure over the batches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// The smallest.
    pub min: f64,
    /// The median (the one to quote).
    pub median: f64,
    /// The largest.
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (zeros when there are none).
    pub(crate) fn of(mut values: Vec<f64>) -> Spread {
        values.sort_by(f64::total_cmp);
        Spread {
            min: values.first().copied().unwrap_or_default(),
            median: values.get(values.len() / 2).copied().unwrap_or_default(),
            max: values.last().copied().unwrap_or_default(),
        }
    }

    fn cell(&self, decimals: usize) -> String {
        format!(
            "{:.d$} ({:.d$}–{:.d$})",
            self.median,
            self.min,
            self.max,
            d = decimals
        )
    }
}

/// One built-in scenario on the turmoil engine and on the bare program.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineSpeed {
    /// The scenario.
    pub name: String,
    /// Its horizon, in ms (the boot phase comes on top).
    pub simulated_ms: u64,
    /// Turmoil hosts: Redis and one per client.
    pub hosts: usize,
    /// Turmoil steps per run, the same for both.
    pub steps: u64,
    /// The engine's wall time per run, in ms.
    pub engine_ms: Spread,
    /// The bare program's wall time per run, in ms.
    pub bare_ms: Spread,
    /// Engine over bare, one per pair of batches.
    pub ratio: Spread,
    /// Whether a client crashes: turmoil does not tick a crashed host,
    /// while the bare program's hosts never crash, so the engine may
    /// step fewer hosts than its floor.
    pub crashes: bool,
}

impl EngineSpeed {
    /// Whether the median ratio is within [`TURMOIL_GOAL`].
    pub fn meets_goal(&self) -> bool {
        self.ratio.median <= TURMOIL_GOAL
    }
}

/// The turmoil benchmark's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct TurmoilBench {
    /// Every scenario the turmoil engine runs.
    pub scenarios: Vec<EngineSpeed>,
    /// The scenarios it refuses (a fault it cannot carry out).
    pub refused: Vec<String>,
    /// Batches of each per scenario.
    pub batches: u32,
}

/// Times `scenarios` (profile `redisson`, each one's seed) on the turmoil
/// engine and on the bare program; the ones the engine refuses are listed.
pub fn bench_turmoil(
    config: &BenchConfig,
    scenarios: &[Scenario],
) -> Result<TurmoilBench, InputError> {
    let mut out = TurmoilBench {
        scenarios: Vec::new(),
        refused: Vec::new(),
        batches: config.batches.max(1),
    };
    for s in scenarios {
        let spec = s.spec(None, Some(Release::REDISSON));
        let invalid = |e: SimError| InputError::Invalid {
            origin: s.name.clone(),
            location: None,
            message: e.to_string(),
        };
        // The first run of each is the warm-up, and tells how many runs
        // fill a batch.
        let (run, engine_secs) = timed(|| sim::run_turmoil(&spec));
        let run = match run {
            Err(SimError::Unsupported { .. }) => {
                out.refused.push(s.name.clone());
                continue;
            }
            other => other.map_err(invalid)?,
        };
        let (bare, bare_secs) = timed(|| sim::run_turmoil_bare(&spec));
        bare.map_err(invalid)?;
        let engine_calls = calls_for(config, engine_secs);
        let bare_calls = calls_for(config, bare_secs);
        let (mut engine_ms, mut bare_ms, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..out.batches {
            let engine = batch_us(engine_calls, || {
                let _ = sim::run_turmoil(&spec);
            }) / 1_000.0;
            let bare = batch_us(bare_calls, || {
                let _ = sim::run_turmoil_bare(&spec);
            }) / 1_000.0;
            engine_ms.push(engine);
            bare_ms.push(bare);
            ratio.push(engine / bare.max(1e-9));
        }
        out.scenarios.push(EngineSpeed {
            name: s.name.clone(),
            simulated_ms: spec.horizon_ms,
            hosts: spec.clients.len() + 1,
            steps: run.events,
            engine_ms: Spread::of(engine_ms),
            bare_ms: Spread::of(bare_ms),
            ratio: Spread::of(ratio),
            crashes: spec
                .faults
                .0
                .iter()
                .any(|f| matches!(f, sim::Fault::Crash(_))),
        });
    }
    Ok(out)
}

impl TurmoilBench {
    /// The section of `reports/PERFORMANCE.md`, from [`TURMOIL_HEADING`]:
    /// figures only, no date, no machine.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{TURMOIL_HEADING}\n\n\
             Written by `cargo run --release -- bench --engine turmoil`. Issue 14's goal: the \
             turmoil engine (`locksim run NAME --engine turmoil`: lockcore's async client over \
             RESP against fake-redis's RESP server, recorded and judged) within {TURMOIL_GOAL}× \
             of a bare turmoil program with the same hosts and simulated time \
             (`sim::run_turmoil_bare`: a `redis` host accepting on port 6379, a host per client \
             that opens its two connections during the 100 ms boot phase and then idles, 1 ms \
             ticks to the same horizon, the same latency range and seed, and nothing else). \
             Profile `redisson`, each scenario's seed; the two run in alternating batches, {} of \
             each; each figure is the median (minimum–maximum) over the batches, the ratio taken \
             pair by pair.\n",
            self.batches
        );
        let _ = writeln!(
            s,
            "| scenario | simulated | hosts | steps | turmoil engine, ms per run | bare turmoil, \
             ms per run | ratio | within {TURMOIL_GOAL}× |\n\
             |---|---:|---:|---:|---:|---:|---:|---|"
        );
        for sc in &self.scenarios {
            let _ = writeln!(
                s,
                "| {}{} | {:.0} s | {} | {} | {} | {} | {} | {} |",
                sc.name,
                if sc.crashes { " (a)" } else { "" },
                sc.simulated_ms as f64 / 1_000.0,
                sc.hosts,
                sc.steps,
                sc.engine_ms.cell(1),
                sc.bare_ms.cell(1),
                sc.ratio.cell(2),
                if sc.meets_goal() { "yes" } else { "no" }
            );
        }
        if self.scenarios.iter().any(|s| s.crashes) {
            let _ = writeln!(
                s,
                "\n(a) A client crashes: turmoil does not tick a crashed host, and the bare \
                 program's hosts never crash, so the engine steps fewer hosts than the bare \
                 program while it is down."
            );
        }
        let met = self.scenarios.iter().filter(|s| s.meets_goal()).count();
        let _ = write!(
            s,
            "\nThe goal is met on {met} of {} scenarios",
            self.scenarios.len()
        );
        match self
            .scenarios
            .iter()
            .max_by(|a, b| a.ratio.median.total_cmp(&b.ratio.median))
        {
            Some(w) => {
                let _ = writeln!(
                    s,
                    "; the largest ratio is {:.2} ({}).",
                    w.ratio.median, w.name
                );
            }
            None => {
                let _ = writeln!(s, ".");
            }
        }
        if !self.refused.is_empty() {
            let _ = writeln!(
                s,
                "\nNot measured, the turmoil engine refuses them (a fault it cannot carry out): {}.",
                self.refused.join(", ")
            );
        }
        s
    }
}

/// The section of `text` that starts at the line `heading` and runs to
/// the next `## ` heading or the end.
pub fn section_of<'t>(text: &'t str, heading: &str) -> Option<&'t str> {
    let (start, end) = section_span(text, heading)?;
    Some(&text[start..end])
}

/// `text` with its `heading` section replaced by `section`, or with
/// `section` appended when it has none; `None` leaves `text` as it is.
pub fn with_section(text: &str, heading: &str, section: Option<&str>) -> String {
    let Some(section) = section else {
        return text.to_owned();
    };
    let section = section.trim_end();
    match section_span(text, heading) {
        Some((start, end)) if end < text.len() => {
            format!("{}{section}\n\n{}", &text[..start], &text[end..])
        }
        Some((start, _)) => format!("{}{section}\n", &text[..start]),
        None if text.trim().is_empty() => format!("{section}\n"),
        None => format!("{}\n\n{section}\n", text.trim_end()),
    }
}

fn section_span(text: &str, heading: &str) -> Option<(usize, usize)> {
    let start = if text.starts_with(&format!("{heading}\n")) || text == heading {
        0
    } else {
        text.find(&format!("\n{heading}\n"))? + 1
    };
    let after = start + heading.len();
    let end = text[after..]
        .find("\n## ")
        .map_or(text.len(), |i| after + i + 1);
    Some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The turmoil benchmark measures what the engine runs and lists what
    /// it refuses, with the same step count for the engine and the bare
    /// program. No timing is asserted.
    #[test]
    fn measures_what_the_engine_runs_and_lists_what_it_refuses() {
        let config = BenchConfig {
            batches: 1,
            batch_ms: 1,
            explore_seeds: 1,
        };
        let scenarios = [
            crate::load("tiny-watchdog-timeout").unwrap(),
            crate::load(crate::builtin::LOSSY_LINK).unwrap(),
        ];
        let r = bench_turmoil(&config, &scenarios).unwrap();
        assert_eq!(r.refused, ["lossy-link"]);
        let [tiny] = r.scenarios.as_slice() else {
            panic!("{r:?}")
        };
        let spec = scenarios[0].spec(None, Some(Release::REDISSON));
        assert_eq!(tiny.hosts, spec.clients.len() + 1);
        assert_eq!(tiny.steps, 100 + spec.horizon_ms);
        assert_eq!(
            sim::run_turmoil_bare(&spec).unwrap().steps,
            tiny.steps,
            "the bare program covers the engine's simulated time"
        );
        let md = r.markdown();
        assert!(md.starts_with(TURMOIL_HEADING), "{md}");
        assert!(md.contains("| tiny-watchdog-timeout | 10 s |"), "{md}");
        assert!(
            md.contains("refuses them (a fault it cannot carry out): lossy-link."),
            "{md}"
        );
    }

    /// The turmoil section replaces its old self wherever it is, is
    /// appended when missing, and survives the plain bench's rewrite.
    #[test]
    fn the_section_is_replaced_appended_and_kept() {
        let h = TURMOIL_HEADING;
        let new = format!("{h}\n\nnew figures\n");
        let fast = "# locksim performance\n\n## Built-in scenarios\n\nrows\n";
        let appended = with_section(fast, h, Some(&new));
        assert_eq!(appended, format!("{fast}\n{new}"));
        let middle = format!("{fast}\n{h}\n\nold\n\n## Later\n\nmore\n");
        assert_eq!(
            with_section(&middle, h, Some(&new)),
            format!("{fast}\n{new}\n## Later\n\nmore\n")
        );
        assert_eq!(
            with_section(&appended, h, Some(&format!("{h}\n\nnewer\n"))),
            format!("{fast}\n{h}\n\nnewer\n")
        );
        assert_eq!(section_of(&appended, h), Some(new.as_str()));
        assert_eq!(section_of(fast, h), None);
        assert_eq!(with_section(fast, h, None), fast);
        assert_eq!(with_section("", h, Some(&new)), new);
    }
}
