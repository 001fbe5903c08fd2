//! The `reports/` directory: a verdict matrix (scenario x profile) and one
//! timeline file and one SVG chart per scenario and profile. Its content depends only on the
//! scenarios and the simulator (no dates, no wall times), so regenerating
//! it on an unchanged tree changes nothing.

use std::fmt::Write as _;
use std::path::Path;

use lockcore::Release;

use crate::{InputError, Rerun, Scenario, Trial, render_chart, render_trial};

/// One file of the report, relative to the report directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportFile {
    /// The path, `/`-separated, relative to the report directory.
    pub path: String,
    /// The text.
    pub contents: String,
}

/// A scenario's trials, one per profile.
pub type Matrix = Vec<(Scenario, Vec<Trial>)>;

/// A scenario an engine cannot run, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The scenario.
    pub scenario: String,
    /// Why, in the engine's words.
    pub reason: String,
}

/// Every scenario under every profile, with the scenario's own seed.
pub fn run_matrix(scenarios: &[Scenario]) -> Result<Matrix, InputError> {
    let (matrix, _) = run_matrix_on(scenarios, &sim::Engine::Fast)?;
    Ok(matrix)
}

/// [`run_matrix`] on `engine`; the scenarios it cannot run are left out
/// and listed.
pub fn run_matrix_on(
    scenarios: &[Scenario],
    engine: &sim::Engine,
) -> Result<(Matrix, Vec<Refusal>), InputError> {
    matrix_on(scenarios, engine, |_| Release::ERAS.to_vec())
}

/// Each history scenario under the last release its row affects and the
/// release that fixed it (see [`crate::HistoryRow`]).
pub fn history_matrix(scenarios: &[Scenario]) -> Result<Matrix, InputError> {
    let (matrix, _) = history_matrix_on(scenarios, &sim::Engine::Fast)?;
    Ok(matrix)
}

/// [`history_matrix`] on `engine`.
pub fn history_matrix_on(
    scenarios: &[Scenario],
    engine: &sim::Engine,
) -> Result<(Matrix, Vec<Refusal>), InputError> {
    let history: Vec<Scenario> = scenarios
        .iter()
        .filter(|s| s.history.is_some())
        .cloned()
        .collect();
    matrix_on(&history, engine, |s| {
        s.history
            .as_ref()
            .map(|h| h.releases().to_vec())
            .unwrap_or_default()
    })
}

fn matrix_on(
    scenarios: &[Scenario],
    engine: &sim::Engine,
    releases: impl Fn(&Scenario) -> Vec<Release>,
) -> Result<(Matrix, Vec<Refusal>), InputError> {
    let mut matrix = Vec::new();
    let mut refused = Vec::new();
    for s in scenarios {
        if let Some(e) = engine.refuses(&s.spec(None, None)) {
            // The fault, not the engine's whole list (the README gives it once).
            let reason = match e {
                sim::SimError::Unsupported { what, .. } => match what.split_once(": it carries") {
                    Some((fault, _)) => fault.to_owned(),
                    None => what,
                },
                other => other.to_string(),
            };
            refused.push(Refusal {
                scenario: s.name.clone(),
                reason,
            });
            continue;
        }
        let trials = releases(s)
            .into_iter()
            .map(|p| Trial::run_on(s, None, Some(p), engine.clone()))
            .collect::<Result<Vec<_>, _>>()?;
        matrix.push((s.clone(), trials));
    }
    Ok((matrix, refused))
}

/// The path of a trial's timeline file.
pub fn timeline_path(scenario: &str, profile: Release) -> String {
    format!("timelines/{scenario}.{}.txt", file_word(profile))
}

/// The path of a trial's chart.
pub fn chart_path(scenario: &str, profile: Release) -> String {
    format!("charts/{scenario}.{}.svg", file_word(profile))
}

/// A release as one word for a file name: `4.7.0+interrupted-acquire-unlocks`.
pub fn file_word(profile: Release) -> String {
    profile.to_string().replace(' ', "")
}

/// The report's files: `README.md`, `index.html` (the whole report as one
/// self-contained page), `timelines/<scenario>.<profile>.txt` and
/// `charts/<scenario>.<profile>.svg`, for the built-in `matrix` and the
/// `history` rows.
pub fn report_files(
    matrix: &[(Scenario, Vec<Trial>)],
    history: &[(Scenario, Vec<Trial>)],
) -> Vec<ReportFile> {
    report_files_on(matrix, history, &sim::Engine::Fast, &[])
}

