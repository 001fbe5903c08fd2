//! `RReadWriteLock`'s scripts (`crate::script_rw`) as native operations.
//!
//! Each function follows its Lua text statement by statement, as
//! `native` does for `RLock`'s: every `redis.call` goes through the same
//! command code, side effects made before a failing call stay, and what
//! Lua itself does is done as Lua 5.1 does it: numbers are doubles (a
//! reply's integer, `counter + 1`, `math.max`), a number in a key or a
//! command word is printed with `%.14g`, `tonumber` reads like `strtod`,
//! a numeric `for` steps as the VM steps, and a runtime error (a `nil`
//! concatenated, arithmetic on a word, a `for` bound that is no number)
//! has the text Redis gives it. The property test `native_twins_equal_lua`
//! runs every script here and in Lua and compares replies, messages and
//! keys.
//!
//! One thing is not done natively: a counting loop Lua would spend most of
//! its instruction budget on (a counter field of a million or `inf`, put
//! there by hand). [`loops_too_long`] sees those before the script starts
//! and the script then runs in Lua, so even that ends as Redis ends it.

use bytes::Bytes;

use crate::cmd::{Ctx, ScriptCommand};
use crate::db::{Data, Db};
use crate::native::{
    Arg, DEL, GET, HSET, PUBLISH, SET, call, hexists, hincrby, int, pexpire, pttl, publish_by_name,
};
use crate::number::{lua_number_arg, lua_number_text, lua_tonumber, lua_tonumber_int, parse_i64};
use crate::{LockScript, Value};

mod renew;
#[cfg(test)]
mod tests;

use renew::{read_renew, read_renew_batch, read_renew_batch_own};

static HGET: ScriptCommand = ScriptCommand::new("hget");
static HLEN: ScriptCommand = ScriptCommand::new("hlen");
static HKEYS: ScriptCommand = ScriptCommand::new("hkeys");
static HDEL: ScriptCommand = ScriptCommand::new("hdel");

const MODE: Bytes = Bytes::from_static(b"mode");
const ONE: Bytes = Bytes::from_static(b"1");
const ZERO: Bytes = Bytes::from_static(b"0");
const MINUS_ONE: Bytes = Bytes::from_static(b"-1");

/// Counting-loop iterations (and hash fields walked) above which a script
/// runs in Lua: far below what Lua's instruction budget stops, so Lua
/// would finish such a script too, just slower.
const LOOP_BUDGET: f64 = 1_000_000.0;

/// A runtime error raised by Lua itself, as Redis reports it (the caller
/// adds the `script: <sha>, on @user_script:1.` suffix; every script is
/// one line).
fn runtime_error(message: &str) -> String {
    format!("ERR user_script:1: {message}")
}

/// `KEYS[n] .. part .. part ...`: a `nil` first operand fails as Lua's
/// concatenation fails (the operands after it are always strings or
/// numbers in these scripts).
fn concat(first: Arg<'_>, parts: &[&[u8]]) -> Result<Bytes, String> {
    let first =
        first.ok_or_else(|| runtime_error("attempt to concatenate field '?' (a nil value)"))?;
    let mut out = Vec::with_capacity(first.len() + parts.iter().map(|p| p.len()).sum::<usize>());
    out.extend_from_slice(first);
    for part in parts {
        out.extend_from_slice(part);
    }
    Ok(Bytes::from(out))
}

/// `prefix .. ':' .. name .. ':rwlock_timeout:' .. i`: a reader's timeout
/// key, `i` printed as Lua prints a number.
fn timeout_key(prefix: Arg<'_>, name: &[u8], i: f64) -> Result<Bytes, String> {
    let i = lua_number_text(i);
    concat(prefix, &[b":", name, b":rwlock_timeout:", i.as_bytes()])
}

/// A Lua number as the word `redis.call` makes of it (Redis 7.0's
/// `%.17g`, not the `%.14g` of a concatenation).
fn number(n: f64) -> Bytes {
    lua_number_arg(n)
}

/// A reply's integer as the Lua number the script holds.
fn lua_number(v: &Value) -> f64 {
    match v {
        Value::Int(n) => *n as f64,
        _ => f64::NAN,
    }
}

