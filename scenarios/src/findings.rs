//! Explore's findings as a report a person reads (`locksim explore
//! --report DIR`): the defects first, each with its signature, the
//! upstream fix that removes it, its run count, the command that replays
//! its first run, and its shrunk scenario with that scenario's chart and
//! timeline; then the expected losses counted by cause (beyond the
//! guarantee by the kind of fault blamed, misuse), with shrunk examples;
//! then the sweep's counts.
//!
//! This file holds the report's data, its Markdown (`README.md`) and the
//! files it is written as; `findings_html` renders the same data as one
//! self-contained page (`index.html`). Nothing in it depends on time or
//! on the number of threads the sweep ran on.

use std::fmt::Write as _;

use crate::defect::DefectGroup;
use crate::losses::Losses;
use crate::{Fix, OpenIssue, ReportFile, Rerun, Scenario, Trial, render_chart, render_trial};
use lockcore::Release;

/// Everything the report says.
#[derive(Debug, Clone)]
pub(crate) struct Findings {
    /// What was explored: `seeds 0..300 under redisson-legacy (correct
    /// usage, swarm faults)`.
    pub(crate) explored: String,
    /// The command that made the report.
    pub(crate) command: String,
    /// Runs made, and how many broke an invariant.
    pub(crate) runs: u64,
    pub(crate) violating: u64,
    /// Whether the sweep was stopped before its end.
    pub(crate) interrupted: bool,
    /// The models explored, the columns of the loss table.
    pub(crate) models: Vec<Release>,
    /// The defect groups, in the order found.
    pub(crate) defects: Vec<DefectCase>,
    /// Defective runs whose signature found no room among the groups.
    pub(crate) overflow: u64,
    /// The expected losses by cause.
    pub(crate) losses: Losses,
    /// Shrunk examples of expected losses, each with what it shows:
    /// `false-unlock-error, beyond-guarantee: delay-replies`.
    pub(crate) examples: Vec<(String, Case)>,
    /// explore's own summary text (counts by invariant and by cause).
    pub(crate) summary: String,
}

/// One defect group.
#[derive(Debug, Clone)]
pub(crate) struct DefectCase {
    pub(crate) group: DefectGroup,
    /// Its shrunk scenario (or, when shrinking did not run, the explored
    /// run as a scenario) and that scenario's run.
    pub(crate) case: Case,
}

/// A scenario the report shows, with its run.
#[derive(Debug, Clone)]
pub(crate) struct Case {
    pub(crate) scenario: Scenario,
    pub(crate) trial: Trial,
    /// Whether it was shrunk; with the fault count before and after.
    pub(crate) shrunk: Option<(usize, usize)>,
    /// Its saved file's path, as the command line is given it.
    pub(crate) path: String,
}

impl Case {
    /// `scenarios/<name>.toml`, relative to the report's directory.
    pub(crate) fn file(&self) -> String {
        format!("scenarios/{}.toml", self.scenario.name)
    }

    /// `charts/<name>.svg`.
    pub(crate) fn chart_file(&self) -> String {
        format!("charts/{}.svg", self.scenario.name)
    }

    /// The chart's title.
    pub(crate) fn title(&self) -> String {
        format!("{} under {}", self.scenario.name, self.trial.profile)
    }

    /// The text timeline: settings, every event, verdict.
    pub(crate) fn timeline(&self) -> String {
        render_trial(
            &self.trial,
            &self.scenario.description,
            self.scenario.source.as_deref(),
            &Rerun::Scenario(self.path.clone()),
        )
    }

    /// The command that runs its saved file.
    pub(crate) fn run_command(&self) -> String {
        format!("locksim run {}", self.path)
    }

    /// How it was shrunk, in words.
    pub(crate) fn shrink_note(&self) -> String {
        match self.shrunk {
            Some((before, after)) => format!("shrunk from {before} to {after} fault(s)"),
            None => "not shrunk (the explored run itself)".to_owned(),
        }
    }
}

impl DefectCase {
    /// What the report says of it, in order: (name, text, whether the
    /// text is code).
    pub(crate) fn facts(&self) -> Vec<(&'static str, String, bool)> {
        let g = &self.group;
        vec![
            ("invariant", g.invariant.to_string(), true),
            ("signature", g.signature.to_string(), true),
            (
                "fixed by",
                fixed_by_text(g.fixed_by.as_ref(), g.open_issue),
                false,
            ),
            ("runs", g.runs.to_string(), false),
            ("first seed", g.seed.to_string(), false),
            ("replay", g.replay.clone(), true),
            ("scenario", self.case.run_command(), true),
            ("shrunk", self.case.shrink_note(), false),
        ]
    }
}

impl Findings {
    /// The report's files: `README.md`, `index.html`, and for each case
    /// its scenario file and its chart (which the Markdown links to).
    pub(crate) fn files(&self) -> Vec<ReportFile> {
        let mut files = vec![
            ReportFile {
                path: "README.md".to_owned(),
                contents: self.markdown(),
            },
            ReportFile {
                path: "index.html".to_owned(),
                contents: crate::findings_html::render(self),
            },
        ];
        for case in self.cases() {
            files.push(ReportFile {
                path: case.file(),
                contents: case.scenario.to_toml(),
            });
            files.push(ReportFile {
                path: case.chart_file(),
                contents: render_chart(&case.trial.run, &case.title()),
            });
        }
        files
    }

