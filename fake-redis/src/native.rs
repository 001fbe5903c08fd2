//! The lock scripts as native operations.
//!
//! Each function follows its Lua text (in [`crate::LockScript`]) statement by
//! statement, with every `redis.call` going through the same command code
//! as a client's command. So replies, side effects already made when a call
//! fails (Lua scripts do not roll back), and error texts are Redis's. The
//! engine runs one whole script per `execute`, which makes it atomic.

use bytes::Bytes;

use crate::cmd::{self, Ctx, ScriptCommand};
use crate::number::{lua_tonumber_int, through_lua};
use crate::{LockScript, Value};

/// A script argument: `KEYS[i]`/`ARGV[i]` is `nil` past the end.
pub(crate) type Arg<'a> = Option<&'a Bytes>;

/// `redis.call(name, ...)`: the reply, or the error text that aborts the
/// script. A `nil` argument is refused as Redis's Lua bridge refuses it.
pub(crate) fn call(
    ctx: &mut Ctx<'_>,
    command: &ScriptCommand,
    args: &[Arg<'_>],
) -> Result<Value, String> {
    // The words live on the stack, exactly as many as the call passes: a
    // lock script makes three to five calls per run, and a `Vec` per call
    // (or a fixed array of empty words made and dropped) was pure work.
    let name = || Bytes::from_static(command.name().as_bytes());
    match *args {
        [] => run_words(ctx, command, [name()]),
        [a] => run_words(ctx, command, [name(), word(a)?]),
        [a, b] => run_words(ctx, command, [name(), word(a)?, word(b)?]),
        [a, b, c] => run_words(ctx, command, [name(), word(a)?, word(b)?, word(c)?]),
        [a, b, c, d] => run_words(
            ctx,
            command,
            [name(), word(a)?, word(b)?, word(c)?, word(d)?],
        ),
        [a, b, c, d, e] => run_words(
            ctx,
            command,
            [name(), word(a)?, word(b)?, word(c)?, word(d)?, word(e)?],
        ),
        _ => Err("ERR Wrong number of args calling Redis command from script".to_owned()),
    }
}

/// Runs `command` with `words` (its name first).
fn run_words<const N: usize>(
    ctx: &mut Ctx<'_>,
    command: &ScriptCommand,
    words: [Bytes; N],
) -> Result<Value, String> {
    cmd::call_known(ctx, command, &words).map_err(|e| e.to_string())
}

/// A script argument as a command word; `nil` is refused.
pub(crate) fn word(arg: Arg<'_>) -> Result<Bytes, String> {
    word_ref(arg).cloned()
}

/// A script argument as a borrowed word, for the calls below; `nil` is
/// refused as [`word`] refuses it.
fn word_ref(arg: Arg<'_>) -> Result<&Bytes, String> {
    arg.ok_or_else(|| "ERR Lua redis lib command arguments must be strings or integers".to_owned())
}

// The calls the lock scripts make on every run (`exists`, `hexists`,
// `pttl`, `pexpire`, `hincrby`): their words are lent to the command's
// own code, not copied into a command of their own (a reference count
// taken and dropped, and an indirect call each way, for every word).

/// `redis.call('exists', key)`.
pub(crate) fn exists(ctx: &mut Ctx<'_>, key: Arg<'_>) -> Result<Value, String> {
    let key = word_ref(key)?;
    Ok(cmd::exists_of(ctx, [key.as_ref()]))
}

/// `redis.call('hexists', key, field)`.
pub(crate) fn hexists(ctx: &mut Ctx<'_>, key: Arg<'_>, field: Arg<'_>) -> Result<Value, String> {
    let (key, field) = (word_ref(key)?, word_ref(field)?);
    cmd::hexists_of(ctx, key, field).map_err(|e| e.to_string())
}

/// `redis.call('pttl', key)`.
pub(crate) fn pttl(ctx: &mut Ctx<'_>, key: Arg<'_>) -> Result<Value, String> {
    Ok(cmd::pttl_of(ctx, word_ref(key)?))
}

/// `redis.call('pexpire', key, ms)`.
pub(crate) fn pexpire(ctx: &mut Ctx<'_>, key: Arg<'_>, ms: Arg<'_>) -> Result<Value, String> {
    let (key, ms) = (word_ref(key)?, word_ref(ms)?);
    writable(ctx)?;
    cmd::pexpire_of(ctx, key, ms).map_err(|e| e.to_string())
}

/// A script's write on a read-only replica (a demoted primary) is refused
/// before the command runs, as `cmd::call` refuses it: `pexpire` and
/// `hincrby` skip that lookup, so they ask here (without it a lock script
/// on a replica counted its hold down and re-armed its key).
fn writable(ctx: &Ctx<'_>) -> Result<(), String> {
    if ctx.state.replication.replica {
        return Err(cmd::read_only().to_string());
    }
    Ok(())
}

/// `redis.call('hincrby', key, field, increment)`.
pub(crate) fn hincrby(
    ctx: &mut Ctx<'_>,
    key: Arg<'_>,
    field: Arg<'_>,
    by: Arg<'_>,
) -> Result<Value, String> {
    let (key, field, by) = (word_ref(key)?, word_ref(field)?, word_ref(by)?);
    writable(ctx)?;
    cmd::hincrby_of(ctx, key, field, by).map_err(|e| e.to_string())
}

// The commands the lock scripts call, each looked up once.
pub(crate) static DEL: ScriptCommand = ScriptCommand::new("del");
pub(crate) static GET: ScriptCommand = ScriptCommand::new("get");
pub(crate) static HSET: ScriptCommand = ScriptCommand::new("hset");
pub(crate) static INCR: ScriptCommand = ScriptCommand::new("incr");
pub(crate) static PUBLISH: ScriptCommand = ScriptCommand::new("publish");
pub(crate) static SET: ScriptCommand = ScriptCommand::new("set");

/// The reply as a Lua number, for `== 0` style tests (a non-integer never
/// compares equal).
pub(crate) fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(n) => Some(*n),
        _ => None,
    }
}