/// Whether `v` is the string `text` (`mode == 'read'`).
fn is(v: &Value, text: &[u8]) -> bool {
    matches!(v, Value::Bulk(b) if b.as_ref() == text)
}

/// `tonumber(redis.call('hget', ...))`: `false` and a word that is no
/// number are `nil`.
fn tonumber(v: &Value) -> Option<f64> {
    match v {
        Value::Bulk(b) => lua_tonumber(b),
        _ => None,
    }
}

/// Lua 5.1's `for i = from, 1, -1 do body(i) end`: the VM steps a double
/// from `from - step`, so a fractional count runs as Lua runs it.
fn count_down(from: f64, mut body: impl FnMut(f64) -> Result<(), String>) -> Result<(), String> {
    let mut idx = from - -1.0;
    loop {
        idx += -1.0;
        if idx < 1.0 || idx.is_nan() {
            return Ok(());
        }
        body(idx)?;
    }
}

fn hget(ctx: &mut Ctx<'_>, key: Arg<'_>, field: Arg<'_>) -> Result<Value, String> {
    call(ctx, &HGET, &[key, field])
}

/// `redis.call('hlen', key) > 1`.
fn has_more_than_one_field(ctx: &mut Ctx<'_>, key: Arg<'_>) -> Result<bool, String> {
    Ok(int(&call(ctx, &HLEN, &[key])?).is_some_and(|n| n > 1))
}

/// `redis.call('hkeys', key)`, as the list `ipairs` walks.
fn hkeys(ctx: &mut Ctx<'_>, key: Arg<'_>) -> Result<Vec<Bytes>, String> {
    Ok(match call(ctx, &HKEYS, &[key])? {
        Value::Array(items) => items
            .into_iter()
            .filter_map(|v| match v {
                Value::Bulk(b) => Some(b),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    })
}

/// How an unlock publishes and latches: `publish` is the `ARGV` naming
/// the publish command (`None`: the literal `'publish'`), `latch` the
/// latch key and its TTL (3.24+), `absent` the reply when no lock is
/// there (1, or `nil` from 3.44).
#[derive(Clone, Copy)]
struct Unlock<'a> {
    publish: Option<Arg<'a>>,
    latch: Option<(Arg<'a>, Arg<'a>)>,
    absent: Option<i64>,
}

impl Unlock<'_> {
    /// `local val = redis.call('get', latch); if val ~= false then return
    /// tonumber(val); end`: the replayed result, if the latch is set.
    fn replay(&self, ctx: &mut Ctx<'_>) -> Result<Option<Value>, String> {
        let Some((latch, _)) = self.latch else {
            return Ok(None);
        };
        match call(ctx, &GET, &[latch])? {
            Value::Bulk(val) => Ok(Some(lua_tonumber_int(&val).map_or(Value::Nil, Value::Int))),
            _ => Ok(None),
        }
    }

    /// `redis.call('set', latch, value, 'px', ttl)`, when latched.
    fn latch(&self, ctx: &mut Ctx<'_>, value: &Bytes) -> Result<(), String> {
        if let Some((latch, ttl)) = self.latch {
            let px = Bytes::from_static(b"px");
            call(ctx, &SET, &[latch, Some(value), Some(&px), ttl])?;
        }
        Ok(())
    }

    fn publish(&self, ctx: &mut Ctx<'_>, channel: Arg<'_>, message: Arg<'_>) -> Result<(), String> {
        match self.publish {
            None => call(ctx, &PUBLISH, &[channel, message])?,
            Some(name) => publish_by_name(ctx, name, channel, message)?,
        };
        Ok(())
    }

    /// Every unlock's start: a set latch replays its result; a lock that
    /// is not there (`mode == false`) is announced anyway, latched as 1,
    /// and answered [`Self::absent`]. Otherwise the lock's `mode`.
    fn start(
        &self,
        ctx: &mut Ctx<'_>,
        lock: Arg<'_>,
        channel: Arg<'_>,
        message: Arg<'_>,
    ) -> Result<Result<Value, Value>, String> {
        if let Some(replayed) = self.replay(ctx)? {
            return Ok(Err(replayed));
        }
        let mode = hget(ctx, lock, Some(&MODE))?;
        if mode != Value::Nil {
            return Ok(Ok(mode));
        }
        self.publish(ctx, channel, message)?;
        self.latch(ctx, &ONE)?;
        Ok(Err(self.absent.map_or(Value::Nil, Value::Int)))
    }
}

