//! The cluster slot Redisson computes for a key name
//! (`ClusterConnectionManager.calcSlot(String)`, 4.7.0 lines 950-965):
//! CRC16 (XMODEM) of the key, or of the text between its first `{` and
//! its first `}` when that is not empty, modulo 16,384.
//!
//! Redisson's string form looks for the first `}` of the whole name, not
//! the first after the `{` as Redis's `keyHashSlot` does: for a name
//! such as `a}b{c}` the two disagree. Lock names follow the client, so
//! the quirk is kept.

/// How many slots a Redis Cluster has (`MAX_SLOT`).
const SLOTS: u32 = 16_384;

/// The slot Redisson's cluster manager computes for `name`.
pub fn calc_slot(name: &str) -> u16 {
    let mut key = name.as_bytes();
    if let (Some(start), Some(end)) = (name.find('{'), name.find('}'))
        && start + 1 < end
    {
        key = &name.as_bytes()[start + 1..end];
    }
    // The table-free form of CRC16-CCITT (polynomial 0x1021, initial 0).
    let mut crc: u32 = 0;
    for &byte in key {
        crc ^= u32::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 == 0 {
                crc << 1
            } else {
                (crc << 1) ^ 0x1021
            };
            crc &= 0xFFFF;
        }
    }
    (crc % SLOTS) as u16
}

#[cfg(test)]
mod tests {
    use super::calc_slot;

    /// The slot of every name whose tag rules agree is Redis's own
    /// (`CLUSTER KEYSLOT`, as fake-redis computes it and its differential
    /// test proves); the lock's key and its channel share one.
    #[test]
    fn slots_are_redis_s_where_the_rules_agree() {
        for name in [
            "foo",
            "bar",
            "redisson:lock",
            "{user1000}.following",
            "x{}y",
            "a{b",
        ] {
            assert_eq!(
                calc_slot(name),
                fake_redis::key_slot(name.as_bytes()),
                "{name}"
            );
        }
        assert_eq!(calc_slot("foo"), 12182);
        assert_eq!(
            calc_slot("redisson_lock__channel:{redisson:lock}"),
            calc_slot("redisson:lock")
        );
    }

    /// Redisson's quirk: the first `}` of the whole name.
    #[test]
    fn the_first_closing_brace_of_the_name_counts() {
        // Redis hashes "c" (the `}` after the `{`); Redisson finds the
        // `}` before the `{` and hashes the whole name.
        assert_eq!(fake_redis::key_slot(b"a}b{c}"), fake_redis::key_slot(b"c"));
        assert_ne!(calc_slot("a}b{c}"), calc_slot("c"));
    }
}
