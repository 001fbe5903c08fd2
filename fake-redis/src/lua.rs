//! Scripts other than Redisson's: Lua 5.1 (mlua, vendored) in Redis 7.0's
//! sandbox.
//!
//! Redisson's scripts keep their native twins (`native`): they are what the
//! simulator runs thousands of times. Any other script runs here, in a
//! fresh interpreter per call (so nothing a script leaves behind reaches
//! the next one, and the engine stays `Send`), with what Redis gives a
//! script: `KEYS`, `ARGV`, `redis.call/pcall/error_reply/status_reply/
//! sha1hex/log`, the base, table, string and math libraries and `bit`,
//! Redis's conversions of replies to Lua values and back, its protection
//! of globals, its `math.random` (the `rand48` generator whose state
//! lives in the engine, so runs are deterministic), `cjson` (`lua_cjson`),
//! and its error texts (`... script: <sha>, on @user_script:<line>.`).
//! Not provided: `cmsgpack`, `struct`, `redis.setresp`,
//! `redis.set_repl`, `redis.breakpoint`. A library function given an
//! argument of the wrong type, and `cjson.decode` given bad JSON, fail
//! with mlua's or serde_json's words, not Lua's or lua-cjson's. A script may run at most [`MAX_INSTRUCTIONS`]
//! instructions and allocate [`MAX_MEMORY`] bytes, so no script can hang
//! or exhaust the server (Redis would block every client instead).

use std::cell::RefCell;

use bytes::Bytes;
use mlua::{Lua, LuaOptions, MultiValue, StdLib, Table, Value as Lv, Variadic};

use crate::Value;
use crate::cmd::{self, Ctx};
use crate::error::CmdError;

/// Instructions a script may run before it is stopped.
pub(crate) const MAX_INSTRUCTIONS: u32 = 200_000_000;
/// Bytes a script's interpreter may allocate.
pub(crate) const MAX_MEMORY: usize = 256 * 1024 * 1024;
/// How deep a returned table may nest.
const MAX_DEPTH: usize = 100;
/// Redis's `rand48` state before any script ran.
pub(crate) const RAND48_START: u64 = 0x1234_ABCD_330E;

const KILLED: &str = "ERR Script killed by user with SCRIPT KILL...";

/// What runs before the script: the `redis` table over the raw command
/// bridge, and the global-variable guard, in Lua so that the guard's
/// errors point at the script's line as Redis's do.
const PRELUDE: &str = r#"
redis = {}
redis.call = __redis_call
redis.pcall = __redis_pcall
redis.error_reply = function(e) return {err = e} end
redis.status_reply = function(s) return {ok = s} end
redis.sha1hex = __redis_sha1hex
redis.log = function() end
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
__redis_call, __redis_pcall, __redis_sha1hex = nil, nil, nil
dofile, loadfile, print = nil, nil, nil
setmetatable(_G, {
  __index = function(_, k)
    error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
  end,
  __newindex = function() error("Attempt to modify a readonly table", 2) end,
})
"#;

fn compile_error(e: &mlua::Error) -> CmdError {
    let text = match e {
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        other => other.to_string(),
    };
    CmdError::other(format!(
        "ERR Error compiling script (new function): {}",
        crate::error::printable(text.as_bytes())
    ))
}

fn new_lua() -> Result<Lua, CmdError> {
    let lua = Lua::new_with(
        StdLib::TABLE | StdLib::STRING | StdLib::MATH,
        LuaOptions::default(),
    )
    .map_err(|e| CmdError::other(format!("ERR {e}")))?;
    let _ = lua.set_memory_limit(MAX_MEMORY);
    Ok(lua)
}

/// Compiles `text` as Redis does for `SCRIPT LOAD` and `EVAL`: Redis's
/// error text when it does not compile.
pub(crate) fn check(text: &[u8]) -> Result<(), CmdError> {
    let lua = new_lua()?;
    lua.load(text)
        .set_name("@user_script")
        .into_function()
        .map(|_| ())
        .map_err(|e| compile_error(&e))
}

