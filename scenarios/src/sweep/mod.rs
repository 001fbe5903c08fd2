//! `explore` as a library: a sweep over seeds with its streamed findings,
//! the shrinking of the first violations, the summary, the resume command
//! of a stopped sweep and the findings report, all driven by a plain
//! [`ExploreOptions`]. The command line parses its flags into one and
//! calls [`explore_sweep`]; a program or a test can do the same.
//!
//! Everything goes to `out`, byte for byte the same for a given range (the
//! progress bar alone is on stderr, and only on a terminal):
//!
//! 1. a header with the range and profiles;
//! 2. each violating run's `locksim replay` line as soon as it is found, in
//!    seed then profile order, so a sweep stopped at any point has already
//!    shown everything it found;
//! 3. the summary: the seeds covered and how many runs broke each invariant;
//! 4. the shrunk plans of the first violations, or, when the interrupt
//!    stopped the sweep, the command that explores the seeds it did not
//!    reach.
//!
//! ```
//! use std::sync::atomic::AtomicBool;
//!
//! use locksim::{ExploreOptions, SweepEnd, explore_sweep};
//!
//! // `locksim explore --seeds 3 --profile fenced --shrink 0 --json`
//! let options = ExploreOptions {
//!     seeds: 3,
//!     profile: Some(lockcore::Release::FENCED),
//!     shrink: 0,
//!     json: true,
//!     ..ExploreOptions::default()
//! };
//! let (mut out, mut err) = (Vec::new(), Vec::new());
//! let end = explore_sweep(&options, &AtomicBool::new(false), &mut out, &mut err).unwrap();
//! let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
//! assert_eq!((report["seeds"].as_str(), report["runs"].as_u64()), (Some("0..3"), Some(3)));
//! assert_ne!(end, SweepEnd::Interrupted);
//! ```
//!
//! # Layout
//!
//! - `stream`: the sweep itself, its header, replay lines and progress bar.
//! - `picks`: which expected losses get shrunk.
//! - `groups`: the defects, grouped by signature.
//! - `summary`: the counts as text or as the `--json` object.
//! - `tally`: entries by key in the order first seen, at most so many.
//! - `upstreams`: the defective runs by the upstream issue each is
//!   attributed to.
//! - `resume`: the command that explores the rest of a stopped sweep.
//! - `findings`: the findings report (`--report DIR`).

mod findings;
mod groups;
mod picks;
mod resume;
mod stream;
mod summary;
mod tally;
mod upstreams;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use lockcore::Release;

use self::findings::{Shrunk, write_findings};
use self::groups::Groups;
use self::picks::Pick;
use self::resume::resume_command;
pub(crate) use self::resume::shell_word;
use self::stream::{Swept, sweep};
use self::summary::{DefectReport, Report, summary, workload_label};
use crate::{InputError, SeedRange, explored_spec_on, plan_json, shrink_on, shrunk_scenario};

/// How many runs one shrink may take.
const SHRINK_BUDGET: usize = 200;

/// How many violations a sweep shrinks unless told.
pub const DEFAULT_SHRINK: usize = 4;

/// How a shrunk plan is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum PlanFormat {
    /// A whole scenario file: save it and `locksim run` it.
    #[default]
    Toml,
    /// The fault plan alone, as JSON.
    Json,
}

/// What to explore and what to do with the findings: `locksim explore`'s
/// flags as data, with the same defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct ExploreOptions {
    /// The first seed.
    pub from: u64,
    /// How many seeds.
    pub seeds: u64,
    /// Only part K of N of the range (`Some((2, 4))`), each seed once over
    /// the N parts.
    pub shard: Option<(u64, u64)>,
    /// Only this release (toggles applied); every era when `None`.
    pub profile: Option<Release>,
    /// What the generated runs do.
    pub workload: sim::Workload,
    /// The engine: a deterministic one (fast or turmoil).
    pub engine: sim::Engine,
    /// Threads to run seeds on (0: one per core); the output is the same
    /// whatever the number.
    pub threads: usize,
    /// How many violations to shrink (0: none).
    pub shrink: usize,
    /// How a shrunk plan is printed.
    pub format: PlanFormat,
    /// Also write each shrunk plan as a scenario file into this directory.
    pub save: Option<PathBuf>,
    /// Also write the findings report into this directory.
    pub report: Option<PathBuf>,
    /// Print one JSON object instead of the text.
    pub json: bool,
    /// Also print, after the summary, how many runs reached each declared
    /// `sometimes` point (`--json` always has it).
    pub coverage: bool,
}