/// The read acquires: `fixed_lease` sets K's TTL to the lease (3.8 to
/// 3.11.0), otherwise to the longer of the lease and what K had left.
fn read_acquire(
    ctx: &mut Ctx<'_>,
    keys: &[Bytes],
    argv: &[Bytes],
    fixed_lease: bool,
) -> Result<Value, String> {
    let (k1, k2) = (keys.first(), keys.get(1));
    let (a1, a2, a3) = (argv.first(), argv.get(1), argv.get(2));
    let mode = hget(ctx, k1, Some(&MODE))?;
    if mode == Value::Nil {
        call(
            ctx,
            &HSET,
            &[k1, Some(&MODE), Some(&Bytes::from_static(b"read"))],
        )?;
        call(ctx, &HSET, &[k1, a2, Some(&ONE)])?;
        let first = concat(k2, &[b":1"])?;
        call(ctx, &SET, &[Some(&first), Some(&ONE)])?;
        pexpire(ctx, Some(&first), a1)?;
        pexpire(ctx, k1, a1)?;
        return Ok(Value::Nil);
    }
    if is(&mode, b"read") || (is(&mode, b"write") && int(&hexists(ctx, k1, a3)?) == Some(1)) {
        let ind = lua_number(&hincrby(ctx, k1, a2, Some(&ONE))?);
        let key = concat(k2, &[b":", &number(ind)])?;
        call(ctx, &SET, &[Some(&key), Some(&ONE)])?;
        pexpire(ctx, Some(&key), a1)?;
        if fixed_lease {
            pexpire(ctx, k1, a1)?;
        } else {
            let remain = lua_number(&pttl(ctx, k1)?);
            // `math.max(remainTime, ARGV[1])`: each argument must be a
            // number (a numeric word is one); the first wins a tie.
            let lease = match a1 {
                Some(word) => lua_tonumber(word).ok_or("got string"),
                None => Err("got nil"),
            }
            .map_err(|got| {
                runtime_error(&format!(
                    "bad argument #2 to 'max' (number expected, {got})"
                ))
            })?;
            let longest = if lease > remain { lease } else { remain };
            pexpire(ctx, k1, Some(&number(longest)))?;
        }
        return Ok(Value::Nil);
    }
    pttl(ctx, k1)
}

/// The read unlocks: one reader's hold less; K lives on as long as the
/// longest remaining reader's timeout key, or is deleted and announced.
fn read_unlock(
    ctx: &mut Ctx<'_>,
    keys: &[Bytes],
    argv: &[Bytes],
    form: Unlock<'_>,
) -> Result<Value, String> {
    let (k1, k2, k3, k4) = (keys.first(), keys.get(1), keys.get(2), keys.get(3));
    let (message, field) = (argv.first(), argv.get(1));
    let mode = match form.start(ctx, k1, k2, message)? {
        Ok(mode) => mode,
        Err(reply) => return Ok(reply),
    };
    if int(&hexists(ctx, k1, field)?) == Some(0) {
        return Ok(Value::Nil);
    }
    let counter = lua_number(&hincrby(ctx, k1, field, Some(&MINUS_ONE))?);
    if counter == 0.0 {
        call(ctx, &HDEL, &[k1, field])?;
    }
    let released = concat(k3, &[b":", &number(counter + 1.0)])?;
    call(ctx, &DEL, &[Some(&released)])?;
    if has_more_than_one_field(ctx, k1)? {
        let mut max_remain = -3.0;
        for name in hkeys(ctx, k1)? {
            if let Some(counter) = tonumber(&hget(ctx, k1, Some(&name))?) {
                count_down(counter, |i| {
                    let remain = lua_number(&pttl(ctx, Some(&timeout_key(k4, &name, i)?))?);
                    // `math.max(remainTime, maxRemainTime)`.
                    if max_remain <= remain {
                        max_remain = remain;
                    }
                    Ok(())
                })?;
            }
        }
        if max_remain > 0.0 {
            pexpire(ctx, k1, Some(&number(max_remain)))?;
            form.latch(ctx, &ZERO)?;
            return Ok(Value::Int(0));
        }
        if is(&mode, b"write") {
            form.latch(ctx, &ZERO)?;
            return Ok(Value::Int(0));
        }
    }
    call(ctx, &DEL, &[k1])?;
    form.publish(ctx, k2, message)?;
    form.latch(ctx, &ONE)?;
    Ok(Value::Int(1))
}

