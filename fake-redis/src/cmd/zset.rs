//! Sorted-set commands on members: ZADD, ZINCRBY, ZREM, ZSCORE, ZMSCORE,
//! ZCARD, ZRANK, ZREVRANK, ZPOPMIN, ZPOPMAX. The range commands are in
//! `zrange`.
//!
//! Each follows Redis 7.0's `t_zset.c` in the order it checks things
//! (options, then scores, then the key's type), so a command with two
//! faults reports the one Redis reports.

use std::sync::Arc;

use bytes::Bytes;

use super::{Ctx, count_arg};
use crate::Value;
use crate::db::{Data, Entry};
use crate::error::CmdError;
use crate::number::parse_score;
use crate::value::Double;
use crate::zset::Zset;

/// ZADD's options (ZINCRBY is ZADD with `incr` set).
#[derive(Debug, Default, Clone, Copy)]
struct AddFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
    ch: bool,
    incr: bool,
}

/// What ZADD did, for its reply.
#[derive(Debug, Default)]
struct Added {
    added: i64,
    updated: i64,
    /// Members not skipped by NX, XX, GT or LT.
    processed: i64,
    /// The last processed member's new score (ZADD INCR's reply).
    score: f64,
}

/// Reads ZADD's options from `args[2..]`; the index of the first score.
fn add_flags(args: &[Bytes], flags: &mut AddFlags) -> usize {
    let mut at = 2;
    while let Some(word) = args.get(at) {
        let flag = match word.to_ascii_lowercase().as_slice() {
            b"nx" => &mut flags.nx,
            b"xx" => &mut flags.xx,
            b"gt" => &mut flags.gt,
            b"lt" => &mut flags.lt,
            b"ch" => &mut flags.ch,
            b"incr" => &mut flags.incr,
            _ => break,
        };
        *flag = true;
        at += 1;
    }
    at
}

/// Redis's refusals of option sets, in its order.
fn check_flags(flags: AddFlags, pairs: usize) -> Result<(), CmdError> {
    if flags.nx && flags.xx {
        return Err(CmdError::other(
            "ERR XX and NX options at the same time are not compatible",
        ));
    }
    if (flags.nx && (flags.gt || flags.lt)) || (flags.gt && flags.lt) {
        return Err(CmdError::other(
            "ERR GT, LT, and/or NX options at the same time are not compatible",
        ));
    }
    if flags.incr && pairs > 1 {
        return Err(CmdError::other(
            "ERR INCR option supports a single increment-element pair",
        ));
    }
    Ok(())
}

/// Redis's `zsetAdd` for each score and member in turn. A NaN sum
/// (`inf` plus `-inf`) stops it with what was done so far kept, as in
/// Redis (only INCR sums, and INCR takes one member).
fn add_all(
    zset: &mut Zset,
    pairs: &[(f64, &Bytes)],
    flags: AddFlags,
    done: &mut Added,
) -> Result<(), CmdError> {
    for &(score, member) in pairs {
        match zset.score(member) {
            Some(_) if flags.nx => {}
            Some(current) => {
                let score = if flags.incr { score + current } else { score };
                if score.is_nan() {
                    return Err(CmdError::ScoreNaN);
                }
                if (flags.lt && score >= current) || (flags.gt && score <= current) {
                    continue;
                }
                done.processed += 1;
                done.score = score;
                // `-0` and `0` are equal here, as in C.
                if score != current {
                    zset.insert(member, score);
                    done.updated += 1;
                }
            }
            None if flags.xx => {}
            None => {
                zset.insert(member, score);
                done.added += 1;
                done.processed += 1;
                done.score = score;
            }
        }
    }
    Ok(())
}

