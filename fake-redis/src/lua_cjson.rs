//! The `cjson` library Redis gives scripts: `cjson.encode`, `cjson.decode`
//! and `cjson.null`, with lua-cjson's rules (arrays for tables keyed
//! 1..n, objects otherwise and for `{}`, numbers as Lua prints them, `/`
//! escaped). Decoding is serde_json's; its error texts are not
//! lua-cjson's.

use mlua::{LightUserData, Lua, Table, Value as Lv};

/// Deepest nesting `encode` accepts (lua-cjson's default).
const MAX_DEPTH: usize = 1000;

fn null() -> Lv {
    Lv::LightUserData(LightUserData(std::ptr::null_mut()))
}

fn escape(s: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &b in s {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            b if b < 0x20 || b == 0x7f => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            b => out.push(b),
        }
    }
    out.push(b'"');
}

/// The array length lua-cjson would use, or `None` for an object.
fn array_len(t: &Table) -> mlua::Result<Option<usize>> {
    let (mut max, mut items) = (0usize, 0usize);
    for pair in t.clone().pairs::<Lv, Lv>() {
        let (k, _) = pair?;
        let index = match k {
            Lv::Integer(i) if i >= 1 => i as usize,
            Lv::Number(n) if n >= 1.0 && n.fract() == 0.0 => n as usize,
            _ => return Ok(None),
        };
        max = max.max(index);
        items += 1;
    }
    if items == 0 {
        return Ok(None);
    }
    if max > items * 2 && max > 10 {
        return Err(mlua::Error::runtime(
            "Cannot serialise table: excessively sparse array",
        ));
    }
    Ok(Some(max))
}

fn number(lua: &Lua, v: Lv, out: &mut Vec<u8>) -> mlua::Result<()> {
    let n = match v {
        Lv::Number(n) => n,
        Lv::Integer(i) => i as f64,
        _ => 0.0,
    };
    if !n.is_finite() {
        return Err(mlua::Error::runtime(
            "Cannot serialise number: must not be NaN or Inf",
        ));
    }
    let text = lua
        .coerce_string(Lv::Number(n))?
        .map(|s| s.as_bytes().to_vec());
    out.extend(text.unwrap_or_default());
    Ok(())
}

fn encode(lua: &Lua, v: Lv, depth: usize, out: &mut Vec<u8>) -> mlua::Result<()> {
    match v {
        Lv::Nil => out.extend_from_slice(b"null"),
        Lv::LightUserData(p) if p.0.is_null() => out.extend_from_slice(b"null"),
        Lv::Boolean(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Lv::Integer(_) | Lv::Number(_) => number(lua, v, out)?,
        Lv::String(s) => escape(&s.as_bytes(), out),
        Lv::Table(t) => {
            if depth >= MAX_DEPTH {
                return Err(mlua::Error::runtime(format!(
                    "Cannot serialise, excessive nesting ({})",
                    depth + 1
                )));
            }
            match array_len(&t)? {
                Some(len) => {
                    out.push(b'[');
                    for i in 1..=len {
                        if i > 1 {
                            out.push(b',');
                        }
                        encode(lua, t.raw_get(i)?, depth + 1, out)?;
                    }
                    out.push(b']');
                }
                None => {
                    out.push(b'{');
                    let mut first = true;
                    for pair in t.pairs::<Lv, Lv>() {
                        let (k, v) = pair?;
                        if !first {
                            out.push(b',');
                        }
                        first = false;
                        match k {
                            Lv::String(s) => escape(&s.as_bytes(), out),
                            Lv::Integer(_) | Lv::Number(_) => {
                                let mut key = Vec::new();
                                number(lua, k, &mut key)?;
                                escape(&key, out);
                            }
                            _ => {
                                return Err(mlua::Error::runtime(
                                    "Cannot serialise table: table key must be a number or string",
                                ));
                            }
                        }
                        out.push(b':');
                        encode(lua, v, depth + 1, out)?;
                    }
                    out.push(b'}');
                }
            }
        }
        other => {
            return Err(mlua::Error::runtime(format!(
                "Cannot serialise {}: type not supported",
                other.type_name()
            )));
        }
    }
    Ok(())
}

fn decode(lua: &Lua, v: &serde_json::Value) -> mlua::Result<Lv> {
    Ok(match v {
        serde_json::Value::Null => null(),
        serde_json::Value::Bool(b) => Lv::Boolean(*b),
        serde_json::Value::Number(n) => Lv::Number(n.as_f64().unwrap_or(0.0)),
        serde_json::Value::String(s) => Lv::String(lua.create_string(s)?),
        serde_json::Value::Array(items) => {
            let t = lua.create_table()?;
            for (i, item) in items.iter().enumerate() {
                t.raw_set(i + 1, decode(lua, item)?)?;
            }
            Lv::Table(t)
        }
        serde_json::Value::Object(map) => {
            let t = lua.create_table()?;
            for (k, item) in map {
                t.raw_set(k.as_str(), decode(lua, item)?)?;
            }
            Lv::Table(t)
        }
    })
}

/// The `cjson` table.
pub(crate) fn library(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "encode",
        lua.create_function(|lua, v: Lv| {
            let mut out = Vec::new();
            encode(lua, v, 0, &mut out)?;
            lua.create_string(&out)
        })?,
    )?;
    t.raw_set(
        "decode",
        lua.create_function(|lua, s: mlua::String| {
            let parsed: serde_json::Value = serde_json::from_slice(&s.as_bytes()).map_err(|e| {
                mlua::Error::runtime(format!("Expected value but found invalid token: {e}"))
            })?;
            decode(lua, &parsed)
        })?,
    )?;
    t.raw_set("null", null())?;
    Ok(t)
}
