//! `RFairLock`'s scripts as native operations.
//!
//! Each function follows its text (`script_fair`) statement by statement,
//! every `redis.call` through the same command code as a client's, as
//! `native` does for `RLock`'s. What a Lua interpreter adds is kept: its
//! numbers are doubles (`tonumber` of a ZSCORE reply, which reaches a
//! script as a bulk string; the deadline `ttl + wait + now`; the
//! `-tonumber(wait)` that ZINCRBY receives), a number passed to a command
//! is written as Redis writes it (`%.17g`), `false` stands for a nil
//! reply, and arithmetic or a comparison on `nil` (an argument that is no
//! number, a queued thread without a score) stops the script with the
//! runtime error Lua raises, after the calls already made.

use bytes::Bytes;

use crate::cmd::{self, Ctx, ScriptCommand};
use crate::native::{
    Arg, DEL, HSET, SET, call, exists, hexists, hincrby, int, latch, pexpire, pttl, word,
};
use crate::number::{lua_number_arg, lua_number_to_int, lua_tonumber};
use crate::{LockScript, Value};

static LINDEX: ScriptCommand = ScriptCommand::new("lindex");
pub(crate) static LPOP: ScriptCommand = ScriptCommand::new("lpop");
static LRANGE: ScriptCommand = ScriptCommand::new("lrange");
pub(crate) static LREM: ScriptCommand = ScriptCommand::new("lrem");
pub(crate) static RPUSH: ScriptCommand = ScriptCommand::new("rpush");
pub(crate) static ZADD: ScriptCommand = ScriptCommand::new("zadd");
static ZINCRBY: ScriptCommand = ScriptCommand::new("zincrby");
pub(crate) static ZRANGE: ScriptCommand = ScriptCommand::new("zrange");
pub(crate) static ZREM: ScriptCommand = ScriptCommand::new("zrem");
static ZSCORE: ScriptCommand = ScriptCommand::new("zscore");

/// The error Lua raises for arithmetic on `nil` (`tonumber` of something
/// that is no number); the operand is a call's result, so Lua names no
/// variable.
pub(crate) const ARITHMETIC_ON_NIL: &str =
    "ERR user_script:1: attempt to perform arithmetic on a nil value";

/// The words the scripts pass as Lua constants.
pub(crate) const ZERO: Bytes = Bytes::from_static(b"0");
pub(crate) const ONE: Bytes = Bytes::from_static(b"1");
pub(crate) const MINUS_ONE: Bytes = Bytes::from_static(b"-1");
pub(crate) const PX: Bytes = Bytes::from_static(b"px");

/// A reply as a script sees it, where the scripts only test it against
/// `false` or another string: a bulk string, or `None` for `false` (a nil
/// reply). Nothing else reaches these tests.
fn lua_string(v: Value) -> Option<Bytes> {
    match v {
        Value::Bulk(b) => Some(b),
        _ => None,
    }
}

/// `tonumber(v)` of a script value (`nil` or `false` give `nil`).
pub(crate) fn tonumber(v: Option<&Bytes>) -> Option<f64> {
    v.and_then(|b| lua_tonumber(b))
}

/// Lua's `a <= b`: two numbers compare; anything with `nil` is Lua's
/// comparison error.
pub(crate) fn le(a: Option<f64>, b: Option<f64>) -> Result<bool, String> {
    match (a, b) {
        (Some(a), Some(b)) => Ok(a <= b),
        (Some(_), None) => Err("ERR user_script:1: attempt to compare number with nil".into()),
        (None, Some(_)) => Err("ERR user_script:1: attempt to compare nil with number".into()),
        (None, None) => Err("ERR user_script:1: attempt to compare two nil values".into()),
    }
}

/// `redis.call('lindex', key, index)` as a script sees it.
pub(crate) fn lindex(
    ctx: &mut Ctx<'_>,
    key: Arg<'_>,
    index: &Bytes,
) -> Result<Option<Bytes>, String> {
    Ok(lua_string(call(ctx, &LINDEX, &[key, Some(index)])?))
}