/// A reply as the Lua value Redis gives a script (RESP2 conversion).
fn to_lua(lua: &Lua, v: &Value) -> mlua::Result<Lv> {
    Ok(match v {
        Value::Int(n) => Lv::Number(*n as f64),
        Value::Bulk(b) => Lv::String(lua.create_string(b)?),
        // A script is a RESP2 client: a score is a bulk string to it.
        Value::Double(d) => Lv::String(lua.create_string(d.text())?),
        Value::Nil | Value::NilArray => Lv::Boolean(false),
        Value::Simple(s) => Lv::Table(lua.create_table_from([("ok", s.as_str())])?),
        Value::Error(e) => Lv::Table(lua.create_table_from([("err", e.as_str())])?),
        Value::Array(items) | Value::Push(items) => {
            let t = lua.create_table()?;
            for (i, item) in items.iter().enumerate() {
                t.raw_set(i + 1, to_lua(lua, item)?)?;
            }
            Lv::Table(t)
        }
        Value::Map(pairs) | Value::Pairs(pairs) => {
            let t = lua.create_table()?;
            for (i, (k, v)) in pairs.iter().enumerate() {
                t.raw_set(2 * i + 1, to_lua(lua, k)?)?;
                t.raw_set(2 * i + 2, to_lua(lua, v)?)?;
            }
            Lv::Table(t)
        }
        // Only `EXEC` makes one, and a script cannot run `EXEC`.
        Value::Written(_, inner) => to_lua(lua, inner)?,
    })
}

/// A Lua value as the reply Redis makes of a script's result.
fn from_lua(v: &Lv, depth: usize) -> Value {
    match v {
        Lv::String(s) => Value::Bulk(Bytes::copy_from_slice(&s.as_bytes())),
        Lv::Boolean(true) => Value::Int(1),
        Lv::Integer(n) => Value::Int(*n),
        // C's cast of a double to long long: out of range (undefined in C)
        // x86 gives the "integer indefinite" value, and so does Redis.
        Lv::Number(n) if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(n) => {
            Value::Int(*n as i64)
        }
        Lv::Number(_) => Value::Int(i64::MIN),
        Lv::Table(t) if depth < MAX_DEPTH => table_reply(t, depth),
        Lv::Table(_) => Value::error("ERR reached lua stack limit"),
        _ => Value::Nil,
    }
}

fn table_reply(t: &Table, depth: usize) -> Value {
    if let Ok(Lv::String(e)) = t.raw_get::<Lv>("err") {
        return Value::Error(String::from_utf8_lossy(&e.as_bytes()).into_owned());
    }
    if let Ok(Lv::String(s)) = t.raw_get::<Lv>("ok") {
        return Value::Simple(String::from_utf8_lossy(&s.as_bytes()).into_owned());
    }
    let mut items = Vec::new();
    for i in 1.. {
        match t.raw_get::<Lv>(i) {
            Ok(Lv::Nil) | Err(_) => break,
            Ok(v) => items.push(from_lua(&v, depth + 1)),
        }
    }
    Value::Array(items)
}

/// A failed `redis.call`: raised from Rust (a C frame to Lua, as Redis's
/// `redis.call` is, so a tail call keeps the script's line), and turned
/// back into its text by the error handler.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct CallError(String);

/// The `CallError` inside an error mlua wrapped on its way through Lua.
fn call_error(e: &mlua::Error) -> Option<String> {
    match e {
        mlua::Error::ExternalError(inner) => inner.downcast_ref::<CallError>().map(|c| c.0.clone()),
        mlua::Error::CallbackError { cause, .. } => call_error(cause),
        mlua::Error::WithContext { cause, .. } => call_error(cause),
        _ => None,
    }
}

/// The message of the error a Rust callback raised, without mlua's
/// wrapping (tracebacks, context).
fn innermost(e: &mlua::Error) -> String {
    match e {
        mlua::Error::CallbackError { cause, .. } => innermost(cause),
        mlua::Error::WithContext { cause, .. } => innermost(cause),
        mlua::Error::RuntimeError(msg) => msg.clone(),
        other => other.to_string(),
    }
}

