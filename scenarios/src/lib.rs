//! locksim: named scenarios, random exploration and the `locksim` command line.
//!
//! # Model
//!
//! A [`Scenario`] is data: a name, a description, the source document it
//! reproduces, sim's [`sim::SimSpec`] (clients, their threads' steps,
//! settings, fault plan) and an [`Expectations`] table that says what each
//! lockcore profile must give. Built-in scenarios are TOML files embedded in
//! the binary; users' files have the same format. A [`Trial`] runs one
//! scenario under one profile and seed and judges the [`Outcome`] against
//! the profile's [`Expectation`]: the verdict, which invariants must break
//! or hold, the number of failed unlocks, and general count and timing
//! checks over a small vocabulary of events ([`EventKind`]). No scenario has
//! code of its own.
//!
//! Exploration runs sim's random specs over a [`SeedRange`], seed by seed,
//! handing each violation to a sink as soon as it is found and keeping only
//! counts, so a sweep of any length runs in flat memory and can be stopped
//! between seeds and resumed; a violation can be shrunk to a minimal fault
//! plan that can be saved and run as a scenario file. Reports run every
//! built-in scenario under every profile.
//!
//! Everything here is deterministic: the same scenario, seed and profile
//! give the same history, timeline and report, byte for byte.
//!
//! # Using it
//!
//! ```
//! use lockcore::Release;
//! use locksim::{Trial, Verdict};
//!
//! // Document 004, experiment 2: a 3 s lease under 5 s of work.
//! let scenario = locksim::builtin("lease-shorter-than-work").unwrap();
//! let trial = Trial::run(&scenario, Some(1), Some(Release::REDISSON)).unwrap();
//! assert_eq!(trial.verdict(), Verdict::Violated);
//! assert_eq!(trial.outcome.unlock_errors, 2);
//! assert!(trial.as_expected()); // the file expects exactly this
//! println!("{}", trial.run.history); // the timeline
//! ```
//!
//! A file of your own goes through [`load`] (a built-in name or a path) or
//! [`Scenario::parse`]; a malformed one is an [`InputError`] that names the
//! line, column and field. When a run is not as expected, the
//! [`Trial::mismatches`] say which check failed and
//! [`Trial::reproduce_command`] reruns it; for an explored seed,
//! [`shrink`] finds the smallest fault plan that still breaks the
//! invariant and [`shrunk_scenario`] turns it into a file.
//!
//! # Layout
//!
//! - `scenario`: the scenario file format, parsing and validation.
//! - `schema`: the JSON Schema of scenario files ([`scenario_schema`]).
//! - `location`: line, column and field path of an error in a file.
//! - `error`: [`InputError`], everything a user can get wrong.
//! - `expect`: expectations and how they judge an outcome.
//! - `explain`: the fault the oracle blamed for an expected loss.
//! - `outcome`: what a run gave ([`Outcome`], [`Verdict`], [`EventKind`]).
//! - `observe`: maps sim's history onto [`EventKind`]s.
//! - `builtin`: the embedded scenarios and [`load`].
//! - `corpus`: the regression corpus of explored seeds.
//! - `trial`: one judged run and its JSON form.
//! - `render`: the text of a trial (settings, timeline, verdict).
//! - `compare`: one scenario on the fast and turmoil engines, side by
//!   side ([`Comparison`]).
//! - `chart`: an SVG chart of a run for the reports.
//! - `seeds`: [`SeedRange`], a checked range of seeds to explore.
//! - `explore`: random exploration over seeds, streamed to a sink.
//! - `probe`: one seed's runs, its own and its branches at a rare point.
//! - `coverage`: a sweep's count of the runs that reached each `sometimes`
//!   point ([`CoverageCounts`]).
//! - `labels`: whether a seed's label alone equals its label inside a
//!   range ([`check_labels`]).
//! - `shrink`: shrinking a violating fault plan.
//! - `signature`: what identifies a defect across runs, as data.
//! - `sweep`: `explore` as a library: a sweep with its findings, shrinks,
//!   summary, resume command and report, driven by [`ExploreOptions`].
//! - `bench`: `locksim bench`, the simulator's speed.
//! - `bench_budget`: where an explored seed's time goes, part by part,
//!   against issue 13's budget ([`SeedBudget`]).
//! - `bench_turmoil`: `locksim bench --engine turmoil`, the turmoil engine
//!   against a bare turmoil program with the same hosts and simulated time.
//! - `envelope`: the safety envelope of a configuration ([`envelope`]).
//! - `envelope_chart`: its table and SVG chart.
//! - `report`: the `reports/` directory (verdict matrix, timelines, charts).
//! - `html`: the report as one self-contained page.
//! - `losses`: explore's expected losses, counted by cause and fault kind.
//! - `findings`: explore's findings as a report (data and Markdown).
//! - `findings_html`: the same as one self-contained page.
//! - `mutants`: the mutation yardstick, each fix of a release removed
//!   alone and explored ([`mutants::mutation_sweep`]).
//! - `cli`: the `locksim` command line.
//! - `audit`: reading a Redisson user's own setup (`audit::redisson_config`).

