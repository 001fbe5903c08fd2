//! Commands: a table of names, arities and handlers, and a thin dispatcher.
//!
//! Each handler lives with its family (`string`, `keys`, `hash`, ...) and
//! documents its syntax in a `# Format` block. The dispatcher only checks
//! what Redis checks before any command runs, in Redis's order: the name is
//! known, the argument count fits, and a RESP2 connection in subscribed
//! state only runs the pub/sub commands.

mod connection;
mod eval;
mod hash;
mod keys;
mod pubsub;
mod server;
mod string;

use bytes::Bytes;

use crate::engine::State;
use crate::error::{CmdError, printable};
use crate::{ConnId, Protocol, Response, Value};

/// Everything a command may touch while it runs.
pub(crate) struct Ctx<'a> {
    pub(crate) state: &'a mut State,
    pub(crate) conn: ConnId,
    /// The injected clock's reading for this command (Unix ms).
    pub(crate) now: i64,
    pub(crate) out: &'a mut Response,
}

impl Ctx<'_> {
    /// The protocol of the calling connection.
    pub(crate) fn protocol(&self) -> Protocol {
        self.state.protocol(self.conn)
    }
}

type One = fn(&mut Ctx<'_>, &[Bytes]) -> Result<Value, CmdError>;
type Many = fn(&mut Ctx<'_>, &[Bytes]) -> Result<Vec<Value>, CmdError>;

/// How a command replies: once, or once per argument (`SUBSCRIBE a b`).
#[derive(Clone, Copy)]
enum Handler {
    One(One),
    Many(Many),
}

/// One command's entry in the table.
struct Spec {
    /// Lowercase name, as Redis prints it in errors.
    name: &'static str,
    /// Redis's arity: `n` exactly `n` words, `-n` at least `n`.
    arity: i32,
    /// Allowed while a RESP2 connection is subscribed.
    pubsub_ok: bool,
    /// For a container command (`SCRIPT`): each subcommand and its arity.
    subcommands: &'static [(&'static str, i32)],
    handler: Handler,
}

const fn one(name: &'static str, arity: i32, f: One) -> Spec {
    Spec {
        name,
        arity,
        pubsub_ok: false,
        subcommands: &[],
        handler: Handler::One(f),
    }
}

const COMMANDS: &[Spec] = &[
    Spec {
        name: "ping",
        arity: -1,
        pubsub_ok: true,
        subcommands: &[],
        handler: Handler::One(connection::ping),
    },
    one("echo", 2, connection::echo),
    one("hello", -1, connection::hello),
    Spec {
        name: "quit",
        arity: -1,
        pubsub_ok: true,
        subcommands: &[],
        handler: Handler::One(connection::quit),
    },
    Spec {
        name: "reset",
        arity: 1,
        pubsub_ok: true,
        subcommands: &[],
        handler: Handler::One(connection::reset),
    },
    one("get", 2, string::get),
    one("set", -3, string::set),
    one("incr", 2, string::incr),
    one("del", -2, keys::del),
    one("exists", -2, keys::exists),
    one("pexpire", -3, keys::pexpire),
    one("expire", -3, keys::expire),
    one("pttl", 2, keys::pttl),
    one("ttl", 2, keys::ttl),
    one("hset", -4, hash::hset),
    one("hget", 3, hash::hget),
    one("hexists", 3, hash::hexists),
    one("hincrby", 4, hash::hincrby),
    one("hdel", -3, hash::hdel),
    one("hgetall", 2, hash::hgetall),
    one("hlen", 2, hash::hlen),
    one("publish", 3, pubsub::publish),
    Spec {
        name: "subscribe",
        arity: -2,
        pubsub_ok: true,
        subcommands: &[],
        handler: Handler::Many(pubsub::subscribe),
    },
    Spec {
        name: "unsubscribe",
        arity: -1,
        pubsub_ok: true,
        subcommands: &[],
        handler: Handler::Many(pubsub::unsubscribe),
    },
    one("eval", -3, eval::eval),
    one("evalsha", -3, eval::evalsha),
    Spec {
        name: "script",
        arity: -2,
        pubsub_ok: false,
        subcommands: &[("load", 3), ("exists", -3), ("flush", -2)],
        handler: Handler::One(eval::script),
    },
    one("dbsize", 1, server::dbsize),
    one("flushall", -1, server::flushall),
    one("time", 1, server::time),
];

fn lookup(name: &[u8]) -> Option<&'static Spec> {
    COMMANDS
        .iter()
        .find(|c| c.name.as_bytes().eq_ignore_ascii_case(name))
}