fn zadd_generic(ctx: &mut Ctx<'_>, args: &[Bytes], mut flags: AddFlags) -> Result<Value, CmdError> {
    let first = add_flags(args, &mut flags);
    let rest = &args[first..];
    if rest.is_empty() || !rest.len().is_multiple_of(2) {
        return Err(CmdError::Syntax);
    }
    check_flags(flags, rest.len() / 2)?;
    // Every score is read before anything changes: a bad one anywhere
    // leaves the set as it was.
    let pairs = rest
        .chunks(2)
        .map(|p| {
            parse_score(&p[0])
                .map(|s| (s, &p[1]))
                .ok_or(CmdError::NotFloat)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let key = &args[1];
    let mut done = Added::default();
    let mut fresh = Zset::default();
    let result = match ctx.db.zset_mut(key, ctx.now)? {
        Some(zset) => add_all(zset, &pairs, flags, &mut done),
        None if flags.xx => Ok(()),
        None => add_all(&mut fresh, &pairs, flags, &mut done),
    };
    if !fresh.is_empty() {
        let entry = Entry {
            data: Data::Zset(Arc::new(fresh)),
            expires_at: None,
        };
        ctx.db.insert(key.clone(), entry);
    } else if done.added + done.updated > 0 {
        ctx.db.touch(key);
    }
    result?;
    Ok(if flags.incr {
        if done.processed > 0 {
            Value::Double(Double(done.score))
        } else {
            Value::Nil
        }
    } else if flags.ch {
        Value::Int(done.added + done.updated)
    } else {
        Value::Int(done.added)
    })
}

/// # Format
/// `ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]`:
/// how many members were added (with CH: added or re-scored); with INCR,
/// the member's new score, or nil when NX, XX, GT or LT skipped it.
pub(crate) fn zadd(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    zadd_generic(ctx, args, AddFlags::default())
}

/// # Format
/// `ZINCRBY key increment member`: the member's new score (a missing
/// member counts as 0). Redis reads ZADD's options here too, so
/// `ZINCRBY key nx member` is a syntax error.
pub(crate) fn zincrby(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let flags = AddFlags {
        incr: true,
        ..AddFlags::default()
    };
    zadd_generic(ctx, args, flags)
}

/// # Format
/// `ZREM key member [member ...]`: how many were removed; the key goes
/// with its last member.
pub(crate) fn zrem(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let key = &args[1];
    let Some(zset) = ctx.db.zset_mut(key, ctx.now)? else {
        return Ok(Value::Int(0));
    };
    let removed = args[2..].iter().filter(|m| zset.remove(m)).count();
    if removed > 0 {
        ctx.db.touch(key);
        ctx.db.drop_if_empty(key);
    }
    Ok(Value::Int(removed as i64))
}

/// # Format
/// `ZSCORE key member`: the score, or nil.
pub(crate) fn zscore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let zset = ctx.db.get_zset(&args[1], ctx.now)?;
    Ok(score_reply(zset, &args[2]))
}

fn score_reply(zset: Option<&Zset>, member: &[u8]) -> Value {
    zset.and_then(|z| z.score(member))
        .map_or(Value::Nil, |s| Value::Double(Double(s)))
}

/// # Format
/// `ZMSCORE key member [member ...]`: each member's score or nil (all nil
/// for a missing key).
pub(crate) fn zmscore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let zset = ctx.db.get_zset(&args[1], ctx.now)?;
    Ok(Value::Array(
        args[2..].iter().map(|m| score_reply(zset, m)).collect(),
    ))
}

/// # Format
/// `ZCARD key`: how many members (0 when missing).
pub(crate) fn zcard(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let zset = ctx.db.get_zset(&args[1], ctx.now)?;
    Ok(Value::Int(zset.map_or(0, |z| z.len() as i64)))
}

fn rank(ctx: &mut Ctx<'_>, args: &[Bytes], reverse: bool) -> Result<Value, CmdError> {
    let Some(zset) = ctx.db.get_zset(&args[1], ctx.now)? else {
        return Ok(Value::Nil);
    };
    Ok(match zset.rank(&args[2]) {
        Some(r) if reverse => Value::Int((zset.len() - 1 - r) as i64),
        Some(r) => Value::Int(r as i64),
        None => Value::Nil,
    })
}

/// # Format
/// `ZRANK key member`: the member's 0-based position from the lowest
/// score, or nil.
pub(crate) fn zrank(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    rank(ctx, args, false)
}

/// # Format
/// `ZREVRANK key member`: the position from the highest score, or nil.
pub(crate) fn zrevrank(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    rank(ctx, args, true)
}

fn pop(ctx: &mut Ctx<'_>, args: &[Bytes], max: bool) -> Result<Value, CmdError> {
    if args.len() > 3 {
        return Err(CmdError::Syntax);
    }
    let count = args.get(2).map(|c| count_arg(c)).transpose()?;
    let key = &args[1];
    let Some(zset) = ctx.db.zset_mut(key, ctx.now)? else {
        return Ok(Value::Array(vec![]));
    };
    let take = count.unwrap_or(1).min(zset.len());
    let range = if max {
        zset.len() - take..zset.len()
    } else {
        0..take
    };
    let mut popped = zset.remove_range(range);
    if max {
        popped.reverse();
    }
    if take > 0 {
        ctx.db.touch(key);
        ctx.db.drop_if_empty(key);
    }
    let pairs = popped
        .into_iter()
        .map(|(score, member)| (Value::Bulk(member), Value::Double(Double(score))));
    Ok(match count {
        // Pairs nest on RESP3 only when a count was given.
        Some(_) => Value::Pairs(pairs.collect()),
        None => Value::Array(pairs.flat_map(|(m, s)| [m, s]).collect()),
    })
}

/// # Format
/// `ZPOPMIN key [count]`: removes and returns the member with the lowest
/// score and its score; with a count, up to that many pairs (nested on
/// RESP3). An empty array when the key is missing or the count is 0.
pub(crate) fn zpopmin(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    pop(ctx, args, false)
}

/// # Format
/// `ZPOPMAX key [count]`: as `ZPOPMIN`, from the highest score down.
pub(crate) fn zpopmax(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    pop(ctx, args, true)
}

#[cfg(test)]
mod tests {
    use crate::engine::{args, bulk, engine_at};
    use crate::{Double, Value};

