//! Sorted-set range commands: ZRANGE (by rank, BYSCORE or BYLEX, REV,
//! LIMIT, WITHSCORES), ZRANGEBYSCORE, ZREVRANGE, ZREVRANGEBYSCORE,
//! ZRANGEBYLEX, ZREVRANGEBYLEX, ZCOUNT, ZREMRANGEBYSCORE.
//!
//! All the ZRANGE forms are one function, as in Redis 7.0
//! (`zrangeGenericCommand`): the older commands fix the range type or the
//! direction, and then the option that would set it again is a syntax
//! error.

use std::ops::Range;

use bytes::Bytes;

use super::{Ctx, int_arg};
use crate::Value;
use crate::error::CmdError;
use crate::number::parse_range_number;
use crate::value::Double;
use crate::zset::{LexBound, LexRange, ScoreRange, Zset};

/// What a range is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum By {
    Rank,
    Score,
    Lex,
}

/// ZRANGE's options, after Redis's parse.
#[derive(Debug, Clone, Copy)]
struct Options {
    by: Option<By>,
    rev: Option<bool>,
    withscores: bool,
    offset: i64,
    /// `-1` (Redis's "no LIMIT") and any negative count mean all.
    limit: i64,
}

/// Reads the options after `key min max`: a word that is no option, or
/// one the command has fixed already (REV for ZREVRANGE), is a syntax
/// error; LIMIT needs both numbers after it.
fn options(args: &[Bytes], by: Option<By>, rev: Option<bool>) -> Result<Options, CmdError> {
    let mut o = Options {
        by,
        rev,
        withscores: false,
        offset: 0,
        limit: -1,
    };
    let mut j = 4;
    while let Some(word) = args.get(j) {
        let word = word.to_ascii_lowercase();
        match word.as_slice() {
            b"withscores" => o.withscores = true,
            b"limit" if args.len() - j > 2 => {
                o.offset = int_arg(&args[j + 1])?;
                o.limit = int_arg(&args[j + 2])?;
                j += 2;
            }
            b"rev" if o.rev.is_none() => o.rev = Some(true),
            b"bylex" if o.by.is_none() => o.by = Some(By::Lex),
            b"byscore" if o.by.is_none() => o.by = Some(By::Score),
            _ => return Err(CmdError::Syntax),
        }
        j += 1;
    }
    let by = *o.by.get_or_insert(By::Rank);
    // Redis tests the limit against its default, so `LIMIT 0 -1` passes.
    if o.limit != -1 && by == By::Rank {
        return Err(CmdError::other(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        ));
    }
    if o.withscores && by == By::Lex {
        return Err(CmdError::other(
            "ERR syntax error, WITHSCORES not supported in combination with BYLEX",
        ));
    }
    Ok(o)
}

/// One bound of a score range: `(` for exclusive, then a number as
/// `strtod` reads it.
fn score_bound(arg: &[u8]) -> Option<(f64, bool)> {
    match arg.split_first() {
        Some((b'(', rest)) => parse_range_number(rest).map(|v| (v, true)),
        _ => parse_range_number(arg).map(|v| (v, false)),
    }
}

/// Redis's `zslParseRange`.
pub(crate) fn score_range(min: &[u8], max: &[u8]) -> Result<ScoreRange, CmdError> {
    match (score_bound(min), score_bound(max)) {
        (Some((min, min_exclusive)), Some((max, max_exclusive))) => Ok(ScoreRange {
            min,
            max,
            min_exclusive,
            max_exclusive,
        }),
        _ => Err(CmdError::RangeNotFloat),
    }
}

/// A parsed range, of the kind the options chose.
enum Bounds {
    Rank(i64, i64),
    Score(ScoreRange),
    Lex(LexRange),
}

impl Bounds {
    fn parse(by: By, min: &[u8], max: &[u8]) -> Result<Bounds, CmdError> {
        Ok(match by {
            By::Rank => Bounds::Rank(int_arg(min)?, int_arg(max)?),
            By::Score => Bounds::Score(score_range(min, max)?),
            By::Lex => match (LexBound::parse(min), LexBound::parse(max)) {
                (Some(min), Some(max)) => Bounds::Lex(LexRange { min, max }),
                _ => return Err(CmdError::RangeNotLex),
            },
        })
    }
}

/// Positions `start..=end` of a `len`-long set after Redis's index rules
/// (negative from the end, clamped), or nothing.
fn rank_positions(start: i64, end: i64, len: usize) -> Range<usize> {
    let len = len as i64;
    let start = if start < 0 { len + start } else { start }.max(0);
    let end = if end < 0 { len + end } else { end };
    if start > end || start >= len {
        return 0..0;
    }
    start as usize..end.min(len - 1) as usize + 1
}