impl Default for ExploreOptions {
    fn default() -> Self {
        ExploreOptions {
            from: 0,
            seeds: 100,
            shard: None,
            profile: None,
            workload: sim::Workload {
                usage: sim::Usage::Correct,
                kinds: sim::SwarmKinds::Swarm,
                strategy: sim::Strategy::Uniform,
            },
            engine: sim::Engine::Fast,
            threads: 0,
            shrink: DEFAULT_SHRINK,
            format: PlanFormat::Toml,
            save: None,
            report: None,
            json: false,
            coverage: false,
        }
    }
}

/// How a sweep ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepEnd {
    /// Every run was made and none broke an invariant.
    Clean,
    /// Some run broke an invariant, could not run, or was refused.
    Found,
    /// The interrupt (or a closed `out`) stopped it early.
    Interrupted,
}

/// Explores the seeds, streaming each violation's replay command, then
/// prints the summary, the defects grouped by signature, and shrinks
/// every defect group's first run and the first expected losses; or,
/// when `interrupt` is set, prints the summary so far and how to resume.
/// With `json`, prints one object instead (see `Report`).
pub fn explore_sweep(
    o: &ExploreOptions,
    interrupt: &AtomicBool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<SweepEnd, InputError> {
    let profile = o.profile;
    let mut range = SeedRange::new(o.from, o.seeds)?;
    if let Some((k, n)) = o.shard {
        range = range.shard(k, n)?;
    }
    // Made now, so a bad path is refused before a sweep of hours.
    for dir in o.save.iter().chain(&o.report) {
        std::fs::create_dir_all(dir).map_err(|e| unwritable(dir, &e))?;
    }
    let engine = deterministic(&o.engine)?;
    let mut quiet = std::io::sink();
    let (text, json): (&mut dyn Write, Option<&mut dyn Write>) = if o.json {
        (&mut quiet, Some(out))
    } else {
        (out, None)
    };
    let swept = sweep(o, &engine, range, interrupt, text, err)?;
    let Some(Swept {
        found,
        picks,
        groups,
        upstreams,
        losses,
    }) = swept
    else {
        return Ok(SweepEnd::Interrupted);
    };
    let report = |shrunk: &[Shrunk], text: &mut dyn Write| match &o.report {
        Some(dir) => write_findings(dir, o, &engine, (&found, &groups, &losses), shrunk, text),
        None => Ok(()),
    };
    if json.is_none() {
        summary(&found, profile, &workload_label(o.workload), text);
        if o.coverage {
            found.coverage.print(text);
        }
        groups.print(text);
    }
    if let Some(rest) = found.rest() {
        if json.is_none() {
            if !picks.is_empty() || !groups.all().is_empty() {
                let _ = writeln!(text, "shrinking skipped: the sweep was interrupted");
            }
            let _ = writeln!(text, "resume with: {}", resume_command(o, rest));
        }
        report(&[], text)?;
        if let Some(out) = json {
            print_json(
                out,
                Report::new(&found, (profile, o.workload), reports(&groups), &upstreams),
            );
        }
        return Ok(SweepEnd::Interrupted);
    }
    let mut shrunk = Vec::new();
    let defect_picks = groups.all().iter().map(|g| Pick {
        seed: g.seed,
        branch: g.branch.clone(),
        profile: g.model,
        invariant: g.invariant,
        cause: "defect",
    });
    let picked: Vec<Pick> = if o.shrink == 0 {
        Vec::new()
    } else {
        defect_picks.chain(picks.in_order()).collect()
    };
    for (i, pick) in picked.iter().enumerate() {
        if interrupt.load(Ordering::SeqCst) {
            let left = picked.len() - i;
            let _ = writeln!(text, "\ninterrupted: {left} shrink(s) skipped");
            report(&shrunk, text)?;
            return Ok(SweepEnd::Interrupted);
        }
        shrunk.push(shrink_one(pick, o, &engine, text)?);
    }
    report(&shrunk, text)?;
    if let Some(out) = json {
        let mut defects = reports(&groups);
        for (d, s) in defects.iter_mut().zip(&shrunk) {
            d.shrunk = Some(s.scenario.to_toml());
        }
        print_json(
            out,
            Report::new(&found, (profile, o.workload), defects, &upstreams),
        );
    }
    Ok(
        if found.violating == 0 && found.failed == 0 && found.refused == 0 {
            SweepEnd::Clean
        } else {
            SweepEnd::Found
        },
    )
}

/// `engine`, if it is deterministic: an explored seed must replay.
fn deterministic(engine: &sim::Engine) -> Result<sim::Engine, InputError> {
    if !engine.is_deterministic() {
        return Err(InputError::EngineFlags(format!(
            "explore runs a deterministic engine (fast or turmoil), not {engine}: a seed must replay"
        )));
    }
    Ok(engine.clone())
}

/// The defect groups for `--json`, not yet shrunk.
fn reports(groups: &Groups) -> Vec<DefectReport<'_>> {
    groups
        .all()
        .iter()
        .map(|group| DefectReport {
            group,
            shrunk: None,
        })
        .collect()
}

