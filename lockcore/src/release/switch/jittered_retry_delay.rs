//! `jittered-retry-delay` (Redisson 3.48.0, #5325, commit e1154e3ec).
//!
//! The commit that added the `retryDelay` and `reconnectionDelay`
//! strategies changed the defaults (`BaseConfig`): `retryAttempts` 3 to 4,
//! and the pause before a resend from `retryInterval` (1 500 ms) to
//! `EqualJitterDelay(1 s, 2 s)`, random per retry (see
//! [`RetryDelay`](crate::RetryDelay)). The 3.24+ unlock latch's TTL is
//! sized with the same strategy, so it is random too. lockcore draws the
//! jitter from the config's `jitter_seed`. Not a fix: it moves when
//! resends go out and how long they go on.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "jittered-retry-delay",
    since: Some(Version::new(3, 48, 0)),
    upstream: "#5325",
    summary: "the defaults become 4 retry attempts and an EqualJitterDelay(1 s, 2 s) before each resend (before: 3 attempts, retryInterval 1 500 ms); the unlock latch's TTL, (timeout + that delay) x attempts, is random too",
    fixes: false,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Config, Millis, Output, Purpose, RetryDelay, ThreadId};

    fn config(version: &str, seed: u64) -> Config {
        Config::builder()
            .release(release(version))
            .watchdog_timeout(3_000)
            .response_timeout(100)
            .jitter_seed(seed)
            .build()
            .unwrap()
    }

    #[test]
    fn from_3_48_0_the_defaults_are_four_jittered_retries() {
        let old = config("3.47.0", 1);
        assert_eq!((old.retry_attempts, old.retry_delay), (3, RetryDelay::Constant));
        let new = config("3.48.0", 1);
        assert_eq!(
            (new.retry_attempts, new.retry_delay),
            (4, RetryDelay::REDISSON_3_48)
        );
        // `setRetryInterval` still gives a constant delay.
        let set = Config::builder()
            .release(release("4.7.0"))
            .retry_interval(700)
            .build()
            .unwrap();
        assert_eq!((set.retry_attempts, set.retry_delay), (4, RetryDelay::Constant));
    }

    /// The pauses between a renewal's timeouts (100 ms) and its resends,
    /// until it fails.
    fn resend_pauses(version: &str, seed: u64) -> Vec<u64> {
        let config = config(version, seed);
        let sends_of_one_renewal = config.retry_attempts as usize + 1;
        let mut h = Harness::with_config(config);
        h.acquire(ThreadId(1), "l");
        let mut sends = Vec::new();
        while sends.len() < sends_of_one_renewal {
            while let Some(output) = h.next() {
                if let Output::Send {
                    purpose: Purpose::Renew,
                    ..
                } = output
                {
                    sends.push(h.now.0);
                }
            }
            match h.next_timer_at() {
                Some(at) => h.advance_to(at),
                None => break,
            }
        }
        sends.windows(2).map(|w| w[1] - w[0] - 100).collect()
    }

    #[test]
    fn resends_wait_a_jittered_pause_drawn_from_the_seed() {
        assert_eq!(resend_pauses("3.47.0", 1), [1_500, 1_500, 1_500]);
        let pauses = resend_pauses("3.48.0", 1);
        assert_eq!(pauses.len(), 4, "{pauses:?}");
        assert!((500..=1_000).contains(&pauses[0]), "{pauses:?}");
        assert!(
            pauses[1..].iter().all(|p| (1_000..=2_000).contains(p)),
            "{pauses:?}"
        );
        assert_eq!(resend_pauses("3.48.0", 1), pauses, "same seed, same pauses");
        assert_ne!(resend_pauses("3.48.0", 2), pauses);
    }

    /// The latch TTL: `(timeout + calcDelay(4)) × 4`, 100 ms timeout:
    /// 4 400 to 8 400 ms from 3.48.0; `(100 + 1 500) × 3` before.
    #[test]
    fn the_latch_ttl_is_drawn_from_the_delay() {
        assert_eq!(config("3.47.0", 1).latch_ttl_range(), (Millis(4_800), Millis(4_800)));
        assert_eq!(config("3.48.0", 1).latch_ttl_range(), (Millis(4_400), Millis(8_400)));
        assert_eq!(config("3.48.0", 1).command_budget(), Millis(5 * 100 + 1_000 + 3 * 2_000));
    }
}
