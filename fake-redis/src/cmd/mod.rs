//! Commands: a table of names, arities and handlers, and a thin dispatcher.
//!
//! Each handler lives with its family (`string`, `keys`, `hash`, ...) and
//! documents its syntax in a `# Format` block. The dispatcher only checks
//! what Redis checks before any command runs, in Redis's order: the name is
//! known, the argument count fits, and a RESP2 connection in subscribed
//! state only runs the pub/sub commands.

mod blocking;
mod client;
mod cluster;
mod config;
mod connection;
mod eval;
mod hash;
mod info;
mod key_spec;
mod keys;
mod list;
pub(crate) mod pubsub;
mod server;
mod string;
mod table;
mod transaction;
mod zrange;
mod zset;

use bytes::Bytes;
use rustc_hash::FxHashMap;

use crate::db::Db;
use crate::engine::State;
use crate::error::{CmdError, printable};
use crate::{ConnId, Protocol, RedisVersion, Response, Value};

use table::COMMANDS;

pub(crate) use blocking::pop_ready;
pub(crate) use hash::{hexists_of, hincrby_of};
pub(crate) use keys::{exists_of, pexpire_of, pttl_of};

/// Everything a command may touch while it runs.
pub(crate) struct Ctx<'a> {
    /// The connection's selected database.
    pub(crate) db: &'a mut Db,
    pub(crate) state: &'a mut State,
    pub(crate) conn: ConnId,
    /// The injected clock's reading for this command (Unix ms).
    pub(crate) now: i64,
    pub(crate) out: &'a mut Response,
    /// The databases before the selected one (`db`), and those after it.
    pub(crate) others: (&'a mut [Db], &'a mut [Db]),
    /// The selected database's number.
    pub(crate) db_index: usize,
}

impl Ctx<'_> {
    /// The protocol of the calling connection.
    pub(crate) fn protocol(&self) -> Protocol {
        self.state.protocol(self.conn)
    }

    /// Database `i`, whether selected or not.
    pub(crate) fn db_at(&mut self, i: usize) -> &mut Db {
        match i.cmp(&self.db_index) {
            std::cmp::Ordering::Equal => self.db,
            std::cmp::Ordering::Less => &mut self.others.0[i],
            std::cmp::Ordering::Greater => &mut self.others.1[i - self.db_index - 1],
        }
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
pub(crate) struct Spec {
    /// Lowercase name, as Redis prints it in errors.
    name: &'static str,
    /// Redis's arity: `n` exactly `n` words, `-n` at least `n`.
    arity: i32,
    /// Allowed while a RESP2 connection is subscribed.
    pubsub_ok: bool,
    /// Allowed before `AUTH` when a password is required.
    no_auth: bool,
    /// Runs at once inside `MULTI` rather than being queued.
    in_multi: bool,
    /// Writes data: a read-only replica refuses it.
    write: bool,
    /// The first release line that has it (`WAITAOF`: 7.2).
    since: RedisVersion,
    /// For a container command (`SCRIPT`): each subcommand and its arity.
    subcommands: &'static [(&'static str, i32)],
    handler: Handler,
}

fn lookup(name: &[u8]) -> Option<&'static Spec> {
    // Every command and every `redis.call` of a script looks its name up
    // (a script's calls are most of the lookups): the name is lowered once
    // into a buffer (no command name is longer) and found by its hash. A
    // binary search over the table cost a twentieth of a simulated run;
    // a scan of the names of its first letter, 180 instructions a lookup.
    // The lock's own commands come first, matched as clients spell them
    // (all capitals, as Redisson sends them, or all small letters): one
    // comparison of a length and a word, where comparing each hot name
    // letter by letter, case folded, cost a hundred instructions a
    // command. Most lookups end here, before the lowering and the hash.
    if let Some(spec) = hot_index(name).and_then(|i| hot().get(i)) {
        return Some(spec);
    }
    let mut lower = [0u8; 32];
    let lower = lower.get_mut(..name.len())?;
    lower.copy_from_slice(name);
    lower.make_ascii_lowercase();
    by_name().get(&*lower).copied()
}

/// The commands a simulated client sends most, looked up first; in the
/// order [`hot_index`] numbers them.
const HOT: [&str; 5] = ["eval", "evalsha", "wait", "subscribe", "unsubscribe"];

/// The [`HOT`] commands' specs.
fn hot() -> &'static [&'static Spec] {
    static SPECS: std::sync::OnceLock<Vec<&'static Spec>> = std::sync::OnceLock::new();
    SPECS.get_or_init(|| {
        HOT.iter()
            .filter_map(|name| by_name().get(name.as_bytes()).copied())
            .collect()
    })
}

