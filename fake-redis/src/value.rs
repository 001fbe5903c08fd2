//! A reply value, independent of the wire protocol.

use bytes::Bytes;

/// A reply as Redis 7 builds it, before it is encoded as RESP2 or RESP3.
///
/// The engine produces `Value`s; the server encodes them for the
/// connection's protocol (RESP2 until `HELLO 3`). Types that only RESP3 can
/// express (`Map`, `Push`, `Double`, `Pairs`) fall back to flat arrays and
/// bulk strings on RESP2 exactly as Redis does, and `Nil` is `$-1` on RESP2 and `_` on RESP3. Nil and integer
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
    /// The nil array reply (`*-1` on RESP2, `_` on RESP3): an `EXEC` whose
    /// watched keys changed, `LPOP key count` on a missing key.
    NilArray,
    /// An array of replies.
    Array(Vec<Value>),
    /// A RESP3 map (a flat array on RESP2), in the order Redis emits it.
    /// Keys are distinct, as in every map Redis writes.
    Map(Vec<(Value, Value)>),
    /// A double (a sorted-set score): `,1.5` on RESP3, the bulk string
    /// `1.5` on RESP2 and to a script, in Redis 7.0's `%.17g` form
    /// ([`Double::text`]).
    Double(Double),
    /// Member and score pairs (`ZRANGE ... WITHSCORES`, `ZPOPMIN key
    /// count`): an array of two-element arrays on RESP3, one flat array on
    /// RESP2 and to a script, as Redis 7.0 writes them.
    Pairs(Vec<(Value, Value)>),
    /// A RESP3 push (pub/sub messages and subscribe confirmations; an array
    /// on RESP2).
    Push(Vec<Value>),
    /// A reply written in `protocol` whatever the connection speaks when
    /// it is sent: inside `EXEC`, a reply Redis wrote before a queued
    /// `HELLO` switched the protocol (Redis writes each queued command's
    /// reply as it runs, so `MULTI; CLIENT GETNAME; HELLO 3; EXEC` answers
    /// the name's nil as RESP2's `$-1`).
    Written(crate::Protocol, Box<Value>),
}

/// A double reply. Equal when its bits are: Redis never replies NaN, so
/// this is an equivalence, and [`Value`] stays `Eq`.
#[derive(Debug, Clone, Copy)]
pub struct Double(pub f64);

impl PartialEq for Double {
    fn eq(&self, other: &Double) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for Double {}

impl Double {
    /// The text Redis 7.0 writes for it: `inf`, `-inf`, or C's `%.17g`
    /// (`0.1` is `0.10000000000000001`).
    pub fn text(self) -> String {
        crate::number::format_double(self.0)
    }
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
