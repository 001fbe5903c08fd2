//! `retry-delay-timer-tick` (Redisson 3.49.0, commit 2381022b9).
//!
//! "Fixed - minTimeout value calculation for HashedWheelTimer object":
//! the tick is derived again, now from `min(retryDelay.calcDelay(0),
//! timeout)`. The default `retryDelay`, `EqualJitterDelay(1 s, 2 s)`, is
//! random, so each client gets its own tick: mostly 0–49 ms (Netty makes
//! 0 its 1 ms minimum), now and then 50 or 100 ms. See `release::tick`.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "retry-delay-timer-tick",
    since: Some(Version::new(3, 49, 0)),
    upstream: "commit 2381022b9",
    summary: "the timer's tick is derived from min(retryDelay's first delay, timeout); with the default jittered retryDelay it is random per client, mostly under 50 ms",
    // Not a fix: a change of the timer's tick, which only moves when timers fire.
    fixes: false,
};

// Its behaviour is tested where the tick is computed: `release::tick`.
