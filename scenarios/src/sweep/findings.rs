//! `locksim explore --report DIR`: gathers what the sweep found (its
//! counts, defect groups, expected losses and shrunk scenarios) into a
//! [`Findings`] and writes it. A defect that was not shrunk (`--shrink
//! 0`, or a stopped sweep) is shown as the explored run itself.

use std::io::Write;
use std::path::Path;

use super::ExploreOptions;
use super::groups::Groups;
use super::picks::Pick;
use super::resume::{resume_command, shell_word};
use super::summary::{profile_label, profiles, summary, workload_label};
use crate::explain::{explaining_fault, fault_kind};
use crate::findings::{Case, DefectCase, Findings};
use crate::losses::Losses;
use crate::{Exploration, InputError, Scenario, Trial, explored_spec_with, shrunk_scenario};

/// A shrunk violation: what was picked, the scenario, the fault count
/// before and after.
pub(super) struct Shrunk {
    pub(super) pick: Pick,
    pub(super) scenario: Scenario,
    pub(super) faults: (usize, usize),
}

/// Writes the report of a sweep into `dir` (made before the sweep) and
/// says where on `out`. `shrunk` holds the defect groups' shrinks first,
/// in group order, then the expected losses'.
pub(super) fn write_findings(
    dir: &Path,
    o: &ExploreOptions,
    engine: &sim::Engine,
    (found, groups, losses): (&Exploration, &Groups, &Losses),
    shrunk: &[Shrunk],
    out: &mut dyn Write,
) -> Result<(), InputError> {
    let (profile, workload) = (o.profile, o.workload);
    let defects = defect_cases(dir, groups, shrunk, (workload, engine))?;
    let examples = shrunk
        .iter()
        .filter(|s| !s.pick.defect())
        .map(|s| {
            let c = case(dir, s.scenario.clone(), Some(s.faults), engine)?;
            Ok((example_title(s, &c.trial.run), c))
        })
        .collect::<Result<Vec<_>, InputError>>()?;
    let mut text = Vec::new();
    summary(found, profile, &workload_label(workload), &mut text);
    groups.print(&mut text);
    let findings = Findings {
        explored: format!(
            "seeds {} under {}{}",
            found.range,
            profile_label(profile),
            workload_label(workload)
        ),
        command: resume_command(o, found.range),
        runs: found.runs,
        violating: found.violating,
        interrupted: found.interrupted(),
        models: profiles(profile),
        defects,
        overflow: groups.overflow(),
        losses: losses.clone(),
        examples,
        summary: String::from_utf8_lossy(&text).into_owned(),
    };
    crate::write_report(dir, &findings.files())?;
    let _ = writeln!(
        out,
        "\nreport: {} and {}",
        dir.join("index.html").display(),
        dir.join("README.md").display()
    );
    Ok(())
}

/// Each defect group with its shrunk scenario, or the explored run
/// itself when it was not shrunk.
fn defect_cases(
    dir: &Path,
    groups: &Groups,
    shrunk: &[Shrunk],
    (workload, engine): (sim::Workload, &sim::Engine),
) -> Result<Vec<DefectCase>, InputError> {
    let mut defects = Vec::new();
    for g in groups.all() {
        let done = shrunk.iter().find(|s| {
            s.pick.defect()
                && (s.pick.seed, s.pick.profile, s.pick.invariant) == (g.seed, g.model, g.invariant)
                && s.pick.branch == g.branch
        });
        let c = match done {
            Some(s) => case(dir, s.scenario.clone(), Some(s.faults), engine)?,
            None => {
                let spec = engine.fit(explored_spec_with(g.seed, Some(g.model), workload));
                let spec = match &g.branch {
                    Some(path) => sim::branch::branch(spec, path)?,
                    None => spec,
                };
                let scenario = shrunk_scenario(&spec, g.invariant, g.model, true);
                case(dir, scenario, None, engine)?
            }
        };
        defects.push(DefectCase {
            group: g.clone(),
            case: c,
        });
    }
    Ok(defects)
}

/// `scenario` run on `engine`, to be saved under `dir/scenarios/`.
fn case(
    dir: &Path,
    scenario: Scenario,
    shrunk: Option<(usize, usize)>,
    engine: &sim::Engine,
) -> Result<Case, InputError> {
    let trial = Trial::run_on(&scenario, None, None, engine.clone())?;
    let path = dir.join(format!("scenarios/{}.toml", scenario.name));
    Ok(Case {
        path: shell_word(&path.display().to_string()).into_owned(),
        scenario,
        trial,
        shrunk,
    })
}

