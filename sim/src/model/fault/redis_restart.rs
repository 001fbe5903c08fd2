//! `redis-restart`: Redis restarts without persistence.

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Kind, Strike};

/// Redis restarts without persistence: every key and connection is lost;
/// commands in flight get no reply and subscriptions are gone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedisRestart {
    /// When.
    pub at_ms: u64,
}

impl Kind for RedisRestart {
    fn at_ms(&self) -> u64 {
        self.at_ms
    }

    fn end_ms(&self) -> Option<u64> {
        None
    }

    fn text(&self) -> String {
        "redis restart".to_owned()
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.restart_redis(s, None);
    }
}

pub(crate) fn generate(_r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::RedisRestart(RedisRestart { at_ms: d.at_ms })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::history::RecordKind;
    use crate::run::tests::{client, spec, thread};
    use crate::steps;
    use crate::{FaultPlan, Invariant, Step, run};

    /// Fenced seed 57571: Redis restarted while A's link lost what it
    /// carried (then a partition, now a drop-rate of 1: a partition holds
    /// the close until TCP retransmits it), so A never saw its connections
    /// close. A learns it at its next connection ping, 30 s later, and
    /// resubscribes then (before, it never did, and its waiter slept
    /// through every unlock); the wake-up it missed meanwhile is the
    /// faults' doing.
    #[test]
    fn a_close_the_link_lost_is_learned_at_the_next_ping() {
        let holder = |start, ms| {
            let steps = vec![
                Step::Lock(steps::Lock { lease_ms: None }),
                Step::Work(steps::Work { ms }),
                Step::Unlock(steps::Unlock {}),
            ];
            vec![thread(start, steps)]
        };
        let waiter = vec![thread(
            1_000,
            vec![
                Step::Lock(steps::Lock { lease_ms: None }),
                Step::Unlock(steps::Unlock {}),
            ],
        )];
        // B holds until the restart; C takes the lock after it and keeps
        // A waiting past A's next ping.
        let mut s = spec(vec![
            client("A", waiter),
            client("B", holder(0, 2_500)),
            client("C", holder(5_000, 50_000)),
        ]);
        s.horizon_ms = 60_000;
        s.faults = FaultPlan(vec![
            Fault::DropRate(crate::faults::DropRate {
                client: "A".into(),
                at_ms: 2_000,
                duration_ms: 2_000,
                probability: 1.0,
            }),
            Fault::RedisRestart(RedisRestart { at_ms: 3_000 }),
        ]);
        let r = run(&s).unwrap();
        let resubscribed: Vec<_> = r
            .history
            .records
            .iter()
            .filter(|rec| {
                matches!(&rec.kind, RecordKind::Lock { process, event: lockcore::Event::Resubscribing { .. } } if *process.client == *"A")
            })
            .map(|rec| rec.at.as_ms())
            .collect();
        assert_eq!(resubscribed.first(), Some(&33_000), "{resubscribed:?}");
        for v in &r.violations {
            assert_ne!(v.cause.name(), "defect", "{v}");
        }
        assert!(
            r.violations
                .iter()
                .all(|v| v.invariant != Invariant::Liveness)
        );
    }
}
