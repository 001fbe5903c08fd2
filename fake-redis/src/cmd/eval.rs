//! Script commands: EVAL, EVALSHA, SCRIPT LOAD / EXISTS / FLUSH.

use bytes::Bytes;

use super::{Ctx, int_arg};
use crate::error::{CmdError, printable};
use crate::script::LockScript;
use crate::{Value, native};

fn no_script() -> CmdError {
    CmdError::other("NOSCRIPT No matching script. Please use EVAL.")
}

/// Splits `EVAL script numkeys key... arg...` into keys and args, with
/// Redis's checks on `numkeys`.
fn keys_and_args(args: &[Bytes]) -> Result<(&[Bytes], &[Bytes]), CmdError> {
    let numkeys = int_arg(&args[2])?;
    let rest = &args[3..];
    if numkeys > rest.len() as i64 {
        return Err(CmdError::other(
            "ERR Number of keys can't be greater than number of args",
        ));
    }
    let numkeys = usize::try_from(numkeys)
        .map_err(|_| CmdError::other("ERR Number of keys can't be negative"))?;
    Ok(rest.split_at(numkeys))
}

/// Runs a known script, an error raised inside worded as the server's
/// release words it.
fn run(
    ctx: &mut Ctx<'_>,
    script: LockScript,
    sha: &str,
    keys: &[Bytes],
    argv: &[Bytes],
) -> Result<Value, CmdError> {
    // A counting loop Lua would spend its budget on runs in Lua, to end
    // as Redis ends it (`native_rw`).
    if crate::native_rw::loops_too_long(ctx.db, ctx.now, script, keys) {
        return crate::lua::run(ctx, script.text().as_bytes(), sha, keys, argv);
    }
    let version = ctx.state.version;
    native::run(ctx, script, keys, argv)
        .map_err(|e| CmdError::other(version.script_error(&e, sha, 1)))
}

/// # Format
/// `EVAL script numkeys [key ...] [arg ...]`: runs one of the lock scripts
/// (recognised by its exact text) natively, or any other script in Lua
/// (`crate::lua`), atomically, then caches it for `EVALSHA`.
pub(crate) fn eval(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let (keys, argv) = keys_and_args(args)?;
    match LockScript::from_text(&args[1]) {
        Some(script) if !ctx.state.lock_scripts_in_lua => {
            ctx.state.scripts.register_lock(script);
            run(ctx, script, script.sha1_str(), keys, argv)
        }
        _ => {
            crate::lua::check(&args[1])?;
            let (sha, _) = ctx.state.scripts.register(&args[1]);
            crate::lua::run(ctx, &args[1], &sha, keys, argv)
        }
    }
}

/// # Format
/// `EVALSHA sha1 numkeys [key ...] [arg ...]`: runs a cached script by its
/// SHA1 (any case); `NOSCRIPT` when it was never seen.
pub(crate) fn evalsha(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    // Redis answers a SHA of the wrong length before it reads numkeys.
    if args[1].len() != 40 {
        return Err(no_script());
    }
    let (keys, argv) = keys_and_args(args)?;
    // Clients send the SHA in lower case (Redisson, redis-cli): read in
    // place; another case is lowered into a copy.
    let lowered;
    let sha: &str = match std::str::from_utf8(&args[1]) {
        Ok(s) if !s.bytes().any(|b| b.is_ascii_uppercase()) => s,
        _ => {
            lowered = String::from_utf8_lossy(&args[1]).to_ascii_lowercase();
            &lowered
        }
    };
    match ctx.state.scripts.get(sha) {
        None => Err(no_script()),
        Some(Some(script)) if !ctx.state.lock_scripts_in_lua => run(ctx, script, sha, keys, argv),
        Some(script) => {
            let text = match script {
                Some(s) => bytes::Bytes::from_static(s.text().as_bytes()),
                None => ctx.state.scripts.text(sha).unwrap_or_default(),
            };
            crate::lua::run(ctx, &text, sha, keys, argv)
        }
    }
}

/// # Format
/// `SCRIPT LOAD script`: caches the script, replies its SHA1.
/// `SCRIPT EXISTS sha1 [sha1 ...]`: 1 or 0 per SHA1.
/// `SCRIPT FLUSH [ASYNC | SYNC]`: forgets every script.
pub(crate) fn script(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    // The dispatcher has checked the subcommand and its arity.
    let sub = args[1].to_ascii_lowercase();
    match sub.as_slice() {
        b"load" => {
            if LockScript::from_text(&args[2]).is_none() {
                crate::lua::check(&args[2])?;
            }
            let (sha, _) = ctx.state.scripts.register(&args[2]);
            Ok(Value::bulk(sha))
        }
        b"exists" => Ok(Value::Array(
            args[2..]
                .iter()
                .map(|sha| {
                    let sha = String::from_utf8_lossy(sha).to_ascii_lowercase();
                    Value::Int(i64::from(ctx.state.scripts.get(&sha).is_some()))
                })
                .collect(),
        )),
        b"flush" => {
            match &args[2..] {
                [] => {}
                [mode]
                    if mode.eq_ignore_ascii_case(b"sync")
                        || mode.eq_ignore_ascii_case(b"async") => {}
                _ => {
                    return Err(CmdError::other(
                        "ERR SCRIPT FLUSH only support SYNC|ASYNC option",
                    ));
                }
            }
            ctx.state.scripts.clear();
            Ok(Value::ok())
        }
        _ => Err(CmdError::other(format!(
            "ERR unknown subcommand '{}'. Try SCRIPT HELP.",
            printable(&args[1])
        ))),
    }
}
