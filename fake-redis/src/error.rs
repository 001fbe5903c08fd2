//! Command errors, each displaying Redis 7's exact wire text.

use thiserror::Error;

/// Why a command failed. `Display` gives the exact text Redis 7.0 writes
/// after the leading `-`, so a test can compare it with a real server.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CmdError {
    /// The key holds a value of another type.
    #[error("WRONGTYPE Operation against a key holding the wrong kind of value")]
    WrongType,
    /// An argument that must be a 64-bit integer is not one.
    #[error("ERR value is not an integer or out of range")]
    NotInteger,
    /// `INCR`/`HINCRBY` would leave the 64-bit range.
    #[error("ERR increment or decrement would overflow")]
    Overflow,
    /// `HINCRBY` on a field whose value is not an integer.
    #[error("ERR hash value is not an integer")]
    HashValueNotInteger,
    /// A sorted-set score (or increment) that is not a float.
    #[error("ERR value is not a valid float")]
    NotFloat,
    /// A score range bound that is not a float.
    #[error("ERR min or max is not a float")]
    RangeNotFloat,
    /// A lex range bound that does not start with `[`, `(`, or is not
    /// `-` or `+`.
    #[error("ERR min or max not valid string range item")]
    RangeNotLex,
    /// `ZINCRBY` (or `ZADD INCR`) adding `-inf` to `inf`.
    #[error("ERR resulting score is not a number (NaN)")]
    ScoreNaN,
    /// A count that must be zero or more (`ZPOPMIN key count`).
    #[error("ERR value is out of range, must be positive")]
    NotPositive,
    /// Options that do not parse.
    #[error("ERR syntax error")]
    Syntax,
    /// Wrong argument count for the command (its lowercase full name).
    #[error("ERR wrong number of arguments for '{0}' command")]
    WrongArity(String),
    /// An expiry that is not positive or overflows (the command's name).
    #[error("ERR invalid expire time in '{0}' command")]
    InvalidExpire(&'static str),
    /// Any other error, as its full wire text.
    #[error("{0}")]
    Other(String),
}

impl CmdError {
    /// An error whose wire text is `text`.
    pub fn other(text: impl Into<String>) -> Self {
        CmdError::Other(text.into())
    }
}

/// Text from client bytes for an error reply: lossy UTF-8, and CR/LF turned
/// into spaces as Redis's `addReplyErrorFormat` does, so the reply stays one
/// protocol line.
pub(crate) fn printable(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .chars()
        .map(|c| if c == '\r' || c == '\n' { ' ' } else { c })
        .collect()
}
