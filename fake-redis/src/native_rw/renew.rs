//! `ReadLockTask`'s renewals and the per-lock read renewal, natively
//! (see the parent module for how each follows its Lua text).

use bytes::Bytes;

use super::{
    count_down, has_more_than_one_field, hget, hkeys, runtime_error, timeout_key, tonumber,
};
use crate::Value;
use crate::cmd::Ctx;
use crate::native::{Arg, pexpire};
use crate::number::lua_tonumber;

/// The read renewal of one lock (3.8.1 to 3.43): K, then every reader's
/// timeout keys.
pub(super) fn read_renew(
    ctx: &mut Ctx<'_>,
    keys: &[Bytes],
    argv: &[Bytes],
) -> Result<Value, String> {
    let (k1, k2, lease) = (keys.first(), keys.get(1), argv.first());
    if hget(ctx, k1, argv.get(1))? == Value::Nil {
        return Ok(Value::Int(0));
    }
    pexpire(ctx, k1, lease)?;
    if has_more_than_one_field(ctx, k1)? {
        for name in hkeys(ctx, k1)? {
            if let Some(counter) = tonumber(&hget(ctx, k1, Some(&name))?) {
                count_down(counter, |i| {
                    pexpire(ctx, Some(&timeout_key(k2, &name, i)?), lease).map(drop)
                })?;
            }
        }
    }
    Ok(Value::Int(1))
}

/// `ReadLockTask`'s chunk, 3.44 to 4.3: pairs (K, `{K}`), one lockName
/// each. `shadowed` (before PR #6883): the inner loop's `i` hides the
/// pair's, so the prefix is `KEYS[counter + 1]`, another pair's key or
/// `nil`, and the script fails on it after the PEXPIREs already made.
pub(super) fn read_renew_batch(
    ctx: &mut Ctx<'_>,
    keys: &[Bytes],
    argv: &[Bytes],
    shadowed: bool,
) -> Result<Value, String> {
    let lease = argv.first();
    let mut result = Vec::new();
    for (pair, i) in (1..=keys.len()).step_by(2).enumerate() {
        let lock = keys.get(i - 1);
        // `j = j + 1` before each pair: ARGV[2] is the first lockName.
        if hget(ctx, lock, argv.get(pair + 1))? == Value::Nil {
            result.push(Value::Int(0));
            continue;
        }
        pexpire(ctx, lock, lease)?;
        if has_more_than_one_field(ctx, lock)? {
            for name in hkeys(ctx, lock)? {
                let Some(counter) = tonumber(&hget(ctx, lock, Some(&name))?) else {
                    continue;
                };
                count_down(counter, |c| {
                    let prefix = if shadowed {
                        lua_index(keys, c + 1.0)
                    } else {
                        keys.get(i)
                    };
                    pexpire(ctx, Some(&timeout_key(prefix, &name, c)?), lease).map(drop)
                })?;
            }
        }
        result.push(Value::Int(1));
    }
    Ok(Value::Array(result))
}

/// `ReadLockTask`'s chunk, 4.4 to 4.7 (PR #7098): per pair a count of
/// lockNames, then the names; only this client's readers are renewed, and
/// K only when one of them is alive.
pub(super) fn read_renew_batch_own(
    ctx: &mut Ctx<'_>,
    keys: &[Bytes],
    argv: &[Bytes],
) -> Result<Value, String> {
    let lease = argv.first();
    let mut result = Vec::new();
    // `argIdx`, 1-based as in the script.
    let mut arg = 2;
    for i in (1..=keys.len()).step_by(2) {
        let lock = keys.get(i - 1);
        let mut alive = false;
        // `tonumber(nil)` is nil, and so is a word that is no number.
        let names = argv.get(arg - 1).and_then(|w| lua_tonumber(w));
        arg += 1;
        let names = names.ok_or_else(|| runtime_error("'for' limit must be a number"))?;
        // The VM starts from `1 - step`.
        let mut k = 0.0;
        loop {
            k += 1.0;
            if k > names || names.is_nan() {
                break;
            }
            let name = argv.get(arg - 1);
            if let Value::Bulk(counter) = hget(ctx, lock, name)? {
                alive = true;
                // `for c=counter, ...` converts the string, or fails.
                let from = lua_tonumber(&counter)
                    .ok_or_else(|| runtime_error("'for' initial value must be a number"))?;
                let name = name.map_or(&[][..], |n| n.as_ref());
                count_down(from, |c| {
                    pexpire(ctx, Some(&timeout_key(keys.get(i), name, c)?), lease).map(drop)
                })?;
            }
            arg += 1;
        }
        if alive {
            pexpire(ctx, lock, lease)?;
            result.push(Value::Int(1));
        } else {
            result.push(Value::Int(0));
        }
    }
    Ok(Value::Array(result))
}

/// `KEYS[x]` for a Lua number `x`: a double equal to an index in range
/// finds its key, any other is `nil`.
fn lua_index(keys: &[Bytes], x: f64) -> Arg<'_> {
    let in_range = x.fract() == 0.0 && x >= 1.0 && x <= keys.len() as f64;
    in_range.then(|| &keys[x as usize - 1])
}
