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

/// Lua 5.1's `tonumber` on a string (and its coercion of a string in
/// arithmetic and in a numeric `for`): the number, or `None` for `nil`.
pub(crate) fn lua_tonumber(s: &[u8]) -> Option<f64> {
    strtod_whole(s)
}

/// A Lua number as Redis 7.0 passes it to a command from a script
/// (`luaArgsToRedisArgv`): C's `%.17g`, not Lua's own `%.14g` (which
/// would round `0.1 + 0.2` and write 1e14 and up in exponent form).
/// NaN is glibc's `nan` or `-nan`, by its sign bit.
pub(crate) fn lua_number_arg(f: f64) -> bytes::Bytes {
    // The common case, a whole number of milliseconds, without `%g`'s
    // layout work (`-0` keeps its sign there).
    if f.fract() == 0.0 && f.abs() < 1e15 && (f != 0.0 || f.is_sign_positive()) {
        return int_text(f as i64);
    }
    let text = match f {
        f if f.is_nan() && f.is_sign_negative() => "-nan".to_owned(),
        f if f.is_nan() => "nan".to_owned(),
        f => format_double(f),
    };
    bytes::Bytes::from(text)
}

/// A Lua 5.1 number as Lua turns it into a string (`..`, `tostring`):
/// C's `%.14g`. A number passed to `redis.call` is written otherwise
/// ([`lua_number_arg`]).
pub(crate) fn lua_number_text(f: f64) -> String {
    if f.is_nan() {
        return if f.is_sign_negative() { "-nan" } else { "nan" }.to_owned();
    }
    if f.is_infinite() {
        return if f < 0.0 { "-inf" } else { "inf" }.to_owned();
    }
    // The common case, an integer of at most 14 digits, prints as itself.
    if f.fract() == 0.0 && f.abs() < 1e14 {
        let n = f as i64;
        return if n == 0 && f.is_sign_negative() {
            "-0".to_owned()
        } else {
            itoa::Buffer::new().format(n).to_owned()
        };
    }
    // `%g` with precision 14: the exponent after rounding to 14
    // significant digits picks scientific or fixed notation, and trailing
    // zeros go.
    let sci = format!("{f:.13e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..14).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim_zeros(mantissa), exp.unsigned_abs())
    } else {
        let decimals = usize::try_from(13 - exp).unwrap_or(0);
        trim_zeros(&format!("{f:.decimals$}")).to_owned()
    }
}