/// Where `name` is in [`HOT`], when spelt all in capitals or all in small
/// letters (any other spelling takes the general path).
fn hot_index(name: &[u8]) -> Option<usize> {
    Some(match name {
        b"EVAL" | b"eval" => 0,
        b"EVALSHA" | b"evalsha" => 1,
        b"WAIT" | b"wait" => 2,
        b"SUBSCRIBE" | b"subscribe" => 3,
        b"UNSUBSCRIBE" | b"unsubscribe" => 4,
        _ => return None,
    })
}

/// [`COMMANDS`] by name.
fn by_name() -> &'static FxHashMap<&'static [u8], &'static Spec> {
    static BY_NAME: std::sync::OnceLock<FxHashMap<&'static [u8], &'static Spec>> =
        std::sync::OnceLock::new();
    BY_NAME.get_or_init(|| COMMANDS.iter().map(|c| (c.name.as_bytes(), c)).collect())
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

/// Redis's reply to an unknown command, as `version` words it (see
/// [`RedisVersion::unknown_command`]).
fn unknown_command(version: RedisVersion, args: &[Bytes]) -> CmdError {
    let name = printable(&args[0]);
    let shown: Vec<String> = args[1..].iter().map(|a| printable(a)).collect();
    CmdError::other(version.unknown_command(&name, &shown))
}

/// The command `args` names, if this server's release has it.
fn lookup_in(state: &State, name: &[u8]) -> Option<&'static Spec> {
    lookup(name).filter(|spec| spec.since <= state.version)
}

/// A command refused before it ran: the reply, and whether it was a
/// cluster redirect (for `EXEC`, Redis then discards the transaction and
/// its watches, where other refusals abort it with `EXECABORT`).
pub(crate) struct Refused {
    pub(crate) reply: Value,
    pub(crate) redirect: bool,
}

/// Redis's checks before a command runs or is queued, in Redis's order:
/// known name, arity, subcommand, authentication, cluster routing
/// (`routing`, on a cluster node; `db0` is where it looks for keys of a
/// slot being moved) and the subscribed state of a RESP2 connection.
pub(crate) fn check(
    state: &mut State,
    conn: ConnId,
    args: &[Bytes],
    db0: &Db,
    now: i64,
) -> Result<&'static Spec, Refused> {
    let refusal = match check_inner(state, conn, args, db0, now) {
        Ok(spec) => return Ok(spec),
        Err(refusal) => refusal,
    };
    let is_exec = args[0].eq_ignore_ascii_case(b"exec");
    let e = match refusal {
        Refusal::Redirect(text) => {
            let client = state.client(conn);
            if is_exec {
                client.multi = None;
            } else if let Some(m) = client.multi.as_mut() {
                m.refused = true;
            }
            return Err(Refused {
                reply: Value::Error(text),
                redirect: true,
            });
        }
        Refusal::Plain(e) => e,
    };
    if let Some(m) = state.client(conn).multi.as_mut() {
        // A refused command dooms the transaction it was sent in.
        m.refused = true;
    }
    let plain = |reply| Refused {
        reply,
        redirect: false,
    };
    if is_exec {
        // A refused EXEC, in a transaction or not, discards it and quotes
        // the refusal without its `ERR ` code (a `NOAUTH` keeps its own).
        state.client(conn).multi = None;
        let text = match &e {
            Value::Error(t) => t.strip_prefix("ERR ").unwrap_or(t).to_owned(),
            _ => String::new(),
        };
        return Err(plain(Value::error(format!(
            "EXECABORT Transaction discarded because of: {text}"
        ))));
    }
    Err(plain(e))
}

/// Why `check_inner` refused a command.
enum Refusal {
    /// Any refusal but routing's, as its reply.
    Plain(Value),
    /// A cluster redirect's text (`MOVED ...`, `CROSSSLOT ...`).
    Redirect(String),
}

fn check_inner(
    state: &mut State,
    conn: ConnId,
    args: &[Bytes],
    db0: &Db,
    now: i64,
) -> Result<&'static Spec, Refusal> {
    let plain = |v| Refusal::Plain(v);
    let Some(spec) = lookup_in(state, &args[0]) else {
        return Err(plain(error_value(unknown_command(state.version, args))));
    };
    if !arity_fits(spec.arity, args.len()) {
        return Err(plain(error_value(CmdError::WrongArity(
            spec.name.to_owned(),
        ))));
    }
    let sub = resolve_subcommand(spec, args).map_err(|e| plain(error_value(e)))?;
    let needs_auth = state.config.requirepass.is_some() && !state.client(conn).authenticated;
    if needs_auth && !spec.no_auth {
        return Err(plain(Value::error("NOAUTH Authentication required.")));
    }
    if state.cluster.is_some() {
        cluster_route(state, conn, spec, args, db0, now).map_err(Refusal::Redirect)?;
    }
    // Redis 7.0's processCommand refuses a write on a replica after the
    // authentication and before the subscribed-state check.
    if spec.write && state.replication.replica {
        return Err(plain(error_value(read_only())));
    }
    // Subscriptions first: a command connection has none (nearly every
    // command ends the test there), and its protocol is a search of the
    // clients.
    if !spec.pubsub_ok && state.pubsub.count(conn) > 0 && state.protocol(conn) == Protocol::Resp2 {
        let full_name = match sub {
            Some(sub) => format!("{}|{sub}", spec.name),
            None => spec.name.to_owned(),
        };
        return Err(plain(Value::error(format!(
            "ERR Can't execute '{full_name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
        ))));
    }
    Ok(spec)
}