fn arity_fits(arity: i32, argc: usize) -> bool {
    let argc = i64::try_from(argc).unwrap_or(i64::MAX);
    let arity = i64::from(arity);
    if arity >= 0 {
        argc == arity
    } else {
        argc >= -arity
    }
}

/// Redis's reply to an unknown command: the name and up to 128 characters
/// of its arguments, each quoted.
fn unknown_command(args: &[Bytes]) -> CmdError {
    let name: String = printable(&args[0]).chars().take(128).collect();
    let mut shown = String::new();
    for arg in &args[1..] {
        if shown.len() >= 128 {
            break;
        }
        let room = 128 - shown.len();
        let text = printable(arg);
        let cut: String = text
            .chars()
            .scan(0, |n, c| {
                *n += c.len_utf8();
                (*n <= room).then_some(c)
            })
            .collect();
        shown.push('\'');
        shown.push_str(&cut);
        shown.push_str("' ");
    }
    CmdError::other(format!(
        "ERR unknown command '{name}', with args beginning with: {shown}"
    ))
}

/// Runs one client command and returns its replies.
pub(crate) fn dispatch(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Vec<Value> {
    let Some(spec) = lookup(&args[0]) else {
        return vec![error_value(unknown_command(args))];
    };
    if !arity_fits(spec.arity, args.len()) {
        return vec![error_value(CmdError::WrongArity(spec.name.to_owned()))];
    }
    let full_name = match resolve_subcommand(spec, args) {
        Ok(name) => name,
        Err(e) => return vec![error_value(e)],
    };
    if !spec.pubsub_ok && ctx.protocol() == Protocol::Resp2 && ctx.state.pubsub.count(ctx.conn) > 0
    {
        return vec![Value::error(format!(
            "ERR Can't execute '{full_name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
        ))];
    }
    match spec.handler {
        Handler::One(f) => vec![f(ctx, args).unwrap_or_else(error_value)],
        Handler::Many(f) => f(ctx, args).unwrap_or_else(|e| vec![error_value(e)]),
    }
}

/// Runs a command on behalf of a script (`redis.call`): no pub/sub state
/// check, and the error comes back to the script instead of the client.
pub(crate) fn call(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let Some(spec) = args.first().and_then(|n| lookup(n)) else {
        return Err(CmdError::other(
            "ERR Unknown Redis command called from script",
        ));
    };
    if !arity_fits(spec.arity, args.len()) {
        return Err(CmdError::other(
            "ERR Wrong number of args calling Redis command from script",
        ));
    }
    match spec.handler {
        Handler::One(f) => f(ctx, args),
        Handler::Many(_) => Err(CmdError::other(
            "ERR This Redis command is not allowed from script",
        )),
    }
}

/// The full name (`script|load`) after Redis's subcommand checks: a known
/// subcommand, with its own arity.
fn resolve_subcommand(spec: &Spec, args: &[Bytes]) -> Result<String, CmdError> {
    if spec.subcommands.is_empty() {
        return Ok(spec.name.to_owned());
    }
    let Some(&(sub, arity)) = spec
        .subcommands
        .iter()
        .find(|(name, _)| name.as_bytes().eq_ignore_ascii_case(&args[1]))
    else {
        return Err(CmdError::other(format!(
            "ERR unknown subcommand '{}'. Try {} HELP.",
            printable(&args[1]).chars().take(128).collect::<String>(),
            spec.name.to_ascii_uppercase()
        )));
    };
    let full = format!("{}|{sub}", spec.name);
    if !arity_fits(arity, args.len()) {
        return Err(CmdError::WrongArity(full));
    }
    Ok(full)
}

fn error_value(e: CmdError) -> Value {
    Value::Error(e.to_string())
}

/// Parses a Redis integer argument.
pub(crate) fn int_arg(arg: &[u8]) -> Result<i64, CmdError> {
    crate::number::parse_i64(arg).ok_or(CmdError::NotInteger)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The unknown-command error quotes each argument followed by a space,
    /// exactly as redis-server 7.0.15 prints `foo a b`.
    #[test]
    fn unknown_command_text_matches_redis() {
        let args: Vec<Bytes> = ["foo", "a", "b"].iter().map(|s| Bytes::from(*s)).collect();
        assert_eq!(
            unknown_command(&args).to_string(),
            "ERR unknown command 'foo', with args beginning with: 'a' 'b' "
        );
        let alone = vec![Bytes::from("foo")];
        assert_eq!(
            unknown_command(&alone).to_string(),
            "ERR unknown command 'foo', with args beginning with: "
        );
    }
}
