//! The one golden copy of every timeline: `reports/timelines/`.
//!
//! The timeline tests compare what the simulator renders now with the
//! committed report's file, byte for byte, and print a unified diff when
//! they differ. There is no second copy to keep in step: re-pinning
//! writes the report's files themselves.
//!
//! Re-pin (after reviewing why the timelines changed):
//!
//! ```text
//! LOCKSIM_REPIN=1 cargo test -p locksim-tests --test timeline
//! ```
//!
//! then read `git diff reports/` before committing. It writes the same
//! files as `cargo run --release -- report`.

use std::path::PathBuf;

/// The command that re-pins the golden files.
pub const REPIN: &str = "LOCKSIM_REPIN=1 cargo test -p locksim-tests --test timeline";

/// The committed report's directory.
pub fn reports_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../reports")
}

/// Whether this run re-pins (`LOCKSIM_REPIN=1`) instead of comparing.
pub fn repinning() -> bool {
    std::env::var_os("LOCKSIM_REPIN").is_some_and(|v| v == "1")
}

/// Checks that `reports/<path>` holds exactly `text`; when re-pinning,
/// writes it there instead. A mismatch fails with a unified diff (the
/// committed file against what is rendered now) and the re-pin command.
pub fn assert_pinned(path: &str, text: &str) {
    let file = reports_dir().join(path);
    if repinning() {
        std::fs::write(&file, text).unwrap_or_else(|e| panic!("writing {}: {e}", file.display()));
        return;
    }
    let pinned = std::fs::read_to_string(&file).unwrap_or_default();
    if let Some(diff) = difference(&format!("reports/{path}"), &pinned, text) {
        panic!(
            "{path} is not what the simulator renders now:\n{diff}\n\
             if the change is intended, re-pin with `{REPIN}` and review `git diff reports/`"
        );
    }
}

/// A unified diff from `pinned` (named `name`) to `now`, or `None` when
/// they are equal.
fn difference(name: &str, pinned: &str, now: &str) -> Option<String> {
    if pinned == now {
        return None;
    }
    let diff = similar::TextDiff::from_lines(pinned, now);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(name, "rendered now")
        .to_string();
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Equal texts give no diff; a changed line shows as `-` the pinned
    /// one and `+` the new one, under both names.
    #[test]
    fn a_changed_line_shows_in_the_diff() {
        assert_eq!(difference("a", "x\ny\n", "x\ny\n"), None);
        let diff = difference("reports/t.txt", "x\ny\nz\n", "x\nY\nz\n").expect("a diff");
        assert!(diff.contains("--- reports/t.txt"), "{diff}");
        assert!(diff.contains("+++ rendered now"), "{diff}");
        assert!(diff.contains("\n-y\n+Y\n"), "{diff}");
    }
}