/// `redis.call`'s bridge: `(true, reply)` or `(false, {err = text})`.
fn bridge(lua: &Lua, ctx: &mut Ctx<'_>, args: Variadic<Lv>) -> mlua::Result<(bool, Lv)> {
    let fail = |text: &str| -> mlua::Result<(bool, Lv)> {
        Ok((false, Lv::Table(lua.create_table_from([("err", text)])?)))
    };
    if args.is_empty() {
        return fail("ERR Please specify at least one argument for this redis lib call");
    }
    let mut words = Vec::with_capacity(args.len());
    for arg in args.iter() {
        match arg {
            Lv::String(s) => words.push(Bytes::copy_from_slice(&s.as_bytes())),
            // Redis formats a number itself, with `%.17g` (Lua's own
            // `tostring` would give `%.14g`).
            Lv::Integer(n) => words.push(crate::number::lua_number_arg(*n as f64)),
            Lv::Number(n) => words.push(crate::number::lua_number_arg(*n)),
            _ => return fail("ERR Lua redis lib command arguments must be strings or integers"),
        }
    }
    match cmd::call(ctx, &words) {
        Ok(v) => Ok((true, to_lua(lua, &v)?)),
        Err(e) => fail(&e.to_string()),
    }
}

/// Redis's `math.random` over the engine's `rand48` state.
fn random(state: &RefCell<u64>, args: Variadic<f64>) -> mlua::Result<f64> {
    let mut x = state.borrow_mut();
    *x = (0x5_DEEC_E66D_u64.wrapping_mul(*x).wrapping_add(0xB)) & ((1 << 48) - 1);
    let max = f64::from(i32::MAX);
    let r = ((*x >> 17) as f64 % max) / max;
    match args.as_slice() {
        [] => Ok(r),
        [u] if *u >= 1.0 => Ok((r * u.trunc()).floor() + 1.0),
        [l, u] if l <= u => Ok((r * (u.trunc() - l.trunc() + 1.0)).floor() + l.trunc()),
        [_] => Err(mlua::Error::runtime(
            "bad argument #1 to 'random' (interval is empty)",
        )),
        [_, _] => Err(mlua::Error::runtime(
            "bad argument #2 to 'random' (interval is empty)",
        )),
        _ => Err(mlua::Error::runtime("wrong number of arguments")),
    }
}

/// The error handler: Redis's text and the script line it happened on.
fn error_text(lua: &Lua, err: &Lv, sha: &str, version: crate::RedisVersion) -> String {
    let mut line = 0;
    for level in 1..64 {
        let Some(frame) = lua.inspect_stack(level) else {
            break;
        };
        if frame.source().source.as_deref() == Some("@user_script") {
            line = frame.curr_line();
            break;
        }
    }
    let text = match err {
        Lv::Table(t) => match t.raw_get::<Lv>("err") {
            Ok(Lv::String(s)) => String::from_utf8_lossy(&s.as_bytes()).into_owned(),
            _ => "ERR unknown error".to_owned(),
        },
        Lv::String(s) => format!("ERR {}", String::from_utf8_lossy(&s.as_bytes())),
        Lv::Error(e) if call_error(e).is_some() => call_error(e).unwrap_or_default(),
        Lv::Error(e) if e.to_string().contains(KILLED) => KILLED.to_owned(),
        // A library function's error (cjson, bit, math.random): Redis's C
        // functions raise it with the script's position.
        Lv::Error(e) => format!("ERR user_script:{line}: {}", innermost(e)),
        other => format!(
            "ERR {}",
            lua.coerce_string(other.clone())
                .ok()
                .flatten()
                .map_or_else(String::new, |s| s.to_string_lossy())
        ),
    };
    version.script_error(&text, sha, line)
}

