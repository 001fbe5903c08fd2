//! `interleave`: a client's callbacks run on several Netty threads.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Invalid, Kind, Strike, range};

/// While the window lasts, a callback of the client that reaches a point
/// where Redisson's callbacks can interleave (lockcore's `Output::Step`)
/// goes on only after a delay drawn from `min_delay_ms..=max_delay_ms`
/// (from the fault's own stream), so replies and timers due meanwhile run their
/// callbacks first: an unlock's cancel can remove the renewal entry a
/// sibling thread just joined (before 4.4.0, #6844), and the arm of an
/// interrupted acquire can come after the thread's unlock (#7272). Outside
/// such windows callbacks run in Redisson's usual order. The application's
/// scheduling, not a failure: the oracle never blames it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Interleave {
    /// The client.
    pub client: String,
    /// When the window opens.
    pub at_ms: u64,
    /// How long it lasts.
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub duration_ms: u64,
    /// The shortest a paused callback waits.
    #[serde(default)]
    #[schemars(range(max = crate::MAX_DELAY_MS))]
    pub min_delay_ms: u64,
    /// The longest a paused callback waits.
    #[schemars(range(max = crate::MAX_DELAY_MS))]
    pub max_delay_ms: u64,
}

impl Kind for Interleave {
    client_window!();

    fn check(&self, _horizon_ms: u64) -> Result<(), Invalid> {
        range("min_delay_ms", self.min_delay_ms, self.max_delay_ms)
    }

    /// A callback paused just before the window ends goes on up to the
    /// longest delay after it.
    fn effect_end_ms(&self) -> Option<u64> {
        self.end_ms().map(|e| e.saturating_add(self.max_delay_ms))
    }

    fn excuses(&self) -> bool {
        false
    }

    fn text(&self) -> String {
        format!(
            "interleave {} {}ms (callbacks {}..{}ms apart)",
            self.client, self.duration_ms, self.min_delay_ms, self.max_delay_ms
        )
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.interleave(s, Some((self.min_delay_ms, self.max_delay_ms)));
    }

    fn end(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.interleave(s, None);
    }
}

/// Delays of up to 300 ms: a callback's steps take microseconds in
/// Redisson, and the widened window is what lets a search find the races
/// (with up to 50 ms, no unlock landed inside a batched round's read of
/// the renewal map, #6472, in 100,000 seeds of 3.44.0).
pub(crate) fn generate(r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::Interleave(Interleave {
        client: d.client,
        at_ms: d.at_ms,
        duration_ms: d.duration_ms,
        min_delay_ms: 0,
        max_delay_ms: r.random_range(1..=300),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::tests::{client, spec, thread};
    use crate::steps;
    use crate::{FaultPlan, Invariant, Step, run};

    /// Redisson #6844: A/t1 holds the lock; A/t2 waits for it. t1's unlock
    /// wakes t2, whose acquire answers while t1's cancel is paused between
    /// finding the renewal entry empty and removing it; t2 joins the entry
    /// and loses it. Under 4.3.1 t2's key expires while it works and B
    /// takes the lock; 4.4.0 makes the two steps one.
    fn sibling_joins_during_cancel(release: &str) -> Vec<Invariant> {
        let mut s = spec(vec![
            client(
                "A",
                vec![
                    thread(
                        0,
                        vec![
                            Step::Lock(steps::Lock { lease_ms: None }),
                            Step::Work(steps::Work { ms: 500 }),
                            Step::Unlock(steps::Unlock {}),
                        ],
                    ),
                    thread(
                        100,
                        vec![
                            Step::Lock(steps::Lock { lease_ms: None }),
                            Step::Work(steps::Work { ms: 20_000 }),
                            Step::Write(steps::Write {}),
                            Step::Unlock(steps::Unlock {}),
                        ],
                    ),
                ],
            ),
            client(
                "B",
                vec![thread(
                    1_000,
                    vec![
                        Step::Lock(steps::Lock { lease_ms: None }),
                        Step::Write(steps::Write {}),
                        Step::Unlock(steps::Unlock {}),
                    ],
                )],
            ),
        ]);
        s.profile = release.parse().unwrap();
        s.watchdog_timeout_ms = 3_000;
        s.latency = crate::LatencyRange {
            min_ms: 2,
            max_ms: 4,
        };
        s.faults = FaultPlan(vec![Fault::Interleave(Interleave {
            client: "A".into(),
            at_ms: 0,
            duration_ms: 5_000,
            min_delay_ms: 30,
            max_delay_ms: 50,
        })]);
        let r = run(&s).unwrap();
        r.violations.iter().map(|v| v.invariant).collect()
    }

    #[test]
    fn before_4_4_0_a_sibling_loses_its_renewal() {
        let broken = sibling_joins_during_cancel("4.3.1");
        assert!(broken.contains(&Invariant::MutualExclusion), "{broken:?}");
        assert_eq!(sibling_joins_during_cancel("4.4.0"), vec![]);
    }
}
