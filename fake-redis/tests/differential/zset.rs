//! Sorted sets, case by case (issue 47): every command fake-redis has for
//! them, their options, errors and edge cases, and scripts calling them,
//! sent to both servers in RESP2 and RESP3. The generated cases
//! (`generate_zset::zset_cmd`) mix the same commands at random with
//! everything else; these pin the cases a random draw may miss.

use crate::generate::{Cmd, words};

/// Splits a line into words; `''` is the empty word.
fn line(text: &str) -> Cmd {
    words(
        text.split(' ')
            .map(|w| {
                if w == "''" {
                    String::new()
                } else {
                    w.to_owned()
                }
            })
            .collect(),
    )
}

/// A script as one `EVAL` with one key.
fn eval(script: &str, key: &str, argv: &[&str]) -> Cmd {
    let mut w = vec!["EVAL".to_owned(), script.to_owned(), "1".into(), key.into()];
    w.extend(argv.iter().map(|a| (*a).to_owned()));
    words(w)
}

/// ZADD's flags, its option errors, scores Redis prints in full
/// (`0.1`), infinities, signed zero, and the NaN of `inf + -inf`.
const ADD: &[&str] = &[
    "ZADD z 1 a 1.5 b inf c -inf d 0.1 e 1e20 f 1e-5 g 1e16 h 1e17 i",
    "ZRANGE z 0 -1 WITHSCORES",
    "ZADD z 1 a",
    "ZADD z CH 2 a 3 new",
    "ZADD z NX 5 a 6 n2",
    "ZADD z XX 7 a 8 n3",
    "ZADD z XX CH 7 a 9 b",
    "ZADD z GT 1 a",
    "ZADD z GT CH 100 a",
    "ZADD z LT CH 100 a 0 b",
    "ZADD z XX GT CH 200 a 300 missing",
    "ZADD z NX XX 1 a",
    "ZADD z GT LT 1 a",
    "ZADD z NX GT 1 a",
    "ZADD z nx lt 1 a",
    "ZADD z INCR 1 a 2 b",
    "ZADD z INCR 2.5 a",
    "ZADD z INCR NX 1 a",
    "ZADD z INCR XX 1 nobody",
    "ZADD z INCR GT -1 a",
    "ZADD z INCR -0 zero",
    "ZADD z -0 negzero 0 poszero",
    "ZADD z nx xx",
    "ZADD z 1",
    "ZADD z 1 a 2",
    "ZADD z x a",
    "ZADD z 1 a nan b",
    "ZADD z 1e400 a",
    "ZADD z 1e-400 a",
    "ZADD z '' a",
    "ZADD z 0x10 hex 1e-310 tiny 123456789012345678 big",
    "ZSCORE z tiny",
    "ZADD z FOO 1 a",
    "ZINCRBY z 1 a",
    "ZINCRBY z -inf c",
    "ZINCRBY z x a",
    "ZINCRBY z nx a",
    "ZINCRBY z 5 fresh",
    "ZINCRBY nokey 5 fresh",
    "ZRANGE z 0 -1 WITHSCORES",
    "ZCARD z",
    "ZADD nokey XX 1 a",
    "EXISTS nokey",
    "ZADD nokey XX INCR 1 a",
];

/// ZREM, ZSCORE, ZMSCORE, ZCARD, ZRANK, ZREVRANK, ZPOPMIN, ZPOPMAX, and a
/// set deleted with its last member.
const MEMBERS: &[&str] = &[
    "ZADD z 1 b 1 a 1 c 2 d -1 e",
    "ZRANGE z 0 -1",
    "ZSCORE z a",
    "ZSCORE z nope",
    "ZSCORE nokey a",
    "ZMSCORE z a nope d",
    "ZMSCORE nokey a b",
    "ZCARD nokey",
    "ZRANK z a",
    "ZRANK z e",
    "ZRANK z nope",
    "ZRANK nokey a",
    "ZREVRANK z a",
    "ZREVRANK z d",
    "ZREM z a nope",
    "ZREM z nope",
    "ZREM nokey a",
    "ZPOPMIN z",
    "ZPOPMAX z",
    "ZPOPMIN z 0",
    "ZPOPMIN z 1",
    "ZPOPMAX z 5",
    "EXISTS z",
    "ZPOPMIN z",
    "ZPOPMIN z 3",
    "ZPOPMIN z -1",
    "ZPOPMIN z x",
    "ZPOPMIN z 1 2",
    "ZADD z 1 a 2 b",
    "ZREM z a b c",
    "TYPE z",
    "EXISTS z",
    "ZADD z 3 a",
    "TYPE z",
];

