//! `freeze`: the extension recipe's worked example, built in sim's tests
//! alone. A client and Redis stall together for a window (their VMs share
//! a host whose hypervisor stops). It is a whole kind in one file: its
//! data, its timeline text, its generator and what its window's edges do,
//! in verbs every engine already carries out; one line under `@tests` in
//! `faults!` registers it. The test below runs it on all three engines.

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Kind, Strike};

/// Client `client` and Redis stop from `at_ms` for `duration_ms`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Freeze {
    /// The client.
    pub client: String,
    /// When.
    pub at_ms: u64,
    /// For how long.
    pub duration_ms: u64,
}

impl Kind for Freeze {
    client_window!();

    fn text(&self) -> String {
        format!("freeze {} and redis {}ms", self.client, self.duration_ms)
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.pause_client(s, true);
        fx.pause_redis(s, true, self.duration_ms, None);
    }

    fn end(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.pause_redis(s, false, self.duration_ms, None);
        fx.pause_client(s, false);
    }
}

pub(crate) fn generate(_r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::Freeze(Freeze {
        client: d.client,
        at_ms: d.at_ms,
        duration_ms: d.duration_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::history::{Phase, RecordKind};
    use crate::run::tests::{client, never_unlock, renewals, spec, thread};
    use crate::{FaultPlan, RealRedis, RedisTarget, Run, SimSpec, SimTime, Verb};

    fn frozen() -> SimSpec {
        let mut s = spec(vec![client("A", vec![thread(0, never_unlock())])]);
        s.watchdog_timeout_ms = 3_000;
        s.horizon_ms = 12_000;
        s.faults = FaultPlan(vec![Fault::Freeze(Freeze {
            client: "A".into(),
            at_ms: 1_500,
            duration_ms: 6_000,
        })]);
        s
    }

    /// The fault's records, begin then end, as the engine wrote them.
    fn phases(r: &Run) -> Vec<Phase> {
        r.history
            .records
            .iter()
            .filter_map(|rec| match &rec.kind {
                RecordKind::Fault {
                    fault: Fault::Freeze(_),
                    phase,
                } => Some(*phase),
                _ => None,
            })
            .collect()
    }

    /// The holder sends no renewal while frozen and renews again after;
    /// its key expires inside the window.
    fn renews_around_the_window(r: &Run) {
        let h = &r.history;
        let during = |t: &SimTime| *t > SimTime::from_ms(1_500) && *t < SimTime::from_ms(7_500);
        let renewed = renewals(h);
        assert!(!renewed.iter().any(during), "renewal while frozen:\n{h}");
        assert!(renewed.iter().any(|t| *t >= SimTime::from_ms(7_500)), "{h}");
    }

    /// The kind uses two verbs every engine has, and each engine carries
    /// it out from this one file: the fast and turmoil engines agree on
    /// what breaks, and a real Redis (CLIENT PAUSE, the process's gate)
    /// runs it with both of its edges recorded.
    #[test]
    fn one_file_runs_on_every_engine() {
        let s = frozen();
        assert_eq!(
            crate::verbs(&s.faults.0[0]),
            vec![Verb::PauseClient, Verb::PauseRedis]
        );
        let fast = crate::run(&s).expect("the fast engine runs it");
        let turmoil = crate::run_turmoil(&s).expect("the turmoil engine runs it");
        for r in [&fast, &turmoil] {
            assert_eq!(phases(r), vec![Phase::Begin, Phase::End]);
            renews_around_the_window(r);
        }
        let broken = |r: &Run| r.violations.iter().map(|v| v.invariant).collect::<Vec<_>>();
        assert_eq!(broken(&fast), broken(&turmoil));
        let real = RealRedis {
            target: RedisTarget::Spawn,
            time_scale: 10,
        };
        let real = crate::run_real(&s, &real).unwrap_or_else(|e| {
            panic!("the real-Redis engine needs redis-server on PATH (apt-get install redis-server): {e}")
        });
        assert_eq!(phases(&real), vec![Phase::Begin, Phase::End]);
    }
}
