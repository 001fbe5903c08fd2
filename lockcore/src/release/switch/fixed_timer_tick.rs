//! `fixed-timer-tick` (Redisson 3.48.0, #5325, commit e1154e3ec).
//!
//! The commit that added the `retryDelay` strategies made `initTimer` build
//! the `HashedWheelTimer` with a fixed 100 ms tick instead of one derived
//! from `min(retryInterval, timeout)`; 3.49.0 derived it again
//! (`retry-delay-timer-tick`). See `release::tick`.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "fixed-timer-tick",
    since: Some(Version::new(3, 48, 0)),
    upstream: "#5325",
    summary: "the timer ticks every 100 ms whatever the settings (before: a tick derived from min(retryInterval, timeout)); every timer fires up to a tick late",
    // Not a fix: a change of the timer's tick, which only moves when timers fire.
    fixes: false,
};

// Its behaviour is tested where the tick is computed: `release::tick`.
