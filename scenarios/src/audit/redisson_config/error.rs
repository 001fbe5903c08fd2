//! Everything a Redisson config file can get wrong.

use lockcore::ReleaseError;
use thiserror::Error;

/// Why a Redisson config file was refused. Every variant that comes from
/// the file names its line (1-based) and, where there is one, its key.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// The text is not YAML.
    #[error("line {line}, column {column}: malformed YAML: {message}")]
    Yaml {
        /// Line of the error.
        line: usize,
        /// Column (1-based).
        column: usize,
        /// The parser's words.
        message: String,
    },
    /// The text is not JSON.
    #[error("line {line}, column {column}: malformed JSON: {message}")]
    Json {
        /// Line of the error.
        line: usize,
        /// Column (1-based).
        column: usize,
        /// The parser's words.
        message: String,
    },
    /// Nested deeper than any Redisson config (a guard for the stack).
    #[error("line {line}: nested more than {max} levels deep; a Redisson config needs a handful")]
    TooDeep {
        /// Where the limit was passed.
        line: usize,
        /// The limit.
        max: usize,
    },
    /// Not one mapping of settings at the top.
    #[error("line {line}: a Redisson config is a mapping of settings, found {found}")]
    NotAMapping {
        /// Where the document starts.
        line: usize,
        /// What was there instead.
        found: String,
    },
    /// A value of the wrong type.
    #[error("line {line}: `{key}` must be {expected}, found {found}")]
    WrongType {
        /// The key's path, e.g. `singleServerConfig.timeout`.
        key: String,
        /// Line of the key.
        line: usize,
        /// What Redisson's field takes.
        expected: String,
        /// What the file has.
        found: String,
    },
    /// A value Redisson or locksim refuses.
    #[error("line {line}: `{key}` is {value}: {why}")]
    OutOfRange {
        /// The key's path.
        key: String,
        /// Line of the key.
        line: usize,
        /// The value as written.
        value: String,
        /// What the range is.
        why: String,
    },
    /// A server block Redisson does not have at that release.
    #[error(
        "line {line}: unknown mode `{key}` for Redisson {version} (expected one of: {expected})"
    )]
    UnknownMode {
        /// The key.
        key: String,
        /// Its line.
        line: usize,
        /// The release.
        version: String,
        /// The modes it has.
        expected: String,
    },
    /// More than one server block.
    #[error(
        "line {line}: `{second}` and `{first}` (line {first_line}) both configure the servers; Redisson's Config takes exactly one mode"
    )]
    TwoModes {
        /// The first block.
        first: String,
        /// Its line.
        first_line: usize,
        /// The second block.
        second: String,
        /// Its line.
        line: usize,
    },
    /// No server block.
    #[error(
        "no server mode: the file needs one of {expected} (Redisson refuses it with \"server(s) address(es) not defined!\")"
    )]
    NoMode {
        /// The modes it could have.
        expected: String,
    },
    /// The version given with the file.
    #[error(transparent)]
    Version(#[from] ReleaseError),
}
