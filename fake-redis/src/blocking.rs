//! Clients blocked in `BLPOP`/`BRPOP` or `WAIT`: queued input, serving,
//! timeouts.
//!
//! Redis stops reading a blocked client's input; here commands that arrive
//! meanwhile wait in the client's `pending` queue (bounded like Redis's
//! query buffer). After every command (and every [`crate::Engine::tick`],
//! which the host calls after replicas acknowledge) the engine serves
//! blocked clients whose keys now hold elements or whose `WAIT` has its
//! acknowledgements, in the order they blocked (Redis's
//! `handleClientsBlockedOnKeys`), and a client whose deadline has passed
//! gets its timeout reply (a nil array; for `WAIT`, the replicas that
//! acknowledged by then). Both replies reach the client as deliveries,
//! followed by the replies to its queued commands. Deadlines are on the engine's
//! clock: the simulator moves time and calls [`crate::Engine::tick`], so a
//! wait is in virtual time; the server calls it from a timer.

use bytes::Bytes;

use crate::client::{Blocked, BlockedOn};
use crate::engine::Engine;
use crate::{ConnId, Response, Value};

/// Most bytes of commands a blocked client may queue (Redis's default
/// `client-query-buffer-limit`); past it the client is closed.
const MAX_PENDING_BYTES: usize = 1024 * 1024 * 1024;

/// Runs a client's command: queued if the client is blocked, else run,
/// then blocked clients are served.
pub(crate) fn run(
    engine: &mut Engine,
    conn: ConnId,
    args: &[Bytes],
    now: i64,
    out: &mut Response,
) -> Vec<Value> {
    expire(engine, now, out, usize::MAX);
    let replies = run_one(engine, conn, args, now, out);
    serve(engine, now, out, usize::MAX);
    replies
}

/// Queues or runs one command, registering the client if it blocked. It
/// serves no one: serving runs commands in turn, and doing it from here
/// would nest one level per served client (a deep stack with many).
fn run_one(
    engine: &mut Engine,
    conn: ConnId,
    args: &[Bytes],
    now: i64,
    out: &mut Response,
) -> Vec<Value> {
    let client = engine.state.client(conn);
    if client.blocked.is_some() {
        let size: usize = args.iter().map(Bytes::len).sum();
        if client.pending_bytes.saturating_add(size) > MAX_PENDING_BYTES {
            out.close = true;
        } else {
            client.pending_bytes += size;
            client.pending.push_back(args.to_vec());
        }
        return vec![];
    }
    let replies = crate::multi::run_client_command(engine, conn, args, now, out);
    // A client that blocked just now joins the end of the line.
    if engine
        .state
        .clients
        .get(&conn)
        .is_some_and(|c| c.blocked.is_some())
    {
        let seq = engine.state.next_block_seq;
        engine.state.next_block_seq += 1;
        engine.state.blocked_order.insert(seq, conn);
    }
    replies
}

/// Times out blocked clients whose deadline is `now` or earlier, at most
/// `limit` of them, in the order they blocked: how many.
pub(crate) fn expire(engine: &mut Engine, now: i64, out: &mut Response, limit: usize) -> usize {
    if engine.state.blocked_order.is_empty() {
        return 0;
    }
    let due: Vec<(u64, ConnId)> = engine
        .state
        .blocked_order
        .iter()
        .filter(|(_, c)| {
            engine
                .state
                .clients
                .get(c)
                .and_then(|cl| cl.blocked.as_ref())
                .and_then(|b| b.deadline)
                .is_some_and(|d| d <= now)
        })
        .map(|(s, c)| (*s, *c))
        .take(limit)
        .collect();
    let expired = due.len();
    for (seq, conn) in due {
        let timed_out = match engine
            .state
            .clients
            .get(&conn)
            .and_then(|c| c.blocked.as_ref())
        {
            Some(Blocked {
                on: BlockedOn::Replicas { target, aof, .. },
                ..
            }) => crate::waitaof::replicas_reply(engine, *target, *aof),
            _ => Value::NilArray,
        };
        unblock(engine, seq, conn);
        out.deliveries.push((conn, timed_out));
        run_pending(engine, conn, now, out);
    }
    expired
}

