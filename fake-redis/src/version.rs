//! The Redis release a server answers as, for what Redisson's lock path
//! reads of it.
//!
//! From 3.46.0 Redisson probes `WAIT 0 0` and `WAITAOF 0 0 0` and decides
//! from the error texts which of the two the server has, so three things
//! differ between the releases modelled here:
//!
//! - whether `WAITAOF` exists (Redis 7.2.0, `src/commands/waitaof.json`'s
//!   `"since": "7.2.0"`);
//! - the text of `ERR unknown command`: Redis 6.2 quotes the name and each
//!   argument in backticks and ends each argument with `, `
//!   (`src/server.c` of 6.2.14, `processCommand`, lines 4031-4033), 7.0
//!   and later in single quotes with a trailing space (`src/server.c` of
//!   7.0.15, line 3628; of 7.2.4, lines 3771-3774);
//! - the version `INFO` and `HELLO` report.
//!
//! Commands a 6.2 server lacks and the lock never sends (`EVAL_RO`,
//! `EXPIRE ... GT`, ...) still answer under 6.2: the version changes what
//! the lock path can see, not the whole command table.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// A Redis release line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum RedisVersion {
    /// Redis 6.2: no `WAITAOF`; backticked unknown-command text.
    V6_2,
    /// Redis 7.0 (and 7.1): no `WAITAOF`; single-quoted text. What
    /// fake-redis has always been, and the installed `redis-server`.
    #[default]
    V7_0,
    /// Redis 7.2 and later: `WAITAOF`.
    V7_2,
}

/// A version name that is not one of [`RedisVersion::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown Redis version '{0}': expected one of 6.2, 7.0, 7.2")]
pub struct UnknownVersion(pub String);

impl RedisVersion {
    /// Every modelled release line, oldest first.
    pub const ALL: [RedisVersion; 3] = [RedisVersion::V6_2, RedisVersion::V7_0, RedisVersion::V7_2];

    /// Its short name: `6.2`, `7.0`, `7.2`.
    pub fn name(self) -> &'static str {
        match self {
            RedisVersion::V6_2 => "6.2",
            RedisVersion::V7_0 => "7.0",
            RedisVersion::V7_2 => "7.2",
        }
    }

    /// The release whose texts are modelled, as `INFO` and `HELLO` report
    /// it.
    pub fn full(self) -> &'static str {
        match self {
            RedisVersion::V6_2 => "6.2.14",
            RedisVersion::V7_0 => "7.0.15",
            RedisVersion::V7_2 => "7.2.4",
        }
    }

    /// Whether it has `WAIT` (every release since Redis 3.0, so every one
    /// modelled: a client that reads it as missing misread it).
    pub fn has_wait(self) -> bool {
        true
    }

    /// Whether it has `WAITAOF`.
    pub fn has_waitaof(self) -> bool {
        self >= RedisVersion::V7_2
    }

    /// Whether its replicas hold the primary's script cache, so a
    /// promoted replica answers `EVALSHA` of a script loaded on the old
    /// primary. Redis 6.2 propagates `SCRIPT LOAD` to replicas and the
    /// AOF (`scriptCommand`'s `forceCommandPropagation`), rewrites an
    /// `EVALSHA` a replica may lack into `SCRIPT LOAD` or `EVAL`
    /// (`evalGenericCommand`), and ships the cache in a full sync's RDB
    /// (`rdbSaveRio`'s `lua` aux fields); read at tag 6.2.14. Redis 7.0
    /// replicates a script's effects only and propagates neither (its
    /// `eval.c`), so a replica promoted by a failover meets its first
    /// `EVALSHA` with `NOSCRIPT`, which Redisson 3.46.0-3.47.x's batched
    /// path failed to handle (commit 32df429bd).
    pub fn replicates_scripts(self) -> bool {
        self < RedisVersion::V7_0
    }

    /// The reply to a script (SHA1 `sha`) whose line `line` raised
    /// `text`: 7.0 and later add `script: <sha>, on @user_script:<line>.`.
    /// 6.2 wraps a replica's refusal of the script's write (the
    /// demoted primary's, under a switchover) in `Error running script`,
    /// its error handler's position and `luaPushError`'s, so it no longer
    /// begins `READONLY` and Redisson reads it as a plain error, not a
    /// `RedisReadonlyException` it retries (`scripting.c`'s
    /// `luaRedisGenericCommand`, `luaPushError` and `evalGenericCommand`
    /// at tag 6.2.14; the same text is quoted from a 6.2 server in
    /// spring-data-redis #3042). 6.2's other script errors are given 7.0's
    /// text: no lock path Redisson parses reads them.
    pub(crate) fn script_error(self, text: &str, sha: &str, line: impl fmt::Display) -> String {
        match self {
            RedisVersion::V6_2 if text.starts_with("READONLY ") => format!(
                "ERR Error running script (call to f_{sha}): @user_script:{line}: @user_script: {line}: -{text}"
            ),
            _ => format!("{text} script: {sha}, on @user_script:{line}."),
        }
    }

    /// The `ERR unknown command` reply to `name` with `args` (printable
    /// forms), as this release words it: up to 128 bytes of arguments,
    /// each cut to the room left.
    pub(crate) fn unknown_command(self, name: &str, args: &[String]) -> String {
        let (open, close) = match self {
            RedisVersion::V6_2 => ("`", "`, "),
            _ => ("'", "' "),
        };
        let mut shown = String::new();
        for text in args {
            if shown.len() >= 128 {
                break;
            }
            let room = 128 - shown.len();
            let cut: String = text
                .chars()
                .scan(0, |n, c| {
                    *n += c.len_utf8();
                    (*n <= room).then_some(c)
                })
                .collect();
            shown.push_str(open);
            shown.push_str(&cut);
            shown.push_str(close);
        }
        match self {
            // 6.2 prints the name whole (`%s`), in backticks.
            RedisVersion::V6_2 => {
                format!("ERR unknown command `{name}`, with args beginning with: {shown}")
            }
            // 7.0 and later cut it at 128 (`%.128s`).
            _ => {
                let name: String = name.chars().take(128).collect();
                format!("ERR unknown command '{name}', with args beginning with: {shown}")
            }
        }
    }
}

