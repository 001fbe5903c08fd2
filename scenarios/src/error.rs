//! Errors for bad input: unknown names, unreadable or malformed scenario files.

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
    /// The file parses but says something that cannot be simulated.
    #[error("{origin}: {message}")]
    Invalid {
        /// The file (or `builtin:<name>`).
        origin: String,
        /// What is wrong.
        message: String,
    },
    /// An unknown profile name.
    #[error(
        "unknown profile '{0}' (expected one of: redisson-legacy, redisson, redisson-batched, fenced)"
    )]
    UnknownProfile(String),
}
