//! Key commands: DEL, EXISTS, PEXPIRE, EXPIRE, PTTL, TTL, PERSIST, TYPE,
//! RENAME, KEYS, SCAN.

use bytes::Bytes;

use super::{Ctx, int_arg};
use crate::Value;
use crate::error::{CmdError, printable};

/// # Format
/// `DEL key [key ...]`: how many keys existed and were deleted.
pub(crate) fn del(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let n = args[1..]
        .iter()
        .filter(|k| ctx.db.remove(k, ctx.now))
        .count();
    Ok(Value::Int(n as i64))
}

/// # Format
/// `EXISTS key [key ...]`: how many of the keys exist (a repeated key counts
/// each time).
pub(crate) fn exists(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    Ok(exists_of(ctx, args[1..].iter().map(|k| k.as_ref())))
}

/// [`exists`] of borrowed keys: a lock script's `redis.call`, without
/// copying them into a command.
pub(crate) fn exists_of<'k>(ctx: &mut Ctx<'_>, keys: impl IntoIterator<Item = &'k [u8]>) -> Value {
    let n = keys
        .into_iter()
        .filter(|k| ctx.db.get(k, ctx.now).is_some())
        .count();
    Value::Int(n as i64)
}

#[derive(Default)]
struct ExpireFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
}

fn parse_expire_flags(args: &[Bytes]) -> Result<ExpireFlags, CmdError> {
    let mut f = ExpireFlags::default();
    for arg in &args[3..] {
        match arg.to_ascii_lowercase().as_slice() {
            b"nx" => f.nx = true,
            b"xx" => f.xx = true,
            b"gt" => f.gt = true,
            b"lt" => f.lt = true,
            _ => {
                return Err(CmdError::other(format!(
                    "ERR Unsupported option {}",
                    printable(arg)
                )));
            }
        }
    }
    if f.nx && (f.xx || f.gt || f.lt) {
        return Err(CmdError::other(
            "ERR NX and XX, GT or LT options at the same time are not compatible",
        ));
    }
    if f.gt && f.lt {
        return Err(CmdError::other(
            "ERR GT and LT options at the same time are not compatible",
        ));
    }
    Ok(f)
}

/// EXPIRE and PEXPIRE: Redis's `expireGenericCommand`, in its order of
/// checks (options, integer, overflow, key, flags, already expired).
fn expire_generic(
    ctx: &mut Ctx<'_>,
    args: &[Bytes],
    seconds: bool,
    name: &'static str,
) -> Result<Value, CmdError> {
    let flags = parse_expire_flags(args)?;
    expire_key(ctx, &args[1], &args[2], flags, seconds, name)
}

/// [`expire_generic`] once the options are read: `key` to expire in
/// `time` (seconds or ms).
fn expire_key(
    ctx: &mut Ctx<'_>,
    key: &[u8],
    time: &[u8],
    flags: ExpireFlags,
    seconds: bool,
    name: &'static str,
) -> Result<Value, CmdError> {
    let mut when = int_arg(time)?;
    if seconds {
        if !(i64::MIN / 1000..=i64::MAX / 1000).contains(&when) {
            return Err(CmdError::InvalidExpire(name));
        }
        when *= 1000;
    }
    if when > i64::MAX - ctx.now {
        return Err(CmdError::InvalidExpire(name));
    }
    when += ctx.now;
    let Some(entry) = ctx.db.get_mut(key, ctx.now) else {
        return Ok(Value::Int(0));
    };
    let current = entry.expires_at;
    let refused = (flags.nx && current.is_some())
        || (flags.xx && current.is_none())
        || (flags.gt && current.is_none_or(|c| when <= c))
        || (flags.lt && current.is_some_and(|c| when >= c));
    if refused {
        return Ok(Value::Int(0));
    }
    if when <= ctx.now {
        ctx.db.remove(key, ctx.now);
    } else {
        entry.expires_at = Some(when);
        ctx.db.touch(key);
    }
    Ok(Value::Int(1))
}

/// # Format
/// `PEXPIRE key milliseconds [NX | XX | GT | LT]`: 1 when the expiry was
/// set (a time not in the future deletes the key), 0 when the key is
/// missing or a flag refused.
pub(crate) fn pexpire(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    expire_generic(ctx, args, false, "pexpire")
}

/// [`pexpire`] of borrowed words, without options (a lock script's
/// `redis.call`).
pub(crate) fn pexpire_of(ctx: &mut Ctx<'_>, key: &[u8], ms: &[u8]) -> Result<Value, CmdError> {
    expire_key(ctx, key, ms, ExpireFlags::default(), false, "pexpire")
}

/// # Format
/// `EXPIRE key seconds [NX | XX | GT | LT]`: as `PEXPIRE`, in seconds.
pub(crate) fn expire(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    expire_generic(ctx, args, true, "expire")
}

