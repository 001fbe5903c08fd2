//! The command line's shape (clap derive).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use lockcore::{Release, Switch};

use crate::InputError;

/// Deterministic simulation of Redisson's RLock and its watchdog.
#[derive(Debug, Parser, PartialEq)]
#[command(name = "locksim", version = env!("LOCKSIM_VERSION"), about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand, PartialEq)]
pub enum Command {
    /// List the built-in scenarios, one line each.
    Scenarios,
    /// Run one scenario (a built-in name or a TOML file) and judge it.
    Run(RunArgs),
    /// Run one scenario on the fast and turmoil engines and show their
    /// verdicts and key event times side by side (exit 1 if they differ).
    Compare(CompareArgs),
    /// Run random scenarios and fault plans, one per seed, and shrink what breaks.
    Explore(ExploreArgs),
    /// Rerun one explored seed and print its timeline.
    Replay(ReplayArgs),
    /// Run every built-in scenario under every profile and write reports/.
    Report(ReportArgs),
    /// The safety envelope of a configuration: the longest pause,
    /// starvation, partition and Redis pause the lock survives, per
    /// lockWatchdogTimeout, and the takeover delay after a crash.
    Envelope(EnvelopeArgs),
    /// Measure the simulator's speed and write reports/PERFORMANCE.md.
    Bench(BenchArgs),
    /// List the Redisson behaviour switches (version, upstream issue, what
    /// changes), or the ones a release has.
    Versions(VersionsArgs),
    /// Print a shell's completion script for locksim to stdout (e.g.
    /// `locksim completions bash > ~/.local/share/bash-completion/completions/locksim`).
    Completions(CompletionsArgs),
}

/// `locksim completions`.
#[derive(Debug, Args, PartialEq)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `locksim versions`.
#[derive(Debug, Args, PartialEq)]
pub struct VersionsArgs {
    /// Mark the switches in force for this release (an era name or a
    /// Redisson version).
    #[arg(long, visible_alias = "redisson", value_parser = parse_profile)]
    pub profile: Option<Release>,
    /// Switches toggled on the release.
    #[command(flatten)]
    pub toggles: Toggles,
}

/// `locksim bench`.
#[derive(Debug, Args, PartialEq)]
pub struct BenchArgs {
    /// Where to write the figures.
    #[arg(long, default_value = "reports/PERFORMANCE.md")]
    pub out: PathBuf,
    /// A quick look (fewer, shorter batches) instead of the standard run.
    #[arg(long)]
    pub quick: bool,
    /// What to measure (its own choice, not `run`'s engine: a real Redis
    /// runs in real time, so there is no simulator speed to measure).
    #[arg(long, value_enum, default_value_t = BenchEngine::Fast)]
    pub engine: BenchEngine,
}

/// `locksim bench --engine`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BenchEngine {
    /// Every built-in scenario on the fast engine, and explore.
    Fast,
    /// The turmoil engine against a bare turmoil program with the same
    /// hosts and simulated time, in its own section of the file.
    Turmoil,
}

/// `locksim run`.
#[derive(Debug, Args, PartialEq)]
pub struct RunArgs {
    /// A built-in scenario's name, or the path of a scenario file.
    pub scenario: String,
    /// The seed (default: the scenario's own).
    #[arg(long)]
    pub seed: Option<u64>,
    /// The release: an era name or a Redisson version (`--redisson 3.23.4`);
    /// default: the scenario's own.
    #[arg(long, visible_alias = "redisson", value_parser = parse_profile)]
    pub profile: Option<Release>,
    /// Switches toggled on the release.
    #[command(flatten)]
    pub toggles: Toggles,
    /// Which engine runs it.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Print one JSON object instead of the timeline.
    #[arg(long)]
    pub json: bool,
}

/// An engine name, with the known ones in the error.
pub fn parse_engine(s: &str) -> Result<sim::Engine, String> {
    s.parse()
}

/// `--engine`, `--redis` and `--time-scale`.
#[derive(Debug, Args, PartialEq, Default)]
pub struct EngineArgs {
    /// The engine: `fast` (the default; the discrete-event simulator),
    /// `turmoil` (lockcore's async client over RESP on turmoil's simulated
    /// TCP, against fake-redis's server) or `redis` (the async client
    /// against a real redis-server, in real time; not deterministic).
    #[arg(long, value_parser = parse_engine)]
    pub engine: Option<sim::Engine>,
    /// `--engine redis`: `redis://HOST:PORT` of a Redis whose keys named
    /// like the scenario's locks may be deleted, or `spawn` (the default)
    /// to start a redis-server on a free loopback port for the run.
    #[arg(long, value_name = "URL|spawn")]
    pub redis: Option<String>,
    /// `--engine redis`: run the scenario this many times faster than
    /// written (1 to 100; default 10): a 40 s scenario takes 4 s.
    #[arg(long)]
    pub time_scale: Option<u64>,
}

