//! The command table: every command's name, arity, flags and handler,
//! sorted by name for a binary search.
//!
//! Flags follow Redis 7.0's command table: `pubsub_ok` is what a
//! subscribed RESP2 connection may still run, `no_auth` what runs before
//! `AUTH`, `in_multi` what runs at once between `MULTI` and `EXEC` instead
//! of being queued.

use super::{
    Handler, Many, One, Spec, blocking, client, cluster, config, connection, eval, hash, info,
    keys, list, pubsub, server, string, transaction, zrange, zset,
};
use crate::RedisVersion;

const fn one(name: &'static str, arity: i32, f: One) -> Spec {
    Spec {
        name,
        arity,
        pubsub_ok: false,
        no_auth: false,
        in_multi: false,
        write: false,
        since: RedisVersion::V6_2,
        subcommands: &[],
        handler: Handler::One(f),
    }
}

const fn many(name: &'static str, arity: i32, f: Many) -> Spec {
    Spec {
        handler: Handler::Many(f),
        ..one(name, arity, connection::ping)
    }
}

const fn with_subs(spec: Spec, subcommands: &'static [(&'static str, i32)]) -> Spec {
    Spec {
        subcommands,
        ..spec
    }
}

const fn pubsub_ok(spec: Spec) -> Spec {
    Spec {
        pubsub_ok: true,
        ..spec
    }
}

const fn no_auth(spec: Spec) -> Spec {
    Spec {
        no_auth: true,
        ..spec
    }
}

/// A command Redis 7.2 added (`WAITAOF`): unknown to older servers.
const fn since_7_2(spec: Spec) -> Spec {
    Spec {
        since: RedisVersion::V7_2,
        ..spec
    }
}

/// A command Redis 7.0 flags `write`: a read-only replica refuses it
/// (`READONLY`), from a client or a script.
const fn write(spec: Spec) -> Spec {
    Spec {
        write: true,
        ..spec
    }
}

const fn in_multi(spec: Spec) -> Spec {
    Spec {
        in_multi: true,
        ..spec
    }
}

