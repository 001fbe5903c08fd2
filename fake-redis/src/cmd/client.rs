//! `CLIENT`: ID, SETNAME, GETNAME, SETINFO, LIST, INFO.

use bytes::Bytes;

use super::Ctx;
use crate::client::Client;
use crate::error::{CmdError, printable};
use crate::{Protocol, Value};

/// One `CLIENT LIST` line, with the fields clients parse (id, name, age,
/// db, sub, psub, multi, cmd, resp, lib-name, lib-ver). Socket-level fields
/// are fixed placeholders: the engine has no sockets.
fn line(c: &Client, subs: usize, psubs: usize, now: i64) -> String {
    let text = |b: &Option<Bytes>| b.as_deref().map(printable).unwrap_or_default();
    format!(
        "id={} addr=127.0.0.1:0 laddr=127.0.0.1:0 fd=8 name={} age={} idle=0 flags={} db={} sub={subs} psub={psubs} ssub=0 multi={} qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd={} user=default redir=-1 resp={} lib-name={} lib-ver={}\n",
        c.id.0,
        text(&c.name),
        (now - c.since_ms).max(0) / 1000,
        if c.multi.is_some() {
            "x"
        } else if subs + psubs > 0 {
            "P"
        } else {
            "N"
        },
        c.db,
        c.multi.as_ref().map_or(-1, |m| m.queue.len() as i64),
        c.last_cmd,
        match c.protocol {
            Protocol::Resp2 => 2,
            Protocol::Resp3 => 3,
        },
        text(&c.lib_name),
        text(&c.lib_ver),
    )
}

/// Redis refuses names and lib infos with spaces or control characters.
fn valid_name(name: &[u8]) -> bool {
    name.iter().all(|b| (b'!'..=b'~').contains(b))
}

/// # Format
/// `CLIENT ID`: the connection's id. `CLIENT SETNAME name`: `OK` (an empty
/// name clears it). `CLIENT GETNAME`: the name or nil. `CLIENT SETINFO
/// LIB-NAME|LIB-VER value`: `OK` (Redis 7.2's command; 7.0 does not know
/// it, and clients ignore its failure). `CLIENT LIST [ID id ...]` and
/// `CLIENT INFO`: one line per client.
pub(crate) fn client(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let sub = args[1].to_ascii_lowercase();
    let conn = ctx.conn;
    match sub.as_slice() {
        b"id" => Ok(Value::Int(i64::try_from(conn.0).unwrap_or(i64::MAX))),
        b"getname" => Ok(ctx
            .state
            .client(conn)
            .name
            .clone()
            .map_or(Value::Nil, Value::Bulk)),
        b"setname" => {
            if !valid_name(&args[2]) {
                return Err(CmdError::other(
                    "ERR Client names cannot contain spaces, newlines or special characters.",
                ));
            }
            ctx.state.client(conn).name = (!args[2].is_empty()).then(|| args[2].clone());
            Ok(Value::ok())
        }
        b"setinfo" => {
            if !valid_name(&args[3]) {
                return Err(CmdError::other(format!(
                    "ERR {} cannot contain spaces, newlines or special characters.",
                    printable(&args[2]).to_ascii_lowercase()
                )));
            }
            let value = (!args[3].is_empty()).then(|| args[3].clone());
            let client = ctx.state.client(conn);
            match args[2].to_ascii_lowercase().as_slice() {
                b"lib-name" => client.lib_name = value,
                b"lib-ver" => client.lib_ver = value,
                _ => {
                    return Err(CmdError::other(format!(
                        "ERR Unrecognized option '{}'",
                        printable(&args[2])
                    )));
                }
            }
            Ok(Value::ok())
        }
        b"info" => {
            let (s, p) = (
                ctx.state.pubsub.channels_of(conn).len(),
                ctx.state.pubsub.patterns_of(conn).len(),
            );
            let now = ctx.now;
            Ok(Value::bulk(line(ctx.state.client(conn), s, p, now)))
        }
        _ => {
            let now = ctx.now;
            let state = &*ctx.state;
            let mut clients: Vec<&Client> = state.clients.values().collect();
            clients.sort_by_key(|c| c.id);
            let text: String = clients
                .into_iter()
                .map(|c| {
                    let s = state.pubsub.channels_of(c.id).len();
                    let p = state.pubsub.patterns_of(c.id).len();
                    line(c, s, p, now)
                })
                .collect();
            Ok(Value::bulk(text))
        }
    }
}
