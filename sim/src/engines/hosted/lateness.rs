//! Lateness windows on a hosted engine, each delay drawn from its fault's
//! own random stream as the fast engine draws it. CPU starvation: while a
//! `starve` window is open for a client, each of its timers (lockcore's,
//! through [`lockcore::RedissonClient::set_lag`]) and each of its
//! threads' wake-ups (a script's start, the end of its work or sleep)
//! runs late. Interleaving: while an `interleave` window is open, each of
//! its lock's interleaving points waits (the same hook).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rand_chacha::ChaCha8Rng;

use crate::model::rng::{self, Stream};

#[derive(Debug, Default)]
struct Windows {
    /// Open windows by fault index: their delay range, and the µs of one
    /// unit of it.
    open: BTreeMap<usize, (u64, u64, u64)>,
    /// Each fault's stream, made when its window first opens.
    rngs: BTreeMap<usize, ChaCha8Rng>,
}

/// One client's open windows of one kind. Cloning shares them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lateness {
    windows: Arc<Mutex<Windows>>,
    seed: u64,
    /// The spec runs this many times faster than written.
    scale: u64,
}

impl Lateness {
    pub(crate) fn new(seed: u64, scale: u64) -> Lateness {
        Lateness {
            windows: Arc::default(),
            seed,
            scale: scale.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Windows> {
        self.windows.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Fault `i`'s window opens: delays of `min..=max` units of `unit_us`
    /// µs each (the fast engine draws starvation in µs, interleaving in
    /// ms).
    pub(crate) fn open(&self, i: usize, (min, max): (u64, u64), unit_us: u64) {
        let mut w = self.lock();
        let seed = self.seed;
        w.rngs
            .entry(i)
            .or_insert_with(|| rng::stream(seed, Stream::Fault(i)));
        w.open.insert(i, (min, max, unit_us));
    }

    /// Whether a window is open.
    pub(crate) fn is_open(&self) -> bool {
        !self.lock().open.is_empty()
    }

    /// Fault `i`'s window closes.
    pub(crate) fn close(&self, i: usize) {
        self.lock().open.remove(&i);
    }

    /// How late what falls due now runs: a draw from the first open
    /// window (in plan order), nothing when none is open.
    pub(crate) fn lag(&self) -> Duration {
        let mut w = self.lock();
        let Some((&i, &(min, max, unit_us))) = w.open.iter().next() else {
            return Duration::ZERO;
        };
        let units = w
            .rngs
            .get_mut(&i)
            .map_or(min, |r| rng::between(r, min, max));
        Duration::from_micros(units.saturating_mul(unit_us) / self.scale)
    }

    /// Sleeps out [`Lateness::lag`].
    pub(crate) async fn late(&self) {
        let lag = self.lag();
        if !lag.is_zero() {
            tokio::time::sleep(lag).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nothing is late outside a window; inside, each delay is in the
    /// window's range and the draws follow the seed.
    #[test]
    fn delays_are_drawn_in_the_window() {
        let s = Lateness::new(7, 1);
        assert_eq!(s.lag(), Duration::ZERO);
        s.open(2, (100_000, 200_000), 1);
        let draws: Vec<Duration> = (0..20).map(|_| s.lag()).collect();
        assert!(
            draws.iter().all(|d| (100..=200).contains(&d.as_millis())),
            "{draws:?}"
        );
        s.close(2);
        assert_eq!(s.lag(), Duration::ZERO);
        let again = Lateness::new(7, 1);
        again.open(2, (100_000, 200_000), 1);
        assert_eq!(draws, (0..20).map(|_| again.lag()).collect::<Vec<_>>());
        let scaled = Lateness::new(7, 10);
        scaled.open(2, (100_000, 200_000), 1);
        assert_eq!(scaled.lag().as_micros(), draws[0].as_micros() / 10);
    }
}
