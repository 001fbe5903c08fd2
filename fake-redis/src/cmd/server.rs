//! Server commands: DBSIZE, FLUSHALL, FLUSHDB, TIME (INFO is in `info`).

use bytes::Bytes;

use super::Ctx;
use crate::Value;
use crate::error::CmdError;

/// # Format
/// `DBSIZE`: the number of live keys.
pub(crate) fn dbsize(ctx: &mut Ctx<'_>, _: &[Bytes]) -> Result<Value, CmdError> {
    Ok(Value::Int(ctx.db.len(ctx.now) as i64))
}

/// # Format
/// `FLUSHALL [ASYNC | SYNC]`: deletes every key of every database; `OK`. Scripts stay cached.
pub(crate) fn flushall(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    match args.get(1..).unwrap_or_default() {
        [] => {}
        [mode] if mode.eq_ignore_ascii_case(b"sync") || mode.eq_ignore_ascii_case(b"async") => {}
        _ => return Err(CmdError::Syntax),
    }
    for i in 0..crate::engine::DATABASES {
        ctx.db_at(i).clear();
    }
    Ok(Value::ok())
}

/// # Format
/// `FLUSHDB [ASYNC | SYNC]`: deletes every key of the selected database.
pub(crate) fn flushdb(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    match args.get(1..).unwrap_or_default() {
        [] => {}
        [mode] if mode.eq_ignore_ascii_case(b"sync") || mode.eq_ignore_ascii_case(b"async") => {}
        _ => return Err(CmdError::Syntax),
    }
    ctx.db.clear();
    Ok(Value::ok())
}

/// # Format
/// `TIME`: `[unix seconds, microseconds]` as bulk strings, from the
/// injected clock (whole milliseconds, so microseconds end in `000`).
pub(crate) fn time(ctx: &mut Ctx<'_>, _: &[Bytes]) -> Result<Value, CmdError> {
    let now = ctx.now.max(0);
    Ok(Value::Array(vec![
        Value::bulk((now / 1000).to_string()),
        Value::bulk(((now % 1000) * 1000).to_string()),
    ]))
}