/// Redis's cluster check in `processCommand`: a command with keys, or
/// `EXEC` of a transaction (all its queued commands' keys), is routed;
/// `Err` is the redirect's text.
fn cluster_route(
    state: &State,
    conn: ConnId,
    spec: &Spec,
    args: &[Bytes],
    db0: &Db,
    now: i64,
) -> Result<(), String> {
    let is_exec = spec.name == "exec";
    if !is_exec && !key_spec::has_keys(spec.name) {
        return Ok(());
    }
    let client = state.clients.get(&conn);
    let asking = client.is_some_and(|c| c.asking);
    let readonly = client.is_some_and(|c| c.readonly);
    let mut commands: Vec<(&Spec, &[Bytes])> = Vec::new();
    if is_exec {
        let Some(multi) = client.and_then(|c| c.multi.as_ref()) else {
            return Ok(());
        };
        for queued in &multi.queue {
            if let Some(s) = lookup_in(state, &queued[0]) {
                commands.push((s, queued));
            }
        }
    } else {
        commands.push((spec, args));
    }
    let mut query = crate::routing::Query {
        keys: Vec::new(),
        write: false,
        asking,
        readonly,
    };
    for (spec, words) in &commands {
        query.write |= spec.write;
        query.keys.extend(
            key_spec::key_positions(spec.name, words)
                .into_iter()
                .map(|i| &words[i]),
        );
    }
    match &state.cluster {
        Some(role) => role.route(&query, db0, now).map_err(|r| r.text()),
        None => Ok(()),
    }
}

