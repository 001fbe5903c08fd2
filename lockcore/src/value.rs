//! A reply from Redis, as the lock reads it.
//!
//! The client owns its reply type, so the sans-IO core needs neither a
//! server nor a wire codec: a driver converts what its transport decoded
//! (RESP frames, or fake-redis's in-process replies) into this.

use std::borrow::Cow;

use bytes::Bytes;

/// `bytes` as text, invalid UTF-8 replaced (as [`String::from_utf8_lossy`]).
///
/// Names, fields and payloads are ASCII: checked first with
/// [`std::str::from_utf8`], which reads a word at a time, where the lossy
/// scan reads a byte at a time (it was a two-hundredth of an explored
/// seed, reading every holder's field and channel).
pub fn lossy_text(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// A reply as Redis 7 builds it, before it is encoded as RESP2 or RESP3.
///
/// The engine produces `Value`s; the server encodes them for the
/// connection's protocol (RESP2 until `HELLO 3`). Types that only RESP3 can
/// express (`Map`, `Push`) fall back to flat arrays on RESP2 exactly as
/// Redis does, and `Nil` is `$-1` on RESP2 and `_` on RESP3. Nil and integer
/// replies stay distinct everywhere.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// `+OK`: a simple string.
    Simple(String),
    /// `-ERR ...`: the full error text without the leading `-`, for example
    /// `ERR unknown command 'FOO', with args beginning with: `.
    Error(String),
    /// `:42`: an integer.
    Int(i64),
    /// `$3\r\nfoo`: a bulk string.
    Bulk(Bytes),
    /// The nil bulk reply (`$-1` on RESP2, `_` on RESP3).
    Nil,
    /// An array of replies.
    Array(Vec<Value>),
    /// A RESP3 map (a flat array on RESP2), in the order Redis emits it.
    /// Keys are distinct, as in every map Redis writes.
    Map(Vec<(Value, Value)>),
    /// A RESP3 push (pub/sub messages and subscribe confirmations; an array
    /// on RESP2).
    Push(Vec<Value>),
}

impl Value {
    /// `+OK`.
    pub fn ok() -> Self {
        Value::Simple("OK".to_owned())
    }

    /// A bulk string from anything byte-like.
    pub fn bulk(data: impl Into<Bytes>) -> Self {
        Value::Bulk(data.into())
    }

    /// An error reply from its exact wire text (without the leading `-`).
    pub fn error(text: impl Into<String>) -> Self {
        Value::Error(text.into())
    }

    /// Whether this reply is an error.
    pub fn is_error(&self) -> bool {
        matches!(self, Value::Error(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Valid text is borrowed as it is; invalid bytes are replaced exactly
    /// as `String::from_utf8_lossy` replaces them.
    #[test]
    fn lossy_text_reads_as_from_utf8_lossy() {
        let field = b"8743c9c0-0795-4907-87fd-6c719a6b4586:1";
        assert!(matches!(lossy_text(field), Cow::Borrowed(t) if t.as_bytes() == field));
        for bytes in [
            &b"caf\xc3\xa9"[..],
            b"a\xffb",
            b"\xc3",
            b"",
            b"\xf0\x9f\x92\x96!",
        ] {
            assert_eq!(
                lossy_text(bytes),
                String::from_utf8_lossy(bytes),
                "{bytes:?}"
            );
        }
        assert_eq!(lossy_text(b"a\xffb"), "a\u{fffd}b");
    }
}
