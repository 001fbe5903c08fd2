//! explore's sweep itself: the header, each violating run's `locksim
//! replay` line as soon as the run ends (in seed then profile order,
//! whatever the threads), the progress bar on a terminal's stderr, and
//! what the sweep leaves for the summary, the shrinks and the report.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::ExploreOptions;
use super::groups::Groups;
use super::picks::Picks;
use super::summary::{names, profile_label, profiles, workload_label};
use super::upstreams::Upstreams;
use crate::losses::Losses;
use crate::{Exploration, InputError, SeedRange, SweepEvent};

/// What a finished (or stopped) sweep leaves: its counts, the expected
/// losses to shrink, the defect groups, the defective runs by upstream
/// issue and the expected losses by cause.
pub(super) struct Swept {
    pub(super) found: Exploration,
    pub(super) picks: Picks,
    pub(super) groups: Groups,
    pub(super) upstreams: Upstreams,
    pub(super) losses: Losses,
}

/// The sweep itself: the header, each violating run's line as it is
/// found, the progress bar.
pub(super) fn sweep(
    o: &ExploreOptions,
    engine: &sim::Engine,
    range: SeedRange,
    interrupt: &AtomicBool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Option<Swept>, InputError> {
    let (profile, workload) = (o.profile, o.workload);
    let runs = u128::from(range.count()) * profiles(profile).len() as u128;
    let on = match engine {
        sim::Engine::Fast => String::new(),
        ref other => format!(" on the {other} engine"),
    };
    let forks = match crate::branches(workload, engine) {
        true => format!(
            " and up to {} branches of each that reaches a rare point",
            sim::branch::BUDGET
        ),
        false => String::new(),
    };
    let _ = writeln!(
        out,
        "exploring seeds {range} under {}{}{on}: {runs} runs{forks}; each violating run as it is found:",
        profile_label(profile),
        workload_label(workload)
    );
    let bar = progress_bar(range.count());
    let (mut picks, mut groups) = (Picks::new(o.shrink), Groups::default());
    let mut upstreams = Upstreams::default();
    // Only a report shows the losses by fault kind, which costs a spec
    // generated again per violating run.
    let mut losses = o.report.as_ref().map(|_| Losses::default());
    let mut closed = None;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(o.threads)
        .build()
        .map_err(|e| InputError::Threads(e.to_string()))?;
    let found = crate::explore_workload_on(
        &pool,
        range,
        profile,
        (workload, engine),
        interrupt,
        |event| match event {
            SweepEvent::Found(f) => {
                let line =
                    bar.suspend(|| writeln!(out, "  {}    # {}", f.replay_command(), names(f)));
                if let (Err(e), None) = (line, &closed) {
                    // Nobody reads the findings any more (`locksim explore |
                    // head`): stop, rather than sweep on for hours for nothing.
                    interrupt.store(true, Ordering::SeqCst);
                    closed = Some(e);
                }
                picks.offer(f);
                groups.offer(f);
                upstreams.offer(f);
                if let Some(l) = &mut losses {
                    l.offer(f);
                }
            }
            SweepEvent::Failed {
                seed,
                profile,
                reason,
            } => bar.suspend(|| {
                let _ = writeln!(err, "seed {seed} under {profile} could not run: {reason}");
            }),
            SweepEvent::SeedDone(_) => bar.inc(1),
        },
    );
    bar.finish_and_clear();
    if let Some(e) = closed {
        let last = found.next.saturating_sub(1);
        let _ = writeln!(
            err,
            "locksim: cannot write to stdout ({e}); the sweep stopped after seed {last}"
        );
        return Ok(None);
    }
    Ok(Some(Swept {
        found,
        picks,
        groups,
        upstreams,
        losses: losses.unwrap_or_default(),
    }))
}

fn progress_bar(seeds: u64) -> ProgressBar {
    let bar = ProgressBar::new(seeds);
    if std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} seeds {msg}") {
            bar.set_style(style);
        }
    } else {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar
}