/// Runs one client command and returns its replies; inside `MULTI`, queues
/// it instead (`QUEUED`).
pub(crate) fn dispatch(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Vec<Value> {
    let db0 = if ctx.db_index == 0 {
        &*ctx.db
    } else {
        &ctx.others.0[0]
    };
    let spec = match check(ctx.state, ctx.conn, args, db0, ctx.now) {
        Ok(spec) => spec,
        Err(refused) => return vec![refused.reply],
    };
    let client = ctx.state.client(ctx.conn);
    if let Some(multi) = client.multi.as_mut()
        && !spec.in_multi
    {
        multi.bytes += args.iter().map(Bytes::len).sum::<usize>();
        if multi.bytes > crate::client::Multi::MAX_BYTES {
            ctx.out.close = true;
            return vec![];
        }
        multi.queue.push(args.to_vec());
        return vec![Value::Simple("QUEUED".into())];
    }
    match spec.handler {
        Handler::One(f) => vec![f(ctx, args).unwrap_or_else(error_value)],
        Handler::Many(f) => f(ctx, args).unwrap_or_else(|e| vec![error_value(e)]),
    }
}

/// Runs a command queued by `MULTI`, as `EXEC` does: Redis made its
/// checks when it was queued, and makes none again (so a transaction that
/// subscribes goes on running the commands after it).
pub(crate) fn run_queued(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Vec<Value> {
    let Some(spec) = lookup_in(ctx.state, &args[0]) else {
        return vec![error_value(unknown_command(ctx.state.version, args))];
    };
    match spec.handler {
        Handler::One(f) => vec![f(ctx, args).unwrap_or_else(error_value)],
        Handler::Many(f) => f(ctx, args).unwrap_or_else(|e| vec![error_value(e)]),
    }
}

/// A command a native script calls by a fixed name, looked up on its
/// first call: a lock script makes three to five calls per run, and the
/// lookup (lowering the name, hashing it) was a fiftieth of a simulated
/// run.
pub(crate) struct ScriptCommand {
    name: &'static str,
    spec: std::sync::OnceLock<Option<&'static Spec>>,
}

impl ScriptCommand {
    /// The command `name` (lower case, as the scripts write it).
    pub(crate) const fn new(name: &'static str) -> ScriptCommand {
        ScriptCommand {
            name,
            spec: std::sync::OnceLock::new(),
        }
    }

    /// Its name, as the script passes it.
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    fn spec(&self) -> Option<&'static Spec> {
        *self.spec.get_or_init(|| lookup(self.name.as_bytes()))
    }
}

/// Runs a command on behalf of a script (`redis.call`): no pub/sub state
/// check, and the error comes back to the script instead of the client.
pub(crate) fn call(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let spec = args.first().and_then(|n| lookup_in(ctx.state, n));
    run_for_script(ctx, spec, args)
}

/// [`call`] of `command`, whose name is `args[0]`.
pub(crate) fn call_known(
    ctx: &mut Ctx<'_>,
    command: &ScriptCommand,
    args: &[Bytes],
) -> Result<Value, CmdError> {
    run_for_script(ctx, command.spec(), args)
}

fn run_for_script(
    ctx: &mut Ctx<'_>,
    spec: Option<&'static Spec>,
    args: &[Bytes],
) -> Result<Value, CmdError> {
    let Some(spec) = spec else {
        return Err(CmdError::other(
            "ERR Unknown Redis command called from script",
        ));
    };
    if !arity_fits(spec.arity, args.len()) {
        return Err(CmdError::other(
            "ERR Wrong number of args calling Redis command from script",
        ));
    }
    // A script's write on a replica fails in the script (EVAL itself is
    // no write command), with the script's suffix added by the caller.
    if spec.write && ctx.state.replication.replica {
        return Err(read_only());
    }
    match spec.handler {
        Handler::One(f) => f(ctx, args),
        Handler::Many(_) => Err(CmdError::other(
            "ERR This Redis command is not allowed from script",
        )),
    }
}

/// The subcommand (`load` of `script|load`) after Redis's subcommand
/// checks: a known subcommand, with its own arity; `None` for a command
/// without subcommands. The full name is formatted only for an error.
fn resolve_subcommand(spec: &Spec, args: &[Bytes]) -> Result<Option<&'static str>, CmdError> {
    if spec.subcommands.is_empty() {
        return Ok(None);
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
    if !arity_fits(arity, args.len()) {
        return Err(CmdError::WrongArity(format!("{}|{sub}", spec.name)));
    }
    Ok(Some(sub))
}

/// Redis's `shared.roslaveerr`, checked against redis-server 7.0.15.
pub(crate) fn read_only() -> CmdError {
    CmdError::other("READONLY You can't write against a read only replica.")
}

fn error_value(e: CmdError) -> Value {
    Value::Error(e.to_string())
}

/// Parses a Redis integer argument.
pub(crate) fn int_arg(arg: &[u8]) -> Result<i64, CmdError> {
    crate::number::parse_i64(arg).ok_or(CmdError::NotInteger)
}

/// Parses a count of zero or more, as Redis's
/// `getPositiveLongFromObjectOrReply` (`LPOP key count`, `ZPOPMIN key
/// count`): anything else, a non-number too, is "out of range".
pub(crate) fn count_arg(arg: &[u8]) -> Result<usize, CmdError> {
    int_arg(arg)
        .ok()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or(CmdError::NotPositive)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command is found by its name in any case, the hot ones
    /// looked up first as well as the rest; a name no command has, or one
    /// longer than any, finds nothing.
    #[test]
    fn every_command_is_found_by_name() {
        assert_eq!(hot().len(), 5, "a hot command is missing from the table");
        for spec in COMMANDS {
            let upper = spec.name.to_ascii_uppercase();
            for name in [spec.name, upper.as_str()] {
                let found = lookup(name.as_bytes()).map(|s| s.name);
                assert_eq!(found, Some(spec.name), "{name}");
            }
        }
        for (i, name) in HOT.iter().enumerate() {
            let upper = name.to_ascii_uppercase();
            assert_eq!(hot_index(name.as_bytes()), Some(i), "{name}");
            assert_eq!(hot_index(upper.as_bytes()), Some(i), "{upper}");
            assert_eq!(hot().get(i).map(|s| s.name), Some(*name));
        }
        assert_eq!(lookup(b"EvalSha").map(|s| s.name), Some("evalsha"));
        assert!(lookup(b"evalx").is_none());
        assert!(lookup(b"").is_none());
        assert!(lookup(&[b'e'; 40]).is_none());
    }

    /// The unknown-command error quotes each argument followed by a space,
    /// exactly as redis-server 7.0.15 prints `foo a b`.
    #[test]
    fn unknown_command_text_matches_redis() {
        let args: Vec<Bytes> = ["foo", "a", "b"].iter().map(|s| Bytes::from(*s)).collect();
        assert_eq!(
            unknown_command(RedisVersion::V7_0, &args).to_string(),
            "ERR unknown command 'foo', with args beginning with: 'a' 'b' "
        );
        let alone = vec![Bytes::from("foo")];
        assert_eq!(
            unknown_command(RedisVersion::V7_0, &alone).to_string(),
            "ERR unknown command 'foo', with args beginning with: "
        );
    }
}