/// `tonumber(redis.call('zscore', key, member))`: `None` for `false` (no
/// score), else `Some(tonumber)`. The score reaches a script as its
/// `%.17g` text, which reads back as the same double, so a double reply
/// is taken as it is.
pub(crate) fn zscore(
    ctx: &mut Ctx<'_>,
    key: Arg<'_>,
    member: Arg<'_>,
) -> Result<Option<Option<f64>>, String> {
    Ok(match call(ctx, &ZSCORE, &[key, member])? {
        Value::Double(d) => Some(Some(d.0)),
        Value::Bulk(b) => Some(lua_tonumber(&b)),
        _ => None,
    })
}

/// The members of an array reply (`lrange`, `zrange`).
pub(crate) fn members(v: Value) -> Vec<Bytes> {
    match v {
        Value::Array(items) => items.into_iter().filter_map(lua_string).collect(),
        _ => Vec::new(),
    }
}

/// `redis.call('zincrby', timeouts, -tonumber(wait), member)`: the
/// negation is computed (and may fail) before the call.
pub(crate) fn take_wait(
    ctx: &mut Ctx<'_>,
    timeouts: Arg<'_>,
    wait: Arg<'_>,
    member: &Bytes,
) -> Result<(), String> {
    let by = tonumber(wait).ok_or(ARITHMETIC_ON_NIL)?;
    call(
        ctx,
        &ZINCRBY,
        &[timeouts, Some(&lua_number_arg(-by)), Some(member)],
    )?;
    Ok(())
}

/// The scripts' opening `while true do` loop: drops queue heads whose
/// deadline (their score) is at or before `now`; a head without a score
/// stops it.
pub(crate) fn purge(
    ctx: &mut Ctx<'_>,
    queue: Arg<'_>,
    timeouts: Arg<'_>,
    now: Arg<'_>,
) -> Result<(), String> {
    while let Some(first) = lindex(ctx, queue, &ZERO)? {
        let Some(timeout) = zscore(ctx, timeouts, Some(&first))? else {
            break;
        };
        if !le(timeout, tonumber(now))? {
            break;
        }
        call(ctx, &ZREM, &[timeouts, Some(&first)])?;
        call(ctx, &LPOP, &[queue])?;
    }
    Ok(())
}

