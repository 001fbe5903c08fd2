//! String commands: GET, SET and its variants, MGET, MSET, GETDEL, GETEX,
//! and the counters (INCR, INCRBY, DECR, DECRBY, INCRBYFLOAT).

use bytes::Bytes;

use super::{Ctx, int_arg};
use crate::Value;
use crate::db::{Data, Entry};
use crate::error::CmdError;
use crate::number::{format_float, parse_float, parse_i64};

/// # Format
/// `GET key`: the string, nil when missing, `WRONGTYPE` for a hash.
pub(crate) fn get(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    Ok(ctx
        .db
        .get_str(&args[1], ctx.now)?
        .map_or(Value::Nil, Value::Bulk))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Unit {
    Seconds,
    Millis,
}

#[derive(Default)]
struct SetOptions {
    nx: bool,
    xx: bool,
    get: bool,
    keepttl: bool,
    /// The expiry argument: unit, absolute (`EXAT`/`PXAT`), raw value.
    expire: Option<(Unit, bool, Bytes)>,
}

/// Parses SET's options with Redis 7.0's acceptance rules: a repeated flag
/// is fine, contradicting ones are a syntax error.
fn parse_set_options(args: &[Bytes]) -> Result<SetOptions, CmdError> {
    let mut o = SetOptions::default();
    let mut j = 3;
    while j < args.len() {
        let opt = args[j].to_ascii_lowercase();
        let next = args.get(j + 1);
        match (opt.as_slice(), next) {
            (b"nx", _) if !o.xx => o.nx = true,
            (b"xx", _) if !o.nx => o.xx = true,
            (b"get", _) => o.get = true,
            (b"keepttl", _) if o.expire.is_none() => o.keepttl = true,
            (b"ex" | b"px" | b"exat" | b"pxat", Some(value)) if !o.keepttl => {
                let (unit, absolute) = match opt.as_slice() {
                    b"ex" => (Unit::Seconds, false),
                    b"px" => (Unit::Millis, false),
                    b"exat" => (Unit::Seconds, true),
                    _ => (Unit::Millis, true),
                };
                if o.expire
                    .as_ref()
                    .is_some_and(|(u, a, _)| (*u, *a) != (unit, absolute))
                {
                    return Err(CmdError::Syntax);
                }
                o.expire = Some((unit, absolute, value.clone()));
                j += 1;
            }
            _ => return Err(CmdError::Syntax),
        }
        j += 1;
    }
    Ok(o)
}

/// An absolute expiry from SET's `EX`/`PX`/`EXAT`/`PXAT` value, with
/// Redis's checks: positive, and no overflow in unit or base.
fn set_expiry(unit: Unit, absolute: bool, raw: &[u8], now: i64) -> Result<i64, CmdError> {
    let mut ms = int_arg(raw)?;
    if ms <= 0 {
        return Err(CmdError::InvalidExpire("set"));
    }
    if unit == Unit::Seconds {
        ms = ms.checked_mul(1000).ok_or(CmdError::InvalidExpire("set"))?;
    }
    if !absolute {
        ms = ms.checked_add(now).ok_or(CmdError::InvalidExpire("set"))?;
    }
    Ok(ms)
}

/// # Format
/// `SET key value [NX | XX] [GET] [EX s | PX ms | EXAT ts | PXAT ms-ts | KEEPTTL]`:
/// `OK`, or nil when NX/XX stops it; with `GET`, the old string (nil when
/// missing) instead, and `WRONGTYPE` (nothing set) when the old value is a
/// hash.
pub(crate) fn set(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let o = parse_set_options(args)?;
    let expires_at = match &o.expire {
        Some((unit, absolute, raw)) => Some(set_expiry(*unit, *absolute, raw, ctx.now)?),
        None => None,
    };
    let key = &args[1];
    let old = if o.get {
        ctx.db.get_str(key, ctx.now)?
    } else {
        None
    };
    let existing = ctx.db.get(key, ctx.now).map(|e| e.expires_at);
    let found = existing.is_some();
    let reply_skip = if o.get {
        old.clone().map_or(Value::Nil, Value::Bulk)
    } else {
        Value::Nil
    };
    if (o.nx && found) || (o.xx && !found) {
        return Ok(reply_skip);
    }
    let expires_at = if o.keepttl {
        existing.flatten()
    } else {
        expires_at
    };
    ctx.db.insert(
        key.clone(),
        Entry {
            data: Data::str(&args[2]),
            expires_at,
        },
    );
    Ok(if o.get {
        old.map_or(Value::Nil, Value::Bulk)
    } else {
        Value::ok()
    })
}

/// Adds `by` to the integer at `key` (missing counts as 0), expiry kept.
fn incr_by(ctx: &mut Ctx<'_>, key: &Bytes, by: i64, overflow: CmdError) -> Result<Value, CmdError> {
    let current = match ctx.db.get_str(key, ctx.now)? {
        Some(s) => parse_i64(&s).ok_or(CmdError::NotInteger)?,
        None => 0,
    };
    let next = current.checked_add(by).ok_or(overflow)?;
    store_keeping_ttl(ctx, key, crate::number::int_text(next));
    Ok(Value::Int(next))
}

/// Replaces the string at `key`, keeping its expiry (the counters do).
fn store_keeping_ttl(ctx: &mut Ctx<'_>, key: &Bytes, text: Bytes) {
    match ctx.db.get_mut(key, ctx.now) {
        Some(entry) => {
            entry.data = Data::str(&text);
            ctx.db.touch(key);
        }
        None => ctx.db.insert(
            key.clone(),
            Entry {
                data: Data::str(&text),
                expires_at: None,
            },
        ),
    }
}

/// # Format
/// `INCR key`: the string as an integer plus one, stored back (expiry
/// kept); a missing key counts as 0.
pub(crate) fn incr(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    incr_by(ctx, &args[1], 1, CmdError::Overflow)
}

/// # Format
/// `INCRBY key increment`: as `INCR`, by `increment`.
pub(crate) fn incrby(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let by = int_arg(&args[2])?;
    incr_by(ctx, &args[1], by, CmdError::Overflow)
}

/// # Format
/// `DECR key`: as `INCR`, minus one.
pub(crate) fn decr(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    incr_by(ctx, &args[1], -1, CmdError::Overflow)
}

/// # Format
/// `DECRBY key decrement`: as `INCR`, minus `decrement`.
pub(crate) fn decrby(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let by = int_arg(&args[2])?;
    // Only a decrement that cannot be negated has this text.
    let by = by
        .checked_neg()
        .ok_or_else(|| CmdError::other("ERR decrement would overflow"))?;
    incr_by(ctx, &args[1], by, CmdError::Overflow)
}

/// # Format
/// `INCRBYFLOAT key increment`: the string as a float plus `increment`,
/// stored back and replied as a bulk string (see `number::format_float`).
pub(crate) fn incrbyfloat(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let key = &args[1];
    let current = match ctx.db.get_str(key, ctx.now)? {
        Some(s) => parse_float(&s).ok_or_else(not_float)?,
        None => 0.0,
    };
    let by = parse_float(&args[2]).ok_or_else(not_float)?;
    let text = Bytes::from(float_sum(current, by)?);
    store_keeping_ttl(ctx, key, text.clone());
    Ok(Value::Bulk(text))
}

fn not_float() -> CmdError {
    CmdError::NotFloat
}

/// `a + b` as Redis stores it; Redis's error for an infinite result.
pub(crate) fn float_sum(a: f64, b: f64) -> Result<String, CmdError> {
    let sum = a + b;
    if !sum.is_finite() {
        return Err(CmdError::other(
            "ERR increment would produce NaN or Infinity",
        ));
    }
    Ok(format_float(sum))
}

/// # Format
/// `SETEX key seconds value`: `SET key value EX seconds`.
pub(crate) fn setex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    set_with_expiry(ctx, args, Unit::Seconds, "setex")
}

