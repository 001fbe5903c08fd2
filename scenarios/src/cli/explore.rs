//! `locksim explore`: its flags, parsed into the library's
//! [`ExploreOptions`] and handed to [`explore_sweep`], which does the
//! sweep, the shrinking, the summary, the resume command and the report.

use std::path::PathBuf;

use clap::Args;
use lockcore::Release;

use crate::cli::flags::{EngineArgs, Toggles, WorkloadArgs, parse_profile};
use crate::cli::{Execute, Exit, Io};
use crate::{DEFAULT_SHRINK, ExploreOptions, InputError, PlanFormat, SweepEnd, explore_sweep};

/// Run random scenarios and fault plans, one per seed, and shrink what breaks.
#[derive(Debug, Args, PartialEq)]
pub struct ExploreArgs {
    /// How many seeds.
    #[arg(long, default_value_t = 100)]
    pub seeds: u64,
    /// The first seed.
    #[arg(long, default_value_t = 0)]
    pub from: u64,
    /// Only this release: an era name or a Redisson version (`--redisson
    /// 3.23.4`); default: every era, each seed under each.
    #[arg(long, visible_alias = "redisson", value_parser = parse_profile)]
    pub profile: Option<Release>,
    /// Switches toggled on the release.
    #[command(flatten)]
    pub toggles: Toggles,
    /// How many violations to shrink: the first defect of each invariant
    /// and profile, then the first violation of each (a defect keeps its
    /// cause while it shrinks); 0 shrinks none.
    #[arg(long, default_value_t = DEFAULT_SHRINK)]
    pub shrink: usize,
    /// How a shrunk plan is printed.
    #[arg(long, value_enum, default_value_t = PlanFormat::Toml)]
    pub format: PlanFormat,
    /// Also write each shrunk plan as a scenario file into this directory.
    #[arg(long)]
    pub save: Option<PathBuf>,
    /// Also write the findings as a report into this directory:
    /// `index.html` (one self-contained page) and `README.md`, the
    /// defects first, each with its shrunk scenario, chart, timeline and
    /// replay command, then the expected losses by cause.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Explore only part K of N of the range (`--shard 2/4`), so N CI jobs
    /// sweep it between them, each seed once.
    #[arg(long, value_parser = parse_shard)]
    pub shard: Option<(u64, u64)>,
    /// Threads to run seeds on (0: one per core). The output is the same
    /// whatever the number.
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// What the generated runs do.
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// The engine (fast or turmoil; a run the turmoil engine refuses is
    /// counted, not made; shrinking and fix attribution stay on the fast
    /// engine's runs).
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Print one JSON object (counts by cause and invariant, the defects
    /// with their shrunk scenarios) instead of the text.
    #[arg(long)]
    pub json: bool,
    /// Also print how many runs reached each declared `sometimes` point
    /// (the preconditions of Redisson's known defects, and more), with
    /// the first seed, and warn of the points fewer than 1 run in 10,000
    /// reached.
    #[arg(long)]
    pub coverage: bool,
}


impl ExploreArgs {
    /// The library's options these flags ask for (the toggles applied to
    /// the release, the engine flags resolved), or why they cannot be.
    pub fn options(&self) -> Result<ExploreOptions, InputError> {
        Ok(ExploreOptions {
            from: self.from,
            seeds: self.seeds,
            shard: self.shard,
            profile: self.toggles.apply(self.profile)?,
            workload: self.workload.workload_or(sim::Strategy::Portfolio),
            engine: self.engine.engine_or(sim::Engine::Fast)?,
            threads: self.threads,
            shrink: self.shrink,
            format: self.format,
            save: self.save.clone(),
            report: self.report.clone(),
            json: self.json,
            coverage: self.coverage,
        })
    }
}

impl Execute for ExploreArgs {
    fn execute(&self, io: &mut Io<'_>) -> Result<Exit, InputError> {
        let end = explore_sweep(&self.options()?, io.interrupt, io.out, io.err)?;
        Ok(match end {
            SweepEnd::Clean => Exit::AsExpected,
            SweepEnd::Found => Exit::Unexpected,
            SweepEnd::Interrupted => Exit::Interrupted,
        })
    }
}

fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("--shard must be K/N with 1 <= K <= N (e.g. 2/4), got '{s}'");
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let k = k.trim().parse().map_err(|_| bad())?;
    let n = n.trim().parse().map_err(|_| bad())?;
    Ok((k, n))
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::atomic::{AtomicBool, Ordering};

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
            "explore", "--strategy", "uniform",
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
            "exploring seeds 0..8 under redisson (correct usage, swarm faults): 8 runs; each violating run as it is found:"
        );
        let summary = lines
            .iter()
            .position(|l| {
                l.starts_with(
                    "explored seeds 0..8 under redisson (correct usage, swarm faults): 8 runs, ",
                )
            })
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
        let base = [
            "explore", "--strategy", "uniform",
            "--profile",
            "redisson",
            "--shrink",
            "1",
            "--misuse",
        ];
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
                "\ninterrupted: explored seeds 0..{next} of 0..12 under redisson (misuse too, swarm faults): {next} runs, 2 with violations\n"
            )),
            "{first}"
        );
        assert!(
            first.contains("\nshrinking skipped: the sweep was interrupted\n"),
            "{first}"
        );
        let resume = format!(
            "locksim explore --from {next} --seeds {} --profile redisson --shrink 1 --misuse --strategy uniform",
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

    /// `--coverage` prints, after the summary, one row per point with its
    /// runs and first seed, and the warning of the rare points; the text
    /// before it is the default output's, and `--json` lists the same
    /// counts, a run of each reached point being one of the sweep's.
    #[test]
    fn coverage_is_printed_after_the_summary_and_in_json() {
        let base = ["explore", "--seeds", "40", "--redisson", "3.23.4", "--shrink", "0"];
        let (_, plain, _) = exec(&base, None);
        let (_, text, _) = exec(&[&base[..], &["--coverage"]].concat(), None);
        let block = text
            .find("coverage under 3.23.4 (40 runs)")
            .expect("a coverage block");
        assert!(plain.starts_with(&text[..block]), "{text}");
        assert!(!plain.contains("coverage under"));
        for p in sim::Point::ALL {
            assert!(text.contains(&format!("  {:<32} ", p.name())), "{}", p.name());
        }
        assert!(
            text.contains("points reached in fewer than 1 of 10000 runs"),
            "{text}"
        );
        let (_, json, _) = exec(&[&base[..], &["--json"]].concat(), None);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let rows = v["coverage"].as_array().unwrap();
        assert_eq!(rows.len(), sim::Point::ALL.len());
        let mut reached = 0;
        for r in rows {
            let (runs, name) = (r["runs"].as_u64().unwrap(), r["point"].as_str().unwrap());
            assert!(runs <= 40);
            let line = format!("  {name:<32} {runs:>9}  ");
            assert!(text.contains(&line), "{line}");
            if runs > 0 {
                reached += 1;
                let seed = r["seed"].as_u64().unwrap();
                assert!(text.contains(&format!("{line}first seed {seed}\n")));
            } else {
                assert!(r["seed"].is_null() && r["rare"] == true);
            }
        }
        assert!(reached >= 10, "{json}");
    }

    /// `--json`: one object with the counts by cause and invariant, the
    /// defects, each with its signature, replay command and shrunk file
    /// (which expects the defect), and the upstream issues the runs are
    /// attributed to; nothing else on stdout.
    #[test]
    fn json_is_one_object_with_the_defects() {
        let args = [
            "explore",
            "--seeds",
            "60",
            "--profile",
            "redisson",
            "--json",
        ];
        let (exit, out, _) = exec(&args, None);
        assert_eq!(exit, Exit::Unexpected, "{out}");
        assert_eq!(out.lines().count(), 1, "{out}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["seeds"], "0..60");
        // Every seed's run, and the branches forked from them.
        let branches = v["branches"].as_u64().unwrap();
        assert_eq!(v["runs"].as_u64(), Some(60 + branches));
        let defects = v["defects"].as_array().unwrap();
        assert_eq!(v["by_cause"]["redisson"]["misuse"], 0);
        assert!(!defects.is_empty(), "{out}");
        for d in defects {
            assert_eq!(d["model"], "redisson");
            let replay = d["replay"].as_str().unwrap();
            assert!(replay.starts_with("locksim replay "), "{replay}");
            let signature = d["signature"].as_str().unwrap();
            assert!(signature.starts_with(d["invariant"].as_str().unwrap()));
            let shrunk = d["shrunk"].as_str().unwrap();
            assert!(shrunk.contains("defects = ["), "{shrunk}");
        }
        // Every issue a group names is in `upstreams`, which counts at
        // least the group's runs for it.
        let upstreams = v["upstreams"].as_array().unwrap();
        for d in defects {
            let named = d["fixed_by"]["upstream"]
                .as_str()
                .or(d["open_issue"]["upstream"].as_str());
            let entry = upstreams
                .iter()
                .find(|u| u["upstream"].as_str() == named && u["model"] == d["model"]);
            let entry = entry.unwrap_or_else(|| panic!("{named:?} not in {upstreams:?}"));
            assert!(entry["seed"].as_u64() <= d["seed"].as_u64(), "{entry}");
            assert!(entry["replay"].as_str().unwrap().starts_with("locksim replay "));
        }
    }

    /// An interrupt before the first seed explores nothing, says so, and
    /// the resume command is the whole range.
    #[test]
    fn interrupt_before_the_first_seed() {
        let (exit, out, _) = exec(&["explore", "--strategy", "uniform", "--from", "5", "--seeds", "3"], Some(0));
        assert_eq!(exit, Exit::Interrupted);
        assert!(
            out.contains("\ninterrupted: explored no seed of 5..8 under every profile (correct usage, swarm faults): 0 runs, 0 with violations\n"),
            "{out}"
        );
        assert!(
            out.ends_with("\nresume with: locksim explore --from 5 --seeds 3 --strategy uniform\n"),
            "{out}"
        );
    }

    /// `--save` or `--report` into a path that cannot be a directory is
    /// refused before the sweep, as a failed write with the path and the
    /// OS's reason (`--save` used to say "cannot read", after the whole
    /// sweep).
    #[test]
    fn save_or_report_into_an_unwritable_path_says_cannot_write() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain-file");
        std::fs::write(&file, "").unwrap();
        let target = file.join("plans");
        let target = target.to_str().unwrap();
        for flag in ["--save", "--report"] {
            let (exit, out, err) = exec(&["explore", "--seeds", "1", flag, target], None);
            assert_eq!((exit, out.as_str()), (Exit::BadInput, ""), "{flag}");
            assert!(
                err.starts_with(&format!("locksim: cannot write {target}: ")) && err.len() > 30,
                "{err}"
            );
        }
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

    /// `--engine turmoil`: each plan keeps the kinds the engine carries
    /// out (fenced seed 17 still breaks mutual exclusion, beyond the
    /// guarantee), the output is the same on one thread and two, and each
    /// replay command names the engine. A real Redis is refused: a seed
    /// must replay.
    #[test]
    fn explore_on_the_turmoil_engine() {
        let args = [
            "explore",
            "--from",
            "16",
            "--seeds",
            "3",
            "--redisson",
            "fenced",
        ];
        let turmoil = ["--engine", "turmoil", "--shrink", "0"];
        let (_, one, _) = exec(&[&args[..], &turmoil, &["--threads", "1"]].concat(), None);
        let (_, two, _) = exec(&[&args[..], &turmoil, &["--threads", "2"]].concat(), None);
        assert_eq!(one, two);
        assert!(one.contains("on the turmoil engine"), "{one}");
        assert!(
            one.contains("locksim replay 17 --profile fenced --engine turmoil"),
            "{one}"
        );
        let (exit, _, err) = exec(&["explore", "--seeds", "1", "--engine", "redis"], None);
        assert_eq!(exit, Exit::BadInput);
        assert!(err.contains("deterministic engine"), "{err}");
    }

    /// Issue 48 item 4: the portfolio's branches are the same on one
    /// thread and two, in the text and in `--json`; each branch's replay
    /// command names its path, the summary counts them, and `--json`
    /// gives the branch count and each defect group's first branch.
    #[test]
    fn explore_branches_the_same_on_one_thread_and_two() {
        let args = [
            "explore", "--from", "521", "--seeds", "10", "--redisson", "3.44.0", "--shrink",
            "0", "--coverage",
        ];
        let (_, one, _) = exec(&[&args[..], &["--threads", "1"]].concat(), None);
        let (_, two, _) = exec(&[&args[..], &["--threads", "2"]].concat(), None);
        assert_eq!(one, two);
        assert!(one.contains("locksim replay 525 --redisson 3.44.0 --strategy pct --branch 6501:4"), "{one}");
        assert!(one.contains(" 18 runs (8 of them branches), "), "{one}");
        let json = [&args[..], &["--json"]].concat();
        let (_, one, _) = exec(&[&json[..], &["--threads", "1"]].concat(), None);
        let (_, two, _) = exec(&[&json[..], &["--threads", "2"]].concat(), None);
        assert_eq!(one, two);
        let report: serde_json::Value = serde_json::from_str(&one).unwrap();
        assert_eq!((report["runs"].as_u64(), report["branches"].as_u64()), (Some(18), Some(8)));
    }

    /// `replay --branch`: a branch explore printed replays, and its
    /// reproduce line names the path; a bad path is a clear error, never
    /// a panic: one that does not parse, a fork past the run, a child past
    /// the budget, a branch on an engine that cannot replay one.
    #[test]
    fn replay_takes_a_branch_and_refuses_a_bad_one() {
        let replay = ["replay", "501", "--redisson", "3.44.0", "--strategy", "pct"];
        let (_, out, err) = exec(&[&replay[..], &["--branch", "27629:3"]].concat(), None);
        assert!(err.is_empty(), "{err}");
        assert!(
            out.trim_end()
                .ends_with("reproduce with: locksim replay 501 --redisson 3.44.0 --strategy pct --branch 27629:3"),
            "{out}"
        );
        let parsed = Cli::try_parse_from(
            ["locksim"].iter().chain(&replay).chain(&["--branch", "27629"]),
        );
        let e = parsed.unwrap_err().to_string();
        assert!(e.contains("bad branch `27629`: a path is AT_MS:CHILD forks"), "{e}");
        let e = Cli::try_parse_from(["locksim"].iter().chain(&replay).chain(&["--branch", "1:9"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("child 9 of the fork at 1 ms; a fork has children 0..8"), "{e}");
        let (exit, out, err) = exec(&[&replay[..], &["--branch", "999999999:0"]].concat(), None);
        assert_eq!((exit, out.as_str()), (Exit::BadInput, ""));
        assert!(
            err.starts_with("locksim: bad branch: the fork at 999999999 ms must be after 0 ms"),
            "{err}"
        );
        let turmoil = [&replay[..], &["--branch", "27629:3", "--engine", "turmoil"]].concat();
        let (exit, _, err) = exec(&turmoil, None);
        assert_eq!(exit, Exit::BadInput);
        assert!(err.contains("a branch replays on the fast engine, not turmoil"), "{err}");
    }

    /// explore's defaults: 100 seeds from 0, every profile, shrink 4, TOML.
    #[test]
    fn explore_defaults() {
        let cli = crate::cli::parse(&["explore"]).unwrap();
        assert_eq!(
            cli.command,
            crate::cli::Command::Explore(ExploreArgs {
                seeds: 100,
                from: 0,
                profile: None,
                toggles: Toggles::default(),
                shrink: 4,
                format: PlanFormat::Toml,
                save: None,
                report: None,
                shard: None,
                threads: 0,
                workload: WorkloadArgs {
                    misuse: false,
                    kinds: crate::cli::flags::Kinds::Swarm,
                    strategy: None,
                },
                engine: crate::cli::flags::EngineArgs::default(),
                json: false,
                coverage: false,
            })
        );
        let cli = crate::cli::parse(&[
            "explore",
            "--seeds",
            "5",
            "--from",
            "10",
            "--profile",
            "redisson",
            "--format",
            "json",
        ])
        .unwrap();
        let crate::cli::Command::Explore(a) = cli.command else {
            panic!("not explore")
        };
        assert_eq!(
            (a.seeds, a.from, a.profile, a.format),
            (5, 10, Some(Release::REDISSON), PlanFormat::Json)
        );
    }
}
