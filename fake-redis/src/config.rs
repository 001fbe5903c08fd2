//! `CONFIG GET/SET`: the server parameters clients read or set on connect.
//!
//! Client libraries touch a handful of parameters (ioredis and Redisson
//! read `notify-keyspace-events` and `databases`, lock libraries read
//! `maxmemory-policy`, tests set `client-output-buffer-limit`). Those are
//! kept here with Redis 7.0.15's defaults and validation texts; only
//! `requirepass` and `client-output-buffer-limit` change behaviour.

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::error::CmdError;
use crate::outbox::{Limit, OutputLimits};

/// How a parameter's value is checked on `CONFIG SET`.
#[derive(Clone, Copy)]
enum Kind {
    /// Set only at startup.
    Immutable,
    /// A byte count with an optional unit (`100mb`), stored in bytes.
    Memory,
    /// A non-negative integer.
    Int,
    /// One of these words.
    Enum(&'static [&'static str]),
    /// Any string.
    Text,
}

/// The parameters, in the order `CONFIG GET *` lists them.
const PARAMS: &[(&str, &str, Kind)] = &[
    ("databases", "16", Kind::Immutable),
    ("cluster-enabled", "no", Kind::Immutable),
    ("port", "6379", Kind::Immutable),
    ("proto-max-bulk-len", "536870912", Kind::Immutable),
    ("maxmemory", "0", Kind::Memory),
    (
        "maxmemory-policy",
        "noeviction",
        Kind::Enum(&[
            "volatile-lru",
            "volatile-lfu",
            "volatile-random",
            "volatile-ttl",
            "allkeys-lru",
            "allkeys-lfu",
            "allkeys-random",
            "noeviction",
        ]),
    ),
    ("notify-keyspace-events", "", Kind::Text),
    ("timeout", "0", Kind::Int),
    ("tcp-keepalive", "300", Kind::Int),
    ("maxclients", "10000", Kind::Int),
    ("lua-time-limit", "5000", Kind::Int),
    ("busy-reply-threshold", "5000", Kind::Int),
    ("min-replicas-to-write", "0", Kind::Int),
    ("save", "", Kind::Text),
    ("appendonly", "no", Kind::Enum(&["yes", "no"])),
    ("replica-read-only", "yes", Kind::Enum(&["yes", "no"])),
    ("slave-read-only", "yes", Kind::Enum(&["yes", "no"])),
    ("requirepass", "", Kind::Text),
    (
        "client-output-buffer-limit",
        "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
        Kind::Text,
    ),
];

/// The parameters' current values: the defaults of [`PARAMS`], and the
/// values `CONFIG SET` stored. Only the latter are kept, so an engine
/// (one per simulated run) starts without allocating a value per
/// parameter.
#[derive(Debug, Clone, Default)]
pub(crate) struct Config {
    values: BTreeMap<&'static str, String>,
    /// `requirepass`: `None` when no password is required.
    pub(crate) requirepass: Option<Bytes>,
    pub(crate) output_limits: OutputLimits,
}

fn failed(name: &str, why: &str) -> CmdError {
    CmdError::other(format!(
        "ERR CONFIG SET failed (possibly related to argument '{name}') - {why}"
    ))
}

/// Redis's memory value: digits with an optional `k/kb/m/mb/g/gb` unit.
fn memory(value: &str) -> Option<u64> {
    let lower = value.to_ascii_lowercase();
    let units: &[(&str, u64)] = &[
        ("kb", 1024),
        ("mb", 1 << 20),
        ("gb", 1 << 30),
        ("k", 1000),
        ("m", 1_000_000),
        ("g", 1_000_000_000),
        ("b", 1),
    ];
    let (digits, mul) = units
        .iter()
        .find_map(|(u, m)| lower.strip_suffix(u).map(|d| (d, *m)))
        .unwrap_or((lower.as_str(), 1));
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(mul)
}

/// `client-output-buffer-limit`'s value: `<class> <hard> <soft> <secs>`
/// groups; classes not named keep their limits.
fn output_limits(value: &str, mut limits: OutputLimits) -> Result<OutputLimits, &'static str> {
    let words: Vec<&str> = value.split_whitespace().collect();
    if !words.len().is_multiple_of(4) {
        return Err("Wrong number of arguments in buffer limit configuration.");
    }
    for group in words.chunks(4) {
        let limit = match (memory(group[1]), memory(group[2]), group[3].parse::<u64>()) {
            (Some(hard), Some(soft), Ok(soft_seconds)) => Limit {
                hard,
                soft,
                soft_seconds,
            },
            _ => {
                return Err(
                    "Error in hard, soft or soft_seconds setting in buffer limit configuration.",
                );
            }
        };
        match group[0].to_ascii_lowercase().as_str() {
            "normal" => limits.normal = limit,
            "pubsub" => limits.pubsub = limit,
            "slave" | "replica" => {}
            _ => return Err("Invalid client class specified in buffer limit configuration."),
        }
    }
    Ok(limits)
}