/// Serves blocked clients that can be answered, until none can be or
/// `limit` were.
pub(crate) fn serve(engine: &mut Engine, now: i64, out: &mut Response, mut limit: usize) {
    // Runs after every command: return before building the list when no
    // one is blocked (nearly always).
    if engine.state.blocked_order.is_empty() {
        return;
    }
    let mut order = std::mem::take(&mut engine.state.serve_order);
    while limit > 0 {
        order.clear();
        order.extend(engine.state.blocked_order.iter().map(|(s, c)| (*s, *c)));
        let served = serve_pass(engine, &order, now, out, &mut limit);
        if !served || limit == 0 {
            break;
        }
    }
    engine.state.serve_order = order;
}

/// One pass of [`serve`] over the clients blocked at its start, in
/// `order`: whether it served any.
fn serve_pass(
    engine: &mut Engine,
    order: &[(u64, ConnId)],
    now: i64,
    out: &mut Response,
    limit: &mut usize,
) -> bool {
    let mut served = false;
    for &(seq, conn) in order {
        let Some(b) = engine
            .state
            .clients
            .get(&conn)
            .and_then(|c| c.blocked.clone())
        else {
            continue;
        };
        if let Some(reply) = ready(engine, &b.on, now) {
            unblock(engine, seq, conn);
            out.deliveries.push((conn, reply));
            run_pending(engine, conn, now, out);
            served = true;
            *limit -= 1;
            if *limit == 0 {
                break;
            }
        }
    }
    served
}

/// What `on` answers now, if it can: a popped element (the key it came
/// from marked touched), or the replicas that acknowledged.
fn ready(engine: &mut Engine, on: &BlockedOn, now: i64) -> Option<Value> {
    match on {
        BlockedOn::List { db, keys, left } => {
            for key in keys {
                // A key that now holds another type keeps the client
                // waiting, as in Redis.
                if let Ok(Some(v)) = crate::cmd::pop_ready(&mut engine.dbs[*db], key, *left, now) {
                    crate::multi::signal_touched(&mut engine.dbs[*db], &mut engine.state);
                    return Some(v);
                }
            }
            None
        }
        BlockedOn::Replicas {
            target,
            numreplicas,
            aof,
        } => {
            let acked = crate::waitaof::replicas_acked(engine, *target, *aof);
            (acked >= *numreplicas).then(|| crate::waitaof::replicas_reply(engine, *target, *aof))
        }
    }
}

fn unblock(engine: &mut Engine, seq: u64, conn: ConnId) {
    engine.state.blocked_order.remove(&seq);
    if let Some(client) = engine.state.clients.get_mut(&conn) {
        client.blocked = None;
    }
}

