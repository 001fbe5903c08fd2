//! Where in a scenario file a problem is: line, column and field path.
//!
//! The toml crate's errors carry a byte span; its key path is private and
//! not shown when a span is. So the path is rebuilt here from the span, by
//! walking the document's spanned tree down to the innermost key or value
//! that contains the error.

use std::fmt;
use std::ops::Range;

use toml::Spanned;

use crate::InputError;
use toml::de::{DeTable, DeValue};

/// Where a problem in a scenario file is: line and column (both from 1) and
/// the field path (`sim.clients[0].threads[0].steps[1].ms`) when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1 (in characters).
    pub column: usize,
    /// The dotted path of the field, when the problem is inside one.
    pub field: Option<String>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)?;
        if let Some(field) = &self.field {
            write!(f, ", field `{field}`")?;
        }
        Ok(())
    }
}

impl Location {
    /// The location of a toml error: its byte `span` in `text`, refined by
    /// its `message`.
    ///
    /// Serde buffers internally tagged enums (a step, a fault), so errors
    /// inside them carry the span of the enclosing array. When the message
    /// names the culprit (`unknown field `msec``, `unknown variant `grab``,
    /// `invalid type: string "10"`), the culprit is looked up inside that
    /// span and reported instead.
    pub fn of_error(text: &str, span: Range<usize>, message: &str) -> Location {
        let Ok(doc) = DeTable::parse(text) else {
            return Location::at(text, span.start, None);
        };
        let path = path_in_table(doc.get_ref(), &span).filter(|p| !p.is_empty());
        let culprit = Culprit::from_message(message)
            .and_then(|c| find_in_table(doc.get_ref(), &span, &c, String::new()));
        match culprit {
            Some((at, path)) => Location::at(text, at, Some(path)),
            None => Location::at(text, span.start, path),
        }
    }

    /// The location of the field at `path` (`sim.faults[2].at_ms`): the
    /// line of its key or value. A field the file leaves to its default
    /// is reported at the nearest enclosing key that is there, still with
    /// the full path.
    pub fn of_path(text: &str, path: &str) -> Location {
        let offset = DeTable::parse(text)
            .ok()
            .and_then(|doc| offset_of_path(doc.get_ref(), path))
            .unwrap_or(0);
        Location::at(text, offset, Some(path.to_owned()))
    }

    fn at(text: &str, offset: usize, field: Option<String>) -> Location {
        let start = offset.min(text.len());
        let before = &text[..floor_char_boundary(text, start)];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        Location {
            line,
            column,
            field,
        }
    }
}

/// The byte offset of the deepest part of `path` present in `table`.
fn offset_of_path(table: &DeTable<'_>, path: &str) -> Option<usize> {
    let mut segments = Vec::new();
    for part in path.split('.') {
        let mut rest = part;
        if let Some(b) = rest.find('[') {
            segments.push(Segment::Key(&rest[..b]));
            rest = &rest[b..];
            while let Some(end) = rest.find(']') {
                segments.push(Segment::Index(rest[1..end].parse().ok()?));
                rest = &rest[end + 1..];
            }
        } else {
            segments.push(Segment::Key(rest));
        }
    }
    let mut best = None;
    let mut here: Option<&Spanned<DeValue<'_>>> = None;
    for seg in segments {
        let next = match (seg, here.map(Spanned::get_ref)) {
            (Segment::Key(k), None) => table.iter().find(|(key, _)| key.get_ref() == k),
            (Segment::Key(k), Some(DeValue::Table(t))) => {
                t.iter().find(|(key, _)| key.get_ref() == k)
            }
            (Segment::Index(i), Some(DeValue::Array(items))) => {
                here = items.get(i);
                best = here.map(|v| v.span().start).or(best);
                if here.is_none() {
                    break;
                }
                continue;
            }
            _ => None,
        };
        let Some((key, value)) = next else { break };
        best = Some(key.span().start);
        here = Some(value);
    }
    best
}

#[derive(Clone, Copy)]
enum Segment<'p> {
    Key(&'p str),
    Index(usize),
}

/// What an error message says is wrong, when it names it.
enum Culprit {
    /// A key of this name.
    Key(String),
    /// A scalar value that reads like this (strings unquoted).
    Value(String),
}

