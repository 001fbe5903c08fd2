//! How long a client waits before it sends a timed-out command again.
//!
//! Redisson to 3.47 waited `retryInterval` (1 500 ms) every time. 3.48.0
//! (commit e1154e3ec, #5325) made the pause a strategy, `retryDelay`,
//! whose default is `EqualJitterDelay(1 s, 2 s)`: before retry `n` (from
//! 0) it takes `d = min(1 s × 2^n, 2 s)` and waits half of it plus a
//! random part of up to the other half. Setting `retryInterval` still
//! gives a constant delay. The same strategy sizes the 3.24+ unlock
//! latch's TTL: `(timeout + retryDelay.calcDelay(retryAttempts)) ×
//! retryAttempts`, random too from 3.48.

use serde::{Deserialize, Serialize};

use crate::Millis;

/// The pause before a timed-out command goes out again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum RetryDelay {
    /// `retryInterval` every time (`ConstantDelay`).
    #[default]
    Constant,
    /// `EqualJitterDelay(base, max)`.
    EqualJitter {
        /// The delay of the first retry before the jitter halves it.
        base: Millis,
        /// The cap of the exponential growth.
        max: Millis,
    },
}

impl RetryDelay {
    /// Redisson's default from 3.48.0.
    pub const REDISSON_3_48: RetryDelay = RetryDelay::EqualJitter {
        base: Millis(1_000),
        max: Millis(2_000),
    };

    /// The shortest and longest pause before retry `attempt` (from 0),
    /// with `interval` the constant delay.
    pub fn range(self, attempt: u32, interval: Millis) -> (Millis, Millis) {
        match self {
            RetryDelay::Constant => (interval, interval),
            RetryDelay::EqualJitter { base, max } => {
                let grown = if attempt >= 63 || base.0 >= max.0 {
                    max.0
                } else {
                    base.0.saturating_mul(1 << attempt).min(max.0)
                };
                let half = grown / 2;
                (Millis(half), Millis(half * 2))
            }
        }
    }

    /// The same strategy with every duration divided by `scale` (at least
    /// 1 ms), for an engine that runs in scaled real time.
    pub fn scaled(self, scale: u64) -> RetryDelay {
        match self {
            RetryDelay::Constant => RetryDelay::Constant,
            RetryDelay::EqualJitter { base, max } => RetryDelay::EqualJitter {
                base: Millis((base.0 / scale.max(1)).max(1)),
                max: Millis((max.0 / scale.max(1)).max(1)),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `EqualJitterDelay(1 s, 2 s).calcDelay(n)` (Redisson 4.7.0): 500 to
    /// 1 000 ms, then 1 000 to 2 000 ms for every later retry.
    #[test]
    fn equal_jitter_grows_to_its_cap() {
        let d = RetryDelay::REDISSON_3_48;
        let i = Millis(1_500);
        assert_eq!(d.range(0, i), (Millis(500), Millis(1_000)));
        assert_eq!(d.range(1, i), (Millis(1_000), Millis(2_000)));
        assert_eq!(d.range(4, i), (Millis(1_000), Millis(2_000)));
        assert_eq!(d.range(70, i), (Millis(1_000), Millis(2_000)));
        assert_eq!(RetryDelay::Constant.range(3, i), (i, i));
    }
}