/// Runs what `conn` queued while blocked, its replies as deliveries, until
/// it blocks again. (A queued `QUIT` answers `OK` but cannot close a
/// connection other than the caller's.)
fn run_pending(engine: &mut Engine, conn: ConnId, now: i64, out: &mut Response) {
    loop {
        let Some(client) = engine.state.clients.get_mut(&conn) else {
            return;
        };
        if client.blocked.is_some() {
            return;
        }
        let Some(args) = client.pending.pop_front() else {
            return;
        };
        client.pending_bytes -= args.iter().map(Bytes::len).sum::<usize>();
        let mut inner = Response::default();
        let replies = run_one(engine, conn, &args, now, &mut inner);
        out.deliveries.extend(inner.deliveries);
        out.deliveries
            .extend(replies.into_iter().map(|r| (conn, r)));
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::{args, bulk, engine_at};
    use crate::{ConnId, Value};

    fn pair(key: &str, value: &str) -> Value {
        Value::Array(vec![bulk(key), bulk(value)])
    }

    /// On a manual clock, `BLPOP k 1.5` at t=1000 waits: nothing at 2499,
    /// a nil array at 2500 (one `tick`), and only then the replies to what
    /// the client sent meanwhile, in order. A wall-clock read or an
    /// off-by-one deadline fails one of the two ticks.
    #[test]
    fn timeout_is_in_virtual_time() {
        let (mut e, clock, c) = engine_at(1_000);
        assert_eq!(e.execute(c, args(&["BLPOP", "k", "1.5"])).replies, vec![]);
        assert_eq!(e.execute(c, args(&["PING"])).replies, vec![]);
        assert_eq!(e.next_deadline(), Some(2_500));
        clock.set(2_499);
        assert_eq!(e.tick().deliveries, vec![]);
        clock.set(2_500);
        let out = e.tick();
        assert_eq!(
            out.deliveries,
            vec![(c, Value::NilArray), (c, Value::Simple("PONG".into()))]
        );
        assert_eq!(e.next_deadline(), None);
    }

    /// A push serves the client that blocked first (FIFO, as Redis), from
    /// the first of its keys that has an element; the pusher's reply is the
    /// length before the pop, and the element is gone afterwards.
    #[test]
    fn push_serves_first_blocked_client() {
        let (mut e, _clock, a) = engine_at(0);
        let b = e.connect();
        let p: ConnId = e.connect();
        e.execute(a, args(&["BLPOP", "x", "k", "0"]));
        e.execute(b, args(&["BRPOP", "k", "0"]));
        let out = e.execute(p, args(&["RPUSH", "k", "v1"]));
        assert_eq!(out.replies, vec![Value::Int(1)]);
        assert_eq!(out.deliveries, vec![(a, pair("k", "v1"))]);
        let out = e.execute(p, args(&["RPUSH", "k", "v2", "v3"]));
        assert_eq!(out.deliveries, vec![(b, pair("k", "v3"))]);
        assert_eq!(
            e.execute(p, args(&["LRANGE", "k", "0", "-1"])).replies,
            vec![Value::Array(vec![bulk("v2")])]
        );
        // Disconnected while blocked: never served.
        e.execute(a, args(&["BLPOP", "k2", "0"]));
        e.disconnect(a);
        assert_eq!(e.execute(p, args(&["LPUSH", "k2", "z"])).deliveries, vec![]);
    }

    /// A served client's queued push serves the next blocked client in
    /// the same command, without nesting: a push to `k1` serves `a`, whose
    /// queued `RPUSH k2` serves `b`.
    #[test]
    fn queued_push_serves_the_next_client() {
        let (mut e, _clock, a) = engine_at(0);
        let b = e.connect();
        let p = e.connect();
        e.execute(a, args(&["BLPOP", "k1", "0"]));
        e.execute(a, args(&["RPUSH", "k2", "x"]));
        e.execute(b, args(&["BLPOP", "k2", "0"]));
        let out = e.execute(p, args(&["RPUSH", "k1", "v"]));
        assert_eq!(
            out.deliveries,
            vec![
                (a, pair("k1", "v")),
                (a, Value::Int(1)),
                (b, pair("k2", "x")),
            ]
        );
    }

    /// Inside EXEC a blocking pop on an empty list answers a nil array at
    /// once, as Redis does, and the client is not left blocked.
    #[test]
    fn no_blocking_inside_exec() {
        let (mut e, _clock, c) = engine_at(0);
        e.execute(c, args(&["MULTI"]));
        e.execute(c, args(&["BLPOP", "k", "0"]));
        assert_eq!(
            e.execute(c, args(&["EXEC"])).replies,
            vec![Value::Array(vec![Value::NilArray])]
        );
        assert_eq!(
            e.execute(c, args(&["PING"])).replies,
            vec![Value::Simple("PONG".into())]
        );
    }
}
