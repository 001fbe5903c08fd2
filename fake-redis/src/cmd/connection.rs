//! Connection commands: PING, ECHO, HELLO, AUTH, SELECT, QUIT, RESET.

use bytes::Bytes;

use super::{Ctx, int_arg};
use crate::error::{CmdError, printable};
use crate::{Protocol, Value};

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

fn wrongpass() -> CmdError {
    CmdError::other("WRONGPASS invalid username-password pair or user is disabled.")
}

/// Checks `password` (for user `default`) against `requirepass`; without a
/// password configured, any `HELLO ... AUTH` passes (the default user has
/// no password) while a bare `AUTH` is refused, as in Redis.
fn authenticate(
    ctx: &mut Ctx<'_>,
    user: Option<&Bytes>,
    password: &Bytes,
    bare_auth: bool,
) -> Result<(), CmdError> {
    match ctx.state.config.requirepass.clone() {
        None if bare_auth && user.is_none() => Err(CmdError::other(
            "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?",
        )),
        None => Ok(()),
        Some(pass) => {
            let user_ok = user.is_none_or(|u| u.as_ref() == b"default");
            if user_ok && *password == pass {
                ctx.state.client(ctx.conn).authenticated = true;
                Ok(())
            } else {
                Err(wrongpass())
            }
        }
    }
}

/// # Format
/// `AUTH [username] password`: `OK` when `username` (if given) is
/// `default` and the password is `requirepass`; `WRONGPASS` otherwise.
pub(crate) fn auth(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    match args.len() {
        2 => authenticate(ctx, None, &args[1], true)?,
        3 => authenticate(ctx, Some(&args[1]), &args[2], true)?,
        _ => return Err(CmdError::Syntax),
    }
    Ok(Value::ok())
}

/// # Format
/// `SELECT index`: switches the connection to database `index` (0-15).
pub(crate) fn select(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let index = int_arg(&args[1])?;
    // A cluster node has database 0 only (Redis's `selectCommand`).
    if ctx.state.cluster.is_some() && index != 0 {
        return Err(CmdError::other("ERR SELECT is not allowed in cluster mode"));
    }
    let index = usize::try_from(index)
        .ok()
        .filter(|i| *i < crate::engine::DATABASES)
        .ok_or_else(|| CmdError::other("ERR DB index is out of range"))?;
    ctx.state.client(ctx.conn).db = index;
    Ok(Value::ok())
}

/// # Format
/// `HELLO [protover [AUTH username password] [SETNAME name]]`: switches
/// the protocol (2 or 3), authenticates and names the connection, and
/// replies with the server's description as a map.
pub(crate) fn hello(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let mut protocol = ctx.protocol();
    let mut auth = None;
    let mut name = None;
    if let Some(ver) = args.get(1) {
        let ver = int_arg(ver).map_err(|_| {
            CmdError::other("ERR Protocol version is not an integer or out of range")
        })?;
        let mut j = 2;
        while j < args.len() {
            let more = args.len() - j - 1;
            if args[j].eq_ignore_ascii_case(b"auth") && more >= 2 {
                auth = Some((&args[j + 1], &args[j + 2]));
                j += 3;
            } else if args[j].eq_ignore_ascii_case(b"setname") && more >= 1 {
                name = Some(&args[j + 1]);
                j += 2;
            } else {
                return Err(CmdError::other(format!(
                    "ERR Syntax error in HELLO option '{}'",
                    printable(&args[j])
                )));
            }
        }
        protocol = match ver {
            2 => Protocol::Resp2,
            3 => Protocol::Resp3,
            _ => return Err(CmdError::other("NOPROTO unsupported protocol version")),
        };
    }
    match auth {
        Some((user, pass)) => authenticate(ctx, Some(user), pass, false)?,
        None if ctx.state.config.requirepass.is_some()
            && !ctx.state.client(ctx.conn).authenticated =>
        {
            return Err(CmdError::other(
                "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time",
            ));
        }
        None => {}
    }
    if let Some(name) = name {
        if !name.iter().all(|b| (b'!'..=b'~').contains(b)) {
            return Err(CmdError::other(
                "ERR Client names cannot contain spaces, newlines or special characters.",
            ));
        }
        ctx.state.client(ctx.conn).name = (!name.is_empty()).then(|| name.clone());
    }
    ctx.state.set_protocol(ctx.conn, protocol);
    let proto = match protocol {
        Protocol::Resp2 => 2,
        Protocol::Resp3 => 3,
    };
    Ok(Value::Map(vec![
        (Value::bulk("server"), Value::bulk("redis")),
        (
            Value::bulk("version"),
            Value::bulk(ctx.state.version.full()),
        ),
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
/// `RESET`: drops the connection's subscriptions, transaction, watched
/// keys, name and authentication, returns it to RESP2 and database 0, and
/// replies `RESET`.
pub(crate) fn reset(ctx: &mut Ctx<'_>, _: &[Bytes]) -> Result<Value, CmdError> {
    ctx.state.pubsub.remove_conn(ctx.conn);
    super::transaction::unwatch(ctx, &[])?;
    let needs_auth = ctx.state.config.requirepass.is_some();
    let client = ctx.state.client(ctx.conn);
    client.multi = None;
    client.db = 0;
    client.name = None;
    client.protocol = Protocol::Resp2;
    if needs_auth {
        client.authenticated = false;
    }
    Ok(Value::Simple("RESET".into()))
}