impl EngineArgs {
    /// The engine these flags name (`default` when none).
    pub fn engine_or(&self, default: sim::Engine) -> Result<sim::Engine, crate::InputError> {
        let engine = self.engine.clone().unwrap_or(default);
        let sim::Engine::Redis(mut real) = engine else {
            if self.redis.is_some() || self.time_scale.is_some() {
                return Err(crate::InputError::EngineFlags(
                    "--redis and --time-scale go with --engine redis".to_owned(),
                ));
            }
            return Ok(engine);
        };
        match self.redis.as_deref() {
            None | Some("spawn") => real.target = sim::RedisTarget::Spawn,
            Some(url) if url.starts_with("redis://") => {
                real.target = sim::RedisTarget::Url(url.to_owned())
            }
            Some(other) => {
                return Err(crate::InputError::EngineFlags(format!(
                    "--redis {other}: expected redis://HOST:PORT or spawn"
                )));
            }
        }
        if let Some(scale) = self.time_scale {
            if !(1..=100).contains(&scale) {
                return Err(crate::InputError::EngineFlags(format!(
                    "--time-scale {scale}: must be between 1 and 100"
                )));
            }
            real.time_scale = scale;
        }
        Ok(sim::Engine::Redis(real))
    }
}

/// `locksim compare`.
#[derive(Debug, Args, PartialEq)]
pub struct CompareArgs {
    /// A built-in scenario's name, or the path of a scenario file.
    pub scenario: String,
    /// The seed (default: the scenario's own).
    #[arg(long)]
    pub seed: Option<u64>,
    /// The release: an era name or a Redisson version; default: the
    /// scenario's own.
    #[arg(long, visible_alias = "redisson", value_parser = parse_profile)]
    pub profile: Option<Release>,
    /// Switches toggled on the release.
    #[command(flatten)]
    pub toggles: Toggles,
    /// The engine compared with the fast one (default: turmoil).
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// `locksim explore`.
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
}

/// What generated runs do: how scripts use the lock, which faults they meet.
#[derive(Debug, Args, PartialEq, Clone, Copy)]
pub struct WorkloadArgs {
    /// Add the misuse patterns to the scripts (leases shorter than the
    /// work, forgotten unlocks, forceUnlock, a 100 ms watchdog) and drop
    /// the liveness phase.
    #[arg(long)]
    pub misuse: bool,
    /// Which fault kinds the plans draw.
    #[arg(long, value_enum, default_value_t = Kinds::Swarm)]
    pub kinds: Kinds,
}

impl WorkloadArgs {
    /// sim's workload.
    pub fn workload(self) -> sim::Workload {
        sim::Workload {
            usage: if self.misuse {
                sim::Usage::Misuse
            } else {
                sim::Usage::Correct
            },
            kinds: match self.kinds {
                Kinds::Swarm => sim::SwarmKinds::Swarm,
                Kinds::Classic => sim::SwarmKinds::Classic,
                Kinds::All => sim::SwarmKinds::All,
            },
        }
    }
}

/// Which fault kinds explored plans draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Kinds {
    /// Swarm testing: each seed enables a random subset of every kind,
    /// each struck one to three times.
    Swarm,
    /// 0-4 faults of the first eight kinds, as explore first drew them
    /// (with `--misuse`, the regression corpus's seeds keep their plans).
    Classic,
    /// Every kind, each in the plan at most once, from a stream of its own.
    All,
}

fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("--shard must be K/N with 1 <= K <= N (e.g. 2/4), got '{s}'");
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let k = k.trim().parse().map_err(|_| bad())?;
    let n = n.trim().parse().map_err(|_| bad())?;
    Ok((k, n))
}

/// How many violations `explore` shrinks unless told.
pub(crate) const DEFAULT_SHRINK: usize = 4;

/// How a shrunk plan is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlanFormat {
    /// A whole scenario file: save it and `locksim run` it.
    Toml,
    /// The fault plan alone, as JSON.
    Json,
}

