//! `RFencedLock`'s scripts as native operations, statement by statement
//! (texts in `script_fenced`), every `redis.call` through the same command
//! code as a client's, as `native` does for `RLock`'s.

use bytes::Bytes;

use crate::native::{INCR, call, exists, hexists, hincrby, int, pexpire, pttl};
use crate::{LockScript, Value, cmd::Ctx};

/// Runs [`LockScript::FencedAcquire`] (nil when acquired, else K's PTTL)
/// or [`LockScript::FencedAcquireToken`] (`{-1, token}` when acquired,
/// else `{PTTL, -1}`): `KEYS` K, the token key; `ARGV` lease, field.
pub(crate) fn run(
    ctx: &mut Ctx<'_>,
    script: LockScript,
    keys: &[Bytes],
    argv: &[Bytes],
) -> Result<Value, String> {
    let (lock, token_key) = (keys.first(), keys.get(1));
    let (lease, field) = (argv.first(), argv.get(1));
    let one = Bytes::from_static(b"1");
    let with_token = script == LockScript::FencedAcquireToken;
    if int(&exists(ctx, lock)?) == Some(0) || int(&hexists(ctx, lock, field)?) == Some(1) {
        let token = call(ctx, &INCR, &[token_key])?;
        hincrby(ctx, lock, field, Some(&one))?;
        pexpire(ctx, lock, lease)?;
        return Ok(if with_token {
            Value::Array(vec![Value::Int(-1), token])
        } else {
            Value::Nil
        });
    }
    let ttl = pttl(ctx, lock)?;
    Ok(if with_token {
        Value::Array(vec![ttl, Value::Int(-1)])
    } else {
        ttl
    })
}