fn print_json(out: &mut dyn Write, report: Report<'_>) {
    let _ = writeln!(
        out,
        "{}",
        serde_json::to_string(&report).unwrap_or_default()
    );
}

/// Shrinks one violation, prints the plan and saves it if asked; returns
/// the shrunk scenario.
fn shrink_one(
    pick: &Pick,
    o: &ExploreOptions,
    engine: &sim::Engine,
    out: &mut dyn Write,
) -> Result<Shrunk, InputError> {
    let (inv, profile) = (pick.invariant, pick.profile);
    let spec = explored_spec_on(pick.seed, Some(profile), o.workload, engine);
    // A pick of the sweep's own: its path forked this spec in the sweep.
    let spec = match &pick.branch {
        Some(path) => sim::branch::branch(spec, path)?,
        None => spec,
    };
    let shrunk = shrink_on(&spec, inv, Some(pick.cause), SHRINK_BUDGET, engine);
    let branch = match &pick.branch {
        Some(path) => format!(" branch {path}"),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "\nshrunk seed {}{branch} under {profile} ({inv}, {}): {} -> {} fault(s) in {} runs",
        pick.seed,
        if pick.defect() {
            "a defect"
        } else {
            pick.cause
        },
        spec.faults.0.len(),
        shrunk.spec.faults.0.len(),
        shrunk.runs
    );
    let scenario = shrunk_scenario(&shrunk.spec, inv, profile, pick.defect());
    let text = match o.format {
        PlanFormat::Toml => scenario.to_toml(),
        PlanFormat::Json => plan_json(&shrunk.spec.faults),
    };
    let _ = writeln!(out, "{}", text.trim_end());
    if let Some(dir) = &o.save {
        let path = dir.join(format!("{}.toml", scenario.name));
        std::fs::write(&path, scenario.to_toml()).map_err(|e| unwritable(&path, &e))?;
        let _ = writeln!(
            out,
            "saved {} (run it: locksim run {}{})",
            path.display(),
            shell_word(&path.display().to_string()),
            crate::engine_flag(engine)
        );
    }
    Ok(Shrunk {
        pick: pick.clone(),
        scenario,
        faults: (spec.faults.0.len(), shrunk.spec.faults.0.len()),
    })
}

fn unwritable(path: &Path, e: &std::io::Error) -> InputError {
    InputError::Unwritable {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// A finding of `redisson` seed `seed` with `defects`, for the tests of
/// what a sweep counts.
#[cfg(test)]
fn finding_with(seed: u64, defects: Vec<crate::Defect>) -> crate::Finding {
    crate::Finding {
        seed,
        branch: None,
        profile: Release::REDISSON,
        broken: Vec::new(),
        history_len: 0,
        workload: sim::Workload::default(),
        defects,
        engine: sim::Engine::Fast,
    }
}
