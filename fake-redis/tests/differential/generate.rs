//! The generated commands: lock scripts, the commands locksim and client
//! libraries send, good and bad arguments, and transactions.

use fake_redis::LockScript;
use proptest::prelude::*;

use crate::compare::Timing;

/// One generated command and how to compare its replies.
#[derive(Debug, Clone)]
pub(crate) struct Cmd {
    pub(crate) args: Vec<Vec<u8>>,
    pub(crate) timing: Timing,
    pub(crate) unordered: bool,
    /// Compare as a multiset (see [`same_multiset`]).
    pub(crate) any_order: bool,
    /// Wait for the clocks to tick before sending (see the module docs).
    pub(crate) settle: bool,
}

impl Cmd {
    pub(crate) fn new(words: Vec<String>) -> Cmd {
        let name = words[0].to_ascii_lowercase();
        let timing = match name.as_str() {
            "pttl" | "eval" | "evalsha" | "exec" => Timing::Millis,
            "ttl" => Timing::Seconds,
            _ => Timing::None,
        };
        let settle = (name == "expire" || name == "pexpire")
            && words.iter().skip(3).any(|w| w.eq_ignore_ascii_case("gt"));
        // EXEC may carry a KEYS or SCAN reply.
        let any_order = matches!(name.as_str(), "keys" | "scan" | "exec")
            || (name == "pubsub" && words[1].eq_ignore_ascii_case("channels"));
        Cmd {
            any_order,
            unordered: (name == "unsubscribe" || name == "punsubscribe") && words.len() == 1,
            settle,
            args: words.into_iter().map(String::into_bytes).collect(),
            timing,
        }
    }
}

pub(crate) fn pick(items: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop::sample::select(items).prop_map(str::to_owned)
}

pub(crate) const KEYS: &[&str] = &["lock", "lock2", "str", "ctr", "h", "lst", "z"];
pub(crate) const FIELDS: &[&str] = &["a:1", "b:1", "f", ""];
pub(crate) const VALUES: &[&str] = &[
    "1",
    "0",
    "-1",
    "abc",
    "9223372036854775807",
    "-9223372036854775808",
    "",
    "12",
    " 5",
    "007",
    "1.5",
    "0x10",
    "inf",
    "9007199254740993",
];
pub(crate) const LEASES: &[&str] = &[
    "30000",
    "100000",
    "20000",
    "0",
    "-5",
    "abc",
    "1.5",
    "9223372036854775807",
    "-9223372036854775808",
];
pub(crate) const SECONDS: &[&str] = &[
    "30",
    "100",
    "0",
    "-1",
    "abc",
    "9223372036854775",
    "9223372036854775807",
];
/// Values Lua's `tonumber` reads as a count no loop gets through. A
/// read-write lock's renewal and read unlock loop `for i=counter, 1, -1`
/// over every field of the hash; on a field holding one of these Redis
/// loops for ever (and answers everyone `BUSY`), where fake-redis's
/// native script answers at once. So hash writes never draw them.
const HUGE_COUNTS: &[&str] = &["9223372036854775807", "inf", "9007199254740993"];

/// `items` without [`HUGE_COUNTS`] (negative overflow is still drawn).
fn small_counts(items: &'static [&'static str]) -> impl Strategy<Value = String> {
    let small: Vec<&'static str> = items
        .iter()
        .copied()
        .filter(|v| !HUGE_COUNTS.contains(v))
        .collect();
    prop::sample::select(small).prop_map(str::to_owned)
}

pub(crate) const CHANNELS: &[&str] = &["ch", "other"];
pub(crate) const INCREMENTS: &[&str] = &[
    "1",
    "-1",
    "5",
    "9223372036854775807",
    "-9223372036854775808",
    "x",
    "007",
    "-9223372036854775809",
];
pub(crate) const EXPIRE_FLAGS: &[&str] = &["", "NX", "XX", "GT", "LT", "nx", "foo"];
pub(crate) const ANY: &[&str] = &["lock", "f", "1", "abc", "ch", "30000", "", "NX", "PX"];