/// The script's result as Redis converts a Lua value to a reply: every
/// integer has been a Lua number (a double) on the way.
fn lua_reply(v: Value) -> Value {
    match v {
        Value::Int(n) => Value::Int(through_lua(n)),
        Value::Array(items) => Value::Array(items.into_iter().map(lua_reply).collect()),
        other => other,
    }
}

/// [`LockScript::RenewBatch`], statement by statement: the loop stops at
/// the first failing call, as the script does.
fn renew_batch(ctx: &mut Ctx<'_>, keys: &[Bytes], argv: &[Bytes]) -> Result<Value, String> {
    let mut result = Vec::with_capacity(keys.len());
    for (i, key) in keys.iter().enumerate() {
        let (key, field) = (Some(key), argv.get(i + 1));
        if int(&hexists(ctx, key, field)?) == Some(1) {
            pexpire(ctx, key, argv.first())?;
            result.push(Value::Int(1));
        } else {
            result.push(Value::Int(0));
        }
    }
    Ok(Value::Array(result))
}

/// `redis.call(ARGV[n], channel, message)`: Redisson passes `PUBLISH` (or
/// `SPUBLISH` in sharded pub/sub, which fake-redis does not serve); any
/// other name runs as the command it names, as in Lua.
pub(crate) fn publish_by_name(
    ctx: &mut Ctx<'_>,
    name: Arg<'_>,
    channel: Arg<'_>,
    message: Arg<'_>,
) -> Result<Value, String> {
    // Redis converts every argument before it looks the command up: a
    // nil anywhere is refused first.
    let (Some(name), Some(to), Some(text)) = (name, channel, message) else {
        return Err("ERR Lua redis lib command arguments must be strings or integers".to_owned());
    };
    if name.eq_ignore_ascii_case(b"publish") {
        call(ctx, &PUBLISH, &[channel, message])
    } else {
        // Any other name is looked up as Lua's `redis.call` looks it up.
        let words = [name, to, text].map(Bytes::clone);
        cmd::call(ctx, &words).map_err(|e| e.to_string())
    }
}

/// `local val = redis.call('get', latch); if val ~= false then return
/// tonumber(val); end`: the reply a latch already set replays (Lua's
/// number of its text, as Redis replies with it), or `None` when unset.
pub(crate) fn latch(ctx: &mut Ctx<'_>, key: Arg<'_>) -> Result<Option<Value>, String> {
    match call(ctx, &GET, &[key])? {
        Value::Bulk(val) => Ok(Some(lua_tonumber_int(&val).map_or(Value::Nil, Value::Int))),
        Value::Nil => Ok(None),
        other => Err(format!("unexpected GET reply {other:?}")),
    }
}

