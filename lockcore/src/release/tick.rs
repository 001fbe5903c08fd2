//! The tick of Redisson's timer: every timer of a client (renewals, wait
//! bounds, response timeouts, retries) is a Netty `HashedWheelTimer`
//! timeout, which fires at the end of the tick its deadline falls in, so
//! up to one tick late (a deadline on a tick boundary fires a whole tick
//! later). The tick depends on the release and the client's settings:
//!
//! - to 3.47: from `min(retryInterval, timeout)` (`initTimer`, e.g.
//!   `MasterSlaveConnectionManager` in 3.8.0, `ServiceManager` later):
//!   `m % 100 / 2` when `m` is not a multiple of 100, else 50 for
//!   `m == 100`, else 100 (defaults 1 500 / 3 000: 100 ms);
//! - 3.48.0 (`fixed-timer-tick`): always 100 ms;
//! - from 3.49.0 (`retry-delay-timer-tick`): the same rule on
//!   `min(retryDelay.calcDelay(0), timeout)`, where the default `retryDelay`
//!   is `EqualJitterDelay(1 s, 2 s)`: 500 ms plus a random 0–500 ms drawn
//!   once per client, so the tick is 0–49 ms almost always and now and
//!   then 50 or 100 ms.

use super::{Release, Switch, SwitchSet};
use crate::Millis;

/// The switches [`timer_tick`] asks: a client's behaviour depends on them
/// through its tick (see [`crate::LockClient::switches_read`]).
pub const TIMER_TICK_SWITCHES: SwitchSet = SwitchSet::EMPTY
    .with(Switch::RetryDelayTimerTick)
    .with(Switch::FixedTimerTick);

/// The longest tick [`timer_tick`] gives (its rule's largest case): a
/// bound on how late any client's timer fires, for a caller that need not
/// work out each client's tick to compare with it.
pub const MAX_TIMER_TICK: Millis = Millis(100);

/// The timer tick of a client of `release` with `response_timeout` and
/// `retry_interval`. `jitter` (0 to 500, clamped) is the random part of
/// the first retry delay for 3.49+; the caller draws it (lockcore draws no
/// randomness). A rule that gives 0 gives 1 ms, Netty's smallest tick.
pub fn timer_tick(
    release: Release,
    response_timeout: Millis,
    retry_interval: Millis,
    jitter: u64,
) -> Millis {
    let min = if release.has(Switch::RetryDelayTimerTick) {
        (500 + jitter.min(500)).min(response_timeout.0)
    } else if release.has(Switch::FixedTimerTick) {
        return Millis(100);
    } else {
        retry_interval.0.min(response_timeout.0)
    };
    let tick = if min % 100 != 0 {
        min % 100 / 2
    } else if min == 100 {
        50
    } else {
        100
    };
    Millis(tick.max(1))
}

/// When a timeout asked for `at` fires on a wheel of `tick` whose ticks
/// fall on multiples of `tick` on the client's clock: at the end of the
/// tick `at` falls in (`tick` 0: exactly at `at`).
pub(crate) fn on_wheel(at: Millis, tick: Millis) -> Millis {
    if tick.0 == 0 {
        return at;
    }
    Millis((at.0 / tick.0 + 1) * tick.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn release(text: &str) -> Release {
        text.parse().unwrap()
    }

    /// Redisson's rule on its defaults and on the settings it special-cases.
    #[test]
    fn ticks_by_release_and_settings() {
        let tick = |r: &str, timeout, interval, jitter| {
            timer_tick(release(r), Millis(timeout), Millis(interval), jitter).0
        };
        assert_eq!(tick("3.23.4", 3_000, 1_500, 0), 100);
        assert_eq!(tick("3.23.4", 100, 1_500, 0), 50);
        assert_eq!(tick("3.23.4", 3_000, 1_530, 0), 15);
        assert_eq!(tick("3.8.0", 250, 1_500, 0), 25);
        assert_eq!(tick("3.48.0", 250, 1_530, 0), 100);
        assert_eq!(tick("3.49.0", 3_000, 1_500, 234), 17);
        assert_eq!(tick("4.7.0", 3_000, 1_500, 500), 100);
        assert_eq!(
            tick("4.7.0", 3_000, 1_500, 101),
            1,
            "0 becomes Netty's 1 ms"
        );
    }

    /// No release, setting or jitter gives a tick over [`MAX_TIMER_TICK`].
    #[test]
    fn no_tick_exceeds_the_bound() {
        for r in ["3.8.0", "3.23.4", "3.48.0", "3.49.0", "4.7.0"] {
            for timeout in (0..=2_000).step_by(7).chain([3_000, 10_000, u64::MAX]) {
                for interval in [0, 1, 99, 100, 150, 1_500, 1_530, u64::MAX] {
                    for jitter in [0, 1, 49, 250, 500, 501, u64::MAX] {
                        let tick =
                            timer_tick(release(r), Millis(timeout), Millis(interval), jitter);
                        assert!(
                            tick <= MAX_TIMER_TICK,
                            "{r} {timeout} {interval} {jitter}: {tick:?}"
                        );
                    }
                }
            }
        }
    }

    /// A deadline inside a tick fires at its end; one on a boundary a whole
    /// tick later; no tick: on time.
    #[test]
    fn timeouts_fire_at_the_end_of_their_tick() {
        assert_eq!(on_wheel(Millis(1_005), Millis(100)), Millis(1_100));
        assert_eq!(on_wheel(Millis(1_000), Millis(100)), Millis(1_100));
        assert_eq!(on_wheel(Millis(1_099), Millis(100)), Millis(1_100));
        assert_eq!(on_wheel(Millis(1_005), Millis(0)), Millis(1_005));
    }

    /// A client with a 100 ms tick (Redisson to 3.47 with its defaults)
    /// renews 100 ms after each third of the watchdog timeout.
    #[test]
    fn the_machine_sets_its_timers_on_the_wheel() {
        let config = crate::Config::builder()
            .watchdog_timeout(3_000)
            .timer_tick(100)
            .build()
            .unwrap();
        let mut h = crate::machine::harness::Harness::with_config(config);
        h.acquire(crate::ThreadId(1), "l");
        assert_eq!(h.next_timer_at(), Some(Millis(1_100)));
    }
}