/// Sorted by name (a unit test checks it).
pub(super) const COMMANDS: &[Spec] = &[
    one("asking", 1, cluster::asking),
    no_auth(one("auth", -2, connection::auth)),
    write(many("blpop", -3, blocking::blpop)),
    write(many("brpop", -3, blocking::brpop)),
    with_subs(
        one("client", -2, client::client),
        &[
            ("getname", 2),
            ("id", 2),
            ("info", 2),
            ("list", -2),
            ("setinfo", 4),
            ("setname", 3),
        ],
    ),
    with_subs(
        one("cluster", -2, cluster::cluster),
        &[
            ("info", 2),
            ("keyslot", 3),
            ("myid", 2),
            ("nodes", 2),
            ("setslot", -4),
            ("shards", 2),
            ("slots", 2),
        ],
    ),
    with_subs(
        one("config", -2, config::config),
        &[("get", -3), ("resetstat", 2), ("set", -4)],
    ),
    one("dbsize", 1, server::dbsize),
    write(one("decr", 2, string::decr)),
    write(one("decrby", 3, string::decrby)),
    write(one("del", -2, keys::del)),
    in_multi(one("discard", 1, transaction::discard)),
    one("echo", 2, connection::echo),
    one("eval", -3, eval::eval),
    one("evalsha", -3, eval::evalsha),
    in_multi(one("exec", 1, transaction::exec)),
    one("exists", -2, keys::exists),
    write(one("expire", -3, keys::expire)),
    write(one("flushall", -1, server::flushall)),
    write(one("flushdb", -1, server::flushdb)),
    one("get", 2, string::get),
    write(one("getdel", 2, string::getdel)),
    write(one("getex", -2, string::getex)),
    write(one("hdel", -3, hash::hdel)),
    no_auth(one("hello", -1, connection::hello)),
    one("hexists", 3, hash::hexists),
    one("hget", 3, hash::hget),
    one("hgetall", 2, hash::hgetall),
    write(one("hincrby", 4, hash::hincrby)),
    write(one("hincrbyfloat", 4, hash::hincrbyfloat)),
    one("hkeys", 2, hash::hkeys),
    one("hlen", 2, hash::hlen),
    one("hmget", -3, hash::hmget),
    write(one("hmset", -4, hash::hmset)),
    write(one("hset", -4, hash::hset)),
    write(one("hsetnx", 4, hash::hsetnx)),
    one("hvals", 2, hash::hvals),
    write(one("incr", 2, string::incr)),
    write(one("incrby", 3, string::incrby)),
    write(one("incrbyfloat", 3, string::incrbyfloat)),
    one("info", -1, info::info),
    one("keys", 2, keys::keys),
    one("lindex", 3, list::lindex),
    one("llen", 2, list::llen),
    write(one("lpop", -2, list::lpop)),
    write(one("lpush", -3, list::lpush)),
    one("lrange", 4, list::lrange),
    write(one("lrem", 4, list::lrem)),
    one("mget", -2, string::mget),
    write(one("mset", -3, string::mset)),
    in_multi(one("multi", 1, transaction::multi)),
    write(one("persist", 2, keys::persist)),
    write(one("pexpire", -3, keys::pexpire)),
    pubsub_ok(one("ping", -1, connection::ping)),
    write(one("psetex", 4, string::psetex)),
    pubsub_ok(many("psubscribe", -2, pubsub::psubscribe)),
    one("pttl", 2, keys::pttl),
    one("publish", 3, pubsub::publish),
    with_subs(
        one("pubsub", -2, pubsub::pubsub),
        &[("channels", -2), ("numpat", 2), ("numsub", -2)],
    ),
    pubsub_ok(many("punsubscribe", -1, pubsub::punsubscribe)),
    in_multi(pubsub_ok(no_auth(one("quit", -1, connection::quit)))),
    one("readonly", 1, cluster::readonly),
    one("readwrite", 1, cluster::readwrite),
    write(one("rename", 3, keys::rename)),
    in_multi(pubsub_ok(no_auth(one("reset", 1, connection::reset)))),
    write(one("rpop", -2, list::rpop)),
    write(one("rpush", -3, list::rpush)),
    one("scan", -2, keys::scan),
    with_subs(
        one("script", -2, eval::script),
        &[("exists", -3), ("flush", -2), ("load", 3)],
    ),
    one("select", 2, connection::select),
    write(one("set", -3, string::set)),
    write(one("setex", 4, string::setex)),
    write(one("setnx", 3, string::setnx)),
    pubsub_ok(many("subscribe", -2, pubsub::subscribe)),
    one("time", 1, server::time),
    one("ttl", 2, keys::ttl),
    one("type", 2, keys::type_),
    pubsub_ok(many("unsubscribe", -1, pubsub::unsubscribe)),
    one("unwatch", 1, transaction::unwatch),
    many("wait", 3, crate::replication::wait),
    since_7_2(many("waitaof", 4, crate::waitaof::waitaof)),
    in_multi(one("watch", -2, transaction::watch)),
    write(one("zadd", -4, zset::zadd)),
    one("zcard", 2, zset::zcard),
    one("zcount", 4, zrange::zcount),
    write(one("zincrby", 4, zset::zincrby)),
    one("zmscore", -3, zset::zmscore),
    write(one("zpopmax", -2, zset::zpopmax)),
    write(one("zpopmin", -2, zset::zpopmin)),
    one("zrange", -4, zrange::zrange),
    one("zrangebylex", -4, zrange::zrangebylex),
    one("zrangebyscore", -4, zrange::zrangebyscore),
    one("zrank", 3, zset::zrank),
    write(one("zrem", -3, zset::zrem)),
    write(one("zremrangebyscore", 4, zrange::zremrangebyscore)),
    one("zrevrange", -4, zrange::zrevrange),
    one("zrevrangebylex", -4, zrange::zrevrangebylex),
    one("zrevrangebyscore", -4, zrange::zrevrangebyscore),
    one("zrevrank", 3, zset::zrevrank),
    one("zscore", 3, zset::zscore),
];

#[cfg(test)]
mod tests {
    use super::COMMANDS;

    /// The lookup searches the names of one first letter, which sit
    /// together only in a sorted table: an unsorted entry would make a
    /// known command "unknown". Names that are no command, or that only
    /// start like one, are unknown.
    #[test]
    fn table_is_sorted_and_lowercase() {
        for pair in COMMANDS.windows(2) {
            assert!(
                pair[0].name < pair[1].name,
                "{} before {}",
                pair[0].name,
                pair[1].name
            );
        }
        for c in COMMANDS {
            assert_eq!(c.name, c.name.to_ascii_lowercase());
            let found = super::super::lookup(c.name.to_ascii_uppercase().as_bytes());
            assert_eq!(found.map(|f| f.name), Some(c.name));
        }
        for unknown in ["", "g", "gets", "hexist", "zz", "1get", "\u{e9}", "get\0"] {
            assert!(
                super::super::lookup(unknown.as_bytes()).is_none(),
                "{unknown:?}"
            );
        }
        // Longer than any command's name (and than the lookup's buffer).
        assert!(super::super::lookup("GET".repeat(20).as_bytes()).is_none());
    }
}