/// [`report_files`] of runs on `engine`; its README says which engine ran
/// them and which scenarios it could not run.
pub fn report_files_on(
    matrix: &[(Scenario, Vec<Trial>)],
    history: &[(Scenario, Vec<Trial>)],
    engine: &sim::Engine,
    refused: &[Refusal],
) -> Vec<ReportFile> {
    let mut readme = readme(matrix);
    if *engine != sim::Engine::Fast {
        let title = "# locksim report\n\n";
        readme = readme.replacen(
            title,
            &format!("{title}{}", engine_note(engine, refused)),
            1,
        );
    }
    readme.push_str(&history_section(history));
    let mut files = vec![
        ReportFile {
            path: "README.md".to_owned(),
            contents: readme,
        },
        ReportFile {
            path: "index.html".to_owned(),
            contents: crate::render_html(matrix, history),
        },
    ];
    for (s, trials) in matrix.iter().chain(history) {
        for t in trials {
            files.push(ReportFile {
                path: timeline_path(&s.name, t.profile),
                contents: render_trial(
                    t,
                    &s.description,
                    s.source.as_deref(),
                    &Rerun::Scenario(s.name.clone()),
                ),
            });
            files.push(ReportFile {
                path: chart_path(&s.name, t.profile),
                contents: render_chart(&t.run, &format!("{} under {}", s.name, t.profile)),
            });
        }
    }
    files
}

/// Which engine ran a report, and what it left out.
fn engine_note(engine: &sim::Engine, refused: &[Refusal]) -> String {
    let mut s = format!(
        "**Engine: {engine}** (`locksim report{}`)",
        crate::trial::engine_flag(engine)
    );
    if !engine.is_deterministic() {
        s.push_str(": real time, not deterministic; a rerun may differ");
    }
    s.push_str(".\n\n");
    if !refused.is_empty() {
        let carries = match engine {
            sim::Engine::Redis(_) => sim::REDIS_FAULTS,
            _ => sim::TURMOIL_FAULTS,
        };
        let _ = writeln!(s, "It carries out {carries}.\n");
        let _ = writeln!(s, "Not run on this engine ({}):\n", refused.len());
        for r in refused {
            let _ = writeln!(s, "- `{}`: {}", r.scenario, r.reason);
        }
        s.push('\n');
    }
    s
}

