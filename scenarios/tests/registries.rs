//! Every registered thing appears where a user looks for it. The fault
//! kinds and step kinds come from the JSON Schema of scenario files
//! (`docs/scenario.schema.json`, itself held to the Rust types by the
//! schema test), the switches from lockcore's registry; each must be
//! named in its page of the guide. (The invariants' table is sim's own
//! registry test, `the_guide_lists_every_invariant`.) A kind registered in one line and left
//! out of the guide fails here with its name and the page.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The names a schema definition's variants take: the `const` of its
/// tag property (`fault`, `step`) or its plain string values.
fn names(definition: &str) -> BTreeSet<String> {
    let schema: serde_json::Value =
        serde_json::from_str(&read("docs/scenario.schema.json")).expect("the schema is JSON");
    let def = &schema["$defs"][definition];
    assert!(!def.is_null(), "the schema has no {definition}");
    let mut out = BTreeSet::new();
    collect(def, &mut out);
    assert!(!out.is_empty(), "no names under {definition}");
    out
}

fn collect(value: &serde_json::Value, out: &mut BTreeSet<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map {
                match (key.as_str(), v) {
                    ("const", serde_json::Value::String(s)) => {
                        out.insert(s.clone());
                    }
                    ("enum", serde_json::Value::Array(items)) => {
                        out.extend(items.iter().filter_map(|i| i.as_str().map(str::to_owned)));
                    }
                    _ => collect(v, out),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| collect(v, out)),
        _ => {}
    }
}

/// The names of `names` that `page` never writes as code (`` `name` ``).
fn missing(page: &str, names: &BTreeSet<String>) -> Vec<String> {
    let text = read(page);
    names
        .iter()
        .filter(|n| !text.contains(&format!("`{n}`")))
        .cloned()
        .collect()
}

#[test]
fn every_fault_kind_is_in_the_scenario_guide() {
    let kinds = names("Fault");
    assert!(kinds.contains("partition") && kinds.contains("interleave"));
    let missing = missing("docs/src/scenarios.md", &kinds);
    assert!(
        missing.is_empty(),
        "docs/src/scenarios.md misses fault kinds {missing:?}"
    );
}

#[test]
fn every_step_kind_is_in_the_scenario_guide() {
    let steps = names("Step");
    assert!(steps.contains("lock") && steps.contains("try-lock-async"));
    let missing = missing("docs/src/scenarios.md", &steps);
    assert!(
        missing.is_empty(),
        "docs/src/scenarios.md misses step kinds {missing:?}"
    );
}

#[test]
fn every_switch_is_in_the_releases_page() {
    let switches: BTreeSet<String> = lockcore::Switch::ALL
        .iter()
        .map(|s| s.info().name.to_owned())
        .collect();
    let missing = missing("docs/src/releases.md", &switches);
    assert!(
        missing.is_empty(),
        "docs/src/releases.md misses switches {missing:?}"
    );
}

/// Every declared `sometimes` point is in the guide's coverage section,
/// with its meaning: `explore --coverage` prints names, and a reader must
/// find what each one means.
#[test]
fn every_coverage_point_is_in_the_explore_guide() {
    let points: BTreeSet<String> = sim::Point::ALL
        .iter()
        .map(|p| p.name().to_owned())
        .collect();
    assert!(points.contains("crash-while-holding"));
    let missing = missing("docs/src/explore.md", &points);
    assert!(
        missing.is_empty(),
        "docs/src/explore.md misses coverage points {missing:?}"
    );
    let text = read("docs/src/explore.md");
    for p in sim::Point::ALL {
        assert!(
            text.contains(&format!("| `{}` | {} |", p.name(), p.meaning())),
            "docs/src/explore.md's coverage table has no row `{}` | {}",
            p.name(),
            p.meaning()
        );
    }
}

/// The check finds a name a page leaves out.
#[test]
fn a_missing_name_is_found() {
    let names: BTreeSet<String> = ["no-such-kind".to_owned()].into();
    assert_eq!(
        missing("docs/src/scenarios.md", &names),
        vec!["no-such-kind"]
    );
}
