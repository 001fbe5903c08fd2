//! Transaction commands: MULTI, EXEC, DISCARD, WATCH, UNWATCH (see
//! `crate::multi` for how the queue runs).

use bytes::Bytes;

use super::Ctx;
use crate::Value;
use crate::client::{Multi, Watched};
use crate::error::CmdError;

/// # Format
/// `MULTI`: starts queueing commands; `OK`.
pub(crate) fn multi(ctx: &mut Ctx<'_>, _: &[Bytes]) -> Result<Value, CmdError> {
    let client = ctx.state.client(ctx.conn);
    if client.multi.is_some() {
        return Err(CmdError::other("ERR MULTI calls can not be nested"));
    }
    client.multi = Some(Multi::default());
    Ok(Value::ok())
}

/// # Format
/// `EXEC`: runs the queue (handled by the engine); here only without
/// `MULTI`.
pub(crate) fn exec(_: &mut Ctx<'_>, _: &[Bytes]) -> Result<Value, CmdError> {
    Err(CmdError::other("ERR EXEC without MULTI"))
}

/// # Format
/// `DISCARD`: drops the queue and every watched key; `OK`.
pub(crate) fn discard(ctx: &mut Ctx<'_>, _: &[Bytes]) -> Result<Value, CmdError> {
    if ctx.state.client(ctx.conn).multi.take().is_none() {
        return Err(CmdError::other("ERR DISCARD without MULTI"));
    }
    unwatch_all(ctx);
    Ok(Value::ok())
}

/// # Format
/// `WATCH key [key ...]`: the next `EXEC` fails if any of the keys changes
/// (or expires) before it; `OK`.
pub(crate) fn watch(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    if ctx.state.client(ctx.conn).multi.is_some() {
        return Err(CmdError::other("ERR WATCH inside MULTI is not allowed"));
    }
    for key in &args[1..] {
        let db = ctx.db_index;
        let client = ctx.state.client(ctx.conn);
        if client.watched.iter().any(|w| w.db == db && w.key == *key) {
            continue;
        }
        let expires_at = ctx.db.peek(key, ctx.now).and_then(|e| e.expires_at);
        ctx.state.client(ctx.conn).watched.push(Watched {
            db,
            key: key.clone(),
            expires_at,
        });
        ctx.db.watch(key, ctx.conn);
    }
    Ok(Value::ok())
}

/// # Format
/// `UNWATCH`: forgets every watched key; `OK`.
pub(crate) fn unwatch(ctx: &mut Ctx<'_>, _: &[Bytes]) -> Result<Value, CmdError> {
    unwatch_all(ctx);
    Ok(Value::ok())
}

fn unwatch_all(ctx: &mut Ctx<'_>) {
    let client = ctx.state.client(ctx.conn);
    let watched = std::mem::take(&mut client.watched);
    client.dirty_cas = false;
    let conn = ctx.conn;
    for w in watched {
        ctx.db_at(w.db).unwatch(&w.key, conn);
    }
}