/// The publish command a script is given: mostly Redisson's `PUBLISH`.
fn publish_word(upper: bool, by_sha: bool) -> String {
    match (upper, by_sha) {
        (true, _) => "PUBLISH".into(),
        (false, false) => "publish".into(),
        (false, true) => "nosuchcmd".into(),
    }
}

pub(crate) fn script_call() -> impl Strategy<Value = Cmd> {
    (
        0..LockScript::ALL.len(),
        any::<bool>(),
        any::<bool>(),
        prop_oneof![6 => Just("lock".to_owned()), 2 => Just("lock2".to_owned()), 1 => pick(KEYS)],
        prop_oneof![6 => Just("ctr".to_owned()), 1 => pick(KEYS)],
        prop_oneof![6 => pick(&["30000", "100000", "20000"]), 1 => pick(LEASES)],
        prop_oneof![6 => pick(&["a:1", "b:1"]), 1 => pick(FIELDS)],
        prop_oneof![12 => Just("ok"), 1 => prop::sample::select(&["0", "1", "2", "3", "-1", "x"][..])],
        prop::option::weighted(0.06, 0usize..3),
    )
        .prop_map(|(i, by_sha, upper, k1, k2, lease, field, numkeys, cut)| {
            let script = LockScript::ALL[i];
            let (keys, argv): (Vec<String>, Vec<String>) = match script {
                LockScript::Acquire | LockScript::AcquireLegacy | LockScript::Renew => {
                    (vec![k1], vec![lease, field])
                }
                LockScript::Unlock => (vec![k1, "ch".into()], vec!["0".into(), lease, field]),
                LockScript::ForceUnlock => (vec![k1, "ch".into()], vec!["0".into()]),
                LockScript::AcquireFenced => (vec![k1, k2], vec![lease, field]),
                // The latch shares its key with the fencing counter now and
                // then, so a latch holding a number other than 0/1 is tried.
                LockScript::UnlockLatched => (
                    vec![k1, "ch".into(), k2],
                    vec!["0".into(), lease.clone(), field, "publish".into(), lease],
                ),
                // A chunk of two locks; the second key is now and then the
                // counter (a string: the loop stops at its WRONGTYPE).
                LockScript::RenewBatch => (vec![k1, k2], vec![lease, field, "b:1".into()]),
                // The publish command as Redisson sends it, in lower case,
                // or one Redis does not know.
                LockScript::UnlockPublishArg => (
                    vec![k1, "ch".into()],
                    vec!["0".into(), lease, field, publish_word(upper, by_sha)],
                ),
                LockScript::ForceUnlockPublishArg => (
                    vec![k1, "ch".into()],
                    vec!["0".into(), publish_word(upper, by_sha)],
                ),
                // The fair, fenced and spin locks' (after the read-write
                // lock's in the enum).
                other if other >= LockScript::FairAcquireFailed => {
                    crate::generate_family::keys_and_args(
                        other,
                        k1,
                        k2,
                        lease,
                        field,
                        publish_word(upper, by_sha),
                    )
                }
                _ => read_write_call(script, k1, k2, lease, field, publish_word(upper, by_sha)),
            };
            let mut rest: Vec<String> = keys.iter().cloned().chain(argv).collect();
            if let Some(cut) = cut {
                rest.truncate(rest.len().saturating_sub(cut + 1));
            }
            let numkeys = if numkeys == "ok" {
                keys.len().min(rest.len()).to_string()
            } else {
                numkeys.to_owned()
            };
            let (name, body) = if by_sha {
                let sha = script.sha1();
                (
                    "EVALSHA",
                    if upper { sha.to_ascii_uppercase() } else { sha },
                )
            } else {
                ("EVAL", script.text().to_owned())
            };
            let mut words = vec![name.to_owned(), body, numkeys];
            words.extend(rest);
            Cmd::new(words)
        })
}

