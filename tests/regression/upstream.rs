//! The reports written for upstream (`reports/upstream/`): each report's
//! scenario gives, under every release it names, what the report says,
//! the newest affected release's defect is named "not reported upstream"
//! as explore names it, and the timeline the report quotes is the one
//! the scenario gives today. A change to lockcore or the oracle that
//! would make a report wrong fails here, naming the report.

use locksim::{Rerun, Trial, render_trial};

/// The directory of the reports.
fn dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../reports/upstream")
}

/// The timeline section of a rendered run: the lines between
/// `--- timeline` and `--- verdict`.
fn timeline_of(rendered: &str) -> String {
    let start = rendered.find("--- timeline\n").expect("a timeline") + "--- timeline\n".len();
    let end = rendered.find("--- verdict").expect("a verdict");
    rendered[start..end].to_owned()
}

/// The block a report quotes between `<!-- timeline V -->` and
/// `<!-- end timeline -->`, without its code fence, and the release V.
fn quoted_timeline(report: &str) -> Option<(String, String)> {
    let open = report.find("<!-- timeline ")?;
    let rest = &report[open + "<!-- timeline ".len()..];
    let release = rest[..rest.find(" -->")?].to_owned();
    let body = &rest[rest.find("```\n")? + 4..];
    Some((release, body[..body.find("```")?].to_owned()))
}

#[test]
fn every_upstream_report_replays_as_written() {
    let files = super::toml_files(&dir());
    assert!(!files.is_empty(), "no scenario in {}", dir().display());
    let mut failures = Vec::new();
    for path in &files {
        let name = path.display().to_string();
        let scenario = locksim::load(&name).unwrap_or_else(|e| panic!("{e}"));
        for release in scenario.expect.release.keys() {
            let release: lockcore::Release = release.parse().unwrap_or_else(|e| panic!("{e}"));
            let trial =
                Trial::run(&scenario, None, Some(release)).unwrap_or_else(|e| panic!("{e}"));
            if !trial.as_expected() {
                failures.push(format!("{name} under {release}: {:?}", trial.mismatches));
            }
        }
        let report_path = path.with_extension("md");
        let report = std::fs::read_to_string(&report_path)
            .unwrap_or_else(|e| panic!("{}: a report for {name}: {e}", report_path.display()));
        let (release, quoted) = quoted_timeline(&report)
            .unwrap_or_else(|| panic!("{}: no quoted timeline", report_path.display()));
        let parsed: lockcore::Release = release.parse().unwrap_or_else(|e| panic!("{e}"));
        let trial = Trial::run(&scenario, None, Some(parsed)).unwrap_or_else(|e| panic!("{e}"));
        let rerun = Rerun::Scenario(name.clone());
        let rendered = render_trial(&trial, &scenario.description, None, &rerun);
        let timeline = timeline_of(&rendered);
        if quoted != timeline {
            failures.push(format!(
                "{}: the quoted {release} timeline is stale; today's is:\n{timeline}",
                report_path.display()
            ));
        }
        // What a user's explore would call it: no fix removes it, and the
        // path is known as unreported.
        let named: Vec<_> = locksim::defects_of(&scenario.spec(None, Some(parsed)), &trial.run)
            .iter()
            .map(|d| (d.fixed_by.is_none(), d.open_issue.map(|o| o.upstream)))
            .collect();
        if named.is_empty() || named.iter().any(|n| *n != (true, Some("unreported"))) {
            failures.push(format!("{name} under {release}: named {named:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