    fn run(e: &mut crate::Engine, c: crate::ConnId, words: &[&str]) -> Value {
        let r = e.execute(c, args(words));
        r.replies.into_iter().last().unwrap_or(Value::Nil)
    }

    /// A ZADD that changes nothing (NX of a member that is there, GT of a
    /// lower score) leaves a watcher's transaction alone, and one that
    /// changes a score fails it, as in Redis (`signalModifiedKey` only
    /// when something was added or updated). Touching the key on every
    /// ZADD would fail the first EXEC.
    #[test]
    fn only_a_real_change_fails_a_watcher() {
        let (mut e, _clock, watcher) = engine_at(1_000);
        let other = e.connect();
        run(&mut e, other, &["ZADD", "z", "1", "a"]);
        for (change, commits) in [
            (&["ZADD", "z", "NX", "5", "a"][..], true),
            (&["ZADD", "z", "GT", "0", "a"][..], true),
            (&["ZREM", "z", "nope"][..], true),
            (&["ZADD", "z", "XX", "2", "a"][..], false),
        ] {
            run(&mut e, watcher, &["WATCH", "z"]);
            run(&mut e, other, change);
            run(&mut e, watcher, &["MULTI"]);
            run(&mut e, watcher, &["ZCARD", "z"]);
            let reply = run(&mut e, watcher, &["EXEC"]);
            let committed = reply != Value::NilArray;
            assert_eq!(committed, commits, "{change:?}: {reply:?}");
        }
    }

    /// A script sees a score as a string and WITHSCORES pairs flat (RESP2),
    /// whatever its caller speaks; the caller gets its own protocol's
    /// double.
    #[test]
    fn scripts_get_scores_as_strings() {
        let (mut e, _clock, c) = engine_at(1_000);
        run(&mut e, c, &["HELLO", "3"]);
        assert_eq!(
            run(&mut e, c, &["ZADD", "z", "INCR", "0.5", "a"]),
            Value::Double(Double(0.5))
        );
        let script = "local r = redis.call('zrange', KEYS[1], 0, -1, 'withscores') \
                      return {type(r[2]), r[2], #r}";
        assert_eq!(
            run(&mut e, c, &["EVAL", script, "1", "z"]),
            Value::Array(vec![bulk("string"), bulk("0.5"), Value::Int(2)])
        );
    }

    /// Words that have broken parsers elsewhere: integer extremes, NUL,
    /// empty, `(`, bounds of every kind, options in odd places.
    const WORDS: &[&str] = &[
        "z",
        "0",
        "1",
        "-1",
        "2",
        "(1",
        "(",
        "",
        "inf",
        "-inf",
        "+inf",
        "nan",
        "1e400",
        "-9223372036854775808",
        "9223372036854775807",
        "a",
        "b",
        "\0",
        "[a",
        "(b",
        "-",
        "+",
        "NX",
        "XX",
        "GT",
        "LT",
        "CH",
        "INCR",
        "LIMIT",
        "REV",
        "BYSCORE",
        "BYLEX",
        "WITHSCORES",
    ];
    const NAMES: &[&str] = &[
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
        "ZRANGEBYLEX",
        "ZREVRANGEBYLEX",
        "ZPOPMIN",
        "ZPOPMAX",
        "ZCOUNT",
        "ZREMRANGEBYSCORE",
    ];

    proptest::proptest! {
        /// Any sequence of sorted-set commands with any of [`WORDS`] as
        /// arguments: no panic, and the set stays well formed: ZCARD is
        /// what ZRANGE lists, the scores ascend, and an empty set is no
        /// key at all.
        #[test]
        fn any_arguments_keep_the_set_well_formed(
            cmds in proptest::collection::vec(
                (
                    proptest::sample::select(NAMES),
                    proptest::collection::vec(proptest::sample::select(WORDS), 0..7),
                ),
                1..40,
            )
        ) {
            let (mut e, _clock, c) = engine_at(1_000);
            for (name, rest) in cmds {
                let mut words = vec![name, "z"];
                words.extend(rest);
                e.execute(c, args(&words));
                let Value::Int(card) = run(&mut e, c, &["ZCARD", "z"]) else {
                    panic!("ZCARD z is no integer");
                };
                let all = run(&mut e, c, &["ZRANGE", "z", "0", "-1", "WITHSCORES"]);
                // A missing key is an empty array, not pairs.
                let pairs = match all {
                    Value::Pairs(pairs) => pairs,
                    Value::Array(items) if items.is_empty() => vec![],
                    other => panic!("{other:?}"),
                };
                proptest::prop_assert_eq!(pairs.len() as i64, card);
                let scores: Vec<f64> = pairs
                    .iter()
                    .map(|(_, s)| match s { Value::Double(d) => d.0, _ => f64::NAN })
                    .collect();
                proptest::prop_assert!(scores.windows(2).all(|w| w[0] <= w[1]), "{:?}", scores);
                let exists = run(&mut e, c, &["EXISTS", "z"]);
                proptest::prop_assert_eq!(exists, Value::Int(i64::from(card > 0)));
            }
        }
    }
}