/// Writes `files` under `dir`, replacing the old timelines. A failure names
/// the file or directory that could not be read, removed or written, and why.
pub fn write_report(dir: &Path, files: &[ReportFile]) -> Result<(), InputError> {
    let unreadable = |path: &Path, e: std::io::Error| InputError::Unreadable {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    let unwritable = |path: &Path, e: std::io::Error| InputError::Unwritable {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    for (sub, ext) in [("timelines", "txt"), ("charts", "svg")] {
        let sub = dir.join(sub);
        if sub.is_dir() {
            // Files of scenarios that no longer exist must not linger.
            for entry in std::fs::read_dir(&sub).map_err(|e| unreadable(&sub, e))? {
                let path = entry.map_err(|e| unreadable(&sub, e))?.path();
                if path.extension().is_some_and(|e| e == ext) {
                    std::fs::remove_file(&path).map_err(|e| unwritable(&path, e))?;
                }
            }
        }
    }
    for f in files {
        let path = dir.join(&f.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| unwritable(parent, e))?;
        }
        std::fs::write(&path, &f.contents).map_err(|e| unwritable(&path, e))?;
    }
    Ok(())
}

/// The history matrix (defect × release) for `README.md`.
fn history_section(history: &[(Scenario, Vec<Trial>)]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "## Redisson's lock history\n");
    let _ = writeln!(
        s,
        "Each row is a change of Redisson's lock that affects safety or liveness \
         (`locksim versions` lists them), run under the last release it affects and the \
         release that fixed it (`locksim run NAME --redisson VERSION`). A cell shows whether \
         the defect's invariant broke, and links to the timeline.\n"
    );
    let _ = writeln!(
        s,
        "| scenario | switch | upstream | invariant | last affected | fixed |\n|---|---|---|---|---|---|"
    );
    for (sc, trials) in history {
        let Some(row) = &sc.history else { continue };
        let _ = write!(
            s,
            "| {} | `{}` | {} | {} |",
            sc.name, row.switch, row.issue, row.breaks
        );
        for t in trials {
            let broke = t.run.violations.iter().any(|v| v.invariant == row.breaks);
            let mark = if t.as_expected() { "✓" } else { "✗" };
            let _ = write!(
                s,
                " [{}: {} {mark}]({}) |",
                t.profile,
                if broke { "broken" } else { "holds" },
                timeline_path(&sc.name, t.profile)
            );
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s);
    s
}

fn readme(matrix: &[(Scenario, Vec<Trial>)]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# locksim report\n");
    let _ = writeln!(
        s,
        "Generated by `locksim report` (`cargo run --release -- report`): every built-in \
         scenario under every profile, each with its scenario's seed. A cell shows the \
         verdict (`safe`: every invariant held; `violated`: at least one broke) and whether \
         it is what the scenario expects for that profile (✓ as expected, ✗ not). Each cell \
         links to the run's timeline. Some scenarios expect a violation: reproducing the \
         failure the documents describe is their point. [`index.html`](index.html) is the \
         same report as one page, with each run's chart and timeline side by side.\n"
    );
    let _ = write!(s, "| scenario |");
    for p in Release::ERAS {
        let _ = write!(s, " {p} |");
    }
    let _ = writeln!(s);
    let _ = write!(s, "|---|");
    for _ in Release::ERAS {
        let _ = write!(s, "---|");
    }
    let _ = writeln!(s);
    let mut unexpected = 0;
    for (sc, trials) in matrix {
        let _ = write!(s, "| [{}](#{}) |", sc.name, sc.name);
        for t in trials {
            let mark = if t.as_expected() { "✓" } else { "✗" };
            if !t.as_expected() {
                unexpected += 1;
            }
            let _ = write!(
                s,
                " [{} {mark}]({}) |",
                t.verdict(),
                timeline_path(&sc.name, t.profile)
            );
        }
        let _ = writeln!(s);
    }
    let total: usize = matrix.iter().map(|(_, t)| t.len()).sum();
    let _ = writeln!(s, "\n{} of {total} runs as expected.\n", total - unexpected);
    let _ = writeln!(s, "## Scenarios\n");
    for (sc, trials) in matrix {
        let _ = writeln!(s, "### {}\n", sc.name);
        if let Some(src) = &sc.source {
            let _ = writeln!(s, "Source: {src}. Seed {}.\n", sc.sim.seed);
        }
        let _ = writeln!(s, "{}\n", sc.description.trim());
        for t in trials {
            let broken: Vec<String> = t
                .outcome
                .broken
                .iter()
                .map(|b| format!("{} at {}", b.invariant, b.at))
                .collect();
            let got = if broken.is_empty() {
                "safe".to_owned()
            } else {
                format!("violated: {}", broken.join(", "))
            };
            let _ = writeln!(
                s,
                "- **{}** ([timeline]({}), [chart]({})): {got}; unlock errors {}. Expected `{}`{}. {}",
                t.profile,
                timeline_path(&sc.name, t.profile),
                chart_path(&sc.name, t.profile),
                t.outcome.unlock_errors,
                t.expected,
                t.expected
                    .why
                    .as_deref()
                    .map(|w| format!(" ({w})"))
                    .unwrap_or_default(),
                if t.as_expected() {
                    "As expected.".to_owned()
                } else {
                    let m: Vec<String> = t.mismatches.iter().map(ToString::to_string).collect();
                    format!("**Not as expected**: {}.", m.join("; "))
                }
            );
        }
        let _ = writeln!(s);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report is a function of the scenarios alone: built twice, it is
    /// byte for byte the same, and the matrix links every timeline file.
    #[test]
    fn report_is_deterministic_and_linked() {
        let scenarios: Vec<Scenario> = ["client-crash", "stw-pause"]
            .iter()
            .filter_map(|n| crate::builtin(n))
            .collect();
        let a = report_files(&run_matrix(&scenarios).unwrap(), &[]);
        let b = report_files(&run_matrix(&scenarios).unwrap(), &[]);
        assert_eq!(a, b);
        assert_eq!(a.len(), 2 + 2 * 2 * Release::ERAS.len());
        let readme = &a[0].contents;
        assert!(
            readme
                .contains("| scenario | redisson-legacy | redisson | redisson-batched | fenced |")
        );
        assert_eq!(a[1].path, "index.html");
        for f in &a[2..] {
            assert!(
                readme.contains(&format!("]({})", f.path)),
                "{} not linked",
                f.path
            );
        }
        assert!(
            readme.contains("[violated ✓](timelines/stw-pause.redisson.txt)"),
            "{readme}"
        );
    }

    /// A report that cannot be written used to be reported as "cannot
    /// read": now the error says "cannot write", with the path that failed
    /// and the OS's reason.
    #[test]
    fn a_failed_write_says_cannot_write() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain");
        std::fs::write(&file, "").unwrap();
        let out = file.join("reports");
        let files = [ReportFile {
            path: "README.md".to_owned(),
            contents: "x".to_owned(),
        }];
        let err = write_report(&out, &files).unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(&err, InputError::Unwritable { path, .. } if path == &out.display().to_string()),
            "{err:?}"
        );
        assert!(
            text.starts_with(&format!("cannot write {}: ", out.display())),
            "{text}"
        );

        // And a report that can be written is.
        let ok = dir.path().join("ok");
        write_report(&ok, &files).unwrap();
        assert_eq!(std::fs::read_to_string(ok.join("README.md")).unwrap(), "x");
    }
}