/// Runs `text` (compiled first) with `keys` and `argv`.
pub(crate) fn run(
    ctx: &mut Ctx<'_>,
    text: &[u8],
    sha: &str,
    keys: &[Bytes],
    argv: &[Bytes],
) -> Result<Value, CmdError> {
    let lua = new_lua()?;
    let script = lua
        .load(text)
        .set_name("@user_script")
        .into_function()
        .map_err(|e| compile_error(&e))?;
    let rand = RefCell::new(ctx.state.lua_rand);
    let ctx = RefCell::new(ctx);
    let outcome = lua.scope(|scope| {
        let g = lua.globals();
        let list = |items: &[Bytes]| {
            lua.create_sequence_from(items.iter().map(|b| lua.create_string(b).ok()))
        };
        g.raw_set("KEYS", list(keys)?)?;
        g.raw_set("ARGV", list(argv)?)?;
        g.raw_set(
            "__redis_call",
            scope.create_function_mut(|lua, args: Variadic<Lv>| {
                match bridge(lua, &mut ctx.borrow_mut(), args)? {
                    (true, v) => Ok(v),
                    (false, Lv::Table(t)) => {
                        let text: String = t.raw_get("err")?;
                        Err(mlua::Error::external(CallError(text)))
                    }
                    (false, v) => Ok(v),
                }
            })?,
        )?;
        g.raw_set(
            "__redis_pcall",
            scope.create_function_mut(|lua, args: Variadic<Lv>| {
                Ok(bridge(lua, &mut ctx.borrow_mut(), args)?.1)
            })?,
        )?;
        g.raw_set(
            "__redis_sha1hex",
            lua.create_function(|_, s: mlua::String| Ok(crate::sha1_hex(&s.as_bytes())))?,
        )?;
        let math: Table = g.raw_get("math")?;
        math.raw_set(
            "random",
            scope.create_function(|_, a: Variadic<f64>| random(&rand, a))?,
        )?;
        math.raw_set(
            "randomseed",
            scope.create_function(|_, seed: f64| {
                *rand.borrow_mut() = (((seed as i64 as u64) & 0xFFFF_FFFF) << 16) | 0x330E;
                Ok(())
            })?,
        )?;
        g.raw_set("bit", crate::lua_bit::library(&lua)?)?;
        g.raw_set("cjson", crate::lua_cjson::library(&lua)?)?;
        lua.load(PRELUDE).set_name("=prelude").exec()?;
        let sha = sha.to_owned();
        let version = ctx.borrow().state.version;
        let handler =
            lua.create_function(move |lua, err: Lv| Ok(error_text(lua, &err, &sha, version)))?;
        let xpcall: mlua::Function = g.raw_get("xpcall")?;
        lua.set_hook(
            mlua::HookTriggers::new().every_nth_instruction(MAX_INSTRUCTIONS),
            |_, _| Err(mlua::Error::runtime(KILLED)),
        );
        let result: MultiValue = xpcall.call((script, handler))?;
        lua.remove_hook();
        let mut values = result.into_iter();
        let ok = matches!(values.next(), Some(Lv::Boolean(true)));
        let first = values.next().unwrap_or(Lv::Nil);
        Ok(if ok {
            Ok(from_lua(&first, 0))
        } else {
            let text = lua
                .coerce_string(first)
                .ok()
                .flatten()
                .map_or_else(String::new, |s| s.to_string_lossy());
            Err(CmdError::other(text))
        })
    });
    let state_rand = *rand.borrow();
    ctx.into_inner().state.lua_rand = state_rand;
    outcome.unwrap_or_else(|e| Err(CmdError::other(format!("ERR {e}"))))
}

#[cfg(test)]
mod tests {
    use crate::engine::{args, bulk, engine_at};
    use crate::{Engine, Value};

    fn eval(e: &mut Engine, script: &str, rest: &[&str]) -> Value {
        let c = crate::ConnId(1);
        let mut words = vec!["EVAL", script];
        words.extend(rest);
        let mut r = e.execute(c, args(&words)).replies;
        assert_eq!(r.len(), 1);
        r.remove(0)
    }

