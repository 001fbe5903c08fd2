//! `RSpinLock`'s back-off between attempts (Redisson's `LockOptions`).
//!
//! A spin lock never subscribes: a waiter sleeps and attempts again. How
//! long it sleeps is the lock object's `BackOff` (`getSpinLock(name,
//! backOff)`), and every acquire call takes a fresh policy from it
//! (`backOff.create()`), so one call's sleeps do not lengthen the next's.
//! Read at tags redisson-3.15.0 and redisson-4.7.0 (`LockOptions.java`,
//! unchanged between them apart from its licence header).

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::Millis;

/// `LockOptions.BackOff` with Redisson's defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackOff {
    /// `ExponentialBackOff` (`LockOptions.defaults()`): the first sleep
    /// 1 ms, each next one `min(128, sleep * 2 + random[0, fails))`, and
    /// 128 ms for ever once it gets there.
    #[default]
    Exponential,
    /// `ConstantBackOff`: 64 ms every time.
    Constant,
}

/// `ExponentialBackOff`'s `initialDelay`.
const INITIAL_DELAY_MS: u64 = 1;
/// `ExponentialBackOff`'s `maxDelay`.
const MAX_DELAY_MS: u64 = 128;
/// `ExponentialBackOff`'s `multiplier`.
const MULTIPLIER: u64 = 2;
/// `ConstantBackOff`'s `delay`.
const CONSTANT_DELAY_MS: u64 = 64;

/// One acquire call's `BackOffPolicy`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BackOffPolicy {
    kind: BackOff,
    /// `ExponentialBackOffPolicy.nextSleep`.
    next_sleep: u64,
    /// `ExponentialBackOffPolicy.fails`: the sleeps handed out so far.
    fails: u64,
}

impl BackOffPolicy {
    /// `backOff.create()`.
    pub(crate) fn new(kind: BackOff) -> Self {
        BackOffPolicy {
            kind,
            next_sleep: INITIAL_DELAY_MS,
            fails: 0,
        }
    }

    /// `getNextSleepPeriod()`: the sleep before the next attempt. The
    /// exponential policy draws `ThreadLocalRandom.nextInt(++fails)` from
    /// `rng` (the client's spin stream), and stops drawing once it has
    /// reached its maximum, as Redisson's returns early there.
    pub(crate) fn next_sleep(&mut self, rng: &mut ChaCha8Rng) -> Millis {
        match self.kind {
            BackOff::Constant => Millis(CONSTANT_DELAY_MS),
            BackOff::Exponential => {
                if self.next_sleep == MAX_DELAY_MS {
                    return Millis(MAX_DELAY_MS);
                }
                let result = self.next_sleep;
                self.fails += 1;
                let jitter = rng.random_range(0..self.fails);
                self.next_sleep = (self.next_sleep * MULTIPLIER + jitter).min(MAX_DELAY_MS);
                Millis(result)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    fn sleeps(kind: BackOff, seed: u64, n: usize) -> Vec<u64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut policy = BackOffPolicy::new(kind);
        (0..n).map(|_| policy.next_sleep(&mut rng).0).collect()
    }

    /// The exponential policy starts at 1 ms, at least doubles (plus less
    /// than the count of sleeps so far), and stays at 128 ms once there;
    /// the first two sleeps draw nothing random (`nextInt(1)` is 0).
    #[test]
    fn exponential_doubles_with_jitter_up_to_128() {
        for seed in 0..200 {
            let s = sleeps(BackOff::Exponential, seed, 12);
            assert_eq!(&s[..2], [1, 2], "seed {seed}: {s:?}");
            for (i, w) in s.windows(2).enumerate() {
                let fails = i as u64 + 1;
                assert!(
                    w[1] == MAX_DELAY_MS || (w[1] >= w[0] * 2 && w[1] < w[0] * 2 + fails),
                    "seed {seed}: {s:?}"
                );
            }
            assert_eq!(s[11], MAX_DELAY_MS, "seed {seed}: {s:?}");
        }
        // The jitter is drawn: some seeds' third sleep is 4, others' 5.
        let thirds: std::collections::BTreeSet<u64> = (0..50)
            .map(|seed| sleeps(BackOff::Exponential, seed, 3)[2])
            .collect();
        assert_eq!(thirds.into_iter().collect::<Vec<_>>(), [4, 5]);
    }

    /// The constant policy sleeps 64 ms every time.
    #[test]
    fn constant_sleeps_64() {
        assert_eq!(sleeps(BackOff::Constant, 1, 4), [64, 64, 64, 64]);
    }

    /// The scenario files' words.
    #[test]
    fn names_round_trip() {
        assert_eq!(
            serde_json::to_string(&BackOff::Constant).unwrap(),
            "\"constant\""
        );
        let parsed: BackOff = serde_json::from_str("\"exponential\"").unwrap();
        assert_eq!(parsed, BackOff::Exponential);
    }
}
