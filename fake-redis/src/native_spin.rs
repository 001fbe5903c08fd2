//! `RSpinLock`'s unlocks as native operations, statement by statement
//! (texts in `script_spin`), every `redis.call` through the same command
//! code as a client's, as `native` does for `RLock`'s (which also runs the
//! spin lock's acquire: the same calls as `RLock`'s). None publishes: a
//! spin lock's waiters poll.

use bytes::Bytes;

use crate::native::{Arg, DEL, SET, call, hexists, hincrby, int, latch, pexpire};
use crate::{LockScript, Value, cmd::Ctx};

/// The unlocks' count-down: nil when `field` does not hold `lock`, 0 when
/// still held (expiry re-armed), 1 when deleted; with a latch key, the
/// result is stored there for `latch_ttl` ms as well.
fn unlock(
    ctx: &mut Ctx<'_>,
    lock: Arg<'_>,
    lease: Arg<'_>,
    field: Arg<'_>,
    latched: Option<(Arg<'_>, Arg<'_>)>,
) -> Result<Value, String> {
    let px = Bytes::from_static(b"px");
    if int(&hexists(ctx, lock, field)?) == Some(0) {
        return Ok(Value::Nil);
    }
    let counter = hincrby(ctx, lock, field, Some(&Bytes::from_static(b"-1")))?;
    let result = if int(&counter).is_some_and(|c| c > 0) {
        pexpire(ctx, lock, lease)?;
        0
    } else {
        call(ctx, &DEL, &[lock])?;
        1
    };
    if let Some((latch_key, latch_ttl)) = latched {
        let stored = Bytes::from_static(if result == 0 { b"0" } else { b"1" });
        call(ctx, &SET, &[latch_key, Some(&stored), Some(&px), latch_ttl])?;
    }
    Ok(Value::Int(result))
}

/// Runs one of `RSpinLock`'s scripts; `Err` is the text of the error that
/// aborted it.
pub(crate) fn run(
    ctx: &mut Ctx<'_>,
    script: LockScript,
    keys: &[Bytes],
    argv: &[Bytes],
) -> Result<Value, String> {
    let k1 = keys.first();
    let (a1, a2) = (argv.first(), argv.get(1));
    match script {
        LockScript::SpinUnlock => unlock(ctx, k1, a1, a2, None),
        LockScript::SpinUnlockLatched => {
            if let Some(stored) = latch(ctx, keys.get(1))? {
                return Ok(stored);
            }
            unlock(ctx, k1, a1, a2, Some((keys.get(1), argv.get(2))))
        }
        LockScript::SpinForceUnlock => Ok(Value::Int(i64::from(
            int(&call(ctx, &DEL, &[k1])?) == Some(1),
        ))),
        other => Err(format!("not a spin lock script: {other:?}")),
    }
}
