//! `clock-drift`: a client's clock runs fast or slow for a window (a bad
//! oscillator, a VM whose clock source stalls), and its timers with it.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Invalid, Kind, Strike};

/// The slowest drift: the clock at a tenth of true speed.
const MIN_DRIFT_PPM: i64 = -900_000;
/// The fastest: ten times true speed.
const MAX_DRIFT_PPM: i64 = 9_000_000;

/// While the window lasts, client `client`'s clock gains `drift_ppm`
/// microseconds per true second (negative: loses). Everything its lock
/// measures runs at that rate: a fast clock ends `tryLock` waits and
/// fires the watchdog's renewals early in true time; a slow one makes
/// renewals late, while Redis expires the key by its own clock (a slow
/// enough clock renews after the key is gone). The time gained or lost
/// stays when the window ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClockDrift {
    /// The client.
    pub client: String,
    /// When the drift starts.
    pub at_ms: u64,
    /// How long it lasts.
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub duration_ms: u64,
    /// Parts per million of true speed gained (negative: lost):
    /// 1,000,000 is twice as fast, -500,000 half as fast.
    #[schemars(range(min = MIN_DRIFT_PPM, max = MAX_DRIFT_PPM))]
    pub drift_ppm: i64,
}

impl Kind for ClockDrift {
    client_window!();

    fn check(&self, _horizon_ms: u64) -> Result<(), Invalid> {
        if self.drift_ppm == 0 || !(MIN_DRIFT_PPM..=MAX_DRIFT_PPM).contains(&self.drift_ppm) {
            return Err((
                "drift_ppm",
                format!(
                    "must be between {MIN_DRIFT_PPM} (a tenth of true speed) and {MAX_DRIFT_PPM} (ten times) and not 0, got {}",
                    self.drift_ppm
                ),
            ));
        }
        Ok(())
    }

    fn moves_clock(&self) -> bool {
        true
    }

    fn text(&self) -> String {
        format!(
            "clock drift {} {:+}ppm {}ms",
            self.client, self.drift_ppm, self.duration_ms
        )
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.drift_clock(s, self.drift_ppm);
    }

    fn end(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.drift_clock(s, -self.drift_ppm);
    }
}

pub(crate) fn generate(r: &mut ChaCha8Rng, d: Draw) -> Fault {
    let drift_ppm = if r.random_bool(0.5) {
        r.random_range(50_000..=2_000_000)
    } else {
        -r.random_range(50_000..=700_000)
    };
    Fault::ClockDrift(ClockDrift {
        client: d.client,
        at_ms: d.at_ms,
        duration_ms: d.duration_ms,
        drift_ppm,
    })
}

#[cfg(test)]
mod tests {
    use crate::model::history::RecordKind;
    use crate::run::tests::{client, never_unlock, renewals, spec, thread};
    use crate::{FaultPlan, Invariant, SimTime, Step, run};

    use super::*;
    use crate::steps;

    fn drifting(drift_ppm: i64, at_ms: u64, steps: Vec<Step>) -> crate::Run {
        let mut s = spec(vec![client("A", vec![thread(0, steps)])]);
        s.horizon_ms = 25_000;
        s.faults = FaultPlan(vec![Fault::ClockDrift(ClockDrift {
            client: "A".into(),
            at_ms,
            duration_ms: 20_000,
            drift_ppm,
        })]);
        run(&s).expect("valid")
    }

    /// The watchdog renews every 10 s of the client's clock (and up to its
    /// timer's 100 ms tick later): at twice true speed every 5 true
    /// seconds, at half speed every 20.
    #[test]
    fn renewals_follow_the_clock_rate() {
        let fast = renewals(&drifting(1_000_000, 0, never_unlock()).history);
        assert!(
            (SimTime::from_ms(5_000)..SimTime::from_ms(5_070)).contains(&fast[0]),
            "{fast:?}"
        );
        let slow = drifting(-500_000, 0, never_unlock());
        let sent = renewals(&slow.history);
        assert!(
            (SimTime::from_ms(20_000)..SimTime::from_ms(20_220)).contains(&sent[0]),
            "{sent:?}\n{}",
            slow.history
        );
    }

    /// A drift starting after the renewal timer was armed re-arms it: the
    /// timer armed at about 0 s for 10 s (up to a 100 ms tick more),
    /// slowed to half speed at 4 s (4 s of it gone, 6 s left at half
    /// speed), fires at about 16 s (to 16.2 s), not at 10 s.
    #[test]
    fn a_drift_re_arms_pending_timers() {
        let r = drifting(-500_000, 4_000, never_unlock());
        let sent = renewals(&r.history);
        assert!(
            (SimTime::from_ms(15_990)..SimTime::from_ms(16_220)).contains(&sent[0]),
            "{sent:?}\n{}",
            r.history
        );
        assert_eq!(
            r.history
                .records
                .iter()
                .filter(|rec| matches!(rec.kind, RecordKind::RenewSent { .. }))
                .count(),
            sent.len()
        );
    }

    /// Slow enough (a quarter of true speed), the watchdog's renewal at
    /// 10 s of its clock comes 40 true seconds in, after Redis expired the
    /// 30 s key: B takes the lock while A still believes it holds it.
    #[test]
    fn a_slow_clock_loses_the_lock() {
        let mut s = spec(vec![
            client("A", vec![thread(0, never_unlock())]),
            client(
                "B",
                vec![thread(
                    1_000,
                    vec![
                        Step::Lock(steps::Lock { lease_ms: None }),
                        Step::Unlock(steps::Unlock {}),
                    ],
                )],
            ),
        ]);
        s.horizon_ms = 45_000;
        s.faults = FaultPlan(vec![Fault::ClockDrift(ClockDrift {
            client: "A".into(),
            at_ms: 0,
            duration_ms: 44_000,
            drift_ppm: -750_000,
        })]);
        let r = run(&s).expect("valid");
        assert!(
            r.violations
                .iter()
                .any(|v| v.invariant == Invariant::MutualExclusion),
            "{}",
            r.history
        );
        assert!(r.history.to_string().contains("clock drift A -750000ppm"));
    }

    /// Drifts that stop the clock or run it more than ten times fast are
    /// refused, and so is 0.
    #[test]
    fn drifts_are_bounded() {
        let d = |drift_ppm| ClockDrift {
            client: "A".into(),
            at_ms: 0,
            duration_ms: 1,
            drift_ppm,
        };
        for bad in [0, -1_000_000, 9_000_001] {
            assert_eq!(d(bad).check(1).map_err(|e| e.0), Err("drift_ppm"), "{bad}");
        }
        assert_eq!(d(-900_000).check(1), Ok(()));
    }
}