/// `KEYS` and `ARGV` of a read-write lock script, in the shapes lockcore
/// sends (`{K}`, `{K}:<field>:rwlock_timeout`, the channel, a latch): `k2`
/// is the chunk's second lock and the latch, so they are now and then a
/// string or another lock.
fn read_write_call(
    script: LockScript,
    k1: String,
    k2: String,
    lease: String,
    field: String,
    publish: String,
) -> (Vec<String>, Vec<String>) {
    let braced = |k: &str| format!("{{{k}}}");
    let timeout = format!("{}:{field}:rwlock_timeout", braced(&k1));
    let write = format!("{field}:write");
    let pairs = vec![k1.clone(), braced(&k1), k2.clone(), braced(&k2)];
    let ch = || "ch".to_owned();
    let zero = || "0".to_owned();
    match script {
        LockScript::ReadAcquireFixedLease | LockScript::ReadAcquire => {
            (vec![k1, timeout], vec![lease, field, write])
        }
        LockScript::ReadRenew => (vec![k1.clone(), braced(&k1)], vec![lease, field]),
        LockScript::ReadRenewBatchShadowed | LockScript::ReadRenewBatch => {
            (pairs, vec![lease, field, "b:1".into()])
        }
        LockScript::ReadRenewBatchOwn => (
            pairs,
            vec![
                lease,
                "2".into(),
                field,
                "b:1".into(),
                "1".into(),
                "a:1".into(),
            ],
        ),
        LockScript::ReadUnlock => (
            vec![k1.clone(), ch(), timeout, braced(&k1)],
            vec![zero(), field],
        ),
        LockScript::ReadUnlockPublishArg => (
            vec![k1.clone(), ch(), timeout, braced(&k1)],
            vec![zero(), field, publish],
        ),
        LockScript::ReadUnlockLatchedOne | LockScript::ReadUnlockLatched => (
            vec![k1.clone(), ch(), timeout, braced(&k1), k2],
            vec![zero(), field, publish, lease],
        ),
        LockScript::ReadForceUnlock | LockScript::WriteForceUnlock => {
            (vec![k1, ch()], vec![zero()])
        }
        LockScript::WriteAcquire => (vec![k1], vec![lease, write]),
        LockScript::WriteUnlock => (vec![k1, ch()], vec![zero(), lease, write]),
        LockScript::WriteUnlockPublishArg => (vec![k1, ch()], vec![zero(), lease, write, publish]),
        LockScript::WriteUnlockLatchedOne | LockScript::WriteUnlockLatched => (
            vec![k1, ch(), k2],
            vec![zero(), lease.clone(), write, publish, lease],
        ),
        // The force unlocks naming their publish command.
        _ => (vec![k1, ch()], vec![zero(), publish]),
    }
}

pub(crate) fn set_cmd() -> impl Strategy<Value = Cmd> {
    (
        pick(KEYS),
        pick(VALUES),
        prop::collection::vec(
            prop_oneof![
                pick(&["NX", "XX", "GET", "KEEPTTL", "nx", "bogus"]).prop_map(|o| vec![o]),
                pick(LEASES).prop_map(|l| vec!["PX".to_owned(), l]),
                pick(SECONDS).prop_map(|s| vec!["EX".to_owned(), s]),
                Just(vec!["PX".to_owned()]),
            ],
            0..3,
        ),
    )
        .prop_map(|(k, v, opts)| {
            let mut words = vec!["SET".to_owned(), k, v];
            words.extend(opts.into_iter().flatten());
            Cmd::new(words)
        })
}

pub(crate) fn words(parts: Vec<String>) -> Cmd {
    Cmd::new(parts.into_iter().filter(|w| w != "\u{0}skip").collect())
}

pub(crate) fn flag(f: String) -> String {
    if f.is_empty() { "\u{0}skip".into() } else { f }
}

