//! `RFairLock`'s scripts before Redisson 3.32.0 as native operations.
//!
//! They follow their texts (`script_fair_legacy`) statement by statement,
//! as `native_fair` does for the later ones, and share its helpers; what
//! differs by era is a flag here:
//!
//! - the purge up to 3.30.x compares `tonumber(ZSCORE)` with now without
//!   checking the head has a score: a head without one stops the script
//!   with Lua's "attempt to compare nil with number" (#4153);
//! - up to 3.11.0 taking the lock moves no other deadline, a waiter takes
//!   its ttl from the queue's head and writes its deadline again on every
//!   attempt, and `acquireFailed` moves the deadlines only from the head
//!   (#2099);
//! - up to 3.31.x a queued waiter is answered its own deadline − wait −
//!   now (#4705);
//! - the unlock publishes with `publish` up to 3.21.x, with the command
//!   the client passes from 3.22.0, and keeps a latch from 3.24.0.

use bytes::Bytes;

use crate::cmd::Ctx;
use crate::native::{
    Arg, DEL, HSET, SET, call, exists, hexists, hincrby, int, latch, pexpire, pttl,
};
use crate::native_fair::{
    ARITHMETIC_ON_NIL, LPOP, LREM, MINUS_ONE, ONE, PX, RPUSH, ZADD, ZERO, ZRANGE, ZREM, le, lindex,
    members, notify, take_or_reenter, take_wait, tonumber, zscore,
};
use crate::number::{lua_number_arg, lua_number_to_int};
use crate::{LockScript, Value};

/// The word the scripts before 3.22.0 publish with, a Lua constant.
const PUBLISH: Bytes = Bytes::from_static(b"publish");

/// The purge before 3.31.0: `tonumber` of a head's score compared with
/// now, so a head without a score is Lua's comparison error.
fn purge_unchecked(
    ctx: &mut Ctx<'_>,
    queue: Arg<'_>,
    timeouts: Arg<'_>,
    now: Arg<'_>,
) -> Result<(), String> {
    while let Some(first) = lindex(ctx, queue, &ZERO)? {
        let timeout = zscore(ctx, timeouts, Some(&first))?;
        if !le(timeout.flatten(), tonumber(now))? {
            break;
        }
        call(ctx, &ZREM, &[timeouts, Some(&first)])?;
        call(ctx, &LPOP, &[queue])?;
    }
    Ok(())
}

/// The take and re-entry up to 3.11.0: no other deadline moves.
fn take_or_reenter_legacy(
    ctx: &mut Ctx<'_>,
    keys: &[Bytes],
    argv: &[Bytes],
) -> Result<Option<Value>, String> {
    let (lock, queue, timeouts) = (keys.first(), keys.get(1), keys.get(2));
    let (lease, field) = (argv.first(), argv.get(1));
    if int(&exists(ctx, lock)?) == Some(0)
        && (int(&exists(ctx, queue)?) == Some(0)
            || lindex(ctx, queue, &ZERO)?.is_some_and(|head| Some(&head) == field))
    {
        call(ctx, &LPOP, &[queue])?;
        call(ctx, &ZREM, &[timeouts, field])?;
        call(ctx, &HSET, &[lock, field, Some(&ONE)])?;
        pexpire(ctx, lock, lease)?;
        return Ok(Some(Value::Nil));
    }
    if int(&hexists(ctx, lock, field)?) == Some(1) {
        hincrby(ctx, lock, field, Some(&ONE))?;
        pexpire(ctx, lock, lease)?;
        return Ok(Some(Value::Nil));
    }
    Ok(None)
}

/// `tonumber(redis.call('zscore', ...)) - tonumber(now)`.
fn score_minus_now(
    ctx: &mut Ctx<'_>,
    timeouts: Arg<'_>,
    member: &Bytes,
    now: Arg<'_>,
) -> Result<f64, String> {
    let score = zscore(ctx, timeouts, Some(member))?;
    score
        .flatten()
        .zip(tonumber(now))
        .map(|(s, n)| s - n)
        .ok_or_else(|| ARITHMETIC_ON_NIL.to_owned())
}

/// `ZADD timeouts deadline field`, and `RPUSH` when the field is new;
/// the reply is `ttl` as Redis returns a Lua number.
fn enqueue(
    ctx: &mut Ctx<'_>,
    keys: &[Bytes],
    field: Arg<'_>,
    ttl: f64,
    deadline: f64,
) -> Result<Value, String> {
    let (queue, timeouts) = (keys.get(1), keys.get(2));
    let added = call(
        ctx,
        &ZADD,
        &[timeouts, Some(&lua_number_arg(deadline)), field],
    )?;
    if int(&added) == Some(1) {
        call(ctx, &RPUSH, &[queue, field])?;
    }
    Ok(Value::Int(lua_number_to_int(ttl)))
}