impl fmt::Display for RedisVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RedisVersion {
    type Err = UnknownVersion;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RedisVersion::ALL
            .into_iter()
            .find(|v| v.name() == s)
            .ok_or_else(|| UnknownVersion(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| (*s).to_owned()).collect()
    }

    /// The probe's `WAITAOF 0 0 0` refused by each release without it:
    /// 6.2's backticks and commas (`src/server.c` of 6.2.14, lines
    /// 4031-4033: "`%.*s`, " per argument, "unknown command `%s`, with
    /// args beginning with: %s"), 7.0's quotes (checked against
    /// redis-server 7.0.15 in `tests/differential/version.rs`). These are
    /// the texts Redisson 3.46.0 to 3.51.x misread (#6579, #6618).
    #[test]
    fn each_release_words_the_unknown_command_its_way() {
        let args = words(&["0", "0", "0"]);
        assert_eq!(
            RedisVersion::V6_2.unknown_command("WAITAOF", &args),
            "ERR unknown command `WAITAOF`, with args beginning with: `0`, `0`, `0`, "
        );
        assert_eq!(
            RedisVersion::V7_0.unknown_command("WAITAOF", &args),
            "ERR unknown command 'WAITAOF', with args beginning with: '0' '0' '0' "
        );
        assert_eq!(
            RedisVersion::V7_2.unknown_command("foo", &[]),
            "ERR unknown command 'foo', with args beginning with: "
        );
        // The 128-byte budget counts the quotes and separators.
        let long = "x".repeat(200);
        let text = RedisVersion::V6_2.unknown_command("f", &words(&[&long, "y"]));
        assert!(
            text.ends_with(&format!("`{}`, ", "x".repeat(128))),
            "{text}"
        );
    }

    /// Names parse both ways; anything else is refused with the choices.
    #[test]
    fn versions_parse_by_name() {
        for v in RedisVersion::ALL {
            assert_eq!(v.name().parse::<RedisVersion>(), Ok(v));
        }
        assert_eq!(
            "6.0".parse::<RedisVersion>().unwrap_err().to_string(),
            "unknown Redis version '6.0': expected one of 6.2, 7.0, 7.2"
        );
        assert!(!RedisVersion::V7_0.has_waitaof());
        assert!(RedisVersion::V7_2.has_waitaof());
    }
}