/// The acquire scripts' common part after the purge: the lock taken when
/// free and the queue empty or headed by the caller (every other
/// deadline moved earlier by the wait), or re-entered. `Some(reply)` when
/// the script returns here.
pub(crate) fn take_or_reenter(
    ctx: &mut Ctx<'_>,
    keys: &[Bytes],
    argv: &[Bytes],
    wait: Arg<'_>,
) -> Result<Option<Value>, String> {
    let (lock, queue, timeouts) = (keys.first(), keys.get(1), keys.get(2));
    let (lease, field) = (argv.first(), argv.get(1));
    if int(&exists(ctx, lock)?) == Some(0)
        && (int(&exists(ctx, queue)?) == Some(0)
            || lindex(ctx, queue, &ZERO)?.is_some_and(|head| Some(&head) == field))
    {
        call(ctx, &LPOP, &[queue])?;
        call(ctx, &ZREM, &[timeouts, field])?;
        let others = members(call(
            ctx,
            &ZRANGE,
            &[timeouts, Some(&ZERO), Some(&MINUS_ONE)],
        )?);
        for member in &others {
            take_wait(ctx, timeouts, wait, member)?;
        }
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

/// [`LockScript::FairAcquire`] and [`LockScript::FairAcquireUnscoredLast`]
/// (`checked`: whether the last thread's score is checked before it is
/// read): `ARGV[3]` the wait, `ARGV[4]` now.
fn acquire(
    ctx: &mut Ctx<'_>,
    keys: &[Bytes],
    argv: &[Bytes],
    checked: bool,
) -> Result<Value, String> {
    let (lock, queue, timeouts) = (keys.first(), keys.get(1), keys.get(2));
    let (field, wait, now) = (argv.get(1), argv.get(2), argv.get(3));
    purge(ctx, queue, timeouts, now)?;
    if let Some(reply) = take_or_reenter(ctx, keys, argv, wait)? {
        return Ok(reply);
    }
    if zscore(ctx, timeouts, field)?.is_some() {
        // `math.max(0, ttl)`.
        let ttl = int(&pttl(ctx, lock)?).unwrap_or(0);
        return Ok(Value::Int(ttl.max(0)));
    }
    let last = lindex(ctx, queue, &MINUS_ONE)?;
    let behind = match &last {
        Some(last) if Some(last) != field => {
            !checked || zscore(ctx, timeouts, Some(last))?.is_some()
        }
        _ => false,
    };
    let ttl = if behind {
        let score = zscore(ctx, timeouts, last.as_ref())?.flatten();
        score
            .zip(tonumber(now))
            .map(|(s, n)| s - n)
            .ok_or(ARITHMETIC_ON_NIL)?
    } else {
        int(&pttl(ctx, lock)?).unwrap_or(0) as f64
    };
    let timeout = tonumber(wait)
        .map(|w| ttl + w)
        .and_then(|t| tonumber(now).map(|n| t + n))
        .ok_or(ARITHMETIC_ON_NIL)?;
    if int(&call(
        ctx,
        &ZADD,
        &[timeouts, Some(&lua_number_arg(timeout)), field],
    )?) == Some(1)
    {
        call(ctx, &RPUSH, &[queue, field])?;
    }
    Ok(Value::Int(lua_number_to_int(ttl)))
}

/// [`LockScript::FairAcquireFailed`]: `KEYS` queue, timeout set; `ARGV`
/// the caller, the wait. Returns nothing (a nil reply).
fn acquire_failed(ctx: &mut Ctx<'_>, keys: &[Bytes], argv: &[Bytes]) -> Result<Value, String> {
    let (queue, timeouts) = (keys.first(), keys.get(1));
    let (caller, wait) = (argv.first(), argv.get(1));
    let entries = members(call(ctx, &LRANGE, &[queue, Some(&ZERO), Some(&MINUS_ONE)])?);
    let at = entries
        .iter()
        .position(|e| Some(e) == caller)
        .unwrap_or(entries.len());
    for member in entries.iter().skip(at + 1) {
        take_wait(ctx, timeouts, wait, member)?;
    }
    call(ctx, &ZREM, &[timeouts, caller])?;
    call(ctx, &LREM, &[queue, Some(&ZERO), caller])?;
    Ok(Value::Nil)
}

/// `redis.call(command, KEYS[4] .. ':' .. next, message)`: the unlock
/// message to the queue head's own channel, with the publish command the
/// client passed (any command, looked up as Lua's bridge looks it up).
pub(crate) fn notify(
    ctx: &mut Ctx<'_>,
    command: Arg<'_>,
    channel: Arg<'_>,
    next: &Bytes,
    message: Arg<'_>,
) -> Result<(), String> {
    // The concatenation comes first, and fails on a missing `KEYS[4]`.
    let channel =
        channel.ok_or("ERR user_script:1: attempt to concatenate field '?' (a nil value)")?;
    let mut name = Vec::with_capacity(channel.len() + 1 + next.len());
    name.extend_from_slice(channel);
    name.push(b':');
    name.extend_from_slice(next);
    let words = [word(command)?, Bytes::from(name), word(message)?];
    cmd::call(ctx, &words).map_err(|e| e.to_string())?;
    Ok(())
}

/// [`LockScript::FairUnlock`]: `KEYS` K, queue, timeout set, channel
/// prefix, latch; `ARGV` message, lease, field, now, publish command,
/// latch TTL.
fn unlock(ctx: &mut Ctx<'_>, keys: &[Bytes], argv: &[Bytes]) -> Result<Value, String> {
    let (lock, queue, timeouts, channel, latch_key) = (
        keys.first(),
        keys.get(1),
        keys.get(2),
        keys.get(3),
        keys.get(4),
    );
    let (message, lease, field, now, command, latch_ttl) = (
        argv.first(),
        argv.get(1),
        argv.get(2),
        argv.get(3),
        argv.get(4),
        argv.get(5),
    );
    if let Some(stored) = latch(ctx, latch_key)? {
        return Ok(stored);
    }
    purge(ctx, queue, timeouts, now)?;
    if int(&exists(ctx, lock)?) == Some(0) {
        if let Some(next) = lindex(ctx, queue, &ZERO)? {
            notify(ctx, command, channel, &next, message)?;
        }
        call(ctx, &SET, &[latch_key, Some(&ONE), Some(&PX), latch_ttl])?;
        return Ok(Value::Int(1));
    }
    if int(&hexists(ctx, lock, field)?) == Some(0) {
        return Ok(Value::Nil);
    }
    let counter = hincrby(ctx, lock, field, Some(&MINUS_ONE))?;
    if int(&counter).is_some_and(|c| c > 0) {
        pexpire(ctx, lock, lease)?;
        call(ctx, &SET, &[latch_key, Some(&ZERO), Some(&PX), latch_ttl])?;
        return Ok(Value::Int(0));
    }
    call(ctx, &DEL, &[lock])?;
    call(ctx, &SET, &[latch_key, Some(&ONE), Some(&PX), latch_ttl])?;
    if let Some(next) = lindex(ctx, queue, &ZERO)? {
        notify(ctx, command, channel, &next, message)?;
    }
    Ok(Value::Int(1))
}

/// [`LockScript::FairForceUnlock`]: `KEYS` K, queue, timeout set, channel
/// prefix; `ARGV` message, now, publish command.
fn force_unlock(ctx: &mut Ctx<'_>, keys: &[Bytes], argv: &[Bytes]) -> Result<Value, String> {
    let (lock, queue, timeouts, channel) = (keys.first(), keys.get(1), keys.get(2), keys.get(3));
    let (message, now, command) = (argv.first(), argv.get(1), argv.get(2));
    purge(ctx, queue, timeouts, now)?;
    if int(&call(ctx, &DEL, &[lock])?) != Some(1) {
        return Ok(Value::Int(0));
    }
    if let Some(next) = lindex(ctx, queue, &ZERO)? {
        notify(ctx, command, channel, &next, message)?;
    }
    Ok(Value::Int(1))
}

/// Runs one of `RFairLock`'s scripts; `Err` is the text of the error that
/// aborted it.
pub(crate) fn run(
    ctx: &mut Ctx<'_>,
    script: LockScript,
    keys: &[Bytes],
    argv: &[Bytes],
) -> Result<Value, String> {
    match script {
        LockScript::FairAcquireFailed => acquire_failed(ctx, keys, argv),
        LockScript::FairTryAcquire => {
            // `ARGV[3]` is now and `ARGV[4]` the wait here.
            purge(ctx, keys.get(1), keys.get(2), argv.get(2))?;
            Ok(take_or_reenter(ctx, keys, argv, argv.get(3))?.unwrap_or(Value::Int(1)))
        }
        LockScript::FairAcquireUnscoredLast => acquire(ctx, keys, argv, false),
        LockScript::FairAcquire => acquire(ctx, keys, argv, true),
        LockScript::FairUnlock => unlock(ctx, keys, argv),
        LockScript::FairForceUnlock => force_unlock(ctx, keys, argv),
        other => Err(format!("not a fair lock script: {other:?}")),
    }
}
