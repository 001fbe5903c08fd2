//! `WAITAOF` (Redis 7.2): waiting for the caller's writes to reach the
//! AOF of the primary and of its replicas.
//!
//! Redisson 3.46.0 to 3.52.x send `WAITAOF 1 <replicas> <timeout>` after
//! a lock script whenever `INFO` says `aof_enabled:1`, whatever the sync
//! mode (fixed 4.0.0, commit 64bacfef3), and read the second element as
//! the synced count: replicas without AOF count none, and the lock
//! operation fails with "None of slaves were synced". The replies follow
//! Redis 7.2.4's `waitaofCommand` (`src/replication.c`, lines 3563-3601):
//! the argument checks in order, the refusal on a replica, the refusal of
//! `numlocal` without AOF, then `[acklocal, ackreplicas]` at once or
//! after blocking as `WAIT` does. Fsyncs are immediate (`appendfsync
//! always`), so the local count is 1 whenever AOF is on.

use bytes::Bytes;

use crate::Value;
use crate::client::{Blocked, BlockedOn};
use crate::cmd::Ctx;
use crate::engine::Engine;
use crate::error::CmdError;
use crate::number::parse_i64;

/// How many replicas count for a client blocked on `target`: acknowledged
/// (`WAIT`) or fsynced to their AOF (`WAITAOF`, `aof`).
pub(crate) fn replicas_acked(engine: &Engine, target: u64, aof: bool) -> u64 {
    if aof {
        engine.state.replication.acked_aof(target)
    } else {
        engine.acked(target)
    }
}

/// The reply of a blocked `WAIT` (the count) or `WAITAOF` (`[acklocal,
/// ackreplicas]`) when it answers.
pub(crate) fn replicas_reply(engine: &Engine, target: u64, aof: bool) -> Value {
    let acked = replicas_acked(engine, target, aof) as i64;
    if aof {
        let local = i64::from(engine.state.config.appendonly());
        Value::Array(vec![Value::Int(local), Value::Int(acked)])
    } else {
        Value::Int(acked)
    }
}