/// What a shrunk expected loss shows: its invariant and cause, with the
/// kind of fault blamed in its shrunk `run`.
fn example_title(s: &Shrunk, run: &sim::Run) -> String {
    let blamed = run
        .violations
        .iter()
        .find(|v| v.invariant == s.pick.invariant && v.cause.name() == s.pick.cause)
        .and_then(|v| explaining_fault(&run.spec, &v.cause))
        .map(fault_kind);
    match blamed {
        Some(kind) => format!("{}, {}: {kind}", s.pick.invariant, s.pick.cause),
        None => format!("{}, {}", s.pick.invariant, s.pick.cause),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    use clap::Parser;

    use crate::cli::{Cli, Exit, execute};

    fn explore(args: &[&str]) -> (Exit, String, String) {
        let cli = Cli::try_parse_from(std::iter::once("locksim").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let exit = execute(&cli, &mut out, &mut err);
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
        (exit, text(out), text(err))
    }

    /// Every file under `dir`, by its path relative to `dir`.
    fn files(dir: &Path) -> BTreeMap<String, String> {
        let mut found = BTreeMap::new();
        let mut todo = vec![dir.to_path_buf()];
        while let Some(d) = todo.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    todo.push(path);
                } else {
                    let rel = path.strip_prefix(dir).unwrap().display().to_string();
                    found.insert(rel, std::fs::read_to_string(&path).unwrap());
                }
            }
        }
        found
    }

    /// Checks that every tag of `html` is closed in order (void elements
    /// and `/>` excepted); returns the number of `<svg>` elements.
    fn well_formed(html: &str) -> usize {
        const VOID: [&str; 4] = ["meta", "br", "hr", "img"];
        let (mut open, mut svgs): (Vec<&str>, usize) = (Vec::new(), 0);
        let mut rest = html;
        while let Some(i) = rest.find('<') {
            rest = &rest[i + 1..];
            let end = rest.find('>').expect("an unclosed <");
            let tag = &rest[..end];
            rest = &rest[end + 1..];
            if tag.starts_with('!') {
                continue;
            }
            let name = tag
                .trim_start_matches('/')
                .split([' ', '/'])
                .next()
                .unwrap();
            if let Some(closing) = tag.strip_prefix('/') {
                assert_eq!(
                    open.pop(),
                    Some(closing),
                    "</{closing}> closes nothing open"
                );
            } else if !tag.ends_with('/') && !VOID.contains(&name) {
                open.push(name);
                svgs += usize::from(name == "svg");
            }
        }
        assert!(open.is_empty(), "left open: {open:?}");
        svgs
    }

    /// Issue 15, item 4: a sweep of 10 seeds under redisson-legacy (two
    /// defects: a false unlock error, and a renewal after unlock on the
    /// path of #4109, an acquire that ran twice: its client renews for
    /// good after every fault is over, which #1966's fix was once said to
    /// remove because the catch-all then blamed a fault for it;
    /// the false unlock error's seed has a replica, and since the WAIT
    /// after lock scripts is modelled the newest release shows an
    /// explained loss there instead, so no fix is named for it) writes a report whose defects come before the expected
    /// losses, each with its replay command and a shrunk scenario file
    /// that parses and still shows the defect; the expected loss shrunk
    /// as an example is still one; the page is well formed,
    /// embeds every chart and loads nothing; and the report is the same,
    /// byte for byte, on one thread and on two. A report that ignored
    /// the defects, lost the shrunk file or depended on the threads
    /// fails one of these.
    #[test]
    fn explore_writes_a_report_defects_first() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("findings");
        let out_arg = out.to_str().unwrap();
        let base = ["explore", "--seeds", "10", "--redisson", "redisson-legacy"];
        let run = |threads: &str| {
            let args: Vec<&str> = base
                .iter()
                .copied()
                .chain(["--shrink", "3", "--report", out_arg, "--threads", threads])
                .collect();
            let (exit, text, err) = explore(&args);
            assert_eq!(exit, Exit::Unexpected, "{err}");
            assert!(text.contains("\nreport: "), "{text}");
            files(&out)
        };
        let one = run("1");
        assert_eq!(one, run("2"), "the report depends on the threads");

        let md = &one["README.md"];
        let html = &one["index.html"];
        for text in [md, html] {
            let defects = text.find("Defects").expect("no defects section");
            let losses = text.find("Expected losses").expect("no losses section");
            assert!(defects < losses);
            let replay = "locksim replay 2 --profile redisson-legacy";
            assert!(text[defects..losses].contains(replay), "no {replay}");
            // Seed 1 draws a read-write lock (sim::LOCK_TYPES): its
            // defect is #1604's, named with its fix.
            assert!(text.contains("#1604 (read-lock-renewal, fixed in 3.8.1)"));
            assert!(text.contains("beyond-guarantee: delay-replies"));
        }
        // The expected loss keeps its cause as it shrinks: the fault the
        // oracle blames is still in the shrunk run.
        let example = "Example: mutual-exclusion, beyond-guarantee: delay-replies";
        assert!(
            md.contains(example) && html.contains(example),
            "no {example}"
        );
        // Five defects: seed 1's #1604, seed 2's false unlock error,
        // seeds 1 and 9's read unlocks that return normally for a K gone
        // under them (false-unlock-success; the scripts before the 3.24
        // latch answer 1 for a missing K, and the finding is named by the
        // fix that keeps the hold, #1604 or #4871), and seed 1's readers
        // left asleep by a write unlock that wakes one of them (#1542).
        assert!(md.contains("#1542 (write-unlock-wakes-all, fixed in 3.8.2)"));
        let scenarios: Vec<&String> = one.keys().filter(|p| p.ends_with("-defect.toml")).collect();
        assert_eq!(scenarios.len(), 5, "{:?}", one.keys());
        for path in scenarios {
            let command = format!("locksim run {}", out.join(path).display());
            assert!(md.contains(&command), "no {command}");
            let s = crate::Scenario::parse(&one[path], path).unwrap();
            let trial = crate::Trial::run(&s, None, None).unwrap();
            assert!(trial.as_expected(), "{:?}", trial.mismatches);
            assert!(
                trial
                    .run
                    .violations
                    .iter()
                    .any(|v| v.cause == sim::Cause::Defect)
            );
        }
        let charts = one.keys().filter(|p| p.starts_with("charts/")).count();
        assert_eq!(well_formed(html), charts);
        assert!(md.matches("](charts/").count() == charts);
        let urls = html.matches("http").count();
        assert_eq!(
            urls,
            html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
        );
        assert!(!html.contains("<script src") && !html.contains("<link"));
    }
}
