//! Blocking list pops: BLPOP, BRPOP (see `crate::blocking` for how a
//! blocked client is served or times out).

use bytes::Bytes;

use super::Ctx;
use crate::Value;
use crate::client::{Blocked, BlockedOn};
use crate::error::CmdError;
use crate::number::parse_float;

/// The timeout argument in ms (0: forever), with Redis 7.0's texts: a
/// value that does not fit in 64 bits wraps negative there, and so is
/// "negative" here too.
fn timeout_ms(raw: &[u8]) -> Result<i64, CmdError> {
    let seconds = parse_float(raw)
        .ok_or_else(|| CmdError::other("ERR timeout is not a float or out of range"))?;
    let ms = (seconds * 1000.0).ceil();
    if !(0.0..9.2e18).contains(&ms) {
        return Err(CmdError::other("ERR timeout is negative"));
    }
    Ok(ms as i64)
}

fn pop(ctx: &mut Ctx<'_>, args: &[Bytes], left: bool) -> Result<Vec<Value>, CmdError> {
    let keys = &args[1..args.len() - 1];
    let timeout = timeout_ms(&args[args.len() - 1])?;
    for key in keys {
        if let Some(reply) = pop_ready(ctx.db, key, left, ctx.now)? {
            return Ok(vec![reply]);
        }
    }
    let client = ctx.state.client(ctx.conn);
    if client.in_exec {
        // Inside a transaction nothing can arrive: Redis answers at once.
        return Ok(vec![Value::NilArray]);
    }
    client.blocked = Some(Blocked {
        on: BlockedOn::List {
            db: ctx.db_index,
            keys: keys.to_vec(),
            left,
        },
        deadline: (timeout > 0).then(|| ctx.now.saturating_add(timeout)),
    });
    // No reply now: it comes when the client is served or times out.
    Ok(vec![])
}

/// Pops from `key` if it holds a non-empty list: `[key, element]`.
pub(crate) fn pop_ready(
    db: &mut crate::db::Db,
    key: &Bytes,
    left: bool,
    now: i64,
) -> Result<Option<Value>, CmdError> {
    let Some(list) = db.get_list(key, now)? else {
        return Ok(None);
    };
    let item = if left {
        list.pop_front()
    } else {
        list.pop_back()
    };
    let Some(item) = item else {
        return Ok(None);
    };
    db.touch(key);
    db.drop_if_empty(key);
    Ok(Some(Value::Array(vec![
        Value::Bulk(key.clone()),
        Value::Bulk(item),
    ])))
}

/// # Format
/// `BLPOP key [key ...] timeout`: `[key, element]` from the first key
/// holding a non-empty list; otherwise the client waits until an element
/// is pushed to one of the keys or `timeout` seconds pass (0: forever;
/// then a nil array). Time is the engine's clock, so inside the simulator
/// the wait is in virtual time.
pub(crate) fn blpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Vec<Value>, CmdError> {
    pop(ctx, args, true)
}

/// # Format
/// `BRPOP key [key ...] timeout`: as `BLPOP`, from the tail.
pub(crate) fn brpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Vec<Value>, CmdError> {
    pop(ctx, args, false)
}