/// The ZRANGE family: ranks, scores with `(` and infinities, LIMIT with
/// negative offsets and counts, REV, BYLEX, WITHSCORES, and the option
/// errors in Redis's order.
const RANGES: &[&str] = &[
    "ZADD z 1 a 2 b 2 c 3 d inf e -inf f",
    "ZRANGE z 0 -1",
    "ZRANGE z 1 2 WITHSCORES",
    "ZRANGE z -2 -1 withscores",
    "ZRANGE z 5 1",
    "ZRANGE z -100 100",
    "ZRANGE z 0 -1 REV WITHSCORES",
    "ZRANGE z 1 3 REV",
    "ZRANGE z 0 0 LIMIT 0 -1",
    "ZRANGE z 0 1 LIMIT 0 1",
    "ZRANGE z (1 3 BYSCORE",
    "ZRANGE z 3 (1 BYSCORE REV WITHSCORES",
    "ZRANGE z -inf +inf BYSCORE LIMIT 1 2",
    "ZRANGE z -inf +inf BYSCORE LIMIT -1 2",
    "ZRANGE z -inf +inf BYSCORE LIMIT 2 -5 WITHSCORES",
    "ZRANGE z -inf +inf BYSCORE LIMIT 10 1",
    "ZRANGE z a b BYSCORE",
    "ZRANGE z 0 1 FOO",
    "ZRANGE z 0 1 LIMIT 1",
    "ZRANGE z 0 1 LIMIT x 1",
    "ZRANGE z 0 1 BYSCORE BYLEX",
    "ZRANGE z 0 1 REV REV",
    "ZRANGE z x 1",
    "ZRANGE z [a [c BYLEX WITHSCORES",
    "ZRANGEBYSCORE z 2 2",
    "ZRANGEBYSCORE z (2 +inf WITHSCORES",
    "ZRANGEBYSCORE z -inf (2",
    "ZRANGEBYSCORE z (2 (2",
    "ZRANGEBYSCORE z 3 1",
    "ZRANGEBYSCORE z '' 2",
    "ZRANGEBYSCORE z ( 2",
    "ZRANGEBYSCORE z 1e400 +inf",
    "ZRANGEBYSCORE z 1 x",
    "ZRANGEBYSCORE z nan 1",
    "ZRANGEBYSCORE z 1 3 LIMIT 1 1 WITHSCORES",
    "ZRANGEBYSCORE z 1 3 REV",
    "ZRANGEBYSCORE z 1 3 BYSCORE",
    "ZRANGEBYSCORE nokey 1 3",
    "ZREVRANGE z 0 1 WITHSCORES",
    "ZREVRANGE z -1 -1",
    "ZREVRANGE z 0 1 REV",
    "ZREVRANGE z 0 1 LIMIT 0 1",
    "ZREVRANGEBYSCORE z +inf -inf",
    "ZREVRANGEBYSCORE z 2 -inf WITHSCORES LIMIT 0 2",
    "ZREVRANGEBYSCORE z (3 (1",
    "ZCOUNT z -inf +inf",
    "ZCOUNT z (1 2",
    "ZCOUNT z x 2",
    "ZCOUNT nokey 0 1",
    "ZCOUNT nokey x 1",
    "ZREMRANGEBYSCORE z (2 3",
    "ZRANGE z 0 -1 WITHSCORES",
    "ZREMRANGEBYSCORE z x 3",
    "ZREMRANGEBYSCORE nokey 0 1",
    "ZREMRANGEBYSCORE z -inf +inf",
    "EXISTS z",
    "ZADD l 0 a 0 b 0 c 0 d 0 e",
    "ZRANGE l [b (d BYLEX",
    "ZRANGE l - + BYLEX LIMIT 1 2",
    "ZRANGE l + - BYLEX REV",
    "ZRANGE l (d - BYLEX REV LIMIT 1 5",
    "ZRANGE l b c BYLEX",
    "ZRANGEBYLEX l [a [c",
    "ZREVRANGEBYLEX l [c [a",
    "ZRANGEBYLEX l + -",
];

/// WRONGTYPE both ways, expiry and key commands on a sorted set, and
/// arities.
const TYPES: &[&str] = &[
    "SET s v",
    "HSET h f v",
    "ZADD z 1 a",
    "ZADD s 1 a",
    "ZINCRBY h 1 a",
    "ZREM s a",
    "ZSCORE s a",
    "ZMSCORE s a",
    "ZCARD h",
    "ZRANK s a",
    "ZRANGE s 0 -1",
    "ZRANGE s x y BYSCORE",
    "ZRANGEBYSCORE h 0 1",
    "ZPOPMIN s",
    "ZPOPMIN s x",
    "ZCOUNT s 0 1",
    "ZREMRANGEBYSCORE s 0 1",
    "GET z",
    "HGET z f",
    "LPUSH z x",
    "INCR z",
    "TYPE z",
    "PEXPIRE z 100000",
    "PERSIST z",
    "RENAME z z2",
    "ZRANGE z2 0 -1 WITHSCORES",
    "SCAN 0 TYPE zset",
    "DEL z2",
    "ZADD",
    "ZADD z",
    "ZADD z 1",
    "ZINCRBY z 1",
    "ZSCORE z",
    "ZMSCORE z",
    "ZRANGE z 0",
    "ZRANGEBYSCORE z 0",
    "ZPOPMIN",
    "ZCOUNT z 0",
    "ZREMRANGEBYSCORE z 0 1 2",
    "ZRANK z",
    "ZREVRANK z a b",
];