/// `locksim replay`.
#[derive(Debug, Args, PartialEq)]
pub struct ReplayArgs {
    /// The explored seed.
    pub seed: u64,
    /// The release it was explored under, an era name or a Redisson
    /// version (default: drawn from the seed, as sim's generator does).
    #[arg(long, visible_alias = "redisson", value_parser = parse_profile)]
    pub profile: Option<Release>,
    /// Switches toggled on the release.
    #[command(flatten)]
    pub toggles: Toggles,
    /// What it was explored with.
    #[command(flatten)]
    pub workload: WorkloadArgs,
    /// Which engine runs it.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Print one JSON object instead of the timeline.
    #[arg(long)]
    pub json: bool,
}

/// `locksim report`.
#[derive(Debug, Args, PartialEq)]
pub struct ReportArgs {
    /// Where to write the report (default `reports`, or `reports/ENGINE`
    /// on another engine, so the committed report stays the fast
    /// engine's).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The engine.
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// `locksim envelope`.
#[derive(Debug, Args, PartialEq)]
pub struct EnvelopeArgs {
    /// The lock's release: an era name or a Redisson version.
    #[arg(long, visible_alias = "redisson", value_parser = parse_profile, default_value = "redisson")]
    pub profile: Release,
    /// Switches toggled on the release.
    #[command(flatten)]
    pub toggles: Toggles,
    /// The lockWatchdogTimeout values to search, in ms, comma separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1000,2000,5000,10000,20000,30000,60000,120000"
    )]
    pub watchdog_ms: Vec<u64>,
    /// One-way latency between each client and Redis, `MIN-MAX` in ms.
    #[arg(long, value_parser = parse_latency, default_value = "1-5")]
    pub latency: (u64, u64),
    /// How many seeds each point is taken over (the worst counts).
    #[arg(long, default_value_t = 2)]
    pub seeds: u64,
    /// How many phases of one renewal period are tried.
    #[arg(long, default_value_t = 8)]
    pub phases: u64,
    /// Print the envelope as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write the chart (SVG) to this file.
    #[arg(long)]
    pub chart: Option<PathBuf>,
}

fn parse_latency(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s.split_once('-').unwrap_or((s, s));
    let num = |t: &str| {
        t.trim()
            .parse::<u64>()
            .map_err(|_| format!("latency must be `MIN-MAX` in ms (e.g. 1-5), got '{s}'"))
    };
    Ok((num(a)?, num(b)?))
}

fn parse_profile(s: &str) -> Result<Release, String> {
    s.parse::<Release>().map_err(|e| e.to_string())
}

fn parse_switch(s: &str) -> Result<Switch, String> {
    s.parse::<Switch>().map_err(|e| e.to_string())
}

/// `--with NAME` / `--without NAME`: a what-if on the release chosen with
/// `--profile` or `--redisson`.
#[derive(Debug, Args, PartialEq, Default)]
pub struct Toggles {
    /// Turn a behaviour switch on (`locksim versions` lists them); needs
    /// --profile or --redisson.
    #[arg(long = "with", value_parser = parse_switch)]
    pub with: Vec<Switch>,
    /// Turn a behaviour switch off; needs --profile or --redisson.
    #[arg(long = "without", value_parser = parse_switch)]
    pub without: Vec<Switch>,
}