/// [`LockScript::UnlockLatched`], statement by statement.
fn unlock_latched(ctx: &mut Ctx<'_>, keys: &[Bytes], argv: &[Bytes]) -> Result<Value, String> {
    let (k1, k2, k3) = (keys.first(), keys.get(1), keys.get(2));
    let (a1, a2, a3, a4, a5) = (
        argv.first(),
        argv.get(1),
        argv.get(2),
        argv.get(3),
        argv.get(4),
    );
    let px = Bytes::from_static(b"px");
    if let Some(stored) = latch(ctx, k3)? {
        return Ok(stored);
    }
    if int(&hexists(ctx, k1, a3)?) == Some(0) {
        return Ok(Value::Nil);
    }
    let counter = hincrby(ctx, k1, a3, Some(&Bytes::from_static(b"-1")))?;
    if int(&counter).is_some_and(|c| c > 0) {
        pexpire(ctx, k1, a2)?;
        call(
            ctx,
            &SET,
            &[k3, Some(&Bytes::from_static(b"0")), Some(&px), a5],
        )?;
        return Ok(Value::Int(0));
    }
    call(ctx, &DEL, &[k1])?;
    publish_by_name(ctx, a4, k2, a1)?;
    call(
        ctx,
        &SET,
        &[k3, Some(&Bytes::from_static(b"1")), Some(&px), a5],
    )?;
    Ok(Value::Int(1))
}

/// Runs `script` with its `KEYS` and `ARGV`; `Err` is the text of the error
/// that aborted it (without Redis's `script: ...` suffix).
pub(crate) fn run(
    ctx: &mut Ctx<'_>,
    script: LockScript,
    keys: &[Bytes],
    argv: &[Bytes],
) -> Result<Value, String> {
    run_lua(ctx, script, keys, argv).map(lua_reply)
}

