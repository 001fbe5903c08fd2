//! Hash commands: HSET, HMSET, HSETNX, HGET, HMGET, HEXISTS, HINCRBY,
//! HINCRBYFLOAT, HDEL, HGETALL, HKEYS, HVALS, HLEN.

use bytes::Bytes;

use super::{Ctx, int_arg};
use crate::Value;
use crate::error::CmdError;
use crate::number::{parse_float, parse_i64};

/// # Format
/// `HSET key field value [field value ...]`: how many fields were new. An
/// existing field keeps its place in the order.
pub(crate) fn hset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    if !args.len().is_multiple_of(2) {
        return Err(CmdError::WrongArity("hset".into()));
    }
    let hash = ctx.db.hash_or_create(&args[1], ctx.now)?;
    let mut added = 0;
    for pair in args[2..].chunks(2) {
        if hash.insert(pair[0].clone(), pair[1].clone()).is_none() {
            added += 1;
        }
    }
    ctx.db.touch(&args[1]);
    Ok(Value::Int(added))
}

/// # Format
/// `HMSET key field value [field value ...]`: as `HSET`, replying `OK`.
pub(crate) fn hmset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    if !args.len().is_multiple_of(2) {
        return Err(CmdError::WrongArity("hmset".into()));
    }
    hset(ctx, args).map(|_| Value::ok())
}

/// # Format
/// `HSETNX key field value`: 1 when the field was new and is now set, else 0.
pub(crate) fn hsetnx(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    if ctx
        .db
        .get_hash(&args[1], ctx.now)?
        .is_some_and(|h| h.contains_key(&args[2]))
    {
        return Ok(Value::Int(0));
    }
    let hash = ctx.db.hash_or_create(&args[1], ctx.now)?;
    hash.insert(args[2].clone(), args[3].clone());
    ctx.db.touch(&args[1]);
    Ok(Value::Int(1))
}

/// # Format
/// `HMGET key field [field ...]`: each field's value or nil.
pub(crate) fn hmget(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let hash = ctx.db.get_hash(&args[1], ctx.now)?;
    Ok(Value::Array(
        args[2..]
            .iter()
            .map(|f| {
                hash.and_then(|h| h.get(f))
                    .map_or(Value::Nil, |v| Value::Bulk(v.clone()))
            })
            .collect(),
    ))
}

/// # Format
/// `HKEYS key`: the fields in order.
pub(crate) fn hkeys(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let hash = ctx.db.get_hash(&args[1], ctx.now)?;
    Ok(Value::Array(
        hash.into_iter()
            .flatten()
            .map(|(f, _)| Value::Bulk(f.clone()))
            .collect(),
    ))
}

/// # Format
/// `HVALS key`: the values in field order.
pub(crate) fn hvals(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let hash = ctx.db.get_hash(&args[1], ctx.now)?;
    Ok(Value::Array(
        hash.into_iter()
            .flatten()
            .map(|(_, v)| Value::Bulk(v.clone()))
            .collect(),
    ))
}

/// # Format
/// `HINCRBYFLOAT key field increment`: the field's new value as a bulk
/// string (as INCRBYFLOAT formats it).
pub(crate) fn hincrbyfloat(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let by = parse_float(&args[3]).ok_or(CmdError::NotFloat)?;
    let key = &args[1];
    let current = match ctx.db.get_hash(key, ctx.now)?.and_then(|h| h.get(&args[2])) {
        Some(v) => {
            parse_float(v).ok_or_else(|| CmdError::other("ERR hash value is not a float"))?
        }
        None => 0.0,
    };
    let text = Bytes::from(super::string::float_sum(current, by)?);
    let hash = ctx.db.hash_or_create(key, ctx.now)?;
    hash.insert(args[2].clone(), text.clone());
    ctx.db.touch(key);
    Ok(Value::Bulk(text))
}

/// # Format
/// `HGET key field`: the value, or nil.
pub(crate) fn hget(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let hash = ctx.db.get_hash(&args[1], ctx.now)?;
    Ok(hash
        .and_then(|h| h.get(&args[2]))
        .map_or(Value::Nil, |v| Value::Bulk(v.clone())))
}

/// # Format
/// `HEXISTS key field`: 1 when the field exists, else 0.
pub(crate) fn hexists(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    hexists_of(ctx, &args[1], &args[2])
}

/// [`hexists`] of borrowed words: a lock script's `redis.call` (every
/// acquire, renewal and unlock asks), without copying them into a command.
pub(crate) fn hexists_of(ctx: &mut Ctx<'_>, key: &[u8], field: &[u8]) -> Result<Value, CmdError> {
    let hash = ctx.db.get_hash(key, ctx.now)?;
    Ok(Value::Int(i64::from(
        hash.is_some_and(|h| h.contains_key(field)),
    )))
}

/// # Format
/// `HINCRBY key field increment`: the field's new value; a missing key or
/// field counts as 0.
pub(crate) fn hincrby(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    hincrby_of(ctx, &args[1], &args[2], &args[3])
}

/// [`hincrby`] of borrowed words (a lock script's `redis.call`): the
/// field is copied only when it is new.
pub(crate) fn hincrby_of(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    field_name: &Bytes,
    increment: &[u8],
) -> Result<Value, CmdError> {
    let by = int_arg(increment)?;
    let hash = ctx.db.hash_or_create(key, ctx.now)?;
    // The field is found once and its value replaced in place: every lock
    // acquire and unlock counts here.
    let field = hash.get_mut(field_name.as_ref());
    let current = match field.as_deref() {
        Some(v) => parse_i64(v).ok_or(CmdError::HashValueNotInteger),
        None => Ok(0),
    };
    let next = current.and_then(|c| c.checked_add(by).ok_or(CmdError::Overflow));
    match next {
        Ok(next) => {
            let text = crate::number::int_text(next);
            match field {
                Some(value) => *value = text,
                None => {
                    hash.insert(field_name.clone(), text);
                }
            }
            ctx.db.touch(key);
            Ok(Value::Int(next))
        }
        Err(e) => {
            // `hash_or_create` may have made an empty hash for nothing.
            ctx.db.drop_if_empty(key);
            Err(e)
        }
    }
}

/// # Format
/// `HDEL key field [field ...]`: how many fields were removed; the key goes
/// with its last field.
pub(crate) fn hdel(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let key = &args[1];
    if ctx.db.get_hash(key, ctx.now)?.is_none() {
        return Ok(Value::Int(0));
    }
    let hash = ctx.db.hash_or_create(key, ctx.now)?;
    let removed = args[2..]
        .iter()
        .filter(|f| hash.shift_remove(*f).is_some())
        .count();
    ctx.db.drop_if_empty(key);
    if removed > 0 {
        ctx.db.touch(key);
    }
    Ok(Value::Int(removed as i64))
}

/// # Format
/// `HGETALL key`: fields and values in order; a map on RESP3, a flat array
/// on RESP2.
pub(crate) fn hgetall(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let hash = ctx.db.get_hash(&args[1], ctx.now)?;
    Ok(Value::Map(
        hash.into_iter()
            .flatten()
            .map(|(f, v)| (Value::Bulk(f.clone()), Value::Bulk(v.clone())))
            .collect(),
    ))
}

/// # Format
/// `HLEN key`: the number of fields (0 when missing).
pub(crate) fn hlen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let hash = ctx.db.get_hash(&args[1], ctx.now)?;
    Ok(Value::Int(hash.map_or(0, |h| h.len() as i64)))
}
