//! `latch-ttl-at-least-one` (Redisson 3.24.3, #5392, commit 31980c80d).
//!
//! 3.24.0 sized the unlock latch as `int timeout = (timeout +
//! retryInterval) * retryAttempts` and sent it as the script's `PX`: with
//! `retryAttempts = 0` that is `PX 0`, which Redis refuses (`ERR invalid
//! expire time in 'set' command`) after the script has already deleted
//! the lock and published, so the owner got an error for an unlock that
//! happened. 3.24.3 adds `timeout = Math.max(timeout, 1)` (read at tags
//! redisson-3.24.2 and redisson-3.24.3, `RedissonBaseLock.
//! unlockInnerAsync`). The same line turns an `int` product that wrapped
//! negative into 1 ms, until 3.48 casts after it (#7089,
//! `latch-ttl-long`).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "latch-ttl-at-least-one",
    since: Some(Version::new(3, 24, 3)),
    upstream: "#5392",
    summary: "the unlock latch's TTL is at least 1 ms, so retryAttempts = 0 no longer sends SET ... PX 0, which failed the unlock script after it had released the lock",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::release;
    use crate::{Config, Millis};

    fn config(version: &str, attempts: u32) -> Config {
        Config::builder()
            .release(release(version))
            .retry_attempts(attempts)
            .build()
            .unwrap()
    }

    /// Redisson #5392: with `retryAttempts = 0`, 3.24.2 sends `PX 0`;
    /// 3.24.3 sends `PX 1`.
    #[test]
    fn redisson_5392_zero_attempts_give_a_1_ms_latch_from_3_24_3() {
        assert_eq!(config("3.24.2", 0).latch_ttl(Millis(1_500)), 0);
        assert_eq!(config("3.24.3", 0).latch_ttl(Millis(1_500)), 1);
        assert_eq!(config("3.24.3", 3).latch_ttl(Millis(1_500)), 13_500);
    }

    /// In `int` arithmetic a product past 2^31 wraps: 3.24.2 sends it
    /// negative, 3.24.3 to 3.47.x raise it to 1 ms (no error, a latch
    /// that expires at once).
    #[test]
    fn a_wrapped_int_product_is_raised_to_1_ms() {
        // 4 500 × 7 500 000 = 33 750 000 000 ≡ -609 738 368 (mod 2^32).
        assert_eq!(config("3.24.2", 7_500_000).latch_ttl(Millis(1_500)), -609_738_368);
        assert_eq!(config("3.47.0", 7_500_000).latch_ttl(Millis(1_500)), 1);
    }
}
