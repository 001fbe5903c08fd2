//! Sets `LOCKSIM_VERSION` for `locksim --version`: the package version
//! and, when built from a git checkout, the commit (`0.1.0 (c9f2656)`), so
//! a report or a bug can name the exact build. Outside a checkout (a
//! source tarball, `cargo install` from a copy) or without git, it is the
//! plain version: nothing here may fail the build.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let version = env!("CARGO_PKG_VERSION");
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let full = match git(&dir, &["rev-parse", "--short", "HEAD"]) {
        Some(commit) => {
            watch_head(&dir);
            format!("{version} ({commit})")
        }
        None => version.to_owned(),
    };
    println!("cargo:rustc-env=LOCKSIM_VERSION={full}");
}

/// Reruns this script when HEAD moves: a checkout changes `HEAD`, a commit
/// changes the branch's ref (loose, or in `packed-refs` once packed). Only
/// files that exist are named, since Cargo reruns a script on every build
/// when a named file is missing.
fn watch_head(dir: &Path) {
    let mut files = vec![git_path(dir, "HEAD")];
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        files.push(git_path(dir, &branch));
    }
    files.push(git_path(dir, "packed-refs"));
    for file in files.into_iter().flatten().filter(|f| f.is_file()) {
        println!("cargo:rerun-if-changed={}", file.display());
    }
}

/// Where git keeps `name` (a worktree's HEAD is in its own directory, its
/// refs in the common one), as an absolute path.
fn git_path(dir: &Path, name: &str) -> Option<PathBuf> {
    git(dir, &["rev-parse", "--git-path", name]).map(|p| dir.join(p))
}

/// The trimmed output of a git command run in `dir`, or `None` when git is
/// missing, fails or prints nothing.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (out.status.success() && !text.is_empty()).then(|| text.to_owned())
}