fn format_limits(l: &OutputLimits) -> String {
    format!(
        "normal {} {} {} slave 268435456 67108864 60 pubsub {} {} {}",
        l.normal.hard,
        l.normal.soft,
        l.normal.soft_seconds,
        l.pubsub.hard,
        l.pubsub.soft,
        l.pubsub.soft_seconds
    )
}

impl Config {
    /// Whether `appendonly` is `yes` (`INFO`'s `aof_enabled`, what
    /// `WAITAOF` needs for its local fsync).
    pub(crate) fn appendonly(&self) -> bool {
        self.values.get("appendonly").is_some_and(|v| v == "yes")
    }

    /// `(name, value)` of every parameter matching the glob `pattern`.
    pub(crate) fn get(&self, pattern: &[u8]) -> Vec<(&'static str, String)> {
        let lower = pattern.to_ascii_lowercase();
        let mut found: Vec<(&'static str, String)> = PARAMS
            .iter()
            .filter(|(name, _, _)| crate::glob::matches(&lower, name.as_bytes()))
            .map(|&(name, default, _)| {
                let value = self.values.get(name).map_or(default, String::as_str);
                (name, value.to_owned())
            })
            .collect();
        found.sort_unstable_by_key(|&(name, _)| name);
        found
    }

    /// Checks and applies one `name value` pair.
    pub(crate) fn set(&mut self, name: &[u8], value: &[u8]) -> Result<(), CmdError> {
        let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
        let Some(&(name, _, kind)) = PARAMS.iter().find(|(n, _, _)| *n == lower) else {
            return Err(CmdError::other(format!(
                "ERR Unknown option or number of arguments for CONFIG SET - '{}'",
                crate::error::printable(name)
            )));
        };
        let text = String::from_utf8_lossy(value).into_owned();
        let stored = match kind {
            Kind::Immutable => return Err(failed(name, "can't set immutable config")),
            Kind::Memory => memory(&text)
                .ok_or_else(|| failed(name, "argument must be a memory value"))?
                .to_string(),
            Kind::Int => text
                .parse::<u64>()
                .map_err(|_| failed(name, "argument couldn't be parsed into an integer"))?
                .to_string(),
            Kind::Enum(words) => {
                let word = text.to_ascii_lowercase();
                if !words.contains(&word.as_str()) {
                    return Err(failed(
                        name,
                        &format!(
                            "argument(s) must be one of the following: {}",
                            words.join(", ")
                        ),
                    ));
                }
                word
            }
            Kind::Text => text,
        };
        match name {
            "requirepass" => {
                self.requirepass = (!value.is_empty()).then(|| Bytes::copy_from_slice(value));
            }
            "client-output-buffer-limit" => {
                self.output_limits =
                    output_limits(&stored, self.output_limits).map_err(|why| failed(name, why))?;
                self.values.insert(name, format_limits(&self.output_limits));
                return Ok(());
            }
            _ => {}
        }
        self.values.insert(name, stored);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values and error texts from redis-server 7.0.15's CONFIG SET/GET.
    #[test]
    fn set_and_get_like_redis() {
        let mut c = Config::default();
        c.set(b"maxmemory", b"100mb").expect("memory");
        assert_eq!(
            c.get(b"maxmemory"),
            vec![("maxmemory", "104857600".to_owned())]
        );
        assert_eq!(
            c.set(b"maxmemory", b"abc").map_err(|e| e.to_string()),
            Err("ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value".to_owned())
        );
        assert_eq!(
            c.set(b"nonexist", b"1").map_err(|e| e.to_string()),
            Err("ERR Unknown option or number of arguments for CONFIG SET - 'nonexist'".to_owned())
        );
        c.set(b"client-output-buffer-limit", b"pubsub 1mb 512kb 5")
            .expect("limits");
        assert_eq!(
            c.get(b"client-output-buffer-limit")[0].1,
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 524288 5"
        );
        assert_eq!(c.output_limits.pubsub.hard, 1 << 20);
        assert!(c.set(b"client-output-buffer-limit", b"pubsub 1mb").is_err());
        assert!(c.get(b"nonexist").is_empty());
    }
}
