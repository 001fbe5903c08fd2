//! `latch-ttl-long` (Redisson 4.4.0, #6939 and #7089, commits efe3ea776
//! and b47f8d090).
//!
//! From 3.48.0 (commit e1154e3ec) `RedissonBaseLock.unlockInnerAsync`
//! computes the unlock latch's TTL as `long timeout = (timeout +
//! retryDelay.calcDelay(retryAttempts)) * retryAttempts`, raises it to at
//! least 1, and passes `(int) timeout` to the script. A product past
//! 2^31 (a large `retryAttempts`: #7089's config had three million) wraps
//! in the cast, often negative, and with 4.x's jittered default delay the
//! sign changes from unlock to unlock. The script's last call, `SET latch
//! ... PX <negative>`, then fails with `ERR invalid expire time in 'set'
//! command` after its `DEL` and `PUBLISH` ran: Redis released the lock
//! and the owner gets a `RedisException` for it. (3.24.3 to 3.47.x
//! computed in `int` and raised a wrapped product to 1 ms, so they send
//! no negative TTL: #7089's "works in 3.28.0".)
//!
//! 4.4.0 passes the `long` on (efe3ea776, "long type should be used as
//! timeouts in lock objects #6939") and computes it with `addExact` /
//! `multiplyExact`, capping an overflow at `Long.MAX_VALUE` (b47f8d090,
//! PR #7099 from #7089). Read at tags redisson-4.3.1 and redisson-4.4.0.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "latch-ttl-long",
    since: Some(Version::new(4, 4, 0)),
    upstream: "#7089",
    summary: "the unlock latch's TTL goes to the script as a long, no longer cast to int: a large retryAttempts wrapped it negative, and SET ... PX failed the unlock script after it had released the lock",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, Config, Millis, RetryDelay, ThreadId, Value};

    fn config(version: &str) -> Config {
        Config::builder()
            .release(release(version))
            .response_timeout(3_000)
            .retry_attempts(7_500_000)
            .retry_interval(1_500)
            .retry_delay(RetryDelay::Constant)
            .build()
            .unwrap()
    }

    /// Redisson #7089: 3.48.0 to 4.3.x cast the product to `int`, which
    /// wraps it negative; 3.47.x wrapped in `int` and raised it to 1; 4.4.0
    /// keeps it whole.
    #[test]
    fn redisson_7089_the_latch_ttl_wraps_negative_until_4_4_0() {
        let pause = Millis(1_500);
        assert_eq!(config("3.47.0").latch_ttl(pause), 1);
        assert_eq!(config("3.48.0").latch_ttl(pause), -609_738_368);
        assert_eq!(config("4.3.1").latch_ttl(pause), -609_738_368);
        assert_eq!(config("4.4.0").latch_ttl(pause), 33_750_000_000);
    }

    /// An overflow of the `long` itself is capped (PR #7099); a product
    /// a Java long holds is exact.
    #[test]
    fn from_4_4_0_an_overflow_is_capped_at_long_max() {
        let mut c = config("4.4.0");
        c.retry_attempts = i32::MAX as u32;
        assert_eq!(c.latch_ttl(Millis(u64::MAX)), i64::MAX);
        assert_eq!(c.latch_ttl(Millis(1_500)), 4_500 * i64::from(i32::MAX));
    }

    /// The unlock under 4.3.1 sends the wrapped TTL as the script's
    /// `ARGV[5]`; Redis's refusal reaches the owner as an error.
    #[test]
    fn under_4_3_1_the_unlock_sends_a_negative_px_and_fails() {
        let mut h = Harness::with_config(config("4.3.1"));
        h.acquire(ThreadId(1), "l");
        h.call(ThreadId(1), "l", Call::Unlock).unwrap();
        let (id, words) = h.expect_send();
        // EVALSHA (the script cache, 3.46+): ARGV[5] follows the sha, the
        // key count, three keys and four arguments.
        assert_eq!(words[0], "EVALSHA");
        assert_eq!(words[10], "-609738368");
        let refused = "ERR invalid expire time in 'set' command script: x, on @user_script:1.";
        h.reply(id, Value::error(refused));
        let (_, result) = h.until_return(ThreadId(1));
        let error = result.unwrap_err().to_string();
        assert!(error.contains("invalid expire time"), "{error}");
    }
}
