//! Redis Cluster's key slots: CRC16 (XMODEM, as Redis's `crc16.c`) of the
//! key, or of its hash tag, modulo 16,384.
//!
//! A hash tag is what lies between the key's first `{` and the next `}`
//! after it; an empty tag (`{}`) or a `{` without a `}` hashes the whole
//! key (Redis 7.0 `cluster.c`, `keyHashSlot`).

/// How many slots a Redis Cluster has.
pub const SLOTS: u16 = 16_384;

/// CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, no
/// reflection, no final XOR; Redis's `crc16("123456789") == 0x31C3`.
pub fn crc16(bytes: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in bytes {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The slot `key` hashes to (`CLUSTER KEYSLOT`).
pub fn key_slot(key: &[u8]) -> u16 {
    crc16(hash_tag(key).unwrap_or(key)) & (SLOTS - 1)
}

/// The bytes between the first `{` and the next `}`, when not empty.
fn hash_tag(key: &[u8]) -> Option<&[u8]> {
    let open = key.iter().position(|&b| b == b'{')?;
    let rest = &key[open + 1..];
    let close = rest.iter().position(|&b| b == b'}')?;
    (close > 0).then(|| &rest[..close])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The check value of CRC16/XMODEM, which Redis's `crc16.c` quotes
    /// ("Output for "123456789" : 31C3") and its test suite asserts.
    #[test]
    fn crc16_matches_redis_test_vector() {
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(crc16(b""), 0);
    }

    /// Slots from the Redis Cluster specification and `redis-cli`'s
    /// `CLUSTER KEYSLOT` on redis-server 7.0.15, and the hash-tag rules
    /// of `keyHashSlot`: first `{`, next `}`, empty tag hashes the whole
    /// key.
    #[test]
    fn key_slots_and_hash_tags_follow_redis() {
        assert_eq!(key_slot(b"123456789"), 0x31C3 & 0x3FFF);
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"bar"), 5061);
        assert_eq!(key_slot(b"hello"), 866);
        assert_eq!(key_slot(b"a"), 15495);
        assert_eq!(key_slot(b""), 0);
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        assert_eq!(key_slot(b"{user1000}.followers"), key_slot(b"user1000"));
        // Only the first `{` counts, and the first `}` after it.
        assert_eq!(key_slot(b"foo{bar}{zap}"), key_slot(b"bar"));
        assert_eq!(key_slot(b"foo{{bar}}zap"), key_slot(b"{bar"));
        assert_eq!(key_slot(b"foo{bar}{zap}"), 5061);
        // An empty tag, or no closing brace: the whole key.
        assert_eq!(key_slot(b"foo{}{bar}"), crc16(b"foo{}{bar}") & 0x3FFF);
        assert_eq!(key_slot(b"foo{bar"), crc16(b"foo{bar") & 0x3FFF);
        assert_eq!(key_slot(b"foo}bar{"), crc16(b"foo}bar{") & 0x3FFF);
        for key in [&b"x"[..], b"lock", b"{lock}:x", b"\xff\x00"] {
            assert!(key_slot(key) < SLOTS);
        }
    }
}
