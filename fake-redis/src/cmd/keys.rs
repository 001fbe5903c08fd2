//! Key commands: DEL, EXISTS, PEXPIRE, EXPIRE, PTTL, TTL.

use bytes::Bytes;

use super::{Ctx, int_arg};
use crate::Value;
use crate::error::{CmdError, printable};

/// # Format
/// `DEL key [key ...]`: how many keys existed and were deleted.
pub(crate) fn del(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let n = args[1..]
        .iter()
        .filter(|k| ctx.state.db.remove(k, ctx.now))
        .count();
    Ok(Value::Int(n as i64))
}

/// # Format
/// `EXISTS key [key ...]`: how many of the keys exist (a repeated key counts
/// each time).
pub(crate) fn exists(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let n = args[1..]
        .iter()
        .filter(|k| ctx.state.db.get(k, ctx.now).is_some())
        .count();
    Ok(Value::Int(n as i64))
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
    let mut when = int_arg(&args[2])?;
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
    let key = &args[1];
    let Some(entry) = ctx.state.db.get_mut(key, ctx.now) else {
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
        ctx.state.db.remove(key, ctx.now);
    } else {
        entry.expires_at = Some(when);
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

/// # Format
/// `EXPIRE key seconds [NX | XX | GT | LT]`: as `PEXPIRE`, in seconds.
pub(crate) fn expire(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    expire_generic(ctx, args, true, "expire")
}

/// Remaining ms: -2 for a missing key, -1 for one without expiry.
fn remaining_ms(ctx: &mut Ctx<'_>, key: &[u8]) -> Option<i64> {
    let now = ctx.now;
    ctx.state
        .db
        .get(key, now)
        .map(|e| e.expires_at.map_or(-1, |t| (t - now).max(0)))
}

/// # Format
/// `PTTL key`: milliseconds left, -1 without expiry, -2 when missing.
pub(crate) fn pttl(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    Ok(Value::Int(remaining_ms(ctx, &args[1]).unwrap_or(-2)))
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
