//! A hosted client's wall clock: the fast engine's [`LocalClock`], read
//! through lockcore's [`LocalTime`] so `clock-skew` and `clock-drift` move
//! the async client's `now` and timers as they move the machine's on the
//! fast engine.
//!
//! The clock lives in the client's slot and survives its crashes (as on
//! the fast engine); each life reads it through a [`HostedClock`] made in
//! the life's own runtime. The spec's time is tokio's time since the
//! instant the spec's time zero fell on in that runtime, times the
//! engine's scale; the client's readings and durations are the clock's
//! divided by the scale, as its config's are.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use lockcore::{LocalTime, Millis};
use tokio::time::Instant;

use crate::SimTime;
use crate::engines::fast::clock::LocalClock;

/// A client's clock, shared by the engine (which steps it and changes its
/// rate) and each life's lock (which reads it).
pub(crate) type SharedClock = Arc<Mutex<LocalClock>>;

/// One life's view of its client's clock.
pub(crate) struct HostedClock {
    pub(crate) clock: SharedClock,
    /// The instant, in the life's runtime, of the spec's time zero.
    pub(crate) zero: Instant,
    /// The spec runs this many times faster than written.
    pub(crate) scale: u64,
}

impl HostedClock {
    fn clock(&self) -> MutexGuard<'_, LocalClock> {
        self.clock.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The spec's time at `now`.
    fn spec_time(&self, now: Instant) -> SimTime {
        let us = now.saturating_duration_since(self.zero).as_micros();
        SimTime(
            u64::try_from(us)
                .unwrap_or(u64::MAX)
                .saturating_mul(self.scale),
        )
    }
}

impl LocalTime for HostedClock {
    fn read(&self, now: Instant) -> Millis {
        Millis(self.clock().read(self.spec_time(now)).0 / self.scale)
    }

    fn timer(&self, deadline: Millis) -> Millis {
        let spec = Millis(deadline.0.saturating_mul(self.scale));
        Millis(self.clock().oscillator(spec).0 / self.scale)
    }

    fn due(&self, now: Instant, timer: Millis) -> Instant {
        let at = self.spec_time(now);
        let due = self
            .clock()
            .due(at, Millis(timer.0.saturating_mul(self.scale)));
        now + Duration::from_micros(due.0.saturating_sub(at.0) / self.scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::fast::clock::EPOCH_MS;

    /// A hosted client reads its clock as the fast engine's machine does
    /// (a day ahead once a fault moves it, stepped by a skew), and a timer
    /// armed before a step still fires when it would have; a drift makes
    /// a re-armed timer come early.
    #[tokio::test(start_paused = true)]
    async fn reads_and_timers_follow_the_local_clock() {
        let clock: SharedClock = Arc::new(Mutex::new(LocalClock::new(EPOCH_MS)));
        let zero = Instant::now();
        let hosted = HostedClock {
            clock: clock.clone(),
            zero,
            scale: 1,
        };
        tokio::time::advance(Duration::from_millis(1_000)).await;
        let now = Instant::now();
        assert_eq!(hosted.read(now), Millis(EPOCH_MS + 1_000));
        let timer = hosted.timer(Millis(EPOCH_MS + 3_000));
        clock.lock().unwrap().step(SimTime::from_ms(1_000), 15_000);
        assert_eq!(hosted.read(now), Millis(EPOCH_MS + 16_000));
        assert_eq!(hosted.due(now, timer), zero + Duration::from_millis(3_000));
        clock
            .lock()
            .unwrap()
            .drift(SimTime::from_ms(1_000), 1_000_000);
        assert_eq!(hosted.due(now, timer), zero + Duration::from_millis(2_000));
    }

    /// Scaled ten times: the client's milliseconds are the spec's tenths.
    #[tokio::test(start_paused = true)]
    async fn a_scaled_client_reads_tenths() {
        let clock: SharedClock = Arc::new(Mutex::new(LocalClock::new(EPOCH_MS)));
        let zero = Instant::now();
        let hosted = HostedClock {
            clock,
            zero,
            scale: 10,
        };
        tokio::time::advance(Duration::from_millis(100)).await;
        let now = Instant::now();
        assert_eq!(hosted.read(now), Millis((EPOCH_MS + 1_000) / 10));
        let timer = hosted.timer(Millis((EPOCH_MS + 2_000) / 10));
        assert_eq!(hosted.due(now, timer), zero + Duration::from_millis(200));
    }
}
