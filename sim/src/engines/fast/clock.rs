//! A client's own clock: what its lock machine reads as `now`.
//!
//! The engine keeps true (virtual) time; each client process reads its
//! wall clock through a [`LocalClock`], which `clock-skew` steps and
//! `clock-drift` makes run fast or slow. Everything the machine measures
//! is in local time: a `tryLock`'s remaining wait is its wait minus the
//! local time elapsed since the call began (Redisson subtracts
//! `System.currentTimeMillis()` readings). A timer is a local duration
//! (Netty's timer wheel counts with the same oscillator, so it runs at the
//! clock's rate but ignores steps): its deadline converts back to the true
//! instant at which the local clock has advanced by that duration.
//!
//! A client without a clock fault reads true time exactly, so its history
//! is the same as before this module existed.

use lockcore::{Millis, TimerId};

use crate::engines::fast::world::{Ev, World};
use crate::{SimSpec, SimTime};

/// One in a million: rates are in parts per million of true speed.
const PPM: u128 = 1_000_000;

/// The slowest a clock may run: a tenth of true speed (validation keeps
/// drifts above it; overlapping drifts are clamped here).
const MIN_RATE_PPM: i64 = 100_000;

/// Where the clock of a client with a clock fault starts: a day, so that a
/// step back (at most a day) never takes it below zero.
pub(crate) const EPOCH_MS: u64 = crate::MAX_HORIZON_MS;

/// A piecewise-linear map from true time to a client's local time.
#[derive(Debug, Clone)]
pub(crate) struct LocalClock {
    /// The true instant of the last change.
    anchor: SimTime,
    /// The local reading at that instant, in µs.
    anchor_local_us: u64,
    /// The sum of the drifts in force, in ppm (0: true speed).
    drift_ppm: i64,
    /// The sum of the steps taken, in µs: the wall reading minus this is
    /// the oscillator's, which timers count on.
    stepped_us: i64,
    /// Bumped whenever the rate changes: timers armed under an older rate
    /// are re-armed, and their old events ignored.
    pub(crate) version: u32,
}

impl LocalClock {
    /// A clock reading `epoch_ms` at true time zero, at true speed.
    pub(crate) fn new(epoch_ms: u64) -> LocalClock {
        LocalClock {
            anchor: SimTime::ZERO,
            anchor_local_us: epoch_ms.saturating_mul(1_000),
            drift_ppm: 0,
            stepped_us: 0,
            version: 0,
        }
    }

    fn rate_ppm(&self) -> u128 {
        (1_000_000 + self.drift_ppm).max(MIN_RATE_PPM) as u128
    }

    /// The local reading at true instant `now`, in µs.
    fn local_us(&self, now: SimTime) -> u64 {
        let elapsed = now.0.saturating_sub(self.anchor.0);
        // Most clocks never drift: their reading needs no 128-bit
        // division (a library call, read on every event of a client).
        let local = match self.drift_ppm {
            0 => elapsed,
            _ => {
                let local = u128::from(elapsed) * self.rate_ppm() / PPM;
                u64::try_from(local).unwrap_or(u64::MAX)
            }
        };
        self.anchor_local_us.saturating_add(local)
    }

    /// What the client's clock reads at `now`, in whole ms.
    pub(crate) fn read(&self, now: SimTime) -> Millis {
        Millis(self.local_us(now) / 1_000)
    }

    /// A wall-clock deadline read now, as a deadline on the oscillator
    /// (the wall clock without its steps): Netty's timer wheel counts
    /// `System.nanoTime`, which runs at the clock's rate but ignores
    /// steps, so a timer armed before a step fires when it would have.
    pub(crate) fn oscillator(&self, deadline: Millis) -> Millis {
        let us = i128::from(deadline.0) * 1_000 - i128::from(self.stepped_us);
        Millis(u64::try_from(us.max(0) / 1_000).unwrap_or(u64::MAX))
    }

    /// The true instant, not before `now`, at which the oscillator reads
    /// `deadline` (see [`LocalClock::oscillator`]) if its rate stays as it
    /// is.
    pub(crate) fn due(&self, now: SimTime, deadline: Millis) -> SimTime {
        let wall = i128::from(self.local_us(now)) - i128::from(self.stepped_us);
        let local = u64::try_from(wall.max(0)).unwrap_or(u64::MAX);
        let target = deadline.0.saturating_mul(1_000);
        if target <= local {
            return now;
        }
        let ahead = target - local;
        if self.drift_ppm == 0 {
            return now.plus_us(ahead);
        }
        // Round up: the timer must not fire before the clock reads its deadline.
        let true_us = (u128::from(ahead) * PPM).div_ceil(self.rate_ppm());
        now.plus_us(u64::try_from(true_us).unwrap_or(u64::MAX))
    }

    /// The clock is set forward (`ms > 0`) or back at `now`.
    pub(crate) fn step(&mut self, now: SimTime, ms: i64) {
        self.reanchor(now);
        let us = ms.saturating_mul(1_000);
        self.anchor_local_us = self.anchor_local_us.saturating_add_signed(us);
        self.stepped_us = self.stepped_us.saturating_add(us);
    }