pub(crate) fn plain_cmd() -> impl Strategy<Value = Cmd> {
    let k = || pick(KEYS);
    prop_oneof![
        k().prop_map(|k| words(vec!["GET".into(), k])),
        (k(), k()).prop_map(|(a, b)| words(vec!["DEL".into(), a, b])),
        (k(), k()).prop_map(|(a, b)| words(vec!["EXISTS".into(), a, b])),
        (k(), pick(LEASES), pick(EXPIRE_FLAGS)).prop_map(|(a, l, f)| words(vec![
            "PEXPIRE".into(),
            a,
            l,
            flag(f)
        ])),
        (k(), pick(SECONDS), pick(EXPIRE_FLAGS)).prop_map(|(a, s, f)| words(vec![
            "EXPIRE".into(),
            a,
            s,
            flag(f)
        ])),
        k().prop_map(|k| words(vec!["PTTL".into(), k])),
        k().prop_map(|k| words(vec!["TTL".into(), k])),
        (
            k(),
            pick(FIELDS),
            small_counts(VALUES),
            prop::option::of((pick(FIELDS), small_counts(VALUES)))
        )
            .prop_map(|(k, f, v, more)| {
                let mut w = vec!["HSET".into(), k, f, v];
                if let Some((f2, v2)) = more {
                    w.extend([f2, v2]);
                }
                words(w)
            }),
        (k(), pick(FIELDS)).prop_map(|(k, f)| words(vec!["HGET".into(), k, f])),
        (k(), pick(FIELDS)).prop_map(|(k, f)| words(vec!["HEXISTS".into(), k, f])),
        (k(), pick(FIELDS), small_counts(INCREMENTS)).prop_map(|(k, f, i)| words(vec![
            "HINCRBY".into(),
            k,
            f,
            i
        ])),
        (k(), pick(FIELDS), pick(FIELDS)).prop_map(|(k, f, g)| words(vec!["HDEL".into(), k, f, g])),
        k().prop_map(|k| words(vec!["HGETALL".into(), k])),
        k().prop_map(|k| words(vec!["HLEN".into(), k])),
        k().prop_map(|k| words(vec!["INCR".into(), k])),
        (pick(CHANNELS), pick(VALUES)).prop_map(|(c, m)| words(vec!["PUBLISH".into(), c, m])),
        prop::sample::select(&["ch", "other", "ch", "ch"][..]).prop_map(|c| words(vec![
            "SUBSCRIBE".into(),
            c.into(),
            "other".into()
        ])),
        prop::option::of(pick(CHANNELS)).prop_map(|c| words(vec![
            "UNSUBSCRIBE".into(),
            c.unwrap_or_else(|| "\u{0}skip".into())
        ])),
        Just(words(vec!["DBSIZE".into()])),
        prop::option::of(pick(VALUES))
            .prop_map(|m| words(vec!["PING".into(), m.unwrap_or_else(|| "\u{0}skip".into())])),
        pick(VALUES).prop_map(|m| words(vec!["ECHO".into(), m])),
        pick(&["2", "3", "4", "abc"]).prop_map(|v| words(vec!["HELLO".into(), v])),
        Just(words(vec!["RESET".into()])),
        (0..LockScript::ALL.len()).prop_map(|i| words(vec![
            "SCRIPT".into(),
            "LOAD".into(),
            LockScript::ALL[i].text().into()
        ])),
        (0..LockScript::ALL.len()).prop_map(|i| words(vec![
            "SCRIPT".into(),
            "EXISTS".into(),
            LockScript::ALL[i].sha1(),
            "abc".into()
        ])),
        (
            pick(&[
                "foo", "hgetx", "SCRIPT", "GET", "HSET", "EVALSHA", "PEXPIRE", "TTL", "HINCRBY",
                "PUBLISH", "DBSIZE", "ECHO"
            ]),
            prop::collection::vec(pick(ANY), 0..5)
        )
            .prop_map(|(name, mut rest)| {
                // `PEXPIRE k 1` would expire mid-case, at a moment the two
                // servers see differently; `-1` deletes at once on both.
                if name == "PEXPIRE" && rest.get(1).is_some_and(|ms| ms == "1") {
                    rest[1] = "-1".into();
                }
                let mut w = vec![name];
                w.extend(rest);
                words(w)
            }),
    ]
}

