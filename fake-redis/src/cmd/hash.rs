//! Hash commands: HSET, HGET, HEXISTS, HINCRBY, HDEL, HGETALL, HLEN.

use bytes::Bytes;

use super::{Ctx, int_arg};
use crate::Value;
use crate::error::CmdError;
use crate::number::parse_i64;

/// # Format
/// `HSET key field value [field value ...]`: how many fields were new. An
/// existing field keeps its place in the order.
pub(crate) fn hset(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    if !args.len().is_multiple_of(2) {
        return Err(CmdError::WrongArity("hset".into()));
    }
    let hash = ctx.state.db.hash_or_create(&args[1], ctx.now)?;
    let mut added = 0;
    for pair in args[2..].chunks(2) {
        if hash.insert(pair[0].clone(), pair[1].clone()).is_none() {
            added += 1;
        }
    }
    Ok(Value::Int(added))
}

/// # Format
/// `HGET key field`: the value, or nil.
pub(crate) fn hget(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let hash = ctx.state.db.get_hash(&args[1], ctx.now)?;
    Ok(hash
        .and_then(|h| h.get(&args[2]))
        .map_or(Value::Nil, |v| Value::Bulk(v.clone())))
}

/// # Format
/// `HEXISTS key field`: 1 when the field exists, else 0.
pub(crate) fn hexists(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let hash = ctx.state.db.get_hash(&args[1], ctx.now)?;
    Ok(Value::Int(i64::from(
        hash.is_some_and(|h| h.contains_key(&args[2])),
    )))
}

/// # Format
/// `HINCRBY key field increment`: the field's new value; a missing key or
/// field counts as 0.
pub(crate) fn hincrby(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let by = int_arg(&args[3])?;
    let key = &args[1];
    let hash = ctx.state.db.hash_or_create(key, ctx.now)?;
    let current = match hash.get(&args[2]) {
        Some(v) => parse_i64(v).ok_or(CmdError::HashValueNotInteger),
        None => Ok(0),
    };
    let next = current.and_then(|c| c.checked_add(by).ok_or(CmdError::Overflow));
    match next {
        Ok(next) => {
            hash.insert(args[2].clone(), Bytes::from(next.to_string()));
            Ok(Value::Int(next))
        }
        Err(e) => {
            // `hash_or_create` may have made an empty hash for nothing.
            ctx.state.db.drop_if_empty(key);
            Err(e)
        }
    }
}

/// # Format
/// `HDEL key field [field ...]`: how many fields were removed; the key goes
/// with its last field.
pub(crate) fn hdel(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let key = &args[1];
    if ctx.state.db.get_hash(key, ctx.now)?.is_none() {
        return Ok(Value::Int(0));
    }
    let hash = ctx.state.db.hash_or_create(key, ctx.now)?;
    let removed = args[2..]
        .iter()
        .filter(|f| hash.shift_remove(*f).is_some())
        .count();
    ctx.state.db.drop_if_empty(key);
    Ok(Value::Int(removed as i64))
}

/// # Format
/// `HGETALL key`: fields and values in order; a map on RESP3, a flat array
/// on RESP2.
pub(crate) fn hgetall(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let hash = ctx.state.db.get_hash(&args[1], ctx.now)?;
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
    let hash = ctx.state.db.get_hash(&args[1], ctx.now)?;
    Ok(Value::Int(hash.map_or(0, |h| h.len() as i64)))
}
