//! A client's own clock, as the async wrapper reads it.
//!
//! Redisson reads `System.currentTimeMillis()` (a `tryLock`'s remaining
//! wait is its wait minus the wall time elapsed since the call began) and
//! counts its timers on Netty's wheel, which follows `System.nanoTime`: a
//! timer lasts its duration at the oscillator's rate, whatever steps the
//! wall clock takes. [`LocalTime`] is that pair of clocks. The wrapper's
//! default is true time since the client started; a simulator that sets
//! a client's clock wrong or makes it run fast (`clock-skew`,
//! `clock-drift`) gives it its own.

use tokio::time::Instant;

use crate::Millis;

/// What a client's lock reads as `now`, and when its timers fire.
pub trait LocalTime: Send + Sync {
    /// The wall clock's reading at the true instant `now`: the machine's
    /// `now`.
    fn read(&self, now: Instant) -> Millis;

    /// A wall-clock deadline, read now, as the deadline its timer counts
    /// to on the oscillator (the wall clock without its steps).
    fn timer(&self, deadline: Millis) -> Millis;

    /// The true instant, not before `now`, at which the oscillator reaches
    /// `timer` (from [`LocalTime::timer`]) at its present rate.
    fn due(&self, now: Instant, timer: Millis) -> Instant;
}

/// True time since `epoch`, the client's start: no step, no drift.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SinceStart {
    pub(crate) epoch: Instant,
}

impl LocalTime for SinceStart {
    fn read(&self, now: Instant) -> Millis {
        Millis(now.saturating_duration_since(self.epoch).as_millis() as u64)
    }

    fn timer(&self, deadline: Millis) -> Millis {
        deadline
    }

    fn due(&self, now: Instant, timer: Millis) -> Instant {
        (self.epoch + std::time::Duration::from_millis(timer.0)).max(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default clock is the time since the start, and a timer is due
    /// at its own instant (never before now): what the wrapper did before
    /// clocks could be replaced.
    #[tokio::test(start_paused = true)]
    async fn the_default_clock_is_time_since_the_start() {
        let epoch = Instant::now();
        let clock = SinceStart { epoch };
        tokio::time::advance(std::time::Duration::from_millis(1_500)).await;
        let now = Instant::now();
        assert_eq!(clock.read(now), Millis(1_500));
        assert_eq!(clock.timer(Millis(2_000)), Millis(2_000));
        assert_eq!(
            clock.due(now, Millis(2_000)),
            epoch + std::time::Duration::from_millis(2_000)
        );
        assert_eq!(clock.due(now, Millis(1_000)), now);
    }
}
