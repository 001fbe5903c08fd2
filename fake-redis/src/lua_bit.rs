//! The `bit` library Redis gives scripts (LuaBitOp's API): 32-bit
//! operations on Lua numbers, results as signed 32-bit numbers.

use mlua::{Lua, Table, Variadic};

/// A Lua number as LuaBitOp reads it: wrapped to 32 bits.
fn tobit(n: f64) -> i32 {
    if !n.is_finite() {
        return 0;
    }
    (n.trunc().rem_euclid(4_294_967_296.0) as u64 as u32) as i32
}

fn fold(args: &Variadic<f64>, f: fn(i32, i32) -> i32) -> f64 {
    let mut it = args.iter().map(|n| tobit(*n));
    let first = it.next().unwrap_or(0);
    f64::from(it.fold(first, f))
}

/// The `bit` table.
pub(crate) fn library(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "tobit",
        lua.create_function(|_, n: f64| Ok(f64::from(tobit(n))))?,
    )?;
    t.raw_set(
        "bnot",
        lua.create_function(|_, n: f64| Ok(f64::from(!tobit(n))))?,
    )?;
    t.raw_set(
        "band",
        lua.create_function(|_, a: Variadic<f64>| Ok(fold(&a, |x, y| x & y)))?,
    )?;
    t.raw_set(
        "bor",
        lua.create_function(|_, a: Variadic<f64>| Ok(fold(&a, |x, y| x | y)))?,
    )?;
    t.raw_set(
        "bxor",
        lua.create_function(|_, a: Variadic<f64>| Ok(fold(&a, |x, y| x ^ y)))?,
    )?;
    let shift = |f: fn(i32, u32) -> i32| {
        move |_: &Lua, (x, n): (f64, f64)| Ok(f64::from(f(tobit(x), (tobit(n) & 31) as u32)))
    };
    t.raw_set(
        "lshift",
        lua.create_function(shift(|x, n| x.wrapping_shl(n)))?,
    )?;
    t.raw_set(
        "rshift",
        lua.create_function(shift(|x, n| ((x as u32) >> n) as i32))?,
    )?;
    t.raw_set("arshift", lua.create_function(shift(|x, n| x >> n))?)?;
    t.raw_set("rol", lua.create_function(shift(|x, n| x.rotate_left(n)))?)?;
    t.raw_set("ror", lua.create_function(shift(|x, n| x.rotate_right(n)))?)?;
    t.raw_set(
        "bswap",
        lua.create_function(|_, n: f64| Ok(f64::from(tobit(n).swap_bytes())))?,
    )?;
    t.raw_set(
        "tohex",
        lua.create_function(|_, (x, n): (f64, Option<f64>)| {
            let n = n.map_or(8, tobit);
            let width = n.unsigned_abs().min(8) as usize;
            let x = tobit(x) as u32;
            let masked = if width < 8 {
                x & ((1u32 << (4 * width)) - 1)
            } else {
                x
            };
            Ok(if n < 0 {
                format!("{masked:0width$X}")
            } else {
                format!("{masked:0width$x}")
            })
        })?,
    )?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::tobit;

    /// LuaBitOp's documented wrap-around: 2^32 + 1 is 1, 2^31 is -2^31.
    #[test]
    fn tobit_wraps() {
        assert_eq!(tobit(4_294_967_297.0), 1);
        assert_eq!(tobit(2_147_483_648.0), i32::MIN);
        assert_eq!(tobit(-1.0), -1);
    }
}