/// The string commands client libraries send (issue 11's list), with good
/// and bad arguments. Expiries are at least 30 s (`PSETEX k 30000`), so
/// nothing expires during a case. With [`server_cmd`]'s transactions
/// (`MULTI`/`EXEC`/`WATCH` interleave with everything else) queued
/// commands, refused ones and watched keys changed by the case's own
/// commands all occur.
pub(crate) fn string_cmd() -> impl Strategy<Value = Cmd> {
    let k = || pick(KEYS);
    prop_oneof![
        (pick(&["INCRBY", "DECRBY"]), k(), pick(INCREMENTS))
            .prop_map(|(c, k, i)| words(vec![c, k, i])),
        (
            pick(&[
                "DECR", "GETDEL", "LLEN", "TYPE", "PERSIST", "HKEYS", "HVALS"
            ]),
            k()
        )
            .prop_map(|(c, k)| words(vec![c, k])),
        (
            pick(&["flt", "fh"]),
            pick(&["1.5", "-0.25", "3", "x", "inf", "10.1", ""])
        )
            .prop_map(|(k, i)| words(vec!["INCRBYFLOAT".into(), k, i])),
        (
            pick(&["fh", "flt"]),
            pick(&["fl", "f"]),
            pick(&["1.5", "-2", "x", "0.1"])
        )
            .prop_map(|(k, f, i)| words(vec!["HINCRBYFLOAT".into(), k, f, i])),
        (
            pick(&["SETEX", "PSETEX"]),
            k(),
            pick(&["30000", "100000", "0", "-1", "x"]),
            pick(VALUES)
        )
            .prop_map(|(c, k, t, v)| words(vec![c, k, t, v])),
        (k(), pick(VALUES)).prop_map(|(k, v)| words(vec!["SETNX".into(), k, v])),
        prop::collection::vec(k(), 1..4).prop_map(|ks| {
            let mut w = vec!["MGET".to_owned()];
            w.extend(ks);
            words(w)
        }),
        (
            prop::collection::vec((k(), pick(VALUES)), 1..3),
            any::<bool>()
        )
            .prop_map(|(kv, odd)| {
                let mut w = vec!["MSET".to_owned()];
                w.extend(kv.into_iter().flat_map(|(k, v)| [k, v]));
                if odd {
                    w.pop();
                }
                words(w)
            }),
        (
            k(),
            pick(&["", "EX", "PX", "PERSIST", "EXAT", "FOO"]),
            pick(&["30000", "100000", "0", "x", ""])
        )
            .prop_map(|(k, o, t)| words(vec!["GETEX".into(), k, flag(o), flag(t)])),
    ]
}

/// The hash and list commands of issue 11's list.
pub(crate) fn hash_list_cmd() -> impl Strategy<Value = Cmd> {
    let k = || pick(KEYS);
    let n = || pick(&["0", "1", "2", "-1", "-100", "100", "x"]);
    prop_oneof![
        (k(), pick(FIELDS), small_counts(VALUES), any::<bool>()).prop_map(|(k, f, v, odd)| {
            let mut w = vec!["HMSET".into(), k, f, v];
            if odd {
                w.push("g".into());
            }
            words(w)
        }),
        (k(), pick(FIELDS), pick(FIELDS)).prop_map(|(k, f, g)| words(vec![
            "HMGET".into(),
            k,
            f,
            g
        ])),
        (k(), pick(FIELDS), small_counts(VALUES)).prop_map(|(k, f, v)| words(vec![
            "HSETNX".into(),
            k,
            f,
            v
        ])),
        (
            pick(&["LPUSH", "RPUSH"]),
            pick(&["lst", "lst", "str"]),
            prop::collection::vec(pick(VALUES), 1..4)
        )
            .prop_map(|(c, k, vs)| {
                let mut w = vec![c, k];
                w.extend(vs);
                words(w)
            }),
        (
            pick(&["LPOP", "RPOP"]),
            pick(&["lst", "nope", "str"]),
            pick(&["", "1", "2", "0", "-1", "x"])
        )
            .prop_map(|(c, k, n)| words(vec![c, k, flag(n)])),
        (pick(&["lst", "str", "nope"]), n(), n()).prop_map(|(k, a, b)| words(vec![
            "LRANGE".into(),
            k,
            a,
            b
        ])),
        // The fair lock's queue: its head and tail by LINDEX, a waiter
        // removed by LREM (issue 47).
        (pick(&["lst", "str", "nope"]), n()).prop_map(|(k, i)| words(vec!["LINDEX".into(), k, i])),
        (pick(&["lst", "str", "nope"]), n(), pick(VALUES)).prop_map(|(k, c, v)| words(vec![
            "LREM".into(),
            k,
            c,
            v
        ])),
    ]
}