/// The write acquire: fresh, or re-entered by the same writer (which adds
/// the lease to what K has left).
fn write_acquire(ctx: &mut Ctx<'_>, keys: &[Bytes], argv: &[Bytes]) -> Result<Value, String> {
    let (k1, lease, field) = (keys.first(), argv.first(), argv.get(1));
    let mode = hget(ctx, k1, Some(&MODE))?;
    if mode == Value::Nil {
        call(
            ctx,
            &HSET,
            &[k1, Some(&MODE), Some(&Bytes::from_static(b"write"))],
        )?;
        call(ctx, &HSET, &[k1, field, Some(&ONE)])?;
        pexpire(ctx, k1, lease)?;
        return Ok(Value::Nil);
    }
    if is(&mode, b"write") && int(&hexists(ctx, k1, field)?) == Some(1) {
        hincrby(ctx, k1, field, Some(&ONE))?;
        let current = lua_number(&pttl(ctx, k1)?);
        // `currentExpire + ARGV[1]`: Lua converts a numeric word.
        let add = match lease {
            Some(word) => lua_tonumber(word).ok_or("a string value"),
            None => Err("a nil value"),
        }
        .map_err(|what| {
            runtime_error(&format!(
                "attempt to perform arithmetic on field '?' ({what})"
            ))
        })?;
        pexpire(ctx, k1, Some(&number(current + add)))?;
        return Ok(Value::Nil);
    }
    pttl(ctx, k1)
}

/// The write unlocks: the writer's hold less; its last hold leaves K to
/// its readers (mode `read`) or deletes and announces it.
fn write_unlock(
    ctx: &mut Ctx<'_>,
    keys: &[Bytes],
    argv: &[Bytes],
    form: Unlock<'_>,
) -> Result<Value, String> {
    let (k1, k2) = (keys.first(), keys.get(1));
    let (message, lease, field) = (argv.first(), argv.get(1), argv.get(2));
    let mode = match form.start(ctx, k1, k2, message)? {
        Ok(mode) => mode,
        Err(reply) => return Ok(reply),
    };
    if !is(&mode, b"write") || int(&hexists(ctx, k1, field)?) == Some(0) {
        return Ok(Value::Nil);
    }
    let counter = hincrby(ctx, k1, field, Some(&MINUS_ONE))?;
    if lua_number(&counter) > 0.0 {
        pexpire(ctx, k1, lease)?;
        form.latch(ctx, &ZERO)?;
        return Ok(Value::Int(0));
    }
    call(ctx, &HDEL, &[k1, field])?;
    if int(&call(ctx, &HLEN, &[k1])?) == Some(1) {
        call(ctx, &DEL, &[k1])?;
        form.publish(ctx, k2, message)?;
    } else {
        call(
            ctx,
            &HSET,
            &[k1, Some(&MODE), Some(&Bytes::from_static(b"read"))],
        )?;
    }
    form.latch(ctx, &ONE)?;
    Ok(Value::Int(1))
}

/// The force unlocks: K is deleted and announced only in `mode`.
fn force_unlock(
    ctx: &mut Ctx<'_>,
    keys: &[Bytes],
    argv: &[Bytes],
    mode: &[u8],
    publish: Option<Arg<'_>>,
) -> Result<Value, String> {
    let (k1, k2) = (keys.first(), keys.get(1));
    if !is(&hget(ctx, k1, Some(&MODE))?, mode) {
        return Ok(Value::Int(0));
    }
    call(ctx, &DEL, &[k1])?;
    let form = Unlock {
        publish,
        latch: None,
        absent: None,
    };
    form.publish(ctx, k2, argv.first())?;
    Ok(Value::Int(1))
}