    /// From `now` on, the clock runs `ppm` parts per million faster
    /// (negative: slower) than it did.
    pub(crate) fn drift(&mut self, now: SimTime, ppm: i64) {
        self.reanchor(now);
        self.drift_ppm = self.drift_ppm.saturating_add(ppm);
        self.version = self.version.wrapping_add(1);
    }

    fn reanchor(&mut self, now: SimTime) {
        self.anchor_local_us = self.local_us(now);
        self.anchor = self.anchor.max(now);
    }
}

/// Where client `name`'s clock starts: true time, unless a fault of the
/// plan moves it (then a day ahead, so a step back stays above zero).
pub(crate) fn epoch_of(spec: &SimSpec, name: &str) -> u64 {
    let moved = spec
        .faults
        .0
        .iter()
        .any(|f| f.client() == Some(name) && f.kind().moves_clock());
    if moved { EPOCH_MS } else { 0 }
}

impl World<'_> {
    /// What client `c`'s clock reads now: the `now` its machine is given.
    pub(crate) fn local_now(&self, c: usize) -> lockcore::Millis {
        self.procs[c].clock.read(self.now)
    }

    /// Re-arms client `c`'s timers after its clock's rate changed: each
    /// fires when the oscillator reaches its deadline at the new rate.
    pub(crate) fn rearm_timers(&mut self, c: usize) {
        let p = &self.procs[c];
        let (life, version) = (p.life, p.clock.version);
        let due: Vec<(TimerId, SimTime)> = p
            .timers
            .iter()
            .map(|(&timer, &deadline)| (timer, p.clock.due(self.now, deadline)))
            .collect();
        for (timer, at) in due {
            let ev = Ev::Timer {
                c: c as u32,
                life,
                timer,
                version,
                late: false,
            };
            self.queue.push(at, ev);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> SimTime {
        SimTime::from_ms(n)
    }

    /// Without a fault the clock is true time and a deadline is its own
    /// instant: clients without clock faults keep their histories.
    #[test]
    fn an_undisturbed_clock_is_true_time() {
        let c = LocalClock::new(0);
        assert_eq!(c.read(ms(12_345)), Millis(12_345));
        assert_eq!(c.read(SimTime(1_999)), Millis(1));
        assert_eq!(c.due(ms(5), Millis(10_000)), ms(10_000));
        assert_eq!(c.due(ms(50), Millis(10)), ms(50));
    }

    /// A step moves the reading, not the rate: a timer armed after a step
    /// still lasts its duration in true time.
    #[test]
    fn a_step_moves_the_reading() {
        let mut c = LocalClock::new(EPOCH_MS);
        c.step(ms(1_000), 15_000);
        assert_eq!(c.read(ms(2_000)), Millis(EPOCH_MS + 17_000));
        let now = c.read(ms(2_000));
        let timer = c.oscillator(Millis(now.0 + 1_500));
        assert_eq!(c.due(ms(2_000), timer), ms(3_500));
        c.step(ms(3_000), -20_000);
        assert_eq!(c.read(ms(3_000)), Millis(EPOCH_MS - 2_000));
        // Armed before the step, the timer still fires when it would have
        // (the bug of explored seed 1406 under fenced: a renewal armed
        // under a skew ahead came 8.8 s late once a drift re-armed it).
        assert_eq!(c.due(ms(3_000), timer), ms(3_500));
    }

    /// A clock running at twice true speed reads 2 s per true second and
    /// reaches a 10 s deadline in 5 true seconds; at a third of true speed
    /// (-666 667 ppm), a 1 s deadline takes about 3 s.
    #[test]
    fn a_drift_changes_the_rate() {
        let mut fast = LocalClock::new(0);
        fast.drift(ms(0), 1_000_000);
        assert_eq!(fast.read(ms(3_000)), Millis(6_000));
        assert_eq!(fast.due(ms(0), Millis(10_000)), ms(5_000));
        let mut slow = LocalClock::new(0);
        slow.drift(ms(1_000), -666_667);
        assert_eq!(slow.read(ms(1_000)), Millis(1_000));
        let due = slow.due(ms(1_000), Millis(2_000));
        assert!((ms(3_999)..=ms(4_001)).contains(&due), "{due}");
        assert_eq!(slow.version, 1);
        // The drift ends: true speed again, the lost time stays lost
        // (3 s at 333 333 ppm read 999.999 ms).
        slow.drift(ms(4_000), 666_667);
        assert_eq!(slow.read(ms(5_000)), Millis(2_999));
    }

    /// Overlapping drifts that would stop the clock are held at a tenth
    /// of true speed, and no reading overflows.
    #[test]
    fn rates_and_readings_are_bounded() {
        let mut c = LocalClock::new(0);
        c.drift(ms(0), -900_000);
        c.drift(ms(0), -900_000);
        assert_eq!(c.read(ms(10_000)), Millis(1_000));
        let mut far = LocalClock::new(u64::MAX / 1_000);
        far.drift(ms(0), 9_000_000);
        assert_eq!(far.read(SimTime(u64::MAX)), Millis(u64::MAX / 1_000));
        assert_eq!(far.due(ms(1), Millis(u64::MAX)), ms(1));
    }
}
