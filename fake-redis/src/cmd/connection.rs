//! Connection commands: PING, ECHO, HELLO, QUIT, RESET.

use bytes::Bytes;

use super::{Ctx, int_arg};
use crate::error::{CmdError, printable};
use crate::{Protocol, Value};

/// The version HELLO reports: the Redis these replies were checked against.
pub(crate) const REDIS_VERSION: &str = "7.0.15";

/// # Format
/// `PING [message]`: `PONG`, or the message as a bulk string. A subscribed
/// RESP2 connection gets `["pong", message or ""]` instead.
pub(crate) fn ping(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    if args.len() > 2 {
        return Err(CmdError::WrongArity("ping".into()));
    }
    let subscribed = ctx.protocol() == Protocol::Resp2 && ctx.state.pubsub.count(ctx.conn) > 0;
    match (subscribed, args.get(1)) {
        (true, msg) => Ok(Value::Array(vec![
            Value::bulk("pong"),
            Value::Bulk(msg.cloned().unwrap_or_default()),
        ])),
        (false, Some(msg)) => Ok(Value::Bulk(msg.clone())),
        (false, None) => Ok(Value::Simple("PONG".into())),
    }
}

/// # Format
/// `ECHO message`: the message.
pub(crate) fn echo(_: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    Ok(Value::Bulk(args[1].clone()))
}

/// # Format
/// `HELLO [protover [AUTH username password] [SETNAME name]]`: switches
/// the protocol (2 or 3) and replies with the server's description as a
/// map. `AUTH` is refused as a syntax error (there are no users); `SETNAME`
/// is accepted and ignored.
pub(crate) fn hello(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let mut protocol = ctx.protocol();
    if let Some(ver) = args.get(1) {
        let ver = int_arg(ver).map_err(|_| {
            CmdError::other("ERR Protocol version is not an integer or out of range")
        })?;
        protocol = match ver {
            2 => Protocol::Resp2,
            3 => Protocol::Resp3,
            _ => return Err(CmdError::other("NOPROTO unsupported protocol version")),
        };
        let mut j = 2;
        while j < args.len() {
            if args[j].eq_ignore_ascii_case(b"setname") && j + 1 < args.len() {
                j += 2;
            } else {
                return Err(CmdError::other(format!(
                    "ERR Syntax error in HELLO option '{}'",
                    printable(&args[j])
                )));
            }
        }
    }
    ctx.state.set_protocol(ctx.conn, protocol);
    let proto = match protocol {
        Protocol::Resp2 => 2,
        Protocol::Resp3 => 3,
    };
    Ok(Value::Map(vec![
        (Value::bulk("server"), Value::bulk("redis")),
        (Value::bulk("version"), Value::bulk(REDIS_VERSION)),
        (Value::bulk("proto"), Value::Int(proto)),
        (
            Value::bulk("id"),
            Value::Int(i64::try_from(ctx.conn.0).unwrap_or(i64::MAX)),
        ),
        (Value::bulk("mode"), Value::bulk("standalone")),
        (Value::bulk("role"), Value::bulk("master")),
        (Value::bulk("modules"), Value::Array(vec![])),
    ]))
}

/// # Format
/// `QUIT`: `OK`, then the server closes the connection. Redis 7.0 ignores
/// any arguments.
pub(crate) fn quit(ctx: &mut Ctx<'_>, _: &[Bytes]) -> Result<Value, CmdError> {
    ctx.out.close = true;
    Ok(Value::ok())
}

/// # Format
/// `RESET`: drops the connection's subscriptions, returns it to RESP2, and
/// replies `RESET`.
pub(crate) fn reset(ctx: &mut Ctx<'_>, _: &[Bytes]) -> Result<Value, CmdError> {
    ctx.state.pubsub.remove_conn(ctx.conn);
    ctx.state.set_protocol(ctx.conn, Protocol::Resp2);
    Ok(Value::Simple("RESET".into()))
}
