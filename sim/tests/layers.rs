//! sim's layers point one way: `model` imports nothing above it, `judge`
//! only the model, the engines neither `run`, `engine`, `swarm` nor
//! `workload`. A file that reaches up fails here with its line, before the
//! import circle it would start grows back (issue 46: the circle was 21
//! modules around `World`, the checkers and the oracle in it).

use std::path::{Path, PathBuf};

/// The names a layer may not use, by how they are reached: a module path
/// or a name the crate root re-exports from above.
const ABOVE_MODEL: &[&str] = &[
    "crate::judge",
    "crate::engines",
    "crate::run",
    "crate::engine",
    "crate::swarm",
    "crate::workload",
    "crate::Run",
    "crate::Engine",
    "crate::Invariant",
    "crate::Violation",
    "crate::Cause",
    "crate::classify",
    "crate::check_all",
    "crate::generate",
    "crate::InProcess",
    "crate::lock_value",
];

const ABOVE_JUDGE: &[&str] = &[
    "crate::engines",
    "crate::run",
    "crate::engine",
    "crate::swarm",
    "crate::workload",
    "crate::Run",
    "crate::Engine",
    "crate::generate",
    "crate::InProcess",
    "crate::lock_value",
];

const ABOVE_ENGINES: &[&str] = &[
    "crate::run::",
    "crate::run;",
    "crate::engine::",
    "crate::swarm",
    "crate::workload",
    "crate::Run",
    "crate::Engine",
    "crate::run_turmoil",
    "crate::run_real",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            out.extend(files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// Whether `path` is a test module of its own file: its parent declares
/// it under `#[cfg(test)]` (`check/registry_tests.rs`).
fn is_test_module(path: &Path) -> bool {
    let (Some(dir), Some(stem)) = (path.parent(), path.file_stem()) else {
        return false;
    };
    let declaration = format!("mod {};", stem.to_string_lossy());
    let parents = [dir.join("mod.rs"), dir.with_extension("rs")];
    parents.iter().any(|parent| {
        let text = std::fs::read_to_string(parent).unwrap_or_default();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        lines
            .windows(2)
            .any(|w| w[0] == "#[cfg(test)]" && w[1].ends_with(&declaration))
    })
}

/// The lines of `dir`'s files (test modules and comments left out) that
/// name anything in `forbidden`.
fn reaching_up(dir: &str, forbidden: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    let root = src().join(dir);
    let all = files(&root);
    assert!(!all.is_empty(), "no files under {}", root.display());
    for path in all.into_iter().filter(|p| !is_test_module(p)) {
        let text = std::fs::read_to_string(&path).expect("readable source");
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for name in forbidden.iter().filter(|f| line.contains(**f)) {
                found.push(format!(
                    "{}:{}: {name} in `{}`",
                    path.display(),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    found
}

#[test]
fn the_model_imports_nothing_above_it() {
    let found = reaching_up("model", ABOVE_MODEL);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_judge_reads_the_model_alone() {
    let found = reaching_up("judge", ABOVE_JUDGE);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_engines_do_not_reach_the_top() {
    let found = reaching_up("engines", ABOVE_ENGINES);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The check itself finds a reach up: a line of the top layer names the
/// engines, as a model file that did would; and it knows a test module
/// declared by its parent.
#[test]
fn a_reach_up_is_found() {
    assert!(is_test_module(&src().join("judge/check/registry_tests.rs")));
    assert!(is_test_module(&src().join("model/fault/example.rs")));
    assert!(!is_test_module(&src().join("judge/check/fencing.rs")));
    let found = reaching_up(".", &["crate::engines"]);
    assert!(
        found.iter().any(|f| f.contains("run.rs")),
        "{}",
        found.join("\n")
    );
}