/// Remaining ms: -2 for a missing key, -1 for one without expiry.
fn remaining_ms(ctx: &mut Ctx<'_>, key: &[u8]) -> Option<i64> {
    let now = ctx.now;
    ctx.db
        .get(key, now)
        .map(|e| e.expires_at.map_or(-1, |t| (t - now).max(0)))
}

/// # Format
/// `PTTL key`: milliseconds left, -1 without expiry, -2 when missing.
pub(crate) fn pttl(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    Ok(pttl_of(ctx, &args[1]))
}

/// [`pttl`] of a borrowed key (a lock script's `redis.call`).
pub(crate) fn pttl_of(ctx: &mut Ctx<'_>, key: &[u8]) -> Value {
    Value::Int(remaining_ms(ctx, key).unwrap_or(-2))
}

/// # Format
/// `TTL key`: seconds left, rounded to nearest as Redis does
/// (`(ms + 500) / 1000`), -1 without expiry, -2 when missing.
pub(crate) fn ttl(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    Ok(Value::Int(match remaining_ms(ctx, &args[1]) {
        None => -2,
        Some(-1) => -1,
        Some(ms) => (ms + 500) / 1000,
    }))
}

/// # Format
/// `PERSIST key`: 1 when the key's expiry was removed, 0 when it had none
/// or is missing.
pub(crate) fn persist(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let Some(entry) = ctx.db.get_mut(&args[1], ctx.now) else {
        return Ok(Value::Int(0));
    };
    if entry.expires_at.take().is_none() {
        return Ok(Value::Int(0));
    }
    ctx.db.touch(&args[1]);
    Ok(Value::Int(1))
}

/// # Format
/// `TYPE key`: `string`, `hash`, `list`, or `none`, as a status.
pub(crate) fn type_(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let name = ctx
        .db
        .get(&args[1], ctx.now)
        .map_or("none", |e| e.data.type_name());
    Ok(Value::Simple(name.to_owned()))
}

/// # Format
/// `RENAME key newkey`: moves the value and its expiry; `ERR no such key`
/// when `key` is missing.
pub(crate) fn rename(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let Some(entry) = ctx.db.take(&args[1], ctx.now) else {
        return Err(CmdError::other("ERR no such key"));
    };
    ctx.db.remove(&args[2], ctx.now);
    ctx.db.insert(args[2].clone(), entry);
    Ok(Value::ok())
}

/// # Format
/// `KEYS pattern`: every live key matching the glob. Redis answers in its
/// hash table's order; here it is byte order.
pub(crate) fn keys(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    Ok(Value::Array(
        ctx.db
            .keys(ctx.now)
            .filter(|k| crate::glob::matches(&args[1], k))
            .map(|k| Value::Bulk(Bytes::copy_from_slice(k)))
            .collect(),
    ))
}

/// # Format
/// `SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]`: `[next cursor,
/// keys]`. The cursor is a position in byte order, and up to `COUNT`
/// (default 10) keys are visited per call. A key present for the whole
/// scan is returned unless keys before it are deleted meanwhile (Redis's
/// reverse-binary cursor gives the stronger guarantee).
pub(crate) fn scan(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let cursor = std::str::from_utf8(&args[1])
        .ok()
        .and_then(|c| c.parse::<u64>().ok())
        .ok_or_else(|| CmdError::other("ERR invalid cursor"))?;
    let (mut pattern, mut count, mut kind) = (None, 10usize, None);
    let mut j = 2;
    while j < args.len() {
        let value = args.get(j + 1).ok_or(CmdError::Syntax)?;
        match args[j].to_ascii_lowercase().as_slice() {
            b"match" => pattern = Some(value.clone()),
            b"count" => {
                count = usize::try_from(int_arg(value)?).map_err(|_| CmdError::Syntax)?;
                if count < 1 {
                    return Err(CmdError::Syntax);
                }
            }
            b"type" => kind = Some(value.to_ascii_lowercase()),
            _ => return Err(CmdError::Syntax),
        }
        j += 2;
    }
    let start = usize::try_from(cursor).unwrap_or(usize::MAX);
    let mut visited = 0;
    let mut found = Vec::new();
    for (key, entry) in ctx.db.keys_after(None, ctx.now).skip(start).take(count) {
        visited += 1;
        let type_ok = kind
            .as_deref()
            .is_none_or(|k| k == entry.data.type_name().as_bytes());
        let match_ok = pattern
            .as_ref()
            .is_none_or(|p| crate::glob::matches(p, key));
        if type_ok && match_ok {
            found.push(Value::Bulk(Bytes::copy_from_slice(key)));
        }
    }
    let total = ctx.db.len(ctx.now);
    let next = start.saturating_add(visited);
    let next = if visited < count || next >= total {
        0
    } else {
        next
    };
    Ok(Value::Array(vec![
        Value::bulk(next.to_string()),
        Value::Array(found),
    ]))
}
