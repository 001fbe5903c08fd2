//! Number parsing exactly as Redis and its Lua interpreter parse numbers.

/// Redis's `string2ll`: a canonical decimal 64-bit integer. No sign `+`, no
/// leading zeros, no spaces, no `-0`.
pub(crate) fn parse_i64(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (negative, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    match digits.first() {
        Some(b'1'..=b'9') => {}
        _ => return None,
    }
    let mut v: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    if negative {
        if v > (i64::MAX as u64) + 1 {
            None
        } else {
            Some((v as i128).wrapping_neg() as i64)
        }
    } else {
        i64::try_from(v).ok()
    }
}

/// Lua 5.1's `tonumber` on a string, then Redis's conversion of a Lua number
/// to an integer reply (truncation toward zero). `None` is Lua's `nil`.
///
/// Lua accepts surrounding whitespace, a sign, decimals, exponents and hex
/// (`0x10`); anything else is `nil`.
pub(crate) fn lua_tonumber_int(s: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(s).ok()?;
    let t = text.trim_matches(|c: char| c.is_ascii_whitespace());
    if t.is_empty() {
        return None;
    }
    let (neg, body) = match t.as_bytes()[0] {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let value = if let Some(hex) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        // strtoul saturates; a lock counter never gets there.
        u64::from_str_radix(hex, 16).unwrap_or(u64::MAX) as f64
    } else {
        if !body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
            || !body.bytes().any(|b| b.is_ascii_digit())
        {
            return None;
        }
        body.parse::<f64>().ok()?
    };
    let value = if neg { -value } else { value };
    // `(long long)` of a double: Rust's `as` saturates where C is undefined.
    Some(value as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Redis rejects non-canonical integers (`007`, `-0`, ` 1`, `+1`) that a
    /// lenient parser would accept; each case here was checked against
    /// redis-server 7.0.15 with `SET n <s>; INCR n`.
    #[test]
    fn parse_i64_is_strict_like_string2ll() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        for bad in [
            &b"9223372036854775808"[..],
            b"007",
            b"-0",
            b" 1",
            b"+1",
            b"1.0",
            b"",
            b"-",
            b"1a",
        ] {
            assert_eq!(parse_i64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    /// The fenced script's `tonumber(redis.call('get', ...))` must read a
    /// counter as Lua does; a non-number is `nil`, which ends the Lua table.
    #[test]
    fn lua_tonumber_reads_like_lua() {
        assert_eq!(lua_tonumber_int(b"42"), Some(42));
        assert_eq!(lua_tonumber_int(b" 7 "), Some(7));
        assert_eq!(lua_tonumber_int(b"0x10"), Some(16));
        assert_eq!(lua_tonumber_int(b"1.9"), Some(1));
        assert_eq!(lua_tonumber_int(b"abc"), None);
        assert_eq!(lua_tonumber_int(b""), None);
    }
}