impl Toggles {
    /// The release with the toggles applied, or why they cannot be.
    pub fn apply(&self, release: Option<Release>) -> Result<Option<Release>, InputError> {
        if self.with.is_empty() && self.without.is_empty() {
            return Ok(release);
        }
        let Some(release) = release else {
            return Err(InputError::TogglesWithoutRelease);
        };
        let release = self.with.iter().fold(release, |r, &w| r.with(w));
        Ok(Some(
            self.without.iter().fold(release, |r, &w| r.without(w)),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("locksim").chain(args.iter().copied()))
    }

    /// `run` takes a name, a seed, a profile and --json; defaults leave the
    /// scenario's own seed and profile in place.
    #[test]
    fn run_arguments() {
        let cli = parse(&[
            "run",
            "stw-pause",
            "--seed",
            "42",
            "--profile",
            "fenced",
            "--engine",
            "turmoil",
            "--json",
        ])
        .unwrap();
        assert_eq!(
            cli.command,
            Command::Run(RunArgs {
                scenario: "stw-pause".into(),
                seed: Some(42),
                profile: Some(Release::FENCED),
                toggles: Toggles::default(),
                engine: EngineArgs {
                    engine: Some(sim::Engine::Turmoil),
                    ..Default::default()
                },
                json: true,
            })
        );
        let cli = parse(&["run", "x.toml"]).unwrap();
        assert_eq!(
            cli.command,
            Command::Run(RunArgs {
                scenario: "x.toml".into(),
                seed: None,
                profile: None,
                toggles: Toggles::default(),
                engine: EngineArgs::default(),
                json: false,
            })
        );
    }

    /// `bench` stays on the fast engine unless told; `--engine turmoil`
    /// selects the turmoil benchmark.
    #[test]
    fn bench_arguments() {
        let bench = |args: &[&str]| match parse(args).unwrap().command {
            Command::Bench(b) => b,
            other => panic!("{other:?}"),
        };
        let plain = bench(&["bench"]);
        assert_eq!(plain.engine, BenchEngine::Fast);
        assert!(!plain.quick);
        let turmoil = bench(&["bench", "--engine", "turmoil", "--quick"]);
        assert_eq!(
            turmoil,
            BenchArgs {
                out: "reports/PERFORMANCE.md".into(),
                quick: true,
                engine: BenchEngine::Turmoil,
            }
        );
        let err = parse(&["bench", "--engine", "redis"]).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("fast, turmoil"), "{err}");
    }

    /// An unknown engine is a usage error naming the engines.
    #[test]
    fn unknown_engine_is_a_usage_error() {
        let err = parse(&["run", "stw-pause", "--engine", "postgres"]).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().contains("fast, turmoil and redis"), "{err}");
    }

    /// An unknown profile is a usage error (exit code 2) whose message
    /// lists the valid profiles.
    #[test]
    fn unknown_profile_is_a_usage_error() {
        let err = parse(&["run", "stw-pause", "--profile", "redis"]).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        let text = err.to_string();
        assert!(
            text.contains("unknown release 'redis'")
                && text.contains("redisson-batched")
                && text.contains("3.0.0 to 4.7.0"),
            "{text}"
        );
    }

    /// A seed that is not a number, and a missing scenario, are usage errors.
    #[test]
    fn bad_seed_and_missing_scenario() {
        assert_eq!(
            parse(&["run", "stw-pause", "--seed", "abc"])
                .unwrap_err()
                .exit_code(),
            2
        );
        assert_eq!(parse(&["run"]).unwrap_err().exit_code(), 2);
        assert_eq!(parse(&["replay", "-1"]).unwrap_err().exit_code(), 2);
    }

    /// explore's defaults: 100 seeds from 0, every profile, shrink 4, TOML.
    #[test]
    fn explore_defaults() {
        let cli = parse(&["explore"]).unwrap();
        assert_eq!(
            cli.command,
            Command::Explore(ExploreArgs {
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
                    kinds: Kinds::Swarm,
                },
                engine: EngineArgs::default(),
                json: false,
            })
        );
        let cli = parse(&[
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
        let Command::Explore(a) = cli.command else {
            panic!("not explore")
        };
        assert_eq!(
            (a.seeds, a.from, a.profile, a.format),
            (5, 10, Some(Release::REDISSON), PlanFormat::Json)
        );
    }

    /// replay and report parse their arguments.
    #[test]
    fn replay_and_report() {
        let cli = parse(&["replay", "17", "--profile", "redisson-legacy"]).unwrap();
        assert_eq!(
            cli.command,
            Command::Replay(ReplayArgs {
                seed: 17,
                profile: Some(Release::LEGACY),
                toggles: Toggles::default(),
                workload: WorkloadArgs {
                    misuse: false,
                    kinds: Kinds::Swarm,
                },
                engine: EngineArgs::default(),
                json: false,
            })
        );
        let cli = parse(&["replay", "17", "--misuse", "--kinds", "all"]).unwrap();
        let Command::Replay(a) = cli.command else {
            panic!("not replay")
        };
        assert_eq!(
            a.workload.workload(),
            sim::Workload {
                usage: sim::Usage::Misuse,
                kinds: sim::SwarmKinds::All
            }
        );
        let cli = parse(&["report", "--out", "/tmp/r"]).unwrap();
        assert_eq!(
            cli.command,
            Command::Report(ReportArgs {
                out: Some("/tmp/r".into()),
                engine: EngineArgs::default(),
            })
        );
        assert_eq!(parse(&["scenarios"]).unwrap().command, Command::Scenarios);
    }
}