/// # Format
/// `PSETEX key milliseconds value`: `SET key value PX milliseconds`.
pub(crate) fn psetex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    set_with_expiry(ctx, args, Unit::Millis, "psetex")
}

fn set_with_expiry(
    ctx: &mut Ctx<'_>,
    args: &[Bytes],
    unit: Unit,
    name: &'static str,
) -> Result<Value, CmdError> {
    let expires_at = set_expiry(unit, false, &args[2], ctx.now).map_err(|e| match e {
        CmdError::InvalidExpire(_) => CmdError::InvalidExpire(name),
        other => other,
    })?;
    ctx.db.insert(
        args[1].clone(),
        Entry {
            data: Data::str(&args[3]),
            expires_at: Some(expires_at),
        },
    );
    Ok(Value::ok())
}

/// # Format
/// `SETNX key value`: 1 when the key was missing and is now set, else 0.
pub(crate) fn setnx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    if ctx.db.get(&args[1], ctx.now).is_some() {
        return Ok(Value::Int(0));
    }
    ctx.db.insert(
        args[1].clone(),
        Entry {
            data: Data::str(&args[2]),
            expires_at: None,
        },
    );
    Ok(Value::Int(1))
}

/// # Format
/// `MGET key [key ...]`: each key's string, nil for a missing key or one
/// of another type.
pub(crate) fn mget(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    Ok(Value::Array(
        args[1..]
            .iter()
            .map(|k| match ctx.db.get_str(k, ctx.now) {
                Ok(Some(s)) => Value::Bulk(s),
                _ => Value::Nil,
            })
            .collect(),
    ))
}