/// The members the range picks, in reply order.
fn pick<'z>(zset: &'z Zset, bounds: &Bounds, o: &Options) -> Vec<&'z (f64, Bytes)> {
    let rev = o.rev == Some(true);
    let entries = zset.entries();
    let positions = match bounds {
        Bounds::Rank(start, end) => {
            let r = rank_positions(*start, *end, entries.len());
            // A reversed rank counts from the end.
            let items = if rev {
                &entries[entries.len() - r.end..entries.len() - r.start]
            } else {
                &entries[r]
            };
            return ordered(items, rev).collect();
        }
        Bounds::Score(range) => zset.score_positions(range),
        Bounds::Lex(range) if rev => zset.lex_positions_rev(range),
        Bounds::Lex(range) => zset.lex_positions(range),
    };
    // Redis steps `offset` members from the first in range: a negative
    // offset steps off the end (nothing), a negative count takes all.
    let Ok(offset) = usize::try_from(o.offset) else {
        return vec![];
    };
    let limit = usize::try_from(o.limit).unwrap_or(usize::MAX);
    ordered(&entries[positions], rev)
        .skip(offset)
        .take(limit)
        .collect()
}

fn ordered(items: &[(f64, Bytes)], rev: bool) -> Box<dyn Iterator<Item = &(f64, Bytes)> + '_> {
    if rev {
        Box::new(items.iter().rev())
    } else {
        Box::new(items.iter())
    }
}

fn range_generic(
    ctx: &mut Ctx<'_>,
    args: &[Bytes],
    by: Option<By>,
    rev: Option<bool>,
) -> Result<Value, CmdError> {
    let o = options(args, by, rev)?;
    let by = o.by.unwrap_or(By::Rank);
    // A reversed score or lex range is given as `max min`.
    let (min, max) = if o.rev == Some(true) && by != By::Rank {
        (&args[3], &args[2])
    } else {
        (&args[2], &args[3])
    };
    let bounds = Bounds::parse(by, min, max)?;
    let Some(zset) = ctx.db.get_zset(&args[1], ctx.now)? else {
        return Ok(Value::Array(vec![]));
    };
    let picked = pick(zset, &bounds, &o);
    Ok(if o.withscores {
        Value::Pairs(
            picked
                .into_iter()
                .map(|(s, m)| (Value::Bulk(m.clone()), Value::Double(Double(*s))))
                .collect(),
        )
    } else {
        Value::Array(
            picked
                .into_iter()
                .map(|(_, m)| Value::Bulk(m.clone()))
                .collect(),
        )
    })
}

/// # Format
/// `ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count]
/// [WITHSCORES]`: the members in the range (by rank unless BYSCORE or
/// BYLEX; REV walks from the top and takes `max min` for scores and
/// members); WITHSCORES pairs each with its score.
pub(crate) fn zrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    range_generic(ctx, args, None, None)
}

/// # Format
/// `ZREVRANGE key start stop [WITHSCORES]`: ZRANGE by rank from the top.
pub(crate) fn zrevrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    range_generic(ctx, args, Some(By::Rank), Some(true))
}

/// # Format
/// `ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]`: members
/// with `min <= score <= max` (`(` makes a bound exclusive; `-inf`,
/// `+inf`).
pub(crate) fn zrangebyscore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    range_generic(ctx, args, Some(By::Score), Some(false))
}

/// # Format
/// `ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]`: as
/// ZRANGEBYSCORE, from the top.
pub(crate) fn zrevrangebyscore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    range_generic(ctx, args, Some(By::Score), Some(true))
}

/// # Format
/// `ZRANGEBYLEX key min max [LIMIT offset count]`: members between two
/// lex bounds (`[a`, `(a`, `-`, `+`), meant for members of one score.
pub(crate) fn zrangebylex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    range_generic(ctx, args, Some(By::Lex), Some(false))
}

/// # Format
/// `ZREVRANGEBYLEX key max min [LIMIT offset count]`: as ZRANGEBYLEX,
/// from the top.
pub(crate) fn zrevrangebylex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    range_generic(ctx, args, Some(By::Lex), Some(true))
}

/// # Format
/// `ZCOUNT key min max`: how many members have a score in the range.
pub(crate) fn zcount(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let range = score_range(&args[2], &args[3])?;
    let zset = ctx.db.get_zset(&args[1], ctx.now)?;
    Ok(Value::Int(
        zset.map_or(0, |z| z.score_positions(&range).len() as i64),
    ))
}

/// # Format
/// `ZREMRANGEBYSCORE key min max`: removes the members with a score in
/// the range; how many. The key goes with its last member.
pub(crate) fn zremrangebyscore(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let range = score_range(&args[2], &args[3])?;
    let key = &args[1];
    let Some(zset) = ctx.db.zset_mut(key, ctx.now)? else {
        return Ok(Value::Int(0));
    };
    let positions = zset.score_positions(&range);
    let removed = zset.remove_range(positions).len();
    if removed > 0 {
        ctx.db.touch(key);
        ctx.db.drop_if_empty(key);
    }
    Ok(Value::Int(removed as i64))
}