/// [`LockScript::FairAcquireFromHead`] (3.8.0 to 3.11.0): `ARGV[3]` now +
/// wait, `ARGV[4]` now; the ttl from the head, the deadline rewritten.
fn acquire_from_head(ctx: &mut Ctx<'_>, keys: &[Bytes], argv: &[Bytes]) -> Result<Value, String> {
    let (lock, queue, timeouts) = (keys.first(), keys.get(1), keys.get(2));
    let (field, deadline_base, now) = (argv.get(1), argv.get(2), argv.get(3));
    purge_unchecked(ctx, queue, timeouts, now)?;
    if let Some(reply) = take_or_reenter_legacy(ctx, keys, argv)? {
        return Ok(reply);
    }
    let ttl = match lindex(ctx, queue, &ZERO)? {
        Some(first) if Some(&first) != field => score_minus_now(ctx, timeouts, &first, now)?,
        _ => int(&pttl(ctx, lock)?).unwrap_or(0) as f64,
    };
    let deadline = tonumber(deadline_base)
        .map(|d| ttl + d)
        .ok_or(ARITHMETIC_ON_NIL)?;
    enqueue(ctx, keys, field, ttl, deadline)
}

/// [`LockScript::FairAcquireUncheckedPurge`] (3.11.1 to 3.30.x) and
/// [`LockScript::FairAcquireOwnDeadline`] (3.31.0): `ARGV[3]` the wait,
/// `ARGV[4]` now; a queued caller is told its deadline − wait − now.
fn acquire_own_deadline(
    ctx: &mut Ctx<'_>,
    keys: &[Bytes],
    argv: &[Bytes],
    checked_purge: bool,
) -> Result<Value, String> {
    let (lock, queue, timeouts) = (keys.first(), keys.get(1), keys.get(2));
    let (field, wait, now) = (argv.get(1), argv.get(2), argv.get(3));
    if checked_purge {
        crate::native_fair::purge(ctx, queue, timeouts, now)?;
    } else {
        purge_unchecked(ctx, queue, timeouts, now)?;
    }
    if let Some(reply) = take_or_reenter(ctx, keys, argv, wait)? {
        return Ok(reply);
    }
    if let Some(own) = zscore(ctx, timeouts, field)? {
        // `timeout - tonumber(ARGV[3]) - tonumber(ARGV[4])`: the string
        // score is coerced, each subtraction fails on a `nil`.
        let left = own.zip(tonumber(wait)).map(|(s, w)| s - w);
        let reply = left.zip(tonumber(now)).map(|(l, n)| l - n);
        return reply
            .map(|r| Value::Int(lua_number_to_int(r)))
            .ok_or_else(|| ARITHMETIC_ON_NIL.to_owned());
    }
    let ttl = match lindex(ctx, queue, &MINUS_ONE)? {
        Some(last) if Some(&last) != field => score_minus_now(ctx, timeouts, &last, now)?,
        _ => int(&pttl(ctx, lock)?).unwrap_or(0) as f64,
    };
    let deadline = tonumber(wait)
        .map(|w| ttl + w)
        .and_then(|t| tonumber(now).map(|n| t + n))
        .ok_or(ARITHMETIC_ON_NIL)?;
    enqueue(ctx, keys, field, ttl, deadline)
}

/// [`LockScript::FairAcquireFailedHead`] (3.8.0 to 3.11.0): the wait off
/// every deadline only when the caller heads the queue.
fn acquire_failed_head(ctx: &mut Ctx<'_>, keys: &[Bytes], argv: &[Bytes]) -> Result<Value, String> {
    let (queue, timeouts) = (keys.first(), keys.get(1));
    let (caller, wait) = (argv.first(), argv.get(1));
    let first = lindex(ctx, queue, &ZERO)?;
    if first.is_some() && first.as_ref() == caller {
        let all = members(call(
            ctx,
            &ZRANGE,
            &[timeouts, Some(&ZERO), Some(&MINUS_ONE)],
        )?);
        for member in &all {
            take_wait(ctx, timeouts, wait, member)?;
        }
    }
    call(ctx, &ZREM, &[timeouts, caller])?;
    call(ctx, &LREM, &[queue, Some(&ZERO), caller])?;
    Ok(Value::Nil)
}