/// Runs one of `RReadWriteLock`'s scripts; `Err` is the text of the error
/// that aborted it (without Redis's `script: ...` suffix). Any other
/// script replies an error (the caller routes only these here).
pub(crate) fn run(
    ctx: &mut Ctx<'_>,
    script: LockScript,
    keys: &[Bytes],
    argv: &[Bytes],
) -> Result<Value, String> {
    let unlock = |publish, latch, absent| Unlock {
        publish,
        latch,
        absent,
    };
    let (a2, a3, a4, a5) = (argv.get(1), argv.get(2), argv.get(3), argv.get(4));
    let (read_latch, write_latch) = ((keys.get(4), a4), (keys.get(2), a5));
    match script {
        LockScript::ReadAcquireFixedLease => read_acquire(ctx, keys, argv, true),
        LockScript::ReadAcquire => read_acquire(ctx, keys, argv, false),
        LockScript::ReadRenew => read_renew(ctx, keys, argv),
        LockScript::ReadRenewBatchShadowed => read_renew_batch(ctx, keys, argv, true),
        LockScript::ReadRenewBatch => read_renew_batch(ctx, keys, argv, false),
        LockScript::ReadRenewBatchOwn => read_renew_batch_own(ctx, keys, argv),
        LockScript::ReadUnlock => read_unlock(ctx, keys, argv, unlock(None, None, Some(1))),
        LockScript::ReadUnlockPublishArg => {
            read_unlock(ctx, keys, argv, unlock(Some(a3), None, Some(1)))
        }
        LockScript::ReadUnlockLatchedOne => {
            read_unlock(ctx, keys, argv, unlock(Some(a3), Some(read_latch), Some(1)))
        }
        LockScript::ReadUnlockLatched => {
            read_unlock(ctx, keys, argv, unlock(Some(a3), Some(read_latch), None))
        }
        LockScript::ReadForceUnlock => force_unlock(ctx, keys, argv, b"read", None),
        LockScript::ReadForceUnlockPublishArg => force_unlock(ctx, keys, argv, b"read", Some(a2)),
        LockScript::WriteAcquire => write_acquire(ctx, keys, argv),
        LockScript::WriteUnlock => write_unlock(ctx, keys, argv, unlock(None, None, Some(1))),
        LockScript::WriteUnlockPublishArg => {
            write_unlock(ctx, keys, argv, unlock(Some(a4), None, Some(1)))
        }
        LockScript::WriteUnlockLatchedOne => write_unlock(
            ctx,
            keys,
            argv,
            unlock(Some(a4), Some(write_latch), Some(1)),
        ),
        LockScript::WriteUnlockLatched => {
            write_unlock(ctx, keys, argv, unlock(Some(a4), Some(write_latch), None))
        }
        LockScript::WriteForceUnlock => force_unlock(ctx, keys, argv, b"write", None),
        LockScript::WriteForceUnlockPublishArg => force_unlock(ctx, keys, argv, b"write", Some(a2)),
        other => Err(format!("ERR {other:?} is not a read-write lock script")),
    }
}

/// Whether `script`'s counting loops could run longer than
/// [`LOOP_BUDGET`] on the hashes at `keys` (every counter the loops can
/// read is a field of one of them): then Lua runs it. Reads only, without
/// expiring anything, so the path chosen changes nothing.
pub(crate) fn loops_too_long(db: &Db, now: i64, script: LockScript, keys: &[Bytes]) -> bool {
    let loops = matches!(
        script,
        LockScript::ReadRenew
            | LockScript::ReadRenewBatchShadowed
            | LockScript::ReadRenewBatch
            | LockScript::ReadRenewBatchOwn
            | LockScript::ReadUnlock
            | LockScript::ReadUnlockPublishArg
            | LockScript::ReadUnlockLatchedOne
            | LockScript::ReadUnlockLatched
    );
    if !loops {
        return false;
    }
    let mut cost = 0.0;
    for key in keys {
        let Some(Data::Hash(hash)) = db.peek(key, now).map(|e| &e.data) else {
            continue;
        };
        cost += hash.len() as f64;
        for value in hash.values() {
            let counter = parse_i64(value)
                .map(|n| n as f64)
                .or_else(|| lua_tonumber(value))
                .unwrap_or(0.0);
            if counter > 0.0 {
                cost += counter;
            }
        }
        if cost > LOOP_BUDGET {
            return true;
        }
    }
    false
}