fn run_lua(
    ctx: &mut Ctx<'_>,
    script: LockScript,
    keys: &[Bytes],
    argv: &[Bytes],
) -> Result<Value, String> {
    let one = Bytes::from_static(b"1");
    let minus_one = Bytes::from_static(b"-1");
    let k1 = keys.first();
    let k2 = keys.get(1);
    let a1 = argv.first();
    let a2 = argv.get(1);
    let a3 = argv.get(2);
    match script {
        // `RSpinLock`'s acquire tests `exists` and `hexists` one after the
        // other where `RLock`'s joins them with `or`: the same calls.
        LockScript::Acquire | LockScript::SpinAcquire => {
            if int(&exists(ctx, k1)?) == Some(0) || int(&hexists(ctx, k1, a2)?) == Some(1) {
                hincrby(ctx, k1, a2, Some(&one))?;
                pexpire(ctx, k1, a1)?;
                return Ok(Value::Nil);
            }
            pttl(ctx, k1)
        }
        LockScript::AcquireLegacy => {
            if int(&exists(ctx, k1)?) == Some(0) {
                call(ctx, &HSET, &[k1, a2, Some(&one)])?;
                pexpire(ctx, k1, a1)?;
                return Ok(Value::Nil);
            }
            if int(&hexists(ctx, k1, a2)?) == Some(1) {
                hincrby(ctx, k1, a2, Some(&one))?;
                pexpire(ctx, k1, a1)?;
                return Ok(Value::Nil);
            }
            pttl(ctx, k1)
        }
        LockScript::Renew => {
            if int(&hexists(ctx, k1, a2)?) == Some(1) {
                pexpire(ctx, k1, a1)?;
                return Ok(Value::Int(1));
            }
            Ok(Value::Int(0))
        }
        LockScript::Unlock | LockScript::UnlockPublishArg => {
            if int(&hexists(ctx, k1, a3)?) == Some(0) {
                return Ok(Value::Nil);
            }
            let counter = hincrby(ctx, k1, a3, Some(&minus_one))?;
            if int(&counter).is_some_and(|c| c > 0) {
                pexpire(ctx, k1, a2)?;
                Ok(Value::Int(0))
            } else {
                call(ctx, &DEL, &[k1])?;
                if script == LockScript::Unlock {
                    call(ctx, &PUBLISH, &[k2, a1])?;
                } else {
                    publish_by_name(ctx, argv.get(3), k2, a1)?;
                }
                Ok(Value::Int(1))
            }
        }
        LockScript::ForceUnlock | LockScript::ForceUnlockPublishArg => {
            if int(&call(ctx, &DEL, &[k1])?) == Some(1) {
                if script == LockScript::ForceUnlock {
                    call(ctx, &PUBLISH, &[k2, a1])?;
                } else {
                    publish_by_name(ctx, a2, k2, a1)?;
                }
                Ok(Value::Int(1))
            } else {
                Ok(Value::Int(0))
            }
        }
        LockScript::UnlockLatched => unlock_latched(ctx, keys, argv),
        LockScript::FairAcquireFailed
        | LockScript::FairTryAcquire
        | LockScript::FairAcquireUnscoredLast
        | LockScript::FairAcquire
        | LockScript::FairUnlock
        | LockScript::FairForceUnlock => crate::native_fair::run(ctx, script, keys, argv),
        LockScript::FairAcquireFailedHead
        | LockScript::FairTryAcquireLegacy
        | LockScript::FairAcquireFromHead
        | LockScript::FairUnlockLegacy
        | LockScript::FairForceUnlockLegacy
        | LockScript::FairTryAcquireUncheckedPurge
        | LockScript::FairAcquireUncheckedPurge
        | LockScript::FairUnlockPublishArg
        | LockScript::FairForceUnlockPublishArg
        | LockScript::FairUnlockLatchedUncheckedPurge
        | LockScript::FairAcquireOwnDeadline => {
            crate::native_fair_legacy::run(ctx, script, keys, argv)
        }
        LockScript::FencedAcquire | LockScript::FencedAcquireToken => {
            crate::native_fenced::run(ctx, script, keys, argv)
        }
        LockScript::SpinUnlock | LockScript::SpinUnlockLatched | LockScript::SpinForceUnlock => {
            crate::native_spin::run(ctx, script, keys, argv)
        }
        LockScript::RenewBatch => renew_batch(ctx, keys, argv),
        LockScript::ReadAcquireFixedLease
        | LockScript::ReadAcquire
        | LockScript::ReadRenew
        | LockScript::ReadRenewBatchShadowed
        | LockScript::ReadRenewBatch
        | LockScript::ReadRenewBatchOwn
        | LockScript::ReadUnlock
        | LockScript::ReadUnlockPublishArg
        | LockScript::ReadUnlockLatchedOne
        | LockScript::ReadUnlockLatched
        | LockScript::ReadForceUnlock
        | LockScript::ReadForceUnlockPublishArg
        | LockScript::WriteAcquire
        | LockScript::WriteUnlock
        | LockScript::WriteUnlockPublishArg
        | LockScript::WriteUnlockLatchedOne
        | LockScript::WriteUnlockLatched
        | LockScript::WriteForceUnlock
        | LockScript::WriteForceUnlockPublishArg => crate::native_rw::run(ctx, script, keys, argv),
        LockScript::AcquireFenced => {
            if int(&exists(ctx, k1)?) == Some(0) {
                let token = call(ctx, &INCR, &[k2])?;
                call(ctx, &HSET, &[k1, a2, Some(&one)])?;
                pexpire(ctx, k1, a1)?;
                return Ok(Value::Array(vec![Value::Int(1), token]));
            }
            if int(&hexists(ctx, k1, a2)?) == Some(1) {
                hincrby(ctx, k1, a2, Some(&one))?;
                pexpire(ctx, k1, a1)?;
                let token = match call(ctx, &GET, &[k2])? {
                    Value::Bulk(b) => lua_tonumber_int(&b),
                    _ => None,
                };
                // A Lua table ends at its first nil: `{1, nil}` is `{1}`.
                let mut reply = vec![Value::Int(1)];
                reply.extend(token.map(Value::Int));
                return Ok(Value::Array(reply));
            }
            Ok(Value::Array(vec![Value::Int(0), pttl(ctx, k1)?]))
        }
    }
}

#[cfg(test)]
mod tests {

    use crate::engine::{args, bulk, engine_at};
    use crate::{ConnId, Engine, LockScript, ManualClock, Response, Value};

    fn setup() -> (Engine, ManualClock, ConnId) {
        engine_at(1_000_000)
    }

    fn eval(e: &mut Engine, c: ConnId, s: LockScript, words: &[&str]) -> Response {
        let mut a = vec![
            bytes::Bytes::from_static(b"EVAL"),
            bytes::Bytes::from_static(s.text().as_bytes()),
        ];
        a.extend(args(words));
        e.execute(c, a)
    }

