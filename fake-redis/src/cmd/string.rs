//! String commands: GET, SET, INCR.

use bytes::Bytes;

use super::{Ctx, int_arg};
use crate::Value;
use crate::db::{Data, Entry};
use crate::error::CmdError;
use crate::number::parse_i64;

/// # Format
/// `GET key`: the string, nil when missing, `WRONGTYPE` for a hash.
pub(crate) fn get(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    Ok(ctx
        .state
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
        ctx.state.db.get_str(key, ctx.now)?
    } else {
        None
    };
    let existing = ctx.state.db.get(key, ctx.now).map(|e| e.expires_at);
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
    ctx.state.db.insert(
        key.clone(),
        Entry {
            data: Data::Str(args[2].clone()),
            expires_at,
        },
    );
    Ok(if o.get {
        old.map_or(Value::Nil, Value::Bulk)
    } else {
        Value::ok()
    })
}

/// # Format
/// `INCR key`: the string as an integer plus one, stored back (expiry
/// kept); a missing key counts as 0.
pub(crate) fn incr(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let key = &args[1];
    let current = match ctx.state.db.get_str(key, ctx.now)? {
        Some(s) => parse_i64(&s).ok_or(CmdError::NotInteger)?,
        None => 0,
    };
    let next = current.checked_add(1).ok_or(CmdError::Overflow)?;
    let text = Bytes::from(next.to_string());
    match ctx.state.db.get_mut(key, ctx.now) {
        Some(entry) => entry.data = Data::Str(text),
        None => ctx.state.db.insert(
            key.clone(),
            Entry {
                data: Data::Str(text),
                expires_at: None,
            },
        ),
    }
    Ok(Value::Int(next))
}
