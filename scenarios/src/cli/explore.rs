//! `locksim explore`.
//!
//! Everything goes to stdout, byte for byte the same for a given range (the
//! progress bar alone is on stderr, and only on a terminal):
//!
//! 1. a header with the range and profiles;
//! 2. each violating run's `locksim replay` line as soon as it is found, in
//!    seed then profile order, so a sweep stopped at any point has already
//!    shown everything it found;
//! 3. the summary: the seeds covered and how many runs broke each invariant;
//! 4. the shrunk plans of the first violations, or, when Ctrl-C stopped the
//!    sweep, the command that explores the seeds it did not reach.

use std::borrow::Cow;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lockcore::Release;

use crate::cli::args::DEFAULT_SHRINK;
use crate::cli::picks::{Pick, Picks};
use crate::cli::{Exit, ExploreArgs, PlanFormat};
use crate::{
    Exploration, Finding, InputError, SeedRange, SweepEvent, explored_spec_with, kinds_flag,
    plan_json, shrink_as, shrunk_scenario,
};

/// How many runs one shrink may take.
const SHRINK_BUDGET: usize = 200;

/// Explores the seeds, streaming each violation's replay command, then
/// prints the summary and shrinks the first violations, or, when
/// `interrupt` is set, prints the summary so far and how to resume.
pub(super) fn explore(
    args: &ExploreArgs,
    interrupt: &AtomicBool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit, InputError> {
    let profile = args.toggles.apply(args.profile)?;
    let mut range = SeedRange::new(args.from, args.seeds)?;
    if let Some((k, n)) = args.shard {
        range = range.shard(k, n)?;
    }
    if let Some(dir) = &args.save {
        // Made now, so a bad path is refused before a sweep of hours.
        std::fs::create_dir_all(dir).map_err(|e| unwritable(dir, &e))?;
    }
    let runs = u128::from(range.count()) * profiles(profile).len() as u128;
    let every_kind = match args.kinds.swarm() {
        sim::SwarmKinds::Classic => "",
        sim::SwarmKinds::All => " with every fault kind",
    };
    let _ = writeln!(
        out,
        "exploring seeds {range} under {}{every_kind}: {runs} runs; each violating run as it is found:",
        profile_label(profile)
    );
    let bar = progress_bar(range.count());
    let mut picks = Picks::new(args.shrink);
    let mut closed = None;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads)
        .build()
        .map_err(|e| InputError::Threads(e.to_string()))?;
    let kinds = args.kinds.swarm();
    let found = crate::explore_kinds_on(
        &pool,
        range,
        profile,
        kinds,
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
        return Ok(Exit::Interrupted);
    }
    summary(&found, profile, every_kind, out);

    if let Some(rest) = found.rest() {
        if !picks.is_empty() {
            let _ = writeln!(out, "shrinking skipped: the sweep was interrupted");
        }
        let _ = writeln!(out, "resume with: {}", resume_command(args, profile, rest));
        return Ok(Exit::Interrupted);
    }
    let picked = picks.in_order();
    for (i, pick) in picked.iter().enumerate() {
        if interrupt.load(Ordering::SeqCst) {
            let left = picked.len() - i;
            let _ = writeln!(out, "\ninterrupted: {left} shrink(s) skipped");
            return Ok(Exit::Interrupted);
        }
        shrink_one(pick, args, out)?;
    }
    Ok(if found.violating == 0 && found.failed == 0 {
        Exit::AsExpected
    } else {
        Exit::Unexpected
    })
}

/// The profiles a sweep runs each seed under.
fn profiles(profile: Option<Release>) -> Vec<Release> {
    match profile {
        Some(p) => vec![p],
        None => Release::ERAS.to_vec(),
    }
}

fn profile_label(profile: Option<Release>) -> String {
    match profile {
        Some(p) => p.to_string(),
        None => "every profile".to_owned(),
    }
}

