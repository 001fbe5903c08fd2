//! `multi-timeout-unlocks` (Redisson 3.8.2 and 2.13.2, #1606, commit
//! 3de7f75b0).
//!
//! A multi-lock's constituent whose `tryLock` timed out on the wire
//! (`RedisResponseTimeoutException`, and to 3.9.x
//! `RedisConnectionClosedException`) is unlocked before the loop goes on:
//! the acquire script may have run. Before, the loop counted it as not
//! taken and left it, so a lock the thread was told it did not get stayed
//! held by it, renewed by the watchdog for as long as the client lived.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "multi-timeout-unlocks",
    since: Some(Version::new(3, 8, 2)),
    upstream: "#1606 (commit 3de7f75b0)",
    summary: "a multi-lock unlocks a constituent whose tryLock timed out (before: its acquire, if it ran, stayed held)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::multi_harness::unlocks_after_timeout;

    #[test]
    fn a_timed_out_constituent_is_unlocked_from_3_8_2() {
        assert!(!unlocks_after_timeout("3.8.1"));
        assert!(unlocks_after_timeout("3.8.2"));
        assert!(unlocks_after_timeout("4.7.0"));
    }
}