/// The unlocks before 3.31.0: `KEYS` K, queue, timeout set, channel
/// prefix (and the latch from 3.24.0); `ARGV` message, lease, field, now
/// (then the publish command from 3.22.0, the latch TTL from 3.24.0).
fn unlock(
    ctx: &mut Ctx<'_>,
    script: LockScript,
    keys: &[Bytes],
    argv: &[Bytes],
) -> Result<Value, String> {
    let (lock, queue, timeouts, channel) = (keys.first(), keys.get(1), keys.get(2), keys.get(3));
    let (message, lease, field, now) = (argv.first(), argv.get(1), argv.get(2), argv.get(3));
    let command = match script {
        LockScript::FairUnlockLegacy => Some(&PUBLISH),
        _ => argv.get(4),
    };
    let latched = script == LockScript::FairUnlockLatchedUncheckedPurge;
    let (latch_key, latch_ttl) = (keys.get(4), argv.get(5));
    if latched && let Some(stored) = latch(ctx, latch_key)? {
        return Ok(stored);
    }
    let set_latch = |ctx: &mut Ctx<'_>, value: &Bytes| -> Result<(), String> {
        if latched {
            call(ctx, &SET, &[latch_key, Some(value), Some(&PX), latch_ttl])?;
        }
        Ok(())
    };
    purge_unchecked(ctx, queue, timeouts, now)?;
    if int(&exists(ctx, lock)?) == Some(0) {
        if let Some(next) = lindex(ctx, queue, &ZERO)? {
            notify(ctx, command, channel, &next, message)?;
        }
        set_latch(ctx, &ONE)?;
        return Ok(Value::Int(1));
    }
    if int(&hexists(ctx, lock, field)?) == Some(0) {
        return Ok(Value::Nil);
    }
    let counter = hincrby(ctx, lock, field, Some(&MINUS_ONE))?;
    if int(&counter).is_some_and(|c| c > 0) {
        pexpire(ctx, lock, lease)?;
        set_latch(ctx, &ZERO)?;
        return Ok(Value::Int(0));
    }
    call(ctx, &DEL, &[lock])?;
    set_latch(ctx, &ONE)?;
    if let Some(next) = lindex(ctx, queue, &ZERO)? {
        notify(ctx, command, channel, &next, message)?;
    }
    Ok(Value::Int(1))
}

/// The force unlocks before 3.31.0: `ARGV` message, now (then the
/// publish command from 3.22.0).
fn force_unlock(
    ctx: &mut Ctx<'_>,
    script: LockScript,
    keys: &[Bytes],
    argv: &[Bytes],
) -> Result<Value, String> {
    let (lock, queue, timeouts, channel) = (keys.first(), keys.get(1), keys.get(2), keys.get(3));
    let (message, now) = (argv.first(), argv.get(1));
    let command = match script {
        LockScript::FairForceUnlockLegacy => Some(&PUBLISH),
        _ => argv.get(2),
    };
    purge_unchecked(ctx, queue, timeouts, now)?;
    if int(&call(ctx, &DEL, &[lock])?) != Some(1) {
        return Ok(Value::Int(0));
    }
    if let Some(next) = lindex(ctx, queue, &ZERO)? {
        notify(ctx, command, channel, &next, message)?;
    }
    Ok(Value::Int(1))
}

/// Runs one of `RFairLock`'s scripts before 3.32.0; `Err` is the text of
/// the error that aborted it.
pub(crate) fn run(
    ctx: &mut Ctx<'_>,
    script: LockScript,
    keys: &[Bytes],
    argv: &[Bytes],
) -> Result<Value, String> {
    let (queue, timeouts) = (keys.get(1), keys.get(2));
    match script {
        LockScript::FairAcquireFailedHead => acquire_failed_head(ctx, keys, argv),
        LockScript::FairTryAcquireLegacy => {
            purge_unchecked(ctx, queue, timeouts, argv.get(2))?;
            Ok(take_or_reenter_legacy(ctx, keys, argv)?.unwrap_or(Value::Int(1)))
        }
        LockScript::FairTryAcquireUncheckedPurge => {
            purge_unchecked(ctx, queue, timeouts, argv.get(2))?;
            Ok(take_or_reenter(ctx, keys, argv, argv.get(3))?.unwrap_or(Value::Int(1)))
        }
        LockScript::FairAcquireFromHead => acquire_from_head(ctx, keys, argv),
        LockScript::FairAcquireUncheckedPurge => acquire_own_deadline(ctx, keys, argv, false),
        LockScript::FairAcquireOwnDeadline => acquire_own_deadline(ctx, keys, argv, true),
        LockScript::FairUnlockLegacy
        | LockScript::FairUnlockPublishArg
        | LockScript::FairUnlockLatchedUncheckedPurge => unlock(ctx, script, keys, argv),
        LockScript::FairForceUnlockLegacy | LockScript::FairForceUnlockPublishArg => {
            force_unlock(ctx, script, keys, argv)
        }
        other => Err(format!("not a fair lock script before 3.32.0: {other:?}")),
    }
}