/// Key, server, connection, transaction and pub/sub commands of issue 11's
/// list, and blocking pops with short timeouts.
pub(crate) fn server_cmd() -> impl Strategy<Value = Cmd> {
    let k = || pick(KEYS);
    prop_oneof![
        (k(), k()).prop_map(|(a, b)| words(vec!["RENAME".into(), a, b])),
        pick(&["*", "l*", "?tr", "[hl]*", "nomatch"]).prop_map(|p| words(vec!["KEYS".into(), p])),
        (
            pick(&["0", "x"]),
            pick(&["", "MATCH", "COUNT", "TYPE", "FOO"]),
            pick(&["*", "100", "string", "0", ""])
        )
            .prop_map(|(c, o, v)| words(vec!["SCAN".into(), c, flag(o), flag(v)])),
        pick(&["0", "1", "15", "16", "-1", "x"]).prop_map(|i| words(vec!["SELECT".into(), i])),
        pick(&["ok", "a b", "", "name-1"]).prop_map(|n| words(vec![
            "CLIENT".into(),
            "SETNAME".into(),
            n
        ])),
        Just(words(vec!["CLIENT".into(), "GETNAME".into()])),
        pick(&[
            "maxmemory",
            "maxmemory-policy",
            "databases",
            "nope",
            "appendonly"
        ])
        .prop_map(|p| words(vec!["CONFIG".into(), "GET".into(), p])),
        (
            pick(&[
                "maxmemory",
                "maxmemory-policy",
                "databases",
                "nope",
                "timeout"
            ]),
            pick(&["0", "100mb", "noeviction", "x", "allkeys-lru"])
        )
            .prop_map(|(p, v)| words(vec!["CONFIG".into(), "SET".into(), p, v])),
        pick(&["MULTI", "EXEC", "DISCARD", "UNWATCH", "MULTI", "EXEC"])
            .prop_map(|c| words(vec![c])),
        (k(), prop::option::of(k())).prop_map(|(a, b)| words(vec![
            "WATCH".into(),
            a,
            b.unwrap_or_else(|| "\u{0}skip".into())
        ])),
        prop::option::of(pick(&["c*", "o*"]))
            .prop_map(|p| words(vec!["PSUBSCRIBE".into(), p.unwrap_or_else(|| "c*".into())])),
        prop::option::of(pick(&["c*", "o*"])).prop_map(|p| words(vec![
            "PUNSUBSCRIBE".into(),
            p.unwrap_or_else(|| "\u{0}skip".into())
        ])),
        (
            pick(&["CHANNELS", "NUMSUB", "NUMPAT"]),
            pick(&["ch", "other", ""])
        )
            .prop_map(|(s, c)| words(vec!["PUBSUB".into(), s, flag(c)])),
        pick(&["x", "default x"]).prop_map(|a| {
            let mut w = vec!["AUTH".to_owned()];
            w.extend(a.split(' ').map(str::to_owned));
            words(w)
        }),
        Just(words(vec!["FLUSHDB".into()])),
        // Short timeouts: an empty list answers nil after 10 ms on both.
        (
            pick(&["BLPOP", "BRPOP"]),
            pick(&["lst", "nope", "str"]),
            pick(&["0.01", "-1", "x"])
        )
            .prop_map(|(c, k, t)| words(vec![c, k, t])),
        // No replicas: `WAIT 1 10` blocks 10 ms on both, holding back the
        // sentinel PING; `WAIT 0 ..` and negatives answer at once.
        (
            pick(&["0", "1", "-1", "x"]),
            pick(&["10", "-1", "x", "1.5"])
        )
            .prop_map(|(n, t)| words(vec!["WAIT".into(), n, t])),
    ]
}