    /// Runs `s` by EVAL and returns its single reply.
    fn run(e: &mut Engine, c: ConnId, s: LockScript, words: &[&str]) -> Value {
        one(eval(e, c, s, words))
    }

    fn one(r: Response) -> Value {
        assert_eq!(r.replies.len(), 1, "{r:?}");
        r.replies.into_iter().next().unwrap_or(Value::Nil)
    }

    /// Re-entrant acquire then a competing acquire: the owner's second
    /// acquire must bump the count (nil reply), the rival must get the PTTL
    /// (document 004 `tryLockInnerAsync`). A script that ignored the field
    /// would let the rival in.
    #[test]
    fn acquire_is_reentrant_and_excludes_others() {
        let (mut e, clock, c) = setup();
        let acquire =
            |e: &mut Engine, field| run(e, c, LockScript::Acquire, &["1", "lock", "30000", field]);
        assert_eq!(acquire(&mut e, "a:1"), Value::Nil);
        clock.advance(10_000);
        assert_eq!(acquire(&mut e, "a:1"), Value::Nil);
        clock.advance(1_000);
        assert_eq!(acquire(&mut e, "b:1"), Value::Int(29_000));
        let (fields, expiry) = e.hash_snapshot(b"lock").unwrap_or_default();
        assert_eq!(fields, vec![(bulk_bytes("a:1"), bulk_bytes("2"))]);
        assert_eq!(expiry, Some(1_000_000 + 10_000 + 30_000));
    }

    fn bulk_bytes(s: &str) -> bytes::Bytes {
        bytes::Bytes::copy_from_slice(s.as_bytes())
    }

    /// The lease ends just past its expiry, as Redis's `keyIsExpired`
    /// (`now > when`) has it: a rival is told 1 ms at t-1 and 0 ms at t,
    /// and acquires at t+1. Off by one either way changes one of the
    /// replies.
    #[test]
    fn lease_expires_at_exact_boundary() {
        let (mut e, clock, c) = setup();
        eval(&mut e, c, LockScript::Acquire, &["1", "lock", "100", "a"]);
        clock.advance(99);
        assert_eq!(
            run(&mut e, c, LockScript::Acquire, &["1", "lock", "100", "b"]),
            Value::Int(1)
        );
        clock.advance(1);
        assert_eq!(
            run(&mut e, c, LockScript::Acquire, &["1", "lock", "100", "b"]),
            Value::Int(0)
        );
        clock.advance(1);
        assert_eq!(
            run(&mut e, c, LockScript::Acquire, &["1", "lock", "100", "b"]),
            Value::Nil
        );
    }

    /// Unlock of a count-2 hold keeps the lock (0), the second releases it
    /// (1) and publishes the unlock message to the channel's subscriber; a
    /// stranger's unlock is nil. Without the publish, waiters never wake.
    #[test]
    fn unlock_counts_down_then_publishes() {
        let (mut e, _clock, c) = setup();
        let sub = e.connect();
        e.execute(sub, args(&["SUBSCRIBE", "chan"]));
        eval(&mut e, c, LockScript::Acquire, &["1", "lock", "30000", "a"]);
        eval(&mut e, c, LockScript::Acquire, &["1", "lock", "30000", "a"]);
        assert_eq!(
            run(
                &mut e,
                c,
                LockScript::Unlock,
                &["2", "lock", "chan", "0", "30000", "b"]
            ),
            Value::Nil
        );
        assert_eq!(
            run(
                &mut e,
                c,
                LockScript::Unlock,
                &["2", "lock", "chan", "0", "30000", "a"]
            ),
            Value::Int(0)
        );
        let r = eval(
            &mut e,
            c,
            LockScript::Unlock,
            &["2", "lock", "chan", "0", "30000", "a"],
        );
        assert_eq!(
            r.deliveries,
            vec![(
                sub,
                Value::Push(vec![bulk("message"), bulk("chan"), bulk("0")])
            )]
        );
        assert_eq!(one(r), Value::Int(1));
        assert_eq!(e.hash_snapshot(b"lock"), None);
    }

