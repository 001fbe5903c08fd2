//! The mutation report as text: one row per mutant, then the score.

use std::fmt::Write as _;

use super::{MutantVerdict, MutationReport};

/// The report as `locksim mutants` prints it.
pub fn render_report(r: &MutationReport) -> String {
    let mut out = String::new();
    let explored = if r.interrupted {
        format!(
            "interrupted: explored seeds {}..{} of {}",
            first_seed(r),
            r.next,
            r.seeds
        )
    } else {
        format!("explored seeds {}", r.seeds)
    };
    let _ = writeln!(
        out,
        "mutants of {}: {} fixes in force, each removed alone (--without); {explored}",
        r.release,
        r.mutants.len()
    );
    let _ = writeln!(out);
    // Column widths from the data: upstream names run from `#1602` to
    // `tag redisson-3.17.0`.
    let name_w = r
        .mutants
        .iter()
        .map(|m| m.switch.len())
        .chain([18])
        .max()
        .unwrap_or(18);
    let up_w = r
        .mutants
        .iter()
        .map(|m| m.upstream.len())
        .chain([8])
        .max()
        .unwrap_or(8);
    let _ = writeln!(
        out,
        "{:<name_w$}  {:<up_w$}  {:>7}  {:<10}  {:>10}  {:>6}  {:>7}  {:>7}  why",
        "mutant (--without)",
        "upstream",
        "since",
        "verdict",
        "first kill",
        "kills",
        "reached",
        "changed"
    );
    for m in &r.mutants {
        let first = m.first_kill.map_or("-".to_owned(), |s| s.to_string());
        let why = match &m.verdict {
            MutantVerdict::Killed if m.others.is_empty() => String::new(),
            MutantVerdict::Killed => {
                let others: Vec<&str> = m.others.keys().map(String::as_str).collect();
                format!("also: {}", others.join(", "))
            }
            MutantVerdict::Equivalent(why) | MutantVerdict::Survived(why) => why.clone(),
        };
        let line = format!(
            "{:<name_w$}  {:<up_w$}  {:>7}  {:<10}  {:>10}  {:>6}  {:>7}  {:>7}  {why}",
            m.switch,
            m.upstream,
            m.since,
            m.verdict.name(),
            first,
            m.killing_runs,
            m.reached,
            m.changed
        );
        let _ = writeln!(out, "{}", line.trim_end());
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "score: {}/{} killed ({:.0}%); {} equivalent, {} survived; {:.0}% of the {} not equivalent killed",
        r.killed,
        r.mutants.len(),
        r.score * 100.0,
        r.equivalent,
        r.survived,
        r.score_of_killable * 100.0,
        r.killed + r.survived
    );
    if r.failed > 0 {
        let _ = writeln!(
            out,
            "{} seeds could not be run ({})",
            r.failed,
            r.first_failure.as_deref().unwrap_or("")
        );
    }
    let replays: Vec<&String> = r.mutants.iter().filter_map(|m| m.replay.as_ref()).collect();
    if !replays.is_empty() {
        let _ = writeln!(out, "\neach first kill replays with:");
        for replay in replays {
            let _ = writeln!(out, "  {replay}");
        }
    }
    out
}

fn first_seed(r: &MutationReport) -> &str {
    r.seeds.split("..").next().unwrap_or("")
}