impl Culprit {
    fn from_message(message: &str) -> Option<Culprit> {
        let between = |s: &str, open: char, close: char| -> Option<String> {
            let start = s.find(open)? + open.len_utf8();
            let end = s[start..].find(close)? + start;
            Some(s[start..end].to_owned())
        };
        if let Some(rest) = message.strip_prefix("unknown field ") {
            return between(rest, '`', '`').map(Culprit::Key);
        }
        if let Some(rest) = message.strip_prefix("unknown variant ") {
            return between(rest, '`', '`').map(Culprit::Value);
        }
        for prefix in ["invalid type: ", "invalid value: "] {
            if let Some(rest) = message.strip_prefix(prefix) {
                let rest = rest.split(", expected").next().unwrap_or(rest);
                return between(rest, '"', '"')
                    .or_else(|| between(rest, '`', '`'))
                    .map(Culprit::Value);
            }
        }
        None
    }

    fn matches_value(&self, value: &DeValue<'_>) -> bool {
        let Culprit::Value(want) = self else {
            return false;
        };
        match value {
            DeValue::String(s) => s == want,
            DeValue::Integer(i) => i.as_str() == want,
            DeValue::Float(f) => f.as_str() == want,
            DeValue::Boolean(b) => b.to_string() == *want,
            _ => false,
        }
    }
}

/// The first (in file order) key or value inside `span` that is the culprit:
/// its offset and path.
fn find_in_table(
    table: &DeTable<'_>,
    span: &Range<usize>,
    culprit: &Culprit,
    path: String,
) -> Option<(usize, String)> {
    let mut best: Option<(usize, String)> = None;
    for (key, value) in table.iter() {
        let here = join(&path, key.get_ref());
        let found = if matches!(culprit, Culprit::Key(k) if k == key.get_ref().as_ref())
            && contains(span, &key.span())
        {
            Some((key.span().start, here))
        } else {
            find_in_value(value, span, culprit, here)
        };
        if let Some(f) = found
            && best.as_ref().is_none_or(|b| f.0 < b.0)
        {
            best = Some(f);
        }
    }
    best
}

fn find_in_value(
    value: &Spanned<DeValue<'_>>,
    span: &Range<usize>,
    culprit: &Culprit,
    path: String,
) -> Option<(usize, String)> {
    match value.get_ref() {
        DeValue::Table(t) => find_in_table(t, span, culprit, path),
        DeValue::Array(items) => items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| find_in_value(item, span, culprit, format!("{path}[{i}]")))
            .min_by_key(|f| f.0),
        v => (culprit.matches_value(v) && contains(span, &value.span()))
            .then(|| (value.span().start, path)),
    }
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn contains(outer: &Range<usize>, inner: &Range<usize>) -> bool {
    outer.start <= inner.start && inner.end <= outer.end.max(outer.start + 1)
}

/// The path to the innermost key or value of `table` whose span contains `span`.
fn path_in_table(table: &DeTable<'_>, span: &Range<usize>) -> Option<String> {
    for (key, value) in table.iter() {
        if contains(&key.span(), span) {
            return Some(key.get_ref().to_string());
        }
        if let Some(found) = path_in_value(value, span) {
            let name = key.get_ref().to_string();
            return Some(join(&name, &found));
        }
    }
    None
}

fn path_in_value(value: &Spanned<DeValue<'_>>, span: &Range<usize>) -> Option<String> {
    match value.get_ref() {
        DeValue::Table(t) => {
            path_in_table(t, span).or_else(|| contains(&value.span(), span).then(String::new))
        }
        DeValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if let Some(found) = path_in_value(item, span) {
                    return Some(join(&format!("[{i}]"), &found));
                }
            }
            contains(&value.span(), span).then(String::new)
        }
        _ => contains(&value.span(), span).then(String::new),
    }
}

fn join(head: &str, tail: &str) -> String {
    if tail.is_empty() {
        head.to_owned()
    } else if head.is_empty() {
        tail.to_owned()
    } else if tail.starts_with('[') {
        format!("{head}{tail}")
    } else {
        format!("{head}.{tail}")
    }
}

/// A toml error in `text` (read from `origin`) as an [`InputError`] with
/// its location.
pub(crate) fn malformed(text: &str, origin: &str, e: &toml::de::Error) -> InputError {
    let location = match e.span() {
        Some(span) => Location::of_error(text, span, e.message()),
        None => Location {
            line: 1,
            column: 1,
            field: None,
        },
    };
    InputError::Malformed {
        origin: origin.to_owned(),
        location,
        message: e.message().trim().to_owned(),
    }
}