/// Scripts: RESP2's conversion of scores (bulk strings) and pairs (flat),
/// errors through `redis.call` and `redis.pcall`, and a fair lock's
/// timeout-set handling (Redisson's RFairLock keeps one).
fn scripts() -> Vec<Cmd> {
    let fair = "redis.call('zremrangebyscore', KEYS[1], '-inf', ARGV[1]); \
                redis.call('zadd', KEYS[1], 'NX', ARGV[2], 'thread:2'); \
                local first = redis.call('zrange', KEYS[1], 0, 0); \
                return {first[1], redis.call('zscore', KEYS[1], 'thread:2'), \
                redis.call('zrank', KEYS[1], 'thread:2')}";
    vec![
        line("ZADD t 10 thread:1 20 thread:3"),
        eval(fair, "t", &["5", "15"]),
        eval(fair, "t", &["12", "30"]),
        eval(
            "return redis.call('zrange', KEYS[1], 0, -1, 'withscores')",
            "t",
            &[],
        ),
        eval("return redis.call('zpopmin', KEYS[1], 2)", "t", &[]),
        eval(
            "return redis.call('zincrby', KEYS[1], ARGV[1], 'm')",
            "t",
            &["0.1"],
        ),
        eval(
            "return redis.call('zadd', KEYS[1], 'INCR', ARGV[1], 'm')",
            "t",
            &["inf"],
        ),
        eval(
            "return redis.pcall('zincrby', KEYS[1], ARGV[1], 'm')",
            "t",
            &["-inf"],
        ),
        eval(
            "return redis.call('zincrby', KEYS[1], ARGV[1], 'm')",
            "t",
            &["-inf"],
        ),
        eval("return redis.call('zadd', KEYS[1], 1, 'm')", "s", &[]),
        eval("return redis.call('zscore', KEYS[1], 'nope')", "t", &[]),
        eval(
            "return redis.call('zmscore', KEYS[1], 'm', 'nope')",
            "t",
            &[],
        ),
        eval("return type(redis.call('zscore', KEYS[1], 'm'))", "t", &[]),
        eval(
            "return redis.call('zrangebyscore', KEYS[1], ARGV[1], '+inf', 'withscores', 'limit', 0, 1)",
            "t",
            &["(1"],
        ),
        eval(
            "return redis.call('zrangebyscore', KEYS[1], ARGV[1], 1)",
            "t",
            &["x"],
        ),
        eval("return redis.call('zcard', KEYS[1])", "t", &[]),
        eval("return redis.call('zadd', KEYS[1])", "t", &[]),
    ]
}

/// A case: its commands, from a clean keyspace.
fn cases() -> Vec<Vec<Cmd>> {
    let mut all: Vec<Vec<Cmd>> = [ADD, MEMBERS, RANGES, TYPES]
        .iter()
        .map(|lines| lines.iter().map(|l| line(l)).collect())
        .collect();
    let mut with_string = vec![line("SET s v")];
    with_string.extend(scripts());
    all.push(with_string);
    all
}

/// Every sorted-set case gives byte-identical replies on fake-redis and
/// redis-server 7.0.15, in RESP2 and in RESP3 (where scores are doubles
/// and WITHSCORES pairs nest). A wrong order of equal scores, a score
/// printed in fewer than 17 digits, a flat pair on RESP3, an error text
/// or check order that differs, or a set left behind empty fails it and
/// prints both transcripts.
#[test]
fn sorted_sets_reply_like_real_redis() {
    let (_real, _fake, mut pair) = crate::servers();
    for resp3 in [false, true] {
        for cmds in cases() {
            if let Err(e) = pair.run(resp3, false, &cmds) {
                panic!("{e}");
            }
        }
    }
    assert!(pair.compared > 400, "too few commands compared");
}

/// The generator's sorted-set commands draw every command name at least
/// once in a few hundred draws (so the random cases do reach them).
#[test]
fn generator_draws_every_sorted_set_command() {
    use proptest::strategy::{Strategy, ValueTree};
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = crate::generate_zset::zset_cmd();
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..600 {
        let cmd = strategy.new_tree(&mut runner).expect("draw").current();
        seen.insert(String::from_utf8_lossy(&cmd.args[0]).to_ascii_uppercase());
    }
    for name in [
        "ZADD",
        "ZINCRBY",
        "ZREM",
        "ZSCORE",
        "ZMSCORE",
        "ZCARD",
        "ZRANK",
        "ZREVRANK",
        "ZRANGE",
        "ZRANGEBYSCORE",
        "ZREVRANGE",
        "ZREVRANGEBYSCORE",
        "ZPOPMIN",
        "ZPOPMAX",
        "ZCOUNT",
        "ZREMRANGEBYSCORE",
    ] {
        assert!(seen.contains(name), "{name} never drawn: {seen:?}");
    }
}