/// `%g`'s removal of trailing fraction zeros (and a bare point).
fn trim_zeros(t: &str) -> &str {
    if t.contains('.') {
        t.trim_end_matches('0').trim_end_matches('.')
    } else {
        t
    }
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

/// Redis's `string2d` (a sorted-set score: ZADD, ZINCRBY): C's `strtod`
/// over the whole string, with no space at either end, no NaN, and none
/// of `strtod`'s range errors (`1e400` overflowing to infinity, `1e-400`
/// underflowing to zero; `inf` itself and denormals are accepted).
pub(crate) fn parse_score(s: &[u8]) -> Option<f64> {
    if s.first().is_none_or(|b| c_space(*b)) || s.last().is_some_and(|b| c_space(*b)) {
        return None;
    }
    let v = strtod_whole(s).filter(|v| !v.is_nan())?;
    let body = s
        .strip_prefix(b"-")
        .or_else(|| s.strip_prefix(b"+"))
        .unwrap_or(s);
    let infinity = body.eq_ignore_ascii_case(b"inf") || body.eq_ignore_ascii_case(b"infinity");
    if v.is_infinite() && !infinity {
        return None;
    }
    if v == 0.0 && mantissa_is_nonzero(body) {
        return None;
    }
    Some(v)
}

/// Whether the digits before the exponent of a number `strtod` read
/// (without its sign) are not all zero: then a zero result underflowed.
fn mantissa_is_nonzero(body: &[u8]) -> bool {
    let (digits, mark): (&[u8], &[u8]) = match body.get(..2) {
        Some(b"0x" | b"0X") => (&body[2..], b"pP"),
        _ => (body, b"eE"),
    };
    digits
        .iter()
        .take_while(|b| !mark.contains(b))
        .any(|b| b.is_ascii_hexdigit() && *b != b'0')
}

/// A score range's bound as Redis's `zslParseRange` reads it (after any
/// `(`): plain `strtod` on a C string, so reading stops at a NUL byte,
/// leading space is skipped, the empty string is 0, overflow is infinity
/// and only NaN or trailing characters are refused.
pub(crate) fn parse_range_number(s: &[u8]) -> Option<f64> {
    let s = &s[..s.iter().position(|b| *b == 0).unwrap_or(s.len())];
    if s.is_empty() {
        return Some(0.0);
    }
    if s.last().is_some_and(|b| c_space(*b)) {
        return None;
    }
    strtod_whole(s).filter(|v| !v.is_nan())
}

/// A double as Redis 7.0 replies with it (`addReplyDouble`): `inf`,
/// `-inf`, or C's `%.17g` (17 significant digits, trailing zeros
/// dropped, exponent form below 1e-4 and from 1e17).
pub(crate) fn format_double(f: f64) -> String {
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    if f == 0.0 || f.is_nan() {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    // Rust rounds correctly to 17 digits, as glibc does; only the layout
    // is %g's.
    let sci = format!("{:.16e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if f < 0.0 { "-" } else { "" };
    let joined = |int: &str, frac: &str| {
        let frac = frac.trim_end_matches('0');
        if frac.is_empty() {
            int.to_owned()
        } else {
            format!("{int}.{frac}")
        }
    };
    let body = match usize::try_from(exp) {
        Ok(e) if e < 17 => joined(&digits[..=e], &digits[e + 1..]),
        Err(_) if exp >= -4 => {
            let zeros = "0".repeat(usize::try_from(-exp - 1).unwrap_or(0));
            joined("0", &format!("{zeros}{digits}"))
        }
        _ => format!(
            "{}e{}{:02}",
            joined(&digits[..1], &digits[1..]),
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        ),
    };
    format!("{sign}{body}")
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
    /// `%.14g` as glibc prints it (values checked with C's printf):
    /// the switch to scientific notation at 1e14 and below 1e-4, 14
    /// significant digits, no trailing zeros.
    #[test]
    fn lua_numbers_print_like_percent_14g() {
        for (f, text) in [
            (0.0, "0"),
            (-0.0, "-0"),
            (3.0, "3"),
            (-29_001.5, "-29001.5"),
            (99_999_999_999_999.0, "99999999999999"),
            (1e14, "1e+14"),
            (123_456_789_012_345_678.0, "1.2345678901235e+17"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.0 / 3.0, "0.33333333333333"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
        ] {
            assert_eq!(lua_number_text(f), text, "{f}");
        }
    }

    #[test]
    fn integers_lose_precision_through_lua() {
        assert_eq!(through_lua(-9_223_372_036_854_775_807), i64::MIN);
        assert_eq!(through_lua(i64::MAX), i64::MIN);
        assert_eq!(through_lua(9_007_199_254_740_993), 9_007_199_254_740_992);
        assert_eq!(through_lua(30_000), 30_000);
    }

    /// Scores as redis-server 7.0.15 replied to `ZADD z <s> m; ZSCORE z m`:
    /// 17 significant digits, %g's switch to exponent form, signed zero,
    /// denormals; and the scores it refused with `value is not a valid
    /// float`.
    #[test]
    fn scores_parse_and_print_like_redis() {
        let printed = [
            (0.1, "0.10000000000000001"),
            (1e20, "1e+20"),
            (1e-5, "1.0000000000000001e-05"),
            (1e16, "10000000000000000"),
            (1e17, "1e+17"),
            (123_456_789_012_345_678.0, "1.2345678901234568e+17"),
            (1.5, "1.5"),
            (-2.0, "-2"),
            (-0.0, "-0"),
            (0.0001, "0.0001"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
        ];
        for (f, text) in printed {
            assert_eq!(format_double(f), text, "{f:e}");
        }
        let denormal = parse_score(b"1e-310").expect("a denormal is a score");
        assert_eq!(format_double(denormal), "9.9999999999999694e-311");
        assert_eq!(parse_score(b"0x10"), Some(16.0));
        assert_eq!(parse_score(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_score(b"+Infinity"), Some(f64::INFINITY));
        assert_eq!(parse_score(b"0e5"), Some(0.0));
        for bad in [
            "1e400",
            "1e-400",
            " 1",
            "1 ",
            "nan",
            "",
            "abc",
            "1e",
            "0x1p99999",
        ] {
            assert_eq!(parse_score(bad.as_bytes()), None, "{bad:?}");
        }
    }

    /// Range bounds as `ZRANGEBYSCORE z <min> 3` took them on redis-server
    /// 7.0.15: empty is 0, leading space skipped, overflow is infinity.
    #[test]
    fn range_numbers_read_like_strtod() {
        assert_eq!(parse_range_number(b""), Some(0.0));
        assert_eq!(parse_range_number(b"  1"), Some(1.0));
        assert_eq!(parse_range_number(b"1e400"), Some(f64::INFINITY));
        assert_eq!(parse_range_number(b"2\0x"), Some(2.0));
        for bad in ["1 ", "  ", "nan", "x", "+"] {
            assert_eq!(parse_range_number(bad.as_bytes()), None, "{bad:?}");
        }
    }

    /// A number a script passes to a command, as redis-server 7.0.15
    /// stored it (`SET n <number>` from Lua, then `GET n`): whole numbers
    /// plain (the fast path), `-0` signed, 1e17 and up in exponent form,
    /// fractions to 17 digits, infinities and NaN as glibc writes them.
    #[test]
    fn lua_number_arg_is_redis_percent_17g() {
        let cases: [(f64, &str); 12] = [
            (30000.0, "30000"),
            (-0.0, "-0"),
            (1e15, "1000000000000000"),
            (1e17, "1e+17"),
            (0.25, "0.25"),
            (-30000.0, "-30000"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (999_999_999_999_999.0, "999999999999999"),
            (1_732_790_153_457.25, "1732790153457.25"),
            (9_007_199_254_740_993.0, "9007199254740992"),
            (-f64::NAN, "-nan"),
        ];
        for (f, text) in cases {
            assert_eq!(lua_number_arg(f), text.as_bytes(), "{f}");
        }
    }
}
