//! Writing replies: a [`Value`] as a redis-protocol frame, encoded by
//! redis-protocol as RESP2 or RESP3 bytes.
//!
//! This file only chooses frame types, as Redis does for each protocol:
//! nil is a null bulk (`$-1`) on RESP2 and a null (`_`) on RESP3, a push
//! is a plain array on RESP2, and a map is a flat key, value, key, ...
//! array on RESP2. The bytes are redis-protocol's
//! (`resp2::encode::extend_encode`, `resp3::encode::complete::extend_encode`);
//! a one-line or bulk reply is written directly, as the same bytes
//! (`encode_scalar`).
//! A RESP3 map keeps Redis's order because the workspace turns on
//! redis-protocol's `index-map` feature (its map is then an `IndexMap`).
//! The differential tests compare these bytes with a real Redis's.

use bytes::BytesMut;
use redis_protocol::resp2::{self, types::BytesFrame as Resp2Frame};
use redis_protocol::resp3::{
    self,
    types::{BytesFrame as Resp3Frame, FrameMap},
};

use crate::{Protocol, Value};

/// Whether `value` holds something redis-protocol cannot write as Redis
/// does: a null array on RESP2 (it has none), or a double (it formats
/// doubles its own way; Redis 7.0 writes `%.17g`).
fn needs_own_headers(value: &Value, protocol: Protocol) -> bool {
    match value {
        Value::NilArray => protocol == Protocol::Resp2,
        Value::Double(_) | Value::Written(..) => true,
        Value::Array(items) | Value::Push(items) => {
            items.iter().any(|v| needs_own_headers(v, protocol))
        }
        Value::Map(pairs) | Value::Pairs(pairs) => pairs
            .iter()
            .any(|(k, v)| needs_own_headers(k, protocol) || needs_own_headers(v, protocol)),
        _ => false,
    }
}

/// Appends `value`, encoded for `protocol`, to `out`.
pub fn encode(value: &Value, protocol: Protocol, out: &mut BytesMut) {
    if let Value::Written(written, inner) = value {
        return encode(inner, *written, out);
    }
    if encode_scalar(value, protocol, out) {
        return;
    }
    // redis-protocol's RESP2 has no null array (`*-1`: a failed EXEC,
    // `LPOP missing 2`), and it writes doubles its own way. Only for a
    // value holding either are its aggregate headers written here, each
    // element still by `encode` (so by redis-protocol where it can).
    if needs_own_headers(value, protocol) {
        encode_aggregate(value, protocol, out);
        return;
    }
    let start = out.len();
    if let Err(e) = write(value, protocol, out) {
        // Unreachable for the frame types built here (redis-protocol fails
        // only on NaN doubles, HELLO frames and stream chunks); kept so a
        // future one gives the client an error, not a torn reply.
        tracing::error!(error = %e, "reply not encodable");
        out.truncate(start);
        let fallback = Value::error(format!("ERR reply could not be encoded: {}", e.details()));
        if write(&fallback, protocol, out).is_err() {
            out.truncate(start);
        }
    }
}

/// Writes an aggregate's header, then its elements through [`encode`]:
/// the same headers redis-protocol writes, plus RESP2's null array.
fn encode_aggregate(value: &Value, protocol: Protocol, out: &mut BytesMut) {
    let resp3 = protocol == Protocol::Resp3;
    let header = |out: &mut BytesMut, kind: u8, len: usize| {
        out.extend_from_slice(&[kind]);
        out.extend_from_slice(itoa::Buffer::new().format(len).as_bytes());
        out.extend_from_slice(b"\r\n");
    };
    match value {
        Value::Array(items) | Value::Push(items) => {
            let push = matches!(value, Value::Push(_)) && resp3;
            header(out, if push { b'>' } else { b'*' }, items.len());
            for item in items {
                encode(item, protocol, out);
            }
        }
        Value::Map(pairs) | Value::Pairs(pairs) => {
            let nested = resp3 && matches!(value, Value::Pairs(_));
            match (resp3, nested) {
                (true, false) => header(out, b'%', pairs.len()),
                (true, true) => header(out, b'*', pairs.len()),
                (false, _) => header(out, b'*', pairs.len() * 2),
            }
            for (k, v) in pairs {
                if nested {
                    header(out, b'*', 2);
                }
                encode(k, protocol, out);
                encode(v, protocol, out);
            }
        }
        Value::NilArray if !resp3 => out.extend_from_slice(b"*-1\r\n"),
        // Scalars are written by `encode_scalar`.
        _ => {}
    }
}

