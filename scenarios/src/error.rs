//! Errors for bad input: unknown names, unreadable or malformed scenario
//! files, paths that cannot be written, seed ranges that cannot be explored.

use thiserror::Error;

use crate::Location;

/// Why a scenario could not be loaded or run. Every variant is the user's
/// input being wrong (the CLI exits with 2), never a bug in the simulator.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum InputError {
    /// The name is neither a built-in scenario nor a readable file.
    #[error("unknown scenario '{name}': not a built-in scenario ({known}) and no such file")]
    UnknownScenario {
        /// What was asked for.
        name: String,
        /// The built-in names, comma separated.
        known: String,
    },
    /// The file exists but could not be read.
    #[error("cannot read {path}: {reason}")]
    Unreadable {
        /// The file.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
    /// The path names a directory where a scenario file was expected.
    #[error("{path} is a directory, not a scenario file")]
    IsADirectory {
        /// The directory.
        path: String,
    },
    /// A file or directory could not be written (`--save`, `report --out`).
    #[error("cannot write {path}: {reason}")]
    Unwritable {
        /// The file or directory.
        path: String,
        /// The operating system's reason.
        reason: String,
    },
    /// `--with`/`--without` with no release to change.
    #[error(
        "--with and --without change a release: name it with --profile NAME or --redisson VERSION"
    )]
    TogglesWithoutRelease,
    /// `explore --seeds 0`: a sweep over no seed would test nothing and
    /// still look like a pass.
    #[error("--seeds 0 explores nothing: give at least 1 seed")]
    NoSeeds,
    /// `explore --from F --seeds N` with F + N past `u64::MAX`: the range
    /// would wrap or be cut short without saying so.
    #[error(
        "--from {from} --seeds {seeds} runs past the last seed: from + seeds must be at most \
         18446744073709551615, so at most {max} seeds from {from}"
    )]
    SeedRangeOverflow {
        /// The first seed.
        from: u64,
        /// How many seeds were asked for.
        seeds: u64,
        /// How many seeds fit from `from`.
        max: u64,
    },
    /// `locksim mutants` of a release with no fix in force: no mutant to
    /// make, so a score would measure nothing.
    #[error(
        "{0} has no fix in force to remove (`locksim versions --redisson {0}` marks its switches); name a later release, e.g. 4.7.0"
    )]
    NoFixes(String),
    /// The thread pool for `explore --threads` could not be made.
    #[error("cannot start the explore threads: {0}")]
    Threads(String),
    /// `explore --shard K/N` that names no shard of the range.
    #[error("--shard {shard}/{shards}: {reason}")]
    BadShard {
        /// K.
        shard: u64,
        /// N.
        shards: u64,
        /// Why (with what is accepted).
        reason: String,
    },
    /// The file is not a valid scenario: TOML syntax, an unknown field, a
    /// wrong type or a missing field.
    #[error("{origin}: {location}: {message}")]
    Malformed {
        /// The file (or `builtin:<name>`).
        origin: String,
        /// Where.
        location: Location,
        /// What is wrong (the toml crate's message).
        message: String,
    },
    /// The file parses but says something that cannot be simulated, or
    /// that would run without testing what it says (a value out of range,
    /// a fault after the horizon, a name that is not an identifier).
    #[error("{origin}: {}{message}", located(.location))]
    Invalid {
        /// The file (or `builtin:<name>`).
        origin: String,
        /// Where: the field's line (or its nearest enclosing table's, when
        /// the file leaves the field to its default) and its path; none
        /// for a spec made from a file by `--seed` or `--profile`.
        location: Option<Location>,
        /// What is wrong, with the accepted range or rule.
        message: String,
    },
    /// `locksim audit --behind-proxy` with a config that names replicas
    /// (a cluster's shards and their replicas are not modelled behind a
    /// proxy).
    #[error(
        "--behind-proxy: {0} names replicas, but a cluster behind a proxy is modelled without them yet; audit a singleServerConfig"
    )]
    ProxyWithReplicas(String),
    /// `locksim audit --behind-proxy` or `--replicated-endpoint` with a
    /// `clusterServersConfig`, which Redisson reaches in cluster mode:
    /// the flags describe a `singleServerConfig`.
    #[error(
        "{flag}: {config} is a clusterServersConfig, which Redisson reaches in cluster mode (audited as a cluster); the flag describes a singleServerConfig"
    )]
    FlagWithCluster {
        /// The flag given.
        flag: &'static str,
        /// The config file.
        config: String,
    },
    /// `locksim audit --replicated-endpoint` with a config that already
    /// names replicas, or with `--behind-proxy`.
    #[error("--replicated-endpoint: {0}")]
    ReplicatedEndpoint(String),
    /// `locksim envelope` was asked for something it cannot search.
    #[error("envelope: {0}")]
    Envelope(String),
    /// `--redis` or `--time-scale` without `--engine redis`, or a bad
    /// `--redis` value.
    #[error("{0}")]
    EngineFlags(String),
    /// `replay --branch` with a path that cannot be taken (its text, a
    /// child past the budget, a fork outside the run), or on an engine
    /// that cannot replay a branch.
    #[error("{0}")]
    Branch(String),
}

impl From<sim::BadBranch> for InputError {
    fn from(e: sim::BadBranch) -> Self {
        InputError::Branch(e.to_string())
    }
}

fn located(location: &Option<Location>) -> String {
    location
        .as_ref()
        .map_or_else(String::new, |l| format!("{l}: "))
}