/// The broken invariants' names, comma separated.
/// Each broken invariant with its cause: `mutual-exclusion (defect)`.
fn names(f: &Finding) -> String {
    let mut names: Vec<String> = f
        .broken
        .iter()
        .map(|b| format!("{} ({})", b.invariant.name(), b.cause.name()))
        .collect();
    names.dedup();
    names.join(", ")
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

/// The seeds covered, the run counts, and one row per broken invariant
/// with a column per explored profile, so the profiles can be compared.
fn summary(found: &Exploration, profile: Option<Release>, kinds: &str, out: &mut dyn Write) {
    let covered = if !found.interrupted() {
        format!("explored seeds {}", found.range)
    } else if found.next == found.range.from() {
        format!("interrupted: explored no seed of {}", found.range)
    } else {
        format!(
            "interrupted: explored seeds {}..{} of {}",
            found.range.from(),
            found.next,
            found.range
        )
    };
    let failed = match found.failed {
        0 => String::new(),
        n => format!(", {n} could not run"),
    };
    let _ = writeln!(
        out,
        "{covered} under {}{kinds}: {} runs, {} with violations{failed}",
        profile_label(profile),
        found.runs,
        found.violating
    );
    let profiles = profiles(profile);
    let _ = write!(out, "  {:<22}", "runs broken");
    for p in &profiles {
        let _ = write!(out, " {:>16}", p.to_string());
    }
    let _ = writeln!(out);
    let per: Vec<_> = profiles.iter().map(|p| found.by_invariant_of(*p)).collect();
    for inv in found.by_invariant().keys() {
        let _ = write!(out, "  {:<22}", inv.name());
        for counts in &per {
            let _ = write!(out, " {:>16}", counts.get(inv).copied().unwrap_or(0));
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "  runs by worst cause (a defect first)");
    for cause in ["defect", "beyond-guarantee", "misuse"] {
        let _ = write!(out, "  {cause:<22}");
        for p in &profiles {
            let _ = write!(out, " {:>16}", found.by_cause_of(*p, cause));
        }
        let _ = writeln!(out);
    }
}

/// Shrinks one violation, prints the plan and saves it if asked.
fn shrink_one(pick: &Pick, args: &ExploreArgs, out: &mut dyn Write) -> Result<(), InputError> {
    let (inv, profile) = (pick.invariant, pick.profile);
    let spec = explored_spec_with(pick.seed, Some(profile), args.kinds.swarm());
    let cause = pick.defect.then_some("defect");
    let shrunk = shrink_as(&spec, inv, cause, SHRINK_BUDGET);
    let _ = writeln!(
        out,
        "\nshrunk seed {} under {profile} ({inv}{}): {} -> {} fault(s) in {} runs",
        pick.seed,
        if pick.defect { ", a defect" } else { "" },
        spec.faults.0.len(),
        shrunk.spec.faults.0.len(),
        shrunk.runs
    );
    let scenario = shrunk_scenario(&shrunk.spec, inv, profile);
    let text = match args.format {
        PlanFormat::Toml => scenario.to_toml(),
        PlanFormat::Json => plan_json(&shrunk.spec.faults),
    };
    let _ = writeln!(out, "{}", text.trim_end());
    if let Some(dir) = &args.save {
        let path = dir.join(format!("{}.toml", scenario.name));
        std::fs::write(&path, scenario.to_toml()).map_err(|e| unwritable(&path, &e))?;
        let _ = writeln!(
            out,
            "saved {} (run it: locksim run {})",
            path.display(),
            shell_word(&path.display().to_string())
        );
    }
    Ok(())
}

fn unwritable(path: &Path, e: &std::io::Error) -> InputError {
    InputError::Unwritable {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// The command that explores `rest` with the same settings as `args`
/// (settings left at their defaults are left out, as the user likely did).
fn resume_command(args: &ExploreArgs, profile: Option<Release>, rest: SeedRange) -> String {
    let mut cmd = format!(
        "locksim explore --from {} --seeds {}",
        rest.from(),
        rest.count()
    );
    if let Some(p) = profile {
        cmd.push_str(&format!(" {}", p.flags()));
    }
    if args.shrink != DEFAULT_SHRINK {
        cmd.push_str(&format!(" --shrink {}", args.shrink));
    }
    if args.format == PlanFormat::Json {
        cmd.push_str(" --format json");
    }
    cmd.push_str(kinds_flag(args.kinds.swarm()));
    if let Some(dir) = &args.save {
        cmd.push_str(&format!(
            " --save {}",
            shell_word(&dir.display().to_string())
        ));
    }
    cmd
}

/// `word` as one shell word: as it is when it holds nothing a shell
/// would split or expand, else single-quoted.
fn shell_word(word: &str) -> Cow<'_, str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,:=@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        Cow::Borrowed(word)
    } else {
        Cow::Owned(format!("'{}'", word.replace('\'', r"'\''")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, execute_with_interrupt};
    use clap::Parser;

    /// Stdout that sets `interrupt` once `after` replay lines were written,
    /// as a Ctrl-C would while the sweep is printing.
    struct InterruptAfter<'a> {
        text: Vec<u8>,
        interrupt: &'a AtomicBool,
        after: usize,
    }

    impl Write for InterruptAfter<'_> {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.text.extend_from_slice(buf);
            if replays(&String::from_utf8_lossy(&self.text)).len() >= self.after {
                self.interrupt.store(true, Ordering::SeqCst);
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Runs `args` with stdout interrupted after `after` replay lines
    /// (never when `None`, at once when `Some(0)`).
    fn exec(args: &[&str], after: Option<usize>) -> (Exit, String, String) {
        let cli = Cli::try_parse_from(std::iter::once("locksim").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let interrupt = AtomicBool::new(after == Some(0));
        let mut out = InterruptAfter {
            text: Vec::new(),
            interrupt: &interrupt,
            after: after.unwrap_or(usize::MAX),
        };
        let mut err = Vec::new();
        let exit = execute_with_interrupt(&cli, &interrupt, &mut out, &mut err);
        let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
        (exit, text(out.text), text(err))
    }

    fn replays(out: &str) -> Vec<&str> {
        out.lines()
            .filter(|l| l.trim_start().starts_with("locksim replay "))
            .collect()
    }

    /// `--seeds 0` used to explore nothing and exit 0: now it is bad input
    /// (exit 2) with a one-line reason and nothing on stdout.
    #[test]
    fn empty_range_exits_2() {
        let (exit, out, err) = exec(&["explore", "--seeds", "0"], None);
        assert_eq!((exit, out.as_str()), (Exit::BadInput, ""));
        assert_eq!(
            err,
            "locksim: --seeds 0 explores nothing: give at least 1 seed\n"
        );
    }

    /// A range past `u64::MAX` used to be cut short without a word (and at
    /// `--from u64::MAX` explored nothing, exit 0): now it is bad input.
    #[test]
    fn overflowing_range_exits_2() {
        for (from, seeds) in [
            ("18446744073709551615", "1"),
            ("18446744073709551614", "100"),
        ] {
            let (exit, out, err) = exec(&["explore", "--from", from, "--seeds", seeds], None);
            assert_eq!((exit, out.as_str()), (Exit::BadInput, ""), "{err}");
            assert!(
                err.starts_with(&format!("locksim: --from {from} --seeds {seeds} runs past")),
                "{err}"
            );
            assert_eq!(err.lines().count(), 1, "{err}");
        }
    }

    /// The replay lines come after the header and before the summary, in
    /// seed order, and the whole output is the same run to run.
    #[test]
    fn findings_stream_before_the_summary() {
        let args = [
            "explore",
            "--seeds",
            "8",
            "--profile",
            "redisson",
            "--shrink",
            "0",
        ];
        let (exit, out, _) = exec(&args, None);
        assert_eq!(exit, Exit::Unexpected, "{out}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            "exploring seeds 0..8 under redisson: 8 runs; each violating run as it is found:"
        );
        let summary = lines
            .iter()
            .position(|l| l.starts_with("explored seeds 0..8 under redisson: 8 runs, "))
            .unwrap_or_else(|| panic!("no summary: {out}"));
        let streamed = replays(&out);
        assert!(!streamed.is_empty(), "{out}");
        assert_eq!(lines[1..1 + streamed.len()], streamed[..], "{out}");
        assert!(streamed.len() < summary, "{out}");
        let seeds: Vec<u64> = streamed
            .iter()
            .filter_map(|l| l.split_whitespace().nth(2)?.parse().ok())
            .collect();
        assert!(seeds.windows(2).all(|w| w[0] < w[1]), "{seeds:?}");
        assert_eq!(exec(&args, None).1, out);
    }

    /// Ctrl-C while the second violation is printed: the sweep ends after
    /// that seed, prints the summary of the seeds it covered and the command
    /// that explores the rest, and exits 130. Running that command gives
    /// exactly the violations the whole sweep gives after the stop.
    #[test]
    fn interrupted_sweep_prints_summary_and_resumes() {
        let base = ["explore", "--profile", "redisson", "--shrink", "1"];
        let whole_args = [&base[..], &["--seeds", "12"]].concat();
        let (_, whole, _) = exec(&whole_args, None);
        let (exit, first, _) = exec(&whole_args, Some(2));
        assert_eq!(exit, Exit::Interrupted);
        assert_eq!(exit.code(), 130);
        let stopped = replays(&first);
        assert_eq!(stopped.len(), 2, "{first}");
        let last: u64 = stopped[1]
            .split_whitespace()
            .nth(2)
            .unwrap()
            .parse()
            .unwrap();
        let next = last + 1;
        assert!(
            first.contains(&format!(
                "\ninterrupted: explored seeds 0..{next} of 0..12 under redisson: {next} runs, 2 with violations\n"
            )),
            "{first}"
        );
        assert!(
            first.contains("\nshrinking skipped: the sweep was interrupted\n"),
            "{first}"
        );
        let resume = format!(
            "locksim explore --from {next} --seeds {} --profile redisson --shrink 1",
            12 - next
        );
        assert!(
            first.ends_with(&format!("resume with: {resume}\n")),
            "{first}"
        );

        let resume_args: Vec<&str> = resume.split_whitespace().skip(1).collect();
        let (_, second, _) = exec(&resume_args, None);
        let mut both = stopped.clone();
        both.extend(replays(&second));
        assert_eq!(both, replays(&whole));
    }

    /// Stdout that fails once a replay line was written, as a pipe does
    /// when its reader (`head`) is gone.
    struct ClosedAfterFirstReplay(Vec<u8>);

    impl Write for ClosedAfterFirstReplay {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if !replays(&String::from_utf8_lossy(&self.0)).is_empty() {
                return Err(std::io::ErrorKind::BrokenPipe.into());
            }
            self.0.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// When stdout is closed (`locksim explore | head -3`) the sweep stops
    /// at the next finding it cannot print, says so on stderr and exits
    /// 130, instead of sweeping on for nothing.
    #[test]
    fn closed_stdout_stops_the_sweep() {
        let cli = Cli::try_parse_from([
            "locksim",
            "explore",
            "--seeds",
            "100000",
            "--profile",
            "redisson",
        ])
        .unwrap();
        let mut out = ClosedAfterFirstReplay(Vec::new());
        let mut err = Vec::new();
        let exit = execute_with_interrupt(&cli, &AtomicBool::new(false), &mut out, &mut err);
        let err = String::from_utf8(err).unwrap();
        assert_eq!(exit, Exit::Interrupted);
        assert!(
            err.starts_with("locksim: cannot write to stdout ("),
            "{err}"
        );
        let last: u64 = err.trim_end().rsplit(' ').next().unwrap().parse().unwrap();
        assert!(last < 100, "{err}");
    }

    /// An interrupt before the first seed explores nothing, says so, and
    /// the resume command is the whole range.
    #[test]
    fn interrupt_before_the_first_seed() {
        let (exit, out, _) = exec(&["explore", "--from", "5", "--seeds", "3"], Some(0));
        assert_eq!(exit, Exit::Interrupted);
        assert!(
            out.contains("\ninterrupted: explored no seed of 5..8 under every profile: 0 runs, 0 with violations\n"),
            "{out}"
        );
        assert!(
            out.ends_with("\nresume with: locksim explore --from 5 --seeds 3\n"),
            "{out}"
        );
    }

    /// The resume command keeps every setting that is not the default, and
    /// quotes a path the shell would split.
    #[test]
    fn resume_command_keeps_the_settings() {
        let cli = Cli::try_parse_from([
            "locksim",
            "explore",
            "--seeds",
            "50",
            "--profile",
            "fenced",
            "--shrink",
            "0",
            "--format",
            "json",
            "--save",
            "my plans/it's",
            "--kinds",
            "all",
        ])
        .unwrap();
        let crate::cli::Command::Explore(args) = cli.command else {
            panic!("not explore")
        };
        assert_eq!(
            resume_command(&args, args.profile, SeedRange::new(20, 30).unwrap()),
            r"locksim explore --from 20 --seeds 30 --profile fenced --shrink 0 --format json --kinds all --save 'my plans/it'\''s'"
        );
    }

    /// `--save` into a path that cannot be a directory is refused before
    /// the sweep, as a failed write with the path and the OS's reason (it
    /// used to say "cannot read", after the whole sweep).
    #[test]
    fn save_into_an_unwritable_path_says_cannot_write() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain-file");
        std::fs::write(&file, "").unwrap();
        let target = file.join("plans");
        let target = target.to_str().unwrap();
        let (exit, out, err) = exec(&["explore", "--seeds", "1", "--save", target], None);
        assert_eq!((exit, out.as_str()), (Exit::BadInput, ""));
        assert!(
            err.starts_with(&format!("locksim: cannot write {target}: ")) && err.len() > 30,
            "{err}"
        );
    }

    /// Issue 13: `--shard K/N` jobs cover the range once between them; a
    /// shard that cannot exist is refused with exit 2.
    #[test]
    fn shards_cover_the_sweep() {
        let base = [
            "explore",
            "--seeds",
            "30",
            "--shrink",
            "0",
            "--profile",
            "redisson",
        ];
        let (_, whole, _) = exec(&base, None);
        let mut parts = String::new();
        for shard in ["1/2", "2/2"] {
            let args: Vec<&str> = base.iter().copied().chain(["--shard", shard]).collect();
            parts.push_str(&exec(&args, None).1);
        }
        assert_eq!(replays(&parts), replays(&whole));
        let args: Vec<&str> = base.iter().copied().chain(["--shard", "3/2"]).collect();
        let (exit, _, err) = exec(&args, None);
        assert_eq!(exit, Exit::BadInput, "{err}");
        assert!(err.contains("--shard 3/2"), "{err}");
    }
}