    /// Every case shown: the defects', then the examples.
    pub(crate) fn cases(&self) -> impl Iterator<Item = &Case> {
        let examples = self.examples.iter().map(|(_, c)| c);
        self.defects.iter().map(|d| &d.case).chain(examples)
    }

    /// The one-line verdict at the top.
    pub(crate) fn headline(&self) -> String {
        format!(
            "Explored {}: {} runs, {} with violations; {} defect group(s){}.",
            self.explored,
            self.runs,
            self.violating,
            self.defects.len(),
            if self.interrupted {
                "; the sweep was interrupted, so these are the seeds it covered"
            } else {
                ""
            }
        )
    }

    /// The report as Markdown.
    pub(crate) fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# locksim explore: findings\n");
        let _ = writeln!(s, "{}\n", self.headline());
        let _ = writeln!(s, "Made by `{}`.\n", self.command);
        let _ = writeln!(s, "## Defects\n\n{DEFECTS_INTRO}\n");
        if self.defects.is_empty() {
            let _ = writeln!(s, "No defect: every violation has an explanation.\n");
        }
        for (n, d) in self.defects.iter().enumerate() {
            self.defect_markdown(&mut s, n + 1, d);
        }
        if self.overflow > 0 {
            let _ = writeln!(
                s,
                "And {} defective run(s) of further signatures.\n",
                self.overflow
            );
        }
        let _ = writeln!(s, "## Expected losses\n\n{LOSSES_INTRO}\n");
        self.losses_markdown(&mut s);
        for (what, case) in &self.examples {
            let _ = writeln!(
                s,
                "### Example: {what}\n\n{} under {}, {}. Run it: `{}`.\n",
                case.scenario.name,
                case.trial.profile,
                case.shrink_note(),
                case.run_command()
            );
            case_markdown(&mut s, case);
        }
        let _ = writeln!(
            s,
            "## Counts\n\nexplore's summary: runs by invariant and by worst cause.\n\n```text\n{}```",
            self.summary
        );
        s
    }

    fn defect_markdown(&self, s: &mut String, n: usize, d: &DefectCase) {
        let _ = writeln!(
            s,
            "### {n}. {} under {}\n",
            d.group.invariant, d.group.model
        );
        let _ = writeln!(s, "| | |\n|---|---|");
        for (k, v, code) in d.facts() {
            let v = if code { format!("`{v}`") } else { v };
            let _ = writeln!(s, "| {k} | {} |", v.replace('|', "\\|"));
        }
        let _ = writeln!(s);
        case_markdown(s, &d.case);
    }

    fn losses_markdown(&self, s: &mut String) {
        let rows = self.losses.rows(&self.models);
        if rows.is_empty() {
            let _ = writeln!(s, "None.\n");
            return;
        }
        let _ = write!(s, "| cause |");
        for m in &self.models {
            let _ = write!(s, " {m} |");
        }
        let _ = writeln!(s, " first run |");
        let _ = writeln!(s, "|---|{}---|", "---:|".repeat(self.models.len()));
        for (cause, counts, first) in rows {
            let _ = write!(s, "| {cause} |");
            for c in counts {
                let _ = write!(s, " {c} |");
            }
            let first = first.map_or_else(|| "none".to_owned(), |f| format!("`{f}`"));
            let _ = writeln!(s, " {first} |");
        }
        let _ = writeln!(s);
    }
}

/// What a defect is, above the defects.
pub(crate) const DEFECTS_INTRO: &str = "A defect is a violation nothing in the run explains: no \
misuse in the script, no fault beyond what a lease-based lock survives (the oracle, \
`sim::classify`). Runs with the same signature (the invariant, the last thing the lock said \
about its lease, the kinds of the records the checker cites) are one group; its upstream fix \
is found by experiment. Each group's first run is shrunk while the defect stays a defect; \
the scenario file replays it.";

/// What an expected loss is, above the table.
pub(crate) const LOSSES_INTRO: &str = "Violations the oracle explains, counted in runs per \
cause (a run counts once for each cause it shows): beyond the guarantee, by the kind of \
fault it blames, or misuse of the lock.";

/// A defect's fix, in words, or the open issue whose path it took.
pub(crate) fn fixed_by_text(fix: Option<&Fix>, open: Option<OpenIssue>) -> String {
    match (fix, open) {
        (Some(fix), _) => fix.to_string(),
        (None, Some(open)) => format!("no fix in any release; {open}"),
        (None, None) => "no modelled Redisson fix removes it".to_owned(),
    }
}

/// A case's chart (linked), scenario file and timeline.
fn case_markdown(s: &mut String, case: &Case) {
    let _ = writeln!(s, "![chart of {}]({})\n", case.title(), case.chart_file());
    let _ = writeln!(
        s,
        "<details><summary>scenario file ({})</summary>\n\n```toml\n{}```\n</details>\n",
        case.file(),
        case.scenario.to_toml()
    );
    let _ = writeln!(
        s,
        "<details><summary>timeline</summary>\n\n```text\n{}```\n</details>\n",
        case.timeline()
    );
}
