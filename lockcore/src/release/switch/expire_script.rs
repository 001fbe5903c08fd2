//! `expire-script` (Redisson 3.17.0, #4147, commit edab5ecd6).
//!
//! `expireAsync(ttl, unit)` runs `RedissonExpirable`'s script (a
//! `PEXPIRE` of each of the object's keys, with an option) instead of a
//! plain `PEXPIRE`. A multi-lock's leased `tryLock` sends it for each
//! lock it took. Not a fix: the same expiry, another command.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "expire-script",
    since: Some(Version::new(3, 17, 0)),
    upstream: "#4147 (commit edab5ecd6)",
    summary: "expireAsync sends RedissonExpirable's script instead of PEXPIRE (a multi-lock's leased tryLock expires each lock it took with it)",
    fixes: false,
};

#[cfg(test)]
mod tests {
    use crate::machine::multi_harness::expire_words;

    #[test]
    fn a_leased_multi_lock_expires_its_locks_with_the_script_from_3_17_0() {
        assert_eq!(expire_words("3.16.7"), ["PEXPIRE", "a", "5000"]);
        let words = expire_words("3.17.0");
        assert_eq!(words[0], "EVAL");
        assert_eq!(words[2..], ["1", "a", "5000", ""]);
    }
}