/// Writes a one-line or bulk reply (all but arrays and maps) straight
/// into `out`; whether it was one. These are nearly every reply, and
/// building a redis-protocol frame for each (copying a status's `String`
/// to do so) was 5% of the server's time under `redis-benchmark -P 16`.
/// The bytes are redis-protocol's, byte for byte: its encoder copies
/// the text between the type byte and `\r\n`, as here (pinned by
/// `scalars_match_redis_protocol`).
fn encode_scalar(value: &Value, protocol: Protocol, out: &mut BytesMut) -> bool {
    let line = |out: &mut BytesMut, kind: u8, text: &[u8]| {
        out.reserve(text.len() + 3);
        out.extend_from_slice(&[kind]);
        out.extend_from_slice(text);
        out.extend_from_slice(b"\r\n");
    };
    match value {
        Value::Simple(s) => line(out, b'+', s.as_bytes()),
        Value::Error(e) => line(out, b'-', e.as_bytes()),
        Value::Int(n) => line(out, b':', itoa::Buffer::new().format(*n).as_bytes()),
        Value::Bulk(b) => {
            line(out, b'$', itoa::Buffer::new().format(b.len()).as_bytes());
            out.extend_from_slice(b);
            out.extend_from_slice(b"\r\n");
        }
        Value::Double(d) if protocol == Protocol::Resp2 => {
            let text = d.text();
            line(out, b'$', itoa::Buffer::new().format(text.len()).as_bytes());
            out.extend_from_slice(text.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        Value::Double(d) => line(out, b',', d.text().as_bytes()),
        Value::Nil if protocol == Protocol::Resp2 => out.extend_from_slice(b"$-1\r\n"),
        Value::Nil => out.extend_from_slice(b"_\r\n"),
        _ => return false,
    }
    true
}

/// `value` encoded for `protocol`, as a fresh buffer.
pub fn encode_to_vec(value: &Value, protocol: Protocol) -> Vec<u8> {
    let mut out = BytesMut::new();
    encode(value, protocol, &mut out);
    out.to_vec()
}

fn write(
    value: &Value,
    protocol: Protocol,
    out: &mut BytesMut,
) -> Result<usize, redis_protocol::error::RedisProtocolError> {
    match protocol {
        Protocol::Resp2 => resp2::encode::extend_encode(out, &resp2_frame(value), false),
        Protocol::Resp3 => resp3::encode::complete::extend_encode(out, &resp3_frame(value), false),
    }
}

fn resp2_frame(value: &Value) -> Resp2Frame {
    match value {
        Value::Simple(s) => Resp2Frame::SimpleString(s.clone().into()),
        Value::Error(e) => Resp2Frame::Error(e.clone().into()),
        Value::Int(n) => Resp2Frame::Integer(*n),
        Value::Bulk(b) => Resp2Frame::BulkString(b.clone()),
        Value::Nil => Resp2Frame::Null,
        // Written by `encode` itself (see there); never reached.
        Value::NilArray => Resp2Frame::Null,
        Value::Array(items) | Value::Push(items) => {
            Resp2Frame::Array(items.iter().map(resp2_frame).collect())
        }
        // Written by `encode` itself (redis-protocol's double text is not
        // Redis's); never reached.
        Value::Double(d) => Resp2Frame::BulkString(d.text().into()),
        Value::Map(pairs) | Value::Pairs(pairs) => Resp2Frame::Array(
            pairs
                .iter()
                .flat_map(|(k, v)| [resp2_frame(k), resp2_frame(v)])
                .collect(),
        ),
        // Written by `encode` itself, in its own protocol; never reached.
        Value::Written(_, inner) => resp2_frame(inner),
    }
}

fn resp3_frame(value: &Value) -> Resp3Frame {
    match value {
        Value::Simple(s) => Resp3Frame::SimpleString {
            data: s.clone().into(),
            attributes: None,
        },
        Value::Error(e) => Resp3Frame::SimpleError {
            data: e.clone().into(),
            attributes: None,
        },
        Value::Int(n) => Resp3Frame::Number {
            data: *n,
            attributes: None,
        },
        Value::Bulk(b) => Resp3Frame::BlobString {
            data: b.clone(),
            attributes: None,
        },
        Value::Nil | Value::NilArray => Resp3Frame::Null,
        Value::Array(items) => Resp3Frame::Array {
            data: items.iter().map(resp3_frame).collect(),
            attributes: None,
        },
        Value::Push(items) => Resp3Frame::Push {
            data: items.iter().map(resp3_frame).collect(),
            attributes: None,
        },
        // Written by `encode` itself; never reached.
        Value::Double(d) => Resp3Frame::Double {
            data: d.0,
            attributes: None,
        },
        Value::Pairs(pairs) => Resp3Frame::Array {
            data: pairs
                .iter()
                .map(|(k, v)| Resp3Frame::Array {
                    data: vec![resp3_frame(k), resp3_frame(v)],
                    attributes: None,
                })
                .collect(),
            attributes: None,
        },
        Value::Map(pairs) => Resp3Frame::Map {
            // Keys are distinct in every map Redis writes (HELLO, HGETALL),
            // so collecting into the map drops nothing.
            data: pairs
                .iter()
                .map(|(k, v)| (resp3_frame(k), resp3_frame(v)))
                .collect::<FrameMap<_, _>>(),
            attributes: None,
        },
        // Written by `encode` itself, in its own protocol; never reached.
        Value::Written(_, inner) => resp3_frame(inner),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_encodes(value: &Value, resp2: &[u8], resp3: &[u8]) {
        let show = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        assert_eq!(show(&encode_to_vec(value, Protocol::Resp2)), show(resp2));
        assert_eq!(show(&encode_to_vec(value, Protocol::Resp3)), show(resp3));
    }

    /// Byte strings captured from redis-server 7.0.15 (HELLO's map, a
    /// subscribe confirmation, nil, an empty bulk, an error) and an array
    /// mixing nil, an integer and a status, in both protocols. A wrong tag,
    /// a nil written as RESP3's `_` on RESP2, or a map written as
    /// pairs-count on RESP2 would break clients.
    #[test]
    fn encodings_match_redis_bytes() {
        let push = Value::Push(vec![
            Value::bulk("subscribe"),
            Value::bulk("ch1"),
            Value::Int(1),
        ]);
        assert_encodes(
            &push,
            b"*3\r\n$9\r\nsubscribe\r\n$3\r\nch1\r\n:1\r\n",
            b">3\r\n$9\r\nsubscribe\r\n$3\r\nch1\r\n:1\r\n",
        );
        let map = Value::Map(vec![(Value::bulk("proto"), Value::Int(2))]);
        assert_encodes(
            &map,
            b"*2\r\n$5\r\nproto\r\n:2\r\n",
            b"%1\r\n$5\r\nproto\r\n:2\r\n",
        );
        assert_encodes(&Value::Nil, b"$-1\r\n", b"_\r\n");
        assert_encodes(&Value::NilArray, b"*-1\r\n", b"_\r\n");
        assert_encodes(
            &Value::Array(vec![Value::NilArray, Value::Int(1)]),
            b"*2\r\n*-1\r\n:1\r\n",
            b"*2\r\n_\r\n:1\r\n",
        );
        assert_encodes(&Value::bulk(""), b"$0\r\n\r\n", b"$0\r\n\r\n");
        assert_encodes(&Value::error("ERR x"), b"-ERR x\r\n", b"-ERR x\r\n");
        let nested = Value::Array(vec![Value::Nil, Value::Int(-7), Value::ok()]);
        assert_encodes(
            &nested,
            b"*3\r\n$-1\r\n:-7\r\n+OK\r\n",
            b"*3\r\n_\r\n:-7\r\n+OK\r\n",
        );
    }

    /// Scores and member-score pairs as redis-server 7.0.15 wrote
    /// `ZRANGE z 0 -1 WITHSCORES`, `ZSCORE` and `ZMSCORE` in both protocols:
    /// `%.17g` text, `inf`, nested pairs on RESP3 only, and a double next
    /// to a nil.
    #[test]
    fn doubles_and_pairs_match_redis_bytes() {
        assert_encodes(
            &Value::Double(crate::Double(0.1)),
            b"$19\r\n0.10000000000000001\r\n",
            b",0.10000000000000001\r\n",
        );
        assert_encodes(
            &Value::Double(crate::Double(f64::NEG_INFINITY)),
            b"$4\r\n-inf\r\n",
            b",-inf\r\n",
        );
        let pairs = Value::Pairs(vec![
            (Value::bulk("a"), Value::Double(crate::Double(1.0))),
            (
                Value::bulk("b"),
                Value::Double(crate::Double(f64::INFINITY)),
            ),
        ]);
        assert_encodes(
            &pairs,
            b"*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$3\r\ninf\r\n",
            b"*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,inf\r\n",
        );
        assert_encodes(
            &Value::Array(vec![Value::Nil, Value::Double(crate::Double(1.5))]),
            b"*2\r\n$-1\r\n$3\r\n1.5\r\n",
            b"*2\r\n_\r\n,1.5\r\n",
        );
        assert_encodes(&Value::Pairs(vec![]), b"*0\r\n", b"*0\r\n");
    }

    /// The direct writer of one-line and bulk replies gives redis-protocol's
    /// bytes in both protocols, at the extremes of integers and lengths.
    #[test]
    fn scalars_match_redis_protocol() {
        let values = [
            Value::ok(),
            Value::Simple(String::new()),
            Value::error("ERR x"),
            Value::error("NOAUTH Authentication required."),
            Value::Int(0),
            Value::Int(-1),
            Value::Int(10),
            Value::Int(i64::MAX),
            Value::Int(i64::MIN),
            Value::bulk(""),
            Value::bulk("a\r\nb\0"),
            Value::bulk(vec![b'x'; 12345]),
            Value::Nil,
        ];
        for protocol in [Protocol::Resp2, Protocol::Resp3] {
            for value in &values {
                let mut direct = BytesMut::new();
                assert!(encode_scalar(value, protocol, &mut direct));
                let mut framed = BytesMut::new();
                write(value, protocol, &mut framed).expect("encodable");
                assert_eq!(direct, framed, "{value:?} {protocol:?}");
            }
        }
    }

    /// A RESP3 map keeps the order it was built in, as HGETALL of a small
    /// hash needs (Redis answers in insertion order): 16 fields from `f15`
    /// down to `f00`. Without redis-protocol's `index-map` feature its map
    /// is a randomly seeded `HashMap`, which keeps this order with odds of
    /// 1 in 16!.
    #[test]
    fn resp3_map_keeps_insertion_order() {
        let keys: Vec<String> = (0..16).rev().map(|i| format!("f{i:02}")).collect();
        let map = Value::Map(
            keys.iter()
                .map(|k| (Value::bulk(k.clone()), Value::bulk("v")))
                .collect(),
        );
        let mut want = b"%16\r\n".to_vec();
        for k in &keys {
            want.extend(format!("$3\r\n{k}\r\n$1\r\nv\r\n").as_bytes());
        }
        assert_eq!(encode_to_vec(&map, Protocol::Resp3), want);
    }
}