    /// Replies captured from redis-server 7.0.15 for the same scripts:
    /// conversions both ways, error texts with the script's line, the
    /// sandbox's refusals, and `math.random`'s sequence from a fresh
    /// server (40, then 85). A wrong conversion, a missing `ERR`, a line
    /// lost to a tail call or a differently seeded generator fails.
    #[test]
    fn replies_like_redis() {
        let (mut e, _clock, _c) = engine_at(1_000);
        let err = |t: &str| Value::error(t);
        assert_eq!(
            eval(&mut e, "return math.random(100)", &["0"]),
            Value::Int(40)
        );
        assert_eq!(
            eval(&mut e, "return math.random(100)", &["0"]),
            Value::Int(85)
        );
        assert_eq!(
            eval(&mut e, "return {1,2,{3,'a'},nil,5}", &["0"]),
            Value::Array(vec![
                Value::Int(1),
                Value::Int(2),
                Value::Array(vec![Value::Int(3), bulk("a")])
            ])
        );
        assert_eq!(eval(&mut e, "return 3.99", &["0"]), Value::Int(3));
        assert_eq!(eval(&mut e, "return 1e300", &["0"]), Value::Int(i64::MIN));
        assert_eq!(eval(&mut e, "return false", &["0"]), Value::Nil);
        assert_eq!(
            eval(&mut e, "return {ok='x'}", &["0"]),
            Value::Simple("x".into())
        );
        assert_eq!(
            eval(&mut e, "return redis.error_reply('MY err')", &["0"]),
            err("MY err")
        );
        assert_eq!(
            eval(&mut e, "return redis.sha1hex('')", &["0"]),
            bulk("da39a3ee5e6b4b0d3255bfef95601890afd80709")
        );
        assert_eq!(
            eval(&mut e, "return bit.tohex(-1, -4)", &["0"]),
            bulk("FFFF")
        );
        assert_eq!(
            eval(&mut e, "return (", &["0"]),
            err(
                "ERR Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'"
            )
        );
        assert_eq!(
            eval(&mut e, "error('boom')", &["0"]),
            err(
                "ERR user_script:1: boom script: 82903a0434f1503e152f89c03c9acd881a0e8150, on @user_script:1."
            )
        );
        assert_eq!(
            eval(&mut e, "\n\nreturn redis.call('nosuch')", &["0"]),
            err(&format!(
                "ERR Unknown Redis command called from script script: {}, on @user_script:3.",
                crate::sha1_hex(b"\n\nreturn redis.call('nosuch')")
            ))
        );
        assert_eq!(
            eval(&mut e, "x = 1", &["0"]),
            err(
                "ERR user_script:1: Attempt to modify a readonly table script: 34bce5f775de97f557a34088509c8bfe1ea17e52, on @user_script:1."
            )
        );
        assert_eq!(
            eval(&mut e, "return y", &["0"]),
            err(
                "ERR user_script:1: Script attempted to access nonexistent global variable 'y' script: e278681ed961e2fb52881313e5c90fdd93749940, on @user_script:1."
            )
        );
        e.execute(crate::ConnId(1), args(&["SET", "s", "abc"]));
        assert_eq!(
            eval(&mut e, "return redis.pcall('incr','s')", &["0"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            eval(
                &mut e,
                "return redis.call('set', KEYS[1], ARGV[1])",
                &["1", "k", "v"]
            ),
            Value::ok()
        );
        // A number argument is written with `%.17g`, as redis-server
        // 7.0.15 stores it (`GET` gave these texts there).
        assert_eq!(
            eval(
                &mut e,
                "redis.call('set', 'x', 0.1); redis.call('set', 'y', 123456789012345678); \
                 redis.call('set', 'z', 0/0); return {redis.call('get', 'x'), \
                 redis.call('get', 'y'), redis.call('get', 'z')}",
                &["0"]
            ),
            Value::Array(vec![
                bulk("0.10000000000000001"),
                bulk("1.2345678901234568e+17"),
                bulk("-nan")
            ])
        );
    }

    /// A script that never ends is stopped at its instruction budget with
    /// Redis's "killed" text, and the server goes on.
    #[test]
    fn endless_script_is_stopped() {
        let (mut e, _clock, _c) = engine_at(0);
        let r = eval(&mut e, "while true do end", &["0"]);
        assert!(
            matches!(&r, Value::Error(t) if t.starts_with("ERR Script killed")),
            "{r:?}"
        );
        assert_eq!(eval(&mut e, "return 1", &["0"]), Value::Int(1));
    }
}