    /// Renew succeeds only for the holder's field and re-arms the expiry
    /// from now (documents 000-004 `renewExpirationAsync`).
    #[test]
    fn renew_only_for_holder() {
        let (mut e, clock, c) = setup();
        eval(&mut e, c, LockScript::Acquire, &["1", "lock", "30000", "a"]);
        clock.advance(20_000);
        assert_eq!(
            run(&mut e, c, LockScript::Renew, &["1", "lock", "30000", "b"]),
            Value::Int(0)
        );
        assert_eq!(
            run(&mut e, c, LockScript::Renew, &["1", "lock", "30000", "a"]),
            Value::Int(1)
        );
        assert_eq!(
            e.hash_snapshot(b"lock").and_then(|s| s.1),
            Some(1_000_000 + 50_000)
        );
    }

    /// The fenced acquire hands out a growing token for each fresh
    /// acquisition and keeps it on re-entry; a rival gets `{0, pttl}`.
    #[test]
    fn fenced_tokens_grow_per_acquisition() {
        let (mut e, clock, c) = setup();
        let s = LockScript::AcquireFenced;
        assert_eq!(
            run(&mut e, c, s, &["2", "lock", "ctr", "100", "a"]),
            Value::Array(vec![Value::Int(1), Value::Int(1)])
        );
        assert_eq!(
            run(&mut e, c, s, &["2", "lock", "ctr", "100", "a"]),
            Value::Array(vec![Value::Int(1), Value::Int(1)])
        );
        assert_eq!(
            run(&mut e, c, s, &["2", "lock", "ctr", "100", "b"]),
            Value::Array(vec![Value::Int(0), Value::Int(100)])
        );
        clock.advance(101);
        assert_eq!(
            run(&mut e, c, s, &["2", "lock", "ctr", "100", "b"]),
            Value::Array(vec![Value::Int(1), Value::Int(2)])
        );
    }

    /// Errors inside a script carry Redis 7.0.15's suffix, and writes made
    /// before the failing call stay (Lua does not roll back): both checked
    /// against real redis-server output.
    #[test]
    fn script_errors_match_redis_and_do_not_roll_back() {
        let (mut e, _clock, c) = setup();
        e.execute(c, args(&["SET", "str", "x"]));
        assert_eq!(
            run(&mut e, c, LockScript::Acquire, &["1", "str", "1000", "f"]),
            Value::error(
                "WRONGTYPE Operation against a key holding the wrong kind of value script: 149c5a8bf18676fd99e9e6e24923bd64d9b62f94, on @user_script:1."
            )
        );
        assert_eq!(
            run(&mut e, c, LockScript::Acquire, &["1", "lock", "abc", "f"]),
            Value::error(
                "ERR value is not an integer or out of range script: 149c5a8bf18676fd99e9e6e24923bd64d9b62f94, on @user_script:1."
            )
        );
        assert_eq!(
            e.hash_snapshot(b"lock"),
            Some((vec![(bulk_bytes("f"), bulk_bytes("1"))], None))
        );
        assert_eq!(
            run(&mut e, c, LockScript::Acquire, &["0"]),
            Value::error(
                "ERR Lua redis lib command arguments must be strings or integers script: 149c5a8bf18676fd99e9e6e24923bd64d9b62f94, on @user_script:1."
            )
        );
    }

    /// EVALSHA knows a script only after EVAL or SCRIPT LOAD, as Redis 7.
    #[test]
    fn evalsha_after_eval_or_load() {
        let (mut e, _clock, c) = setup();
        let sha = LockScript::Renew.sha1();
        let evalsha =
            |e: &mut Engine| one(e.execute(c, args(&["EVALSHA", &sha, "1", "k", "100", "f"])));
        assert_eq!(
            evalsha(&mut e),
            Value::error("NOSCRIPT No matching script. Please use EVAL.")
        );
        eval(&mut e, c, LockScript::Renew, &["1", "k", "100", "f"]);
        assert_eq!(evalsha(&mut e), Value::Int(0));
        e.execute(c, args(&["SCRIPT", "FLUSH"]));
        assert_eq!(
            evalsha(&mut e),
            Value::error("NOSCRIPT No matching script. Please use EVAL.")
        );
        let loaded = one(e.execute(c, args(&["SCRIPT", "LOAD", LockScript::Renew.text()])));
        assert_eq!(loaded, bulk(&sha));
        assert_eq!(evalsha(&mut e), Value::Int(0));
        // Any other script runs in Lua.
        let other = one(e.execute(c, args(&["EVAL", "return 1", "0"])));
        assert_eq!(other, Value::Int(1));
    }
}
