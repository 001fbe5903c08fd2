//! Transactions: `MULTI` queues, `EXEC` runs the queue as one command, and
//! `WATCH`ed keys changed meanwhile make `EXEC` fail.
//!
//! Queueing happens in the dispatcher (after the checks Redis makes before
//! queueing, so an unknown command or wrong arity is refused at once and
//! dooms the transaction). `EXEC` itself is run here, with the whole
//! engine, because a queued `SELECT` switches the database for the
//! commands after it.

use bytes::Bytes;

use crate::client::Client;
use crate::db::Db;
use crate::engine::{Engine, State};
use crate::{ConnId, Response, Value};

/// Runs one client command: `EXEC` of an open transaction here, anything
/// else through the dispatcher.
pub(crate) fn run_client_command(
    engine: &mut Engine,
    conn: ConnId,
    args: &[Bytes],
    now: i64,
    out: &mut Response,
) -> Vec<Value> {
    let replies = run_or_exec(engine, conn, args, now, out);
    engine.note_wait_offset(conn);
    // `ASKING` lasts one command, or the transaction it was sent in
    // (Redis's `resetClient`).
    let client = engine.state.client(conn);
    if client.asking && client.multi.is_none() && !args[0].eq_ignore_ascii_case(b"asking") {
        client.asking = false;
    }
    replies
}

fn run_or_exec(
    engine: &mut Engine,
    conn: ConnId,
    args: &[Bytes],
    now: i64,
    out: &mut Response,
) -> Vec<Value> {
    let in_multi = engine.state.client(conn).multi.is_some();
    if in_multi && args[0].eq_ignore_ascii_case(b"exec") {
        if let Err(e) = crate::cmd::check(&mut engine.state, conn, args, &engine.dbs[0], now) {
            if e.redirect {
                // Redis discards the transaction and its watches.
                unwatch_client(engine, conn);
            } else if let Some(m) = engine.state.client(conn).multi.as_mut() {
                m.refused = true;
            }
            return vec![e.reply];
        }
        return exec(engine, conn, now, out);
    }
    engine.dispatch(conn, args, now, out)
}

/// Runs the queue. Redis's reply is an array header counting the queued
/// commands followed by every reply they wrote; a command replying more
/// than once (`SUBSCRIBE a b`) makes that more replies than the header
/// counts. The same bytes come out here as the array of the first `n`
/// replies followed by the rest as replies of their own.
fn exec(engine: &mut Engine, conn: ConnId, now: i64, out: &mut Response) -> Vec<Value> {
    let client = engine.state.client(conn);
    let multi = client.multi.take().unwrap_or_default();
    let expired = client
        .watched
        .iter()
        .any(|w| w.expires_at.is_some_and(|t| now > t));
    let dirty = client.dirty_cas || expired;
    unwatch_client(engine, conn);
    if multi.refused {
        return vec![Value::error(
            "EXECABORT Transaction discarded because of previous errors.",
        )];
    }
    if dirty {
        return vec![Value::NilArray];
    }
    let count = multi.queue.len();
    let mut replies = Vec::with_capacity(count);
    engine.state.client(conn).in_exec = true;
    for args in multi.queue {
        let written = engine.run_queued(conn, &args, now, out);
        // A queued `HELLO` switches the protocol of its own reply and the
        // ones after it; the ones before it were written in the old one.
        let protocol = engine.state.protocol(conn);
        replies.extend(written.into_iter().map(|v| (protocol, v)));
    }
    engine.state.client(conn).in_exec = false;
    let last = engine.state.protocol(conn);
    let mut replies: Vec<Value> = (replies.into_iter())
        .map(|(p, v)| {
            if p == last {
                v
            } else {
                Value::Written(p, Box::new(v))
            }
        })
        .collect();
    let rest = replies.split_off(count.min(replies.len()));
    let mut all = vec![Value::Array(replies)];
    all.extend(rest);
    all
}

/// `UNWATCH` (and the end of every `EXEC`/`DISCARD`): forgets the client's
/// watched keys and whether they changed.
pub(crate) fn unwatch_client(engine: &mut Engine, conn: ConnId) {
    let client = engine.state.client(conn);
    let watched = std::mem::take(&mut client.watched);
    client.dirty_cas = false;
    for w in watched {
        engine.dbs[w.db].unwatch(&w.key, conn);
    }
}

/// Forgets a departing client's watched keys.
pub(crate) fn unwatch_all(dbs: &mut [Db], conn: ConnId, client: &Client) {
    for w in &client.watched {
        dbs[w.db].unwatch(&w.key, conn);
    }
}

/// After a command: marks the watchers of every key it modified.
pub(crate) fn signal_touched(db: &mut Db, state: &mut State) {
    for conn in db.take_touched() {
        if let Some(client) = state.clients.get_mut(&conn) {
            client.dirty_cas = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::{args, engine_at};
    use crate::{Protocol, encode_to_vec};

    /// A `HELLO 3` queued in a RESP2 transaction switches the protocol of
    /// the replies after it only: Redis 7.0.15 answers `MULTI; CLIENT
    /// GETNAME; HELLO 3; EXEC` with the name's nil as RESP2's `$-1` and
    /// the `HELLO` map as RESP3's `%7` (found by the differential test;
    /// fake-redis once wrote the whole `EXEC` in the final protocol, `_`).
    #[test]
    fn a_queued_hello_switches_only_the_replies_after_it() {
        let (mut e, _, c) = engine_at(0);
        e.execute(c, args(&["MULTI"]));
        e.execute(c, args(&["CLIENT", "GETNAME"]));
        e.execute(c, args(&["HELLO", "3"]));
        let reply = e.execute(c, args(&["EXEC"])).replies;
        assert_eq!(e.protocol(c), Protocol::Resp3);
        let wire = encode_to_vec(&reply[0], e.protocol(c));
        let text = String::from_utf8_lossy(&wire);
        assert!(text.starts_with("*2\r\n$-1\r\n%7\r\n"), "{text:?}");
    }
}