/// # Format
/// `MSET key value [key value ...]`: sets every pair (expiry cleared); `OK`.
pub(crate) fn mset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    if args.len().is_multiple_of(2) {
        return Err(CmdError::WrongArity("mset".into()));
    }
    for pair in args[1..].chunks(2) {
        ctx.db.insert(
            pair[0].clone(),
            Entry {
                data: Data::str(&pair[1]),
                expires_at: None,
            },
        );
    }
    Ok(Value::ok())
}

/// # Format
/// `GETDEL key`: the string, deleting the key; nil when missing.
pub(crate) fn getdel(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let Some(s) = ctx.db.get_str(&args[1], ctx.now)? else {
        return Ok(Value::Nil);
    };
    ctx.db.remove(&args[1], ctx.now);
    Ok(Value::Bulk(s))
}

/// # Format
/// `GETEX key [EX s | PX ms | EXAT ts | PXAT ms-ts | PERSIST]`: the string,
/// changing its expiry as told.
pub(crate) fn getex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    // Redis checks the syntax first, then the key (missing: nil; wrong
    // type), and only then the expiry's value.
    let mut raw: Option<Option<(Unit, bool, &Bytes)>> = None;
    let mut j = 2;
    while j < args.len() {
        let opt = args[j].to_ascii_lowercase();
        let unit = match opt.as_slice() {
            b"ex" => Some((Unit::Seconds, false)),
            b"px" => Some((Unit::Millis, false)),
            b"exat" => Some((Unit::Seconds, true)),
            b"pxat" => Some((Unit::Millis, true)),
            _ => None,
        };
        match (unit, args.get(j + 1)) {
            _ if opt == b"persist" && raw.is_none() => raw = Some(None),
            (Some((unit, absolute)), Some(value)) if raw.is_none() => {
                raw = Some(Some((unit, absolute, value)));
                j += 1;
            }
            _ => return Err(CmdError::Syntax),
        }
        j += 1;
    }
    let key = &args[1];
    let Some(s) = ctx.db.get_str(key, ctx.now)? else {
        return Ok(Value::Nil);
    };
    let expiry = match raw {
        Some(Some((unit, absolute, value))) => Some(Some(
            set_expiry(unit, absolute, value, ctx.now).map_err(|e| match e {
                CmdError::InvalidExpire(_) => CmdError::InvalidExpire("getex"),
                other => other,
            })?,
        )),
        Some(None) => Some(None),
        None => None,
    };
    match expiry {
        Some(Some(at)) if at <= ctx.now => {
            ctx.db.remove(key, ctx.now);
        }
        Some(at) => {
            if let Some(entry) = ctx.db.get_mut(key, ctx.now) {
                let changed = entry.expires_at != at;
                entry.expires_at = at;
                if changed || at.is_some() {
                    ctx.db.touch(key);
                }
            }
        }
        None => {}
    }
    Ok(Value::Bulk(s))
}
