//! Writing replies: a [`Value`] encoded as RESP2 or RESP3 bytes.
//!
//! Encoded by hand rather than through redis-protocol's encoder because its
//! RESP3 map is a `HashMap` (unless a workspace-wide feature changes the
//! type for every crate), and a map's order must be the order Redis writes.
//! The encoding is checked both ways: the differential tests compare these
//! bytes with a real Redis's, and decode them with redis-protocol.

use bytes::{BufMut, BytesMut};

use crate::{Protocol, Value};

/// Appends `value`, encoded for `protocol`, to `out`.
pub fn encode(value: &Value, protocol: Protocol, out: &mut BytesMut) {
    let resp3 = protocol == Protocol::Resp3;
    match value {
        Value::Simple(s) => line(out, b'+', s.as_bytes()),
        Value::Error(e) => line(out, b'-', e.as_bytes()),
        Value::Int(n) => line(out, b':', n.to_string().as_bytes()),
        Value::Bulk(b) => {
            line(out, b'$', b.len().to_string().as_bytes());
            out.put_slice(b);
            out.put_slice(b"\r\n");
        }
        Value::Nil if resp3 => out.put_slice(b"_\r\n"),
        Value::Nil => out.put_slice(b"$-1\r\n"),
        Value::Array(items) => aggregate(out, b'*', items, protocol),
        Value::Push(items) => aggregate(out, if resp3 { b'>' } else { b'*' }, items, protocol),
        Value::Map(pairs) => {
            let count = if resp3 { pairs.len() } else { pairs.len() * 2 };
            line(
                out,
                if resp3 { b'%' } else { b'*' },
                count.to_string().as_bytes(),
            );
            for (k, v) in pairs {
                encode(k, protocol, out);
                encode(v, protocol, out);
            }
        }
    }
}

/// `value` encoded for `protocol`, as a fresh buffer.
pub fn encode_to_vec(value: &Value, protocol: Protocol) -> Vec<u8> {
    let mut out = BytesMut::new();
    encode(value, protocol, &mut out);
    out.to_vec()
}

fn line(out: &mut BytesMut, tag: u8, body: &[u8]) {
    out.put_u8(tag);
    out.put_slice(body);
    out.put_slice(b"\r\n");
}

fn aggregate(out: &mut BytesMut, tag: u8, items: &[Value], protocol: Protocol) {
    line(out, tag, items.len().to_string().as_bytes());
    for item in items {
        encode(item, protocol, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte strings captured from redis-server 7.0.15: HELLO's map, a
    /// subscribe confirmation, and nil, in both protocols. A wrong tag or a
    /// map written as pairs-count on RESP2 would break clients.
    #[test]
    fn encodings_match_redis_bytes() {
        let push = Value::Push(vec![
            Value::bulk("subscribe"),
            Value::bulk("ch1"),
            Value::Int(1),
        ]);
        assert_eq!(
            encode_to_vec(&push, Protocol::Resp2),
            b"*3\r\n$9\r\nsubscribe\r\n$3\r\nch1\r\n:1\r\n"
        );
        assert_eq!(
            encode_to_vec(&push, Protocol::Resp3),
            b">3\r\n$9\r\nsubscribe\r\n$3\r\nch1\r\n:1\r\n"
        );
        let map = Value::Map(vec![(Value::bulk("proto"), Value::Int(2))]);
        assert_eq!(
            encode_to_vec(&map, Protocol::Resp2),
            b"*2\r\n$5\r\nproto\r\n:2\r\n"
        );
        assert_eq!(
            encode_to_vec(&map, Protocol::Resp3),
            b"%1\r\n$5\r\nproto\r\n:2\r\n"
        );
        assert_eq!(encode_to_vec(&Value::Nil, Protocol::Resp2), b"$-1\r\n");
        assert_eq!(encode_to_vec(&Value::Nil, Protocol::Resp3), b"_\r\n");
        assert_eq!(
            encode_to_vec(&Value::bulk(""), Protocol::Resp2),
            b"$0\r\n\r\n"
        );
        assert_eq!(
            encode_to_vec(&Value::error("ERR x"), Protocol::Resp3),
            b"-ERR x\r\n"
        );
    }
}
