//! `clock-jump`: Redis's clock jumps (NTP, a VM resumed, an operator), so
//! keys expire earlier or later than their TTL said in real time.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Invalid, Kind, Strike};

/// Redis's clock moves by `jump_ms` at once (negative: back). Redis
/// expires keys by its own clock, so a jump forward makes every key expire
/// that much earlier in real time, and a jump back later.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClockJump {
    /// When.
    pub at_ms: u64,
    /// By how much, in ms (negative: back).
    #[schemars(range(min = -(crate::MAX_HORIZON_MS as i64), max = crate::MAX_HORIZON_MS as i64))]
    pub jump_ms: i64,
}

impl Kind for ClockJump {
    fn at_ms(&self) -> u64 {
        self.at_ms
    }

    fn end_ms(&self) -> Option<u64> {
        None
    }

    fn check(&self, _horizon_ms: u64) -> Result<(), Invalid> {
        let day = crate::MAX_HORIZON_MS as i64;
        if self.jump_ms == 0 || self.jump_ms.unsigned_abs() > day.unsigned_abs() {
            return Err((
                "jump_ms",
                format!(
                    "must be between -{day} and {day} ms (a day) and not 0, got {}",
                    self.jump_ms
                ),
            ));
        }
        Ok(())
    }

    /// A jump back makes every key live that much longer.
    fn free_delay_ms(&self) -> Option<u64> {
        (self.jump_ms < 0).then(|| self.jump_ms.unsigned_abs())
    }

    fn text(&self) -> String {
        format!("redis clock jumps {:+}ms", self.jump_ms)
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.jump_redis_clock(s, self.jump_ms);
    }
}

pub(crate) fn generate(r: &mut ChaCha8Rng, d: Draw) -> Fault {
    let jump_ms = r.random_range(1_000..=40_000i64);
    Fault::ClockJump(ClockJump {
        at_ms: d.at_ms,
        jump_ms: if r.random_bool(0.7) {
            jump_ms
        } else {
            -jump_ms
        },
    })
}

#[cfg(test)]
mod tests {
    use crate::model::history::RecordKind;
    use crate::run::tests::{client, spec, thread};
    use crate::{Fault, FaultPlan, SimTime, run};

    use super::*;
    use crate::steps;

    fn jumped(jump_ms: i64) -> crate::Run {
        let mut s = spec(vec![client(
            "A",
            vec![thread(
                0,
                vec![
                    crate::Step::Lock(steps::Lock {
                        lease_ms: Some(10_000),
                    }),
                    crate::Step::Work(steps::Work { ms: 30_000 }),
                ],
            )],
        )]);
        s.horizon_ms = 40_000;
        s.faults = FaultPlan(vec![Fault::ClockJump(ClockJump {
            at_ms: 2_000,
            jump_ms,
        })]);
        run(&s).expect("valid")
    }

    /// `jump_ms = i64::MIN` once panicked taking its absolute value; it
    /// is refused like any jump of more than a day.
    #[test]
    fn the_smallest_jump_is_refused() {
        let jump = ClockJump {
            at_ms: 0,
            jump_ms: i64::MIN,
        };
        assert_eq!(jump.check(1).map_err(|e| e.0), Err("jump_ms"));
    }

    fn freed_at(r: &crate::Run) -> SimTime {
        r.history
            .records
            .iter()
            .find(|rec| matches!(&rec.kind, RecordKind::Server { holder: None, .. }))
            .map(|rec| rec.at)
            .expect("the key expired")
    }

    /// A 10 s lease taken at about 0 s: a +5 s jump at 2 s makes it expire
    /// at about 5 s; a -5 s jump at about 15 s. Without a jump, at 10 s.
    #[test]
    fn a_jump_moves_expiry() {
        let fwd = freed_at(&jumped(5_000));
        let back = freed_at(&jumped(-5_000));
        assert!(
            (SimTime::from_ms(4_990)..=SimTime::from_ms(5_020)).contains(&fwd),
            "{fwd}"
        );
        assert!(
            (SimTime::from_ms(14_990)..=SimTime::from_ms(15_020)).contains(&back),
            "{back}"
        );
        assert!(
            jumped(5_000)
                .history
                .to_string()
                .contains("redis clock jumps +5000ms")
        );
    }
}
