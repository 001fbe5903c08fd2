//! Where a command's keys are among its arguments, as Redis 7.0's
//! command table gives them (`first`, `last`, `step` of its key specs;
//! `EVAL`/`EVALSHA` count theirs in `numkeys`). Cluster routing reads it:
//! a command with no keys is served by any node.

use bytes::Bytes;

/// A command's key positions: keys at `first`, `first + step`, ... up to
/// `last` (negative: counted from the end, `-1` the last argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Keys {
    /// No keys (`PING`, `PUBLISH`: a channel is no key, `KEYS`).
    None,
    Range {
        first: usize,
        last: isize,
        step: usize,
    },
    /// `numkeys` at argument 2, the keys after it (`EVAL`, `EVALSHA`).
    Counted,
}

/// The key specs of the commands fake-redis knows, from Redis 7.0's
/// `src/commands/*.json` (`begin_search` index, `find_keys` range).
fn keys_of(name: &str) -> Keys {
    const ONE: Keys = Keys::Range {
        first: 1,
        last: 1,
        step: 1,
    };
    const ALL: Keys = Keys::Range {
        first: 1,
        last: -1,
        step: 1,
    };
    match name {
        "decr" | "decrby" | "expire" | "get" | "getdel" | "getex" | "hdel" | "hexists" | "hget"
        | "hgetall" | "hincrby" | "hincrbyfloat" | "hkeys" | "hlen" | "hmget" | "hmset"
        | "hset" | "hsetnx" | "hvals" | "incr" | "incrby" | "incrbyfloat" | "llen" | "lpop"
        | "lindex" | "lpush" | "lrange" | "lrem" | "persist" | "pexpire" | "psetex" | "pttl"
        | "rpop" | "rpush" | "set" | "setex" | "setnx" | "ttl" | "type" | "zadd" | "zcard"
        | "zcount" | "zincrby" | "zmscore" | "zpopmax" | "zpopmin" | "zrange" | "zrangebylex"
        | "zrangebyscore" | "zrank" | "zrem" | "zremrangebyscore" | "zrevrange"
        | "zrevrangebylex" | "zrevrangebyscore" | "zrevrank" | "zscore" => ONE,
        "del" | "exists" | "mget" | "watch" => ALL,
        "mset" => Keys::Range {
            first: 1,
            last: -1,
            step: 2,
        },
        "rename" => Keys::Range {
            first: 1,
            last: 2,
            step: 1,
        },
        "blpop" | "brpop" => Keys::Range {
            first: 1,
            last: -2,
            step: 1,
        },
        "eval" | "evalsha" => Keys::Counted,
        _ => Keys::None,
    }
}

/// The commands without keys: with the names [`keys_of`] lists, every
/// command of the table (a unit test checks it, so a new command cannot
/// be routed as keyless by oversight).
#[cfg(test)]
const KEYLESS: &[&str] = &[
    "asking",
    "auth",
    "client",
    "cluster",
    "config",
    "dbsize",
    "discard",
    "echo",
    "exec",
    "flushall",
    "flushdb",
    "hello",
    "info",
    "keys",
    "multi",
    "ping",
    "psubscribe",
    "publish",
    "pubsub",
    "punsubscribe",
    "quit",
    "readonly",
    "readwrite",
    "reset",
    "scan",
    "script",
    "select",
    "subscribe",
    "time",
    "unsubscribe",
    "unwatch",
    "wait",
    "waitaof",
];

/// Whether the command `name` declares keys at all (Redis routes only
/// those, and `EXEC`).
pub(crate) fn has_keys(name: &str) -> bool {
    keys_of(name) != Keys::None
}

/// The indexes of `args`' keys for the command `name` (Redis's
/// `getKeysFromCommand`). A malformed `numkeys` gives none, as
/// `evalGetKeys` does: the command then fails on its own.
pub(crate) fn key_positions(name: &str, args: &[Bytes]) -> Vec<usize> {
    let argc = args.len();
    match keys_of(name) {
        Keys::None => Vec::new(),
        Keys::Range { first, last, step } => {
            let last = if last < 0 {
                argc.checked_sub(last.unsigned_abs())
            } else {
                Some(last.unsigned_abs())
            };
            match last {
                Some(last) if first <= last && last < argc => {
                    (first..=last).step_by(step).collect()
                }
                _ => Vec::new(),
            }
        }
        Keys::Counted => {
            let n = args
                .get(2)
                .and_then(|a| crate::number::parse_i64(a))
                .and_then(|n| usize::try_from(n).ok());
            match n {
                Some(n) if n <= argc.saturating_sub(3) => (3..3 + n).collect(),
                _ => Vec::new(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Bytes> {
        s.split(' ')
            .map(|w| Bytes::copy_from_slice(w.as_bytes()))
            .collect()
    }

    /// The positions Redis's `COMMAND GETKEYS` gives for each shape.
    #[test]
    fn positions_follow_redis_key_specs() {
        assert_eq!(key_positions("get", &words("GET a")), vec![1]);
        assert_eq!(key_positions("mset", &words("MSET a 1 b 2")), vec![1, 3]);
        assert_eq!(key_positions("del", &words("DEL a b c")), vec![1, 2, 3]);
        assert_eq!(key_positions("rename", &words("RENAME a b")), vec![1, 2]);
        assert_eq!(key_positions("blpop", &words("BLPOP a b 0")), vec![1, 2]);
        assert_eq!(key_positions("eval", &words("EVAL s 2 a b x")), vec![3, 4]);
        assert_eq!(
            key_positions("eval", &words("EVAL s 0 x")),
            Vec::<usize>::new()
        );
        assert!(key_positions("eval", &words("EVAL s 3 a b")).is_empty());
        assert!(key_positions("eval", &words("EVAL s -1 a")).is_empty());
        assert!(key_positions("publish", &words("PUBLISH ch m")).is_empty());
        assert!(has_keys("evalsha") && !has_keys("keys") && !has_keys("ping"));
    }

    /// Every command of the table has its keys here or is known keyless.
    #[test]
    fn every_command_is_classified() {
        for spec in super::super::table::COMMANDS {
            let keyed = has_keys(spec.name);
            let keyless = KEYLESS.contains(&spec.name);
            assert!(
                keyed != keyless,
                "{}: keyed {keyed}, keyless {keyless}",
                spec.name
            );
        }
    }
}