pub(crate) fn command() -> impl Strategy<Value = Cmd> {
    prop_oneof![
        6 => script_call(),
        1 => set_cmd(),
        5 => plain_cmd(),
        2 => string_cmd(),
        2 => hash_list_cmd(),
        2 => server_cmd(),
        2 => lua_cmd(),
        3 => crate::generate_zset::zset_cmd()
    ]
}

/// Scripts that are not Redisson's, run in Lua on both servers: replies
/// of every type both ways, `redis.call` and `redis.pcall` errors, the
/// sandbox's refusals, `bit`, compile errors, and a simple lock's extend
/// and release. `math.random` is left out: its state is shared by all
/// scripts since the server started, and the two servers have run
/// different scripts before.
const SCRIPTS: &[&str] = &[
    "return 1",
    "return {1, 'two', {3}, false, redis.call('ping')}",
    "return redis.call('get', KEYS[1])",
    "return redis.pcall('incr', KEYS[1])",
    "return redis.call('incr', KEYS[1])",
    "return redis.call('hgetall', KEYS[1])",
    "return redis.call('set', KEYS[1], ARGV[1])",
    "local v = redis.call('set', KEYS[1], ARGV[1]) return v.ok",
    "return redis.status_reply('FINE')",
    "return redis.error_reply('MY err')",
    "return {err = ARGV[1]}",
    "error('boom')",
    "return x",
    "y = 1",
    "return (",
    "return redis.call('nosuch')",
    "return redis.call()",
    "return redis.call('get', {})",
    "return tonumber(ARGV[1])",
    "return 2.9",
    "return bit.bxor(5, 3)",
    "return bit.tohex(255)",
    "return cjson.encode({1, 'a/b', {k = true}, {}})",
    "return cjson.encode({[1] = 1, [3] = ARGV[1]})",
    r#"return cjson.decode('[1,"x",{"k":null}]')[2]"#,
    "return math.random(0)",
    "return #KEYS + #ARGV",
    "return redis.sha1hex(ARGV[1])",
    "return type(redis.call('exists', KEYS[1]))",
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], 30000) else return 0 end",
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end",
    "\nlocal n = redis.call('llen', KEYS[1])\nreturn redis.call('lpush', KEYS[1], n)",
    "return redis.call('zadd', KEYS[1], ARGV[1], 'm')",
    "return redis.pcall('zincrby', KEYS[1], ARGV[1], 'm')",
    "return redis.call('zrange', KEYS[1], 0, -1, 'withscores')",
    "return {redis.call('zscore', KEYS[1], 'm'), redis.call('zrank', KEYS[1], 'm')}",
    "return redis.call('zpopmin', KEYS[1], 2)",
    "return redis.call('zrangebyscore', KEYS[1], ARGV[1], '+inf', 'withscores', 'limit', 0, 2)",
];

/// `EVAL` of one of [`SCRIPTS`] on generated keys and arguments.
pub(crate) fn lua_cmd() -> impl Strategy<Value = Cmd> {
    (
        prop::sample::select(SCRIPTS),
        pick(KEYS),
        pick(VALUES),
        any::<bool>(),
    )
        .prop_map(|(script, key, arg, by_sha)| {
            let name = if by_sha { "EVALSHA" } else { "EVAL" };
            let body = if by_sha {
                fake_redis::sha1_hex(script.as_bytes())
            } else {
                script.to_owned()
            };
            words(vec![name.into(), body, "1".into(), key, arg])
        })
}

/// A case: start in RESP3?, preload the lock scripts?, the commands.
pub(crate) fn case() -> impl Strategy<Value = (bool, bool, Vec<Cmd>)> {
    (
        prop::bool::weighted(0.3),
        prop::bool::weighted(0.7),
        prop::collection::vec(command(), 1..32),
    )
}
