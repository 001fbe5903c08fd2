//! Number parsing exactly as Redis and its Lua interpreter parse numbers.

/// `n` as Redis stores an integer it computed (`INCR`, `HINCRBY`).
pub(crate) fn int_text(n: i64) -> bytes::Bytes {
    bytes::Bytes::copy_from_slice(itoa::Buffer::new().format(n).as_bytes())
}

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
/// to an integer reply. `None` is Lua's `nil`.
///
/// Lua 5.1 reads a number with C's `strtod` (so `inf`, `nan`, hex floats
/// like `0x1p3` and surrounding whitespace are numbers) and needs the whole
/// string to be used.
pub(crate) fn lua_tonumber_int(s: &[u8]) -> Option<i64> {
    strtod_whole(s).map(lua_number_to_int)
}

/// C's `isspace` in the C locale.
fn c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// `strtod` over the whole of `s` (whitespace around allowed), or `None`.
fn strtod_whole(s: &[u8]) -> Option<f64> {
    let start = s.iter().position(|b| !c_space(*b))?;
    let end = s.iter().rposition(|b| !c_space(*b))? + 1;
    let t = std::str::from_utf8(&s[start..end]).ok()?;
    let (negative, body) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let lower = body.to_ascii_lowercase();
    let magnitude = if lower == "inf" || lower == "infinity" {
        f64::INFINITY
    } else if lower == "nan"
        || (lower.starts_with("nan(")
            && lower.ends_with(')')
            && lower[4..lower.len() - 1]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_'))
    {
        f64::NAN
    } else if let Some(hex) = lower.strip_prefix("0x") {
        hex_float(hex)?
    } else {
        decimal(&lower)?
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// Splits `int[.frac][<mark>[sign]digits]`, with at least one mantissa digit
/// and every digit valid; the exponent saturates.
fn float_parts(t: &str, mark: char, digit: fn(&u8) -> bool) -> Option<(&str, &str, i32)> {
    let (mantissa, exponent) = match t.find(mark) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if !int.bytes().all(|b| digit(&b))
        || !frac.bytes().all(|b| digit(&b))
        || (int.is_empty() && frac.is_empty())
    {
        return None;
    }
    let exp = match exponent {
        None => 0,
        Some(e) => {
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let n: i32 = digits.parse().unwrap_or(i32::MAX / 2);
            if e.starts_with('-') { -n } else { n }
        }
    };
    Some((int, frac, exp))
}

/// `digits[.digits][e[sign]digits]`.
fn decimal(t: &str) -> Option<f64> {
    float_parts(t, 'e', u8::is_ascii_digit)?;
    t.parse::<f64>().ok()
}

/// The part of a hex float after `0x`: `hex[.hex][p[sign]digits]`.
fn hex_float(t: &str) -> Option<f64> {
    let (int, frac, exp) = float_parts(t, 'p', u8::is_ascii_hexdigit)?;
    let mut value = 0f64;
    for d in int.bytes().chain(frac.bytes()) {
        value = value * 16.0 + f64::from(char::from(d).to_digit(16)?);
    }
    let exp = exp.saturating_sub(4 * i32::try_from(frac.len()).ok()?);
    Some(value * 2f64.powi(exp))
}

/// Redis's `(long long)` cast of a Lua number (a double) for an integer
/// reply. Out of range (and NaN) is undefined in C; on x86-64, where Redis
/// runs, `cvttsd2si` gives `i64::MIN`, and so does this.
pub(crate) fn lua_number_to_int(f: f64) -> i64 {
    if f.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
        i64::MIN
    } else {
        f as i64
    }
}

/// An integer reply after a round trip through a Lua number, as every
/// integer a script returns makes: beyond 2^53 it loses precision.
pub(crate) fn through_lua(n: i64) -> i64 {
    lua_number_to_int(n as f64)
}

/// Redis's `string2ld` (INCRBYFLOAT, HINCRBYFLOAT): C's `strtod` over
/// the whole string, with no leading space and no NaN.
pub(crate) fn parse_float(s: &[u8]) -> Option<f64> {
    if s.first().is_none_or(|b| c_space(*b)) || s.len() > 5000 {
        return None;
    }
    strtod_whole(s).filter(|f| !f.is_nan())
}

/// A float as INCRBYFLOAT stores it: plain decimal notation, no trailing
/// zeros. Redis computes in C's 80-bit `long double` and prints 17
/// decimals; this computes in `f64`, so the result is rounded to 15
/// significant digits first, which gives Redis's text for sums of
/// short decimals (`1.1 + 2.2` is `3.3` in both) but not for values past
/// 15 digits.
pub(crate) fn format_float(f: f64) -> String {
    let rounded: f64 = format!("{f:.14e}").parse().unwrap_or(f);
    format!("{rounded}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// INCRBYFLOAT replies captured from redis-server 7.0.15.
    #[test]
    fn float_text_like_redis() {
        assert_eq!(format_float(10.0 + 1.5), "11.5");
        assert_eq!(format_float(1.1 + 2.2), "3.3");
        assert_eq!(format_float(3.0), "3");
        assert_eq!(format_float(5.0 + 5.0e3), "5005");
        assert_eq!(parse_float(b"0x10"), Some(16.0));
        assert_eq!(parse_float(b" 1"), None);
        assert_eq!(parse_float(b"nan"), None);
        assert_eq!(parse_float(b"abc"), None);
    }

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
    /// Every row was captured from redis-server 7.0.15 running the fenced
    /// script with the counter set to the string.
    #[test]
    fn lua_tonumber_reads_like_lua() {
        let min = Some(i64::MIN);
        let cases: &[(&str, Option<i64>)] = &[
            ("42", Some(42)),
            ("inf", min),
            ("-inf", min),
            ("INFINITY", min),
            ("nan", min),
            ("NaN(123)", min),
            ("1e500", min),
            ("0x10", Some(16)),
            ("0x1p3", Some(8)),
            ("0X1.8p1", Some(3)),
            (" 7 ", Some(7)),
            ("\t7\n", Some(7)),
            ("1e", None),
            ("0x", None),
            ("5.", Some(5)),
            (".5", Some(0)),
            ("-.5e1", Some(-5)),
            ("+3", Some(3)),
            ("++3", None),
            ("1_0", None),
            ("0x1g", None),
            ("infinit", None),
            ("  ", None),
            ("", None),
            ("12abc", None),
            ("9007199254740993", Some(9_007_199_254_740_992)),
            ("-9223372036854775809", min),
            ("1e18", Some(1_000_000_000_000_000_000)),
            ("0x7fffffffffffffff", min),
            ("0xffffffffffffffffff", min),
            ("1.9", Some(1)),
            ("-1.9", Some(-1)),
        ];
        for (text, want) in cases {
            assert_eq!(lua_tonumber_int(text.as_bytes()), *want, "{text:?}");
        }
    }

    /// Integers returned by a script pass through a double: checked with
    /// real Redis, where `INCR` to -9223372036854775807 inside the fenced
    /// script returns -9223372036854775808.
    #[test]
    fn integers_lose_precision_through_lua() {
        assert_eq!(through_lua(-9_223_372_036_854_775_807), i64::MIN);
        assert_eq!(through_lua(i64::MAX), i64::MIN);
        assert_eq!(through_lua(9_007_199_254_740_993), 9_007_199_254_740_992);
        assert_eq!(through_lua(30_000), 30_000);
    }
}
