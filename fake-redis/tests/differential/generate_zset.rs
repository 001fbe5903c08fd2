//! The generated sorted-set commands (issue 47): ZADD with its flags,
//! ZINCRBY, ZREM, the score and rank queries, the ZRANGE family with
//! LIMIT, REV and WITHSCORES, the pops, ZCOUNT and ZREMRANGEBYSCORE, on
//! sorted sets, missing keys and keys of other types, with scores and
//! bounds Redis reads in its own ways (`inf`, `(2`, `-0`, `1e400`, empty).
//!
//! BYLEX is left to the fixed cases (`zset.rs`): over members of mixed
//! scores its answer is only defined by Redis's walk of its encoding.

use proptest::prelude::*;

use crate::generate::{Cmd, flag, pick, words};

/// Mostly the two sorted sets; now and then a string, a hash, a missing
/// key.
const ZKEYS: &[&str] = &["z", "z", "z", "z2", "str", "h", "nope"];
const MEMBERS: &[&str] = &["a", "b", "c", "d", "", "a:1"];
const SCORES: &[&str] = &[
    "1", "2", "2", "3", "-1", "0", "-0", "1.5", "0.1", "inf", "-inf", "+inf", "1e20", "1e-5", "x",
    "nan", "", " 1", "1e400", "007", "0x10",
];
const BOUNDS: &[&str] = &[
    "-inf", "+inf", "0", "1", "(1", "2", "(2", "1.5", "3", "inf", "(inf", "x", "(", "", "nan",
];
const RANKS: &[&str] = &["0", "1", "-1", "2", "-2", "100", "-100", "x"];
const ADD_FLAGS: &[&str] = &["NX", "XX", "GT", "LT", "CH", "INCR", "nx", "ch", "ch"];
const LIMITS: &[(&str, &str)] = &[
    ("0", "1"),
    ("1", "2"),
    ("0", "-1"),
    ("1", "-5"),
    ("-1", "2"),
    ("0", "0"),
    ("10", "1"),
    ("x", "1"),
];
const COUNTS: &[&str] = &["", "", "0", "1", "2", "5", "-1", "x"];

fn key() -> impl Strategy<Value = String> {
    pick(ZKEYS)
}

fn member() -> impl Strategy<Value = String> {
    pick(MEMBERS)
}

/// ZADD: up to three flags, one to three pairs, now and then a word short.
fn zadd() -> impl Strategy<Value = Cmd> {
    (
        key(),
        prop::collection::vec(pick(ADD_FLAGS), 0..3),
        prop::collection::vec(
            (
                prop_oneof![4 => pick(&["1", "2", "3", "0.5", "-2"]), 1 => pick(SCORES)],
                member(),
            ),
            1..4,
        ),
        prop::bool::weighted(0.05),
    )
        .prop_map(|(k, flags, pairs, short)| {
            let mut w = vec!["ZADD".to_owned(), k];
            w.extend(flags);
            w.extend(pairs.into_iter().flat_map(|(s, m)| [s, m]));
            if short {
                w.pop();
            }
            words(w)
        })
}

/// The options after a range: WITHSCORES, REV, BYSCORE, LIMIT, in any
/// order and now and then twice.
fn range_options(rev: bool, by: bool) -> impl Strategy<Value = Vec<String>> {
    let mut words: Vec<&'static str> = vec!["WITHSCORES", "withscores", "LIMIT"];
    if rev {
        words.push("REV");
    }
    if by {
        words.push("BYSCORE");
    }
    (
        prop::collection::vec(prop::sample::select(words), 0..3),
        prop::sample::select(LIMITS),
    )
        .prop_map(|(opts, (offset, count))| {
            opts.into_iter()
                .flat_map(|o| match o {
                    "LIMIT" => vec![o.to_owned(), offset.to_owned(), count.to_owned()],
                    _ => vec![o.to_owned()],
                })
                .collect()
        })
}

/// ZRANGE, ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE.
fn zrange() -> impl Strategy<Value = Cmd> {
    prop_oneof![
        (key(), pick(RANKS), pick(RANKS), range_options(true, true)).prop_map(|(k, a, b, opts)| {
            // Score bounds when BYSCORE is among the options.
            let (a, b) = if opts.iter().any(|o| o == "BYSCORE") {
                (a.replace('x', "(1"), b.replace("-100", "+inf"))
            } else {
                (a, b)
            };
            let mut w = vec!["ZRANGE".to_owned(), k, a, b];
            w.extend(opts);
            words(w)
        }),
        (key(), pick(RANKS), pick(RANKS), any::<bool>()).prop_map(|(k, a, b, scores)| {
            let ws = if scores { "WITHSCORES" } else { "" };
            words(vec!["ZREVRANGE".into(), k, a, b, flag(ws.into())])
        }),
        (
            pick(&["ZRANGEBYSCORE", "ZREVRANGEBYSCORE"]),
            key(),
            pick(BOUNDS),
            pick(BOUNDS),
            range_options(false, false)
        )
            .prop_map(|(c, k, a, b, opts)| {
                let mut w = vec![c, k, a, b];
                w.extend(opts);
                words(w)
            }),
    ]
}

/// Every generated sorted-set command.
pub(crate) fn zset_cmd() -> impl Strategy<Value = Cmd> {
    prop_oneof![
        4 => zadd(),
        1 => (key(), pick(SCORES), member())
            .prop_map(|(k, s, m)| words(vec!["ZINCRBY".into(), k, s, m])),
        1 => (key(), prop::collection::vec(member(), 1..3)).prop_map(|(k, ms)| {
            let mut w = vec!["ZREM".to_owned(), k];
            w.extend(ms);
            words(w)
        }),
        2 => (pick(&["ZSCORE", "ZRANK", "ZREVRANK"]), key(), member())
            .prop_map(|(c, k, m)| words(vec![c, k, m])),
        1 => (key(), member(), member())
            .prop_map(|(k, a, b)| words(vec!["ZMSCORE".into(), k, a, b])),
        1 => key().prop_map(|k| words(vec!["ZCARD".into(), k])),
        4 => zrange(),
        1 => (pick(&["ZPOPMIN", "ZPOPMAX"]), key(), pick(COUNTS))
            .prop_map(|(c, k, n)| words(vec![c, k, flag(n)])),
        1 => (pick(&["ZCOUNT", "ZREMRANGEBYSCORE"]), key(), pick(BOUNDS), pick(BOUNDS))
            .prop_map(|(c, k, a, b)| words(vec![c, k, a, b])),
    ]
}
