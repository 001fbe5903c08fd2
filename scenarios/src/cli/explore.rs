//! `locksim explore`.

use std::collections::BTreeSet;
use std::io::{IsTerminal, Write};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lockcore::Profile;

use crate::cli::{Exit, ExploreArgs, PlanFormat};
use crate::{InputError, explored_spec, plan_json, shrink, shrunk_scenario};

/// How many runs one shrink may take.
const SHRINK_BUDGET: usize = 200;

/// Explores the seeds, prints a summary and every violation's replay
/// command, and shrinks the first violations.
pub(super) fn explore(
    args: &ExploreArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, InputError> {
    let bar = ProgressBar::new(args.seeds);
    if std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} seeds {msg}") {
            bar.set_style(style);
        }
    } else {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    let found = crate::explore(args.from, args.seeds, args.profile, |_| bar.inc(1));
    bar.finish_and_clear();

    let profiles = match args.profile {
        Some(p) => p.to_string(),
        None => "every profile".to_owned(),
    };
    let _ = writeln!(
        out,
        "explored seeds {}..{} under {profiles}: {} runs, {} with violations",
        args.from,
        args.from.saturating_add(args.seeds),
        found.runs,
        found.findings.len()
    );
    // One column per explored profile, so the profiles can be compared.
    let profiles: Vec<Profile> = match args.profile {
        Some(p) => vec![p],
        None => Profile::ALL.to_vec(),
    };
    let _ = write!(out, "  {:<22}", "runs broken");
    for p in &profiles {
        let _ = write!(out, " {:>16}", p.name());
    }
    let _ = writeln!(out);
    let per: Vec<_> = profiles.iter().map(|p| found.by_invariant_of(*p)).collect();
    for (inv, _) in found.by_invariant() {
        let _ = write!(out, "  {:<22}", inv.name());
        for counts in &per {
            let _ = write!(out, " {:>16}", counts.get(&inv).copied().unwrap_or(0));
        }
        let _ = writeln!(out);
    }
    for (seed, profile, e) in &found.errors {
        let _ = writeln!(err, "seed {seed} under {profile} could not run: {e}");
    }
    if !found.findings.is_empty() {
        let _ = writeln!(out, "violations:");
    }
    for f in &found.findings {
        let names: Vec<&str> = f.invariants().iter().map(|i| i.name()).collect();
        let _ = writeln!(out, "  {}    # {}", f.replay_command(), names.join(", "));
    }

    // Shrink the first finding of each (invariant, profile) first, so a
    // small budget still covers every kind of failure.
    let mut seen = BTreeSet::new();
    let mut order: Vec<(usize, sim::Invariant)> = Vec::new();
    for (i, f) in found.findings.iter().enumerate() {
        for inv in f.invariants() {
            if seen.insert((inv, f.profile)) {
                order.push((i, inv));
            }
        }
    }
    for (i, inv) in order.into_iter().take(args.shrink) {
        let f = &found.findings[i];
        let spec = explored_spec(f.seed, Some(f.profile));
        let shrunk = shrink(&spec, inv, SHRINK_BUDGET);
        let _ = writeln!(
            out,
            "\nshrunk seed {} under {} ({inv}): {} -> {} fault(s) in {} runs",
            f.seed,
            f.profile,
            spec.faults.0.len(),
            shrunk.spec.faults.0.len(),
            shrunk.runs
        );
        let scenario = shrunk_scenario(&shrunk.spec, inv, f.profile);
        let text = match args.format {
            PlanFormat::Toml => scenario.to_toml(),
            PlanFormat::Json => plan_json(&shrunk.spec.faults),
        };
        let _ = writeln!(out, "{}", text.trim_end());
        if let Some(dir) = &args.save {
            let path = dir.join(format!("{}.toml", scenario.name));
            std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::write(&path, scenario.to_toml()))
                .map_err(|e| InputError::Unreadable {
                    path: path.display().to_string(),
                    reason: e.to_string(),
                })?;
            let _ = writeln!(
                out,
                "saved {} (run it: locksim run {})",
                path.display(),
                path.display()
            );
        }
    }
    Ok(if found.findings.is_empty() {
        Exit::AsExpected
    } else {
        Exit::Unexpected
    })
}