/// `WAITAOF numlocal numreplicas timeout`.
///
/// # Format
///
/// `WAITAOF numlocal numreplicas timeout` -> array of two integers
pub(crate) fn waitaof(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Vec<Value>, CmdError> {
    let numlocal = parse_i64(&args[1]).ok_or(CmdError::NotInteger)?;
    if !(0..=1).contains(&numlocal) {
        return Err(CmdError::other(
            "ERR value is out of range, value must between 0 and 1",
        ));
    }
    let numreplicas = parse_i64(&args[2]).ok_or(CmdError::NotInteger)?;
    if numreplicas < 0 {
        return Err(CmdError::other(
            "ERR value is out of range, must be positive",
        ));
    }
    let timeout = parse_i64(&args[3])
        .ok_or_else(|| CmdError::other("ERR timeout is not an integer or out of range"))?;
    if timeout < 0 {
        return Err(CmdError::other("ERR timeout is negative"));
    }
    if ctx.state.replication.replica {
        return Err(CmdError::other(
            "ERR WAITAOF cannot be used with replica instances. Please also note that writes to replicas are just local and are not propagated.",
        ));
    }
    let aof = ctx.state.config.appendonly();
    if numlocal == 1 && !aof {
        return Err(CmdError::other(
            "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.",
        ));
    }
    let r = &ctx.state.replication;
    let target = r.wait_offset.get(&ctx.conn).copied().unwrap_or(0);
    let acked = r.acked_aof(target);
    let client = ctx.state.client(ctx.conn);
    // The local fsync is immediate: only the replicas can keep it waiting.
    if acked >= numreplicas as u64 || client.in_exec {
        let local = i64::from(aof);
        return Ok(vec![Value::Array(vec![
            Value::Int(local),
            Value::Int(acked as i64),
        ])]);
    }
    client.blocked = Some(Blocked {
        on: BlockedOn::Replicas {
            target,
            numreplicas: numreplicas as u64,
            aof: true,
        },
        deadline: (timeout > 0).then(|| ctx.now.saturating_add(timeout)),
    });
    // As `WAIT`: replicas are asked to acknowledge at once.
    ctx.state.replication.get_ack = true;
    Ok(vec![])
}

#[cfg(test)]
mod tests {
    use crate::engine::{args, engine_at};
    use crate::{ConnId, Engine, RedisVersion, Value};

    fn run(e: &mut Engine, conn: ConnId, words: &[&str]) -> Vec<Value> {
        e.execute(conn, args(words)).replies
    }

    fn pair(local: i64, replicas: i64) -> Vec<Value> {
        vec![Value::Array(vec![Value::Int(local), Value::Int(replicas)])]
    }

    fn error(v: &[Value]) -> &str {
        match &v[0] {
            Value::Error(e) => e,
            other => panic!("{other:?}"),
        }
    }

    /// Only a 7.2 server knows `WAITAOF`; 6.2 and 7.0 refuse it with
    /// their own unknown-command texts, the probe's `0 0 0` quoted.
    #[test]
    fn waitaof_exists_from_7_2() {
        let (mut e, _, conn) = engine_at(0);
        assert_eq!(
            error(&run(&mut e, conn, &["WAITAOF", "0", "0", "0"])),
            "ERR unknown command 'WAITAOF', with args beginning with: '0' '0' '0' "
        );
        e.set_version(RedisVersion::V6_2);
        assert_eq!(
            error(&run(&mut e, conn, &["WAITAOF", "0", "0", "0"])),
            "ERR unknown command `WAITAOF`, with args beginning with: `0`, `0`, `0`, "
        );
        assert_eq!(run(&mut e, conn, &["WAIT", "0", "0"]), [Value::Int(0)]);
        e.set_version(RedisVersion::V7_2);
        assert_eq!(run(&mut e, conn, &["WAITAOF", "0", "0", "0"]), pair(0, 0));
    }

    /// Redis 7.2.4's checks, in its order: numlocal in 0..1, numreplicas
    /// not negative, the timeout, then a replica refuses and numlocal
    /// without AOF is refused (`src/replication.c`, lines 3568-3582;
    /// `src/object.c`, lines 931 and 942 for the range texts).
    #[test]
    fn waitaof_refuses_like_redis_7_2() {
        let (mut e, _, conn) = engine_at(0);
        e.set_version(RedisVersion::V7_2);
        for (words, text) in [
            (
                ["WAITAOF", "2", "0", "0"],
                "ERR value is out of range, value must between 0 and 1",
            ),
            (
                ["WAITAOF", "x", "0", "0"],
                "ERR value is not an integer or out of range",
            ),
            (
                ["WAITAOF", "0", "-1", "0"],
                "ERR value is out of range, must be positive",
            ),
            (["WAITAOF", "0", "0", "-1"], "ERR timeout is negative"),
            (
                ["WAITAOF", "1", "0", "0"],
                "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.",
            ),
        ] {
            assert_eq!(error(&run(&mut e, conn, &words)), text);
        }
        let mut replica = engine_at(0).0;
        replica.set_version(RedisVersion::V7_2);
        replica.set_replica();
        let rc = replica.connect();
        assert!(
            error(&run(&mut replica, rc, &["WAITAOF", "0", "0", "0"]))
                .starts_with("ERR WAITAOF cannot be used with replica instances.")
        );
    }

    /// With AOF on the primary, `WAITAOF 1 1 100` after a write counts
    /// the local fsync at once and a replica once it acknowledged, but
    /// only if the replicas write an AOF: without, it times out with
    /// `[1, 0]`, the synced count Redisson 3.46-3.52 reads as none.
    #[test]
    fn waitaof_counts_only_replicas_with_aof() {
        for replicas_aof in [true, false] {
            let (mut e, clock, conn) = engine_at(0);
            e.set_version(RedisVersion::V7_2);
            e.set_appendonly(true);
            e.set_replicas(1);
            e.set_replicas_appendonly(replicas_aof);
            run(&mut e, conn, &["SET", "k", "v"]);
            assert!(run(&mut e, conn, &["WAITAOF", "1", "1", "100"]).is_empty());
            assert!(e.take_ack_request(), "a blocked WAITAOF asks for acks");
            e.ack(0, 1);
            let answered = e.tick().deliveries;
            if replicas_aof {
                assert_eq!(answered, [(conn, pair(1, 1).remove(0))]);
            } else {
                assert!(answered.is_empty());
                clock.set(100);
                assert_eq!(e.tick().deliveries, [(conn, pair(1, 0).remove(0))]);
            }
        }
    }
}
