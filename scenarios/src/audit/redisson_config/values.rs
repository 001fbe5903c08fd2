//! Typed reads of one value, with the key and line for the error.

use super::ConfigError;
use super::tree::{Node, Value};

/// A key's path and line, for errors.
#[derive(Debug, Clone, Copy)]
pub(super) struct At<'a> {
    pub key: &'a str,
    pub line: usize,
}

impl At<'_> {
    pub fn wrong(&self, expected: &str, found: &Value) -> ConfigError {
        ConfigError::WrongType {
            key: self.key.to_owned(),
            line: self.line,
            expected: expected.to_owned(),
            found: found.describe(),
        }
    }

    pub fn out_of_range(&self, value: impl ToString, why: impl ToString) -> ConfigError {
        ConfigError::OutOfRange {
            key: self.key.to_owned(),
            line: self.line,
            value: value.to_string(),
            why: why.to_string(),
        }
    }
}

/// Java's `Integer.MAX_VALUE`: the bound of every `int` field.
pub(super) const JAVA_INT_MAX: i64 = i32::MAX as i64;

/// A whole number, quoted or not: Jackson (3.x) coerces a quoted one
/// (scalar coercion is on by default), and SnakeYAML (4.x) builds an
/// `int` property from a `!!str` scalar, a tag it holds compatible.
pub(super) fn integer(node: &Node, at: At<'_>) -> Result<i64, ConfigError> {
    match &node.value {
        Value::Int(i) => Ok(*i),
        Value::Str(s) => s
            .trim()
            .parse()
            .map_err(|_| at.wrong("a whole number", &node.value)),
        other => Err(at.wrong("a whole number", other)),
    }
}

/// A whole number in `lo..=hi`, `why` saying what the range is.
pub(super) fn ranged(
    node: &Node,
    at: At<'_>,
    (lo, hi): (i64, i64),
    why: &str,
) -> Result<u64, ConfigError> {
    let n = integer(node, at)?;
    if n < lo || n > hi {
        return Err(at.out_of_range(n, why));
    }
    // lo is never negative, so the cast keeps the value.
    Ok(n as u64)
}

/// A `java.time.Duration` as `Duration.parse` reads it (ISO-8601
/// `PnDTnHnMn.nS`, e.g. `PT1.5S`), in whole milliseconds as
/// `Duration.toMillis` gives them. Negative durations are refused: no
/// delay strategy takes one.
pub(super) fn duration_ms(node: &Node, at: At<'_>) -> Result<u64, ConfigError> {
    const EXPECTED: &str = "an ISO-8601 duration such as PT1S or PT0.5S";
    let Value::Str(text) = &node.value else {
        return Err(at.wrong(EXPECTED, &node.value));
    };
    match parse_duration(text) {
        Some(ms) if ms >= 0 => u64::try_from(ms).map_err(|_| at.wrong(EXPECTED, &node.value)),
        Some(_) => Err(at.out_of_range(text, "a delay cannot be negative")),
        None => Err(at.wrong(EXPECTED, &node.value)),
    }
}

/// `Duration.parse` to milliseconds (truncated toward zero), or `None`.
fn parse_duration(text: &str) -> Option<i128> {
    let upper = text.to_ascii_uppercase();
    let (sign, rest) = match upper.strip_prefix('-') {
        Some(r) => (-1, r),
        None => (1, upper.strip_prefix('+').unwrap_or(&upper)),
    };
    let rest = rest.strip_prefix('P')?;
    let (date, time) = match rest.split_once('T') {
        Some((d, t)) if !t.is_empty() => (d, Some(t)),
        Some(_) => return None,
        None => (rest, None),
    };
    let mut micros: i128 = 0;
    let mut any = false;
    if !date.is_empty() {
        let days = date.strip_suffix('D')?;
        micros += whole(days)? * 86_400_000_000;
        any = true;
    }
    let mut time = time.unwrap_or("");
    for (unit, scale) in [('H', 3_600_000_000i128), ('M', 60_000_000)] {
        if let Some(at) = time.find(unit) {
            micros += whole(&time[..at])? * scale;
            time = &time[at + 1..];
            any = true;
        }
    }
    if !time.is_empty() {
        micros += seconds_micros(time.strip_suffix('S')?)?;
        any = true;
    }
    any.then_some(sign * micros / 1_000)
}

/// A signed whole number of a unit.
fn whole(text: &str) -> Option<i128> {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 18 {
        return None;
    }
    text.parse().ok()
}

/// `n[.fraction]` seconds in microseconds (Java keeps nanoseconds; the
/// ms the delay uses need no more).
fn seconds_micros(text: &str) -> Option<i128> {
    let (int, frac) = text.split_once(['.', ',']).unwrap_or((text, ""));
    let negative = int.starts_with('-');
    let mut micros = whole(int)? * 1_000_000;
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let padded = format!("{frac:0<6}");
    let part: i128 = padded[..6].parse().ok()?;
    micros += if negative { -part } else { part };
    Some(micros)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_java_reads_them() {
        for (text, ms) in [
            ("PT1S", 1_000),
            ("PT1.5S", 1_500),
            ("pt0.25s", 250),
            ("PT2M", 120_000),
            ("PT1H0.001S", 3_600_001),
            ("P1D", 86_400_000),
            ("P1DT1S", 86_401_000),
            ("PT0.0005S", 0),
            ("-PT1S", -1_000),
        ] {
            assert_eq!(parse_duration(text), Some(ms), "{text}");
        }
        for bad in [
            "",
            "P",
            "PT",
            "1S",
            "PTS",
            "PT1",
            "PT1.S5",
            "P1H",
            "PTxS",
            "PT1.1234567890S",
        ] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }
}
