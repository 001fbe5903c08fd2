//! `clock-skew`: a client's wall clock is set ahead or behind for a
//! window (a wrong NTP step, a VM restored from a snapshot), then set
//! right again.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Invalid, Kind, Strike};

/// Client `client`'s wall clock is stepped by `skew_ms` when the window
/// opens and stepped back when it closes. The lock reads its `now` from
/// that clock: a `tryLock` in progress counts the step as time waited
/// (forward: it gives up early, even as the lock frees; back: it waits
/// longer). Timers are durations on the client's oscillator, so a step
/// does not move them (see `clock-drift` for a clock that runs fast).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClockSkew {
    /// The client.
    pub client: String,
    /// When its clock is set wrong.
    pub at_ms: u64,
    /// How long until it is set right.
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub duration_ms: u64,
    /// By how much it is wrong, in ms (negative: behind).
    #[schemars(range(min = -(crate::MAX_HORIZON_MS as i64), max = crate::MAX_HORIZON_MS as i64))]
    pub skew_ms: i64,
}

impl Kind for ClockSkew {
    client_window!();

    fn check(&self, _horizon_ms: u64) -> Result<(), Invalid> {
        let day = crate::MAX_HORIZON_MS as i64;
        if self.skew_ms == 0 || self.skew_ms.unsigned_abs() > day.unsigned_abs() {
            return Err((
                "skew_ms",
                format!(
                    "must be between -{day} and {day} ms (a day) and not 0, got {}",
                    self.skew_ms
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
            "clock skew {} {:+}ms {}ms",
            self.client, self.skew_ms, self.duration_ms
        )
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.step_clock(s, self.skew_ms);
    }

    fn end(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.step_clock(s, -self.skew_ms);
    }
}

pub(crate) fn generate(r: &mut ChaCha8Rng, d: Draw) -> Fault {
    let skew_ms = r.random_range(500..=30_000i64);
    Fault::ClockSkew(ClockSkew {
        client: d.client,
        at_ms: d.at_ms,
        duration_ms: d.duration_ms,
        skew_ms: if r.random_bool(0.5) {
            skew_ms
        } else {
            -skew_ms
        },
    })
}

#[cfg(test)]
mod tests {
    use crate::model::history::{Outcome, RecordKind};
    use crate::run::tests::{client, spec, thread};
    use crate::{FaultPlan, SimTime, Step, run};

    use super::*;
    use crate::steps;

    /// A holds the lock for 10 s; B calls `tryLock(wait = 20 s)` at 1 s.
    /// With B's clock stepped 15 s ahead at 3 s, B counts the step as time
    /// waited: when A's unlock wakes it at about 10 s its wait is spent
    /// (9 s + 15 s > 20 s), so it returns false although the lock is
    /// free. Without the step it acquires at about 10 s.
    fn try_lock_with_skew(skew_ms: Option<i64>) -> crate::Run {
        let mut s = spec(vec![
            client(
                "A",
                vec![thread(
                    0,
                    vec![
                        Step::Lock(steps::Lock { lease_ms: None }),
                        Step::Work(steps::Work { ms: 10_000 }),
                        Step::Unlock(steps::Unlock {}),
                    ],
                )],
            ),
            client(
                "B",
                vec![thread(
                    1_000,
                    vec![
                        Step::TryLock(steps::TryLock {
                            wait_ms: Some(20_000),
                            lease_ms: None,
                        }),
                        Step::Unlock(steps::Unlock {}),
                    ],
                )],
            ),
        ]);
        s.horizon_ms = 30_000;
        if let Some(skew_ms) = skew_ms {
            s.faults = FaultPlan(vec![Fault::ClockSkew(ClockSkew {
                client: "B".into(),
                at_ms: 3_000,
                duration_ms: 20_000,
                skew_ms,
            })]);
        }
        run(&s).expect("valid")
    }

    fn b_try_lock(r: &crate::Run) -> (SimTime, Outcome) {
        r.history
            .records
            .iter()
            .find_map(|rec| match &rec.kind {
                RecordKind::Return { who, outcome, .. } if *who.client == *"B" => {
                    Some((rec.at, outcome.clone()))
                }
                _ => None,
            })
            .expect("B's tryLock returns")
    }

    #[test]
    fn a_step_ahead_spends_a_try_lock_wait() {
        let (at, outcome) = b_try_lock(&try_lock_with_skew(None));
        assert!(matches!(outcome, Outcome::Acquired { .. }), "{outcome:?}");
        assert!(at < SimTime::from_ms(10_100), "{at}");
        let skewed = try_lock_with_skew(Some(15_000));
        let (at, outcome) = b_try_lock(&skewed);
        assert_eq!(outcome, Outcome::NotAcquired, "{}", skewed.history);
        assert!(
            (SimTime::from_ms(10_000)..SimTime::from_ms(10_100)).contains(&at),
            "{at}\n{}",
            skewed.history
        );
        assert!(
            skewed
                .history
                .to_string()
                .contains("clock skew B +15000ms 20000ms begins")
        );
    }

    /// A step back makes the wait longer: B has waited "less", and still
    /// acquires when A unlocks.
    #[test]
    fn a_step_back_does_not_spend_the_wait() {
        let (_, outcome) = b_try_lock(&try_lock_with_skew(Some(-15_000)));
        assert!(matches!(outcome, Outcome::Acquired { .. }), "{outcome:?}");
    }

    /// A skew of 0 tests nothing; more than a day is refused.
    #[test]
    fn skews_are_bounded() {
        let skew = |skew_ms| ClockSkew {
            client: "A".into(),
            at_ms: 0,
            duration_ms: 1,
            skew_ms,
        };
        assert_eq!(skew(0).check(1).map_err(|e| e.0), Err("skew_ms"));
        assert_eq!(skew(i64::MIN).check(1).map_err(|e| e.0), Err("skew_ms"));
        assert_eq!(skew(-86_400_000).check(1), Ok(()));
    }
}