/// The README's Rust example, run as a doctest so that it cannot drift.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The user guide's page on the library (`docs/src/library.md`): its
/// examples run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../docs/src/library.md")]
pub struct GuideLibraryDoctests;

mod attribution;
pub mod audit;
mod bench;
mod bench_budget;
mod bench_turmoil;
mod builtin;
mod chart;
pub mod cli;
mod compare;
mod corpus;
mod coverage;
mod defect;
mod envelope;
mod envelope_chart;
mod error;
mod expect;
mod explain;
mod explore;
mod findings;
mod findings_html;
mod history;
mod html;
mod labels;
mod location;
mod losses;
pub mod mutants;
mod observe;
mod open_issue;
mod outcome;
mod probe;
mod render;
mod report;
mod scenario;
mod schema;
mod seeds;
mod settings;
mod shrink;
mod signature;
mod sweep;
mod trial;

pub use bench::{BenchConfig, BenchReport, ScenarioSpeed, bench};
pub use bench_budget::{SEED_BUDGET_US, SeedBudget};
pub use bench_turmoil::{
    EngineSpeed, Spread, TURMOIL_GOAL, TURMOIL_HEADING, TurmoilBench, bench_turmoil, section_of,
    with_section,
};
pub use builtin::{builtin, builtin_names, builtins, load};
pub use chart::render_chart;
pub use compare::{BASE_TOLERANCE_MS, Comparison, KeyEvent, KeyRow, REAL_JITTER_MS, key_events};
pub use corpus::{Corpus, SeedCase};
pub use coverage::{CoverageCounts, CoverageRow, PointCount, RARE_PER, is_rare};
pub use defect::{Defect, Fix, defects_attributed, defects_of};
pub use envelope::{
    Envelope, EnvelopeConfig, Limit, Probe, Row, envelope, held_throughout, probe_spec,
};
pub use envelope_chart::render_envelope_chart;
pub use error::InputError;
pub use expect::{Anchor, CountCheck, Expectation, Expectations, Mismatch, TimingCheck};
pub use explore::{
    Exploration, Finding, SweepEvent, branches, explore, explore_on, explore_seed,
    explore_workload_on, explored_branch_on, explored_spec, explored_spec_on, explored_spec_with,
};
pub use history::{HistoryRow, history, history_names, history_scenario};
pub use html::render_html;
pub use labels::{LabelCheck, check_labels, check_labels_with, sample_seeds};
pub use location::Location;
pub use open_issue::OpenIssue;
pub use outcome::{Broken, EventKind, Observation, Outcome, Verdict};
pub use render::{Rerun, fault_line, render_header, render_trial, render_verdict};
pub use report::{
    Matrix, Refusal, ReportFile, chart_path, file_word, history_matrix, history_matrix_on,
    report_files, report_files_on, run_matrix, run_matrix_on, timeline_path, write_report,
};
pub use scenario::Scenario;
pub use schema::{REPIN_COMMAND, scenario_schema};
pub use seeds::SeedRange;
pub use settings::Settings;
pub use shrink::{Shrunk, breaks, plan_json, shrink, shrink_as, shrink_on, shrunk_scenario};
pub use signature::{Signature, Step};
pub use sweep::{DEFAULT_SHRINK, ExploreOptions, PlanFormat, SweepEnd, explore_sweep};
pub use trial::{CutShortJson, Trial, TrialJson, ViolationJson, engine_flag};
