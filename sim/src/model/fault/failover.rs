//! `failover`: the primary fails and a replica is promoted in its place,
//! with only the writes it had received.

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Invalid, Kind, Strike};
use crate::SimSpec;

/// At `at_ms` the primary fails: its connections close and every command
/// or subscription fails fast, as against a stopped server; writes it had
/// not yet replicated are lost with it. `duration_ms` later (Sentinel's
/// detection and election) `replica` is promoted (by default the most up
/// to date, as Sentinel picks) and the clients reconnect to it. A lock
/// whose acquire had not reached the replica is free on the new primary
/// although its holder still believes it holds it. The old primary
/// rejoins as a replica of the new one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Failover {
    /// When the primary fails.
    pub at_ms: u64,
    /// How long until a replica is promoted.
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub duration_ms: u64,
    /// Which replica (from 0); by default the most up to date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<u32>,
}

impl Kind for Failover {
    redis_window!();

    fn needs_replicas(&self) -> bool {
        true
    }

    fn check_plan(&self, i: usize, spec: &SimSpec) -> Result<(), Invalid> {
        super::check_promotion(
            spec,
            (None, self.replica),
            (self.at_ms, self.duration_ms),
            "a failover promotes a replica",
            |end, horizon| {
                format!(
                    "the promotion at {end} ms comes at or after the horizon ({horizon} ms), so it would never happen"
                )
            },
        )?;
        let end = self.at_ms.saturating_add(self.duration_ms);
        super::no_overlap(i, self.at_ms, end, spec, "failover", |f| {
            matches!(f, Fault::Failover(_))
        })
    }

    fn text(&self) -> String {
        let who = super::promoted(self.replica);
        format!("failover {}ms (promote {who})", self.duration_ms)
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.fail_over(s, true, None, None);
    }

    fn end(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.fail_over(s, false, self.replica, None);
    }
}

pub(crate) fn generate(_r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::Failover(Failover {
        at_ms: d.at_ms,
        duration_ms: d.duration_ms.min(5_000),
        replica: None,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::model::history::{RecordKind, ServerCause};
    use crate::run::tests::{client, never_unlock, spec, thread};
    use crate::{FaultPlan, Invariant, SimError, Step, run, steps};

    use super::*;

    fn with_failover(lag_ms: u64, failover_at: u64) -> crate::Run {
        run(&failover_spec(lag_ms, failover_at)).expect("valid")
    }

    /// A holds a lock with the watchdog; B asks for it at 3.5 s; the
    /// primary fails at `failover_at` and a replica, `lag_ms` behind, is
    /// promoted a second later. Redisson 3.16.6: the last release whose
    /// acquire does not wait for the replica (`lock-waits-for-replicas`).
    pub(crate) fn failover_spec(lag_ms: u64, failover_at: u64) -> crate::SimSpec {
        let mut s = spec(vec![
            client("A", vec![thread(0, never_unlock())]),
            client(
                "B",
                vec![thread(
                    3_500,
                    vec![
                        Step::Lock(steps::Lock { lease_ms: None }),
                        Step::Unlock(steps::Unlock {}),
                    ],
                )],
            ),
        ]);
        s.horizon_ms = 20_000;
        s.profile = "3.16.6".parse().expect("a release");
        s.redis.replicas = 1;
        s.redis.replication_lag = crate::LatencyRange {
            min_ms: lag_ms,
            max_ms: lag_ms,
        };
        s.faults = FaultPlan(vec![Fault::Failover(Failover {
            at_ms: failover_at,
            duration_ms: 1_000,
            replica: None,
        })]);
        s
    }

    /// Whether the promotion found the lock free.
    pub(crate) fn lost_at_failover(r: &crate::Run) -> bool {
        r.history.records.iter().any(|rec| {
            matches!(
                &rec.kind,
                RecordKind::Server {
                    holder: None,
                    cause: ServerCause::Failover,
                    ..
                }
            )
        })
    }

    /// A's acquire at about 0 s reaches the replica after 5 s of lag; the
    /// primary fails at 2 s, so the promoted replica never had the key:
    /// the lock is free at the promotion (3 s) and B, calling at 3.5 s,
    /// takes it while A believes it holds it. With a 10 ms lag the replica
    /// had it and B waits.
    #[test]
    fn an_unreplicated_acquire_is_lost() {
        let lost = with_failover(5_000, 2_000);
        assert!(lost_at_failover(&lost), "{}", lost.history);
        assert!(
            lost.violations
                .iter()
                .any(|v| v.invariant == Invariant::MutualExclusion),
            "{}",
            lost.history
        );
        let kept = with_failover(10, 2_000);
        assert!(!lost_at_failover(&kept), "{}", kept.history);
        assert!(
            !kept
                .violations
                .iter()
                .any(|v| v.invariant == Invariant::MutualExclusion),
            "{}",
            kept.history
        );
        assert!(
            lost.history
                .to_string()
                .contains("failover 1000ms (promote the most up-to-date replica) begins")
        );
    }

    /// From 3.16.7 the same acquire waits for the replica: its `WAIT`
    /// counts none within 1 s, and lock() throws although the primary ran
    /// it, so A never believes it holds the lock and B's acquire after the
    /// promotion breaks nothing.
    #[test]
    fn from_3_16_7_the_unreplicated_acquire_fails_instead() {
        let mut s = failover_spec(5_000, 2_000);
        s.profile = "3.16.7".parse().expect("a release");
        let r = run(&s).expect("valid");
        let text = r.history.to_string();
        assert!(
            text.contains("A/t1     lock -> ERROR transport error: Only 0 of 1 slaves were synced"),
            "{text}"
        );
        assert!(
            !r.violations
                .iter()
                .any(|v| v.invariant == Invariant::MutualExclusion),
            "{text}"
        );
    }

    /// A 4.7.0 client in single-server mode (`useSingleServer()` on a
    /// managed endpoint that follows the primary) sends its acquire
    /// without `WAIT` whatever the server has (`isSingleConfig()`), so the
    /// failover loses it as it did before 3.16.7; the same clients
    /// configured with the replica wait for it and fail instead.
    #[test]
    fn a_single_server_client_on_a_replicated_endpoint_loses_the_acquire() {
        let mut s = failover_spec(5_000, 2_000);
        s.profile = "4.7.0".parse().expect("a release");
        for c in &mut s.clients {
            c.mode = Some(lockcore::ServerMode::Single);
        }
        let single = run(&s).expect("valid");
        let text = single.history.to_string();
        assert!(lost_at_failover(&single), "{text}");
        assert!(!text.contains("WAIT"), "{text}");
        assert!(
            single
                .violations
                .iter()
                .any(|v| v.invariant == Invariant::MutualExclusion
                    && v.cause != crate::Cause::Defect),
            "{:?}\n{text}",
            single.violations
        );
        for c in &mut s.clients {
            c.mode = None;
        }
        let replicated = run(&s).expect("valid");
        let text = replicated.history.to_string();
        assert!(
            !replicated
                .violations
                .iter()
                .any(|v| v.invariant == Invariant::MutualExclusion),
            "{text}"
        );
    }

    fn refused(s: &crate::SimSpec) -> (String, String) {
        match run(s) {
            Err(SimError::Invalid { field, reason }) => (field, reason),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    /// A failover without replicas, of a replica that does not exist,
    /// overlapping another, or promoting at or after the horizon is
    /// refused, naming the field.
    #[test]
    fn bad_failovers_are_refused() {
        let failover = |at_ms, duration_ms, replica| {
            Fault::Failover(Failover {
                at_ms,
                duration_ms,
                replica,
            })
        };
        let mut s = spec(vec![client("A", vec![thread(0, never_unlock())])]);
        s.faults = FaultPlan(vec![failover(1_000, 1_000, None)]);
        let (field, reason) = refused(&s);
        assert_eq!(field, "faults[0].fault");
        assert!(reason.contains("has none"), "{reason}");
        s.redis.replicas = 2;
        assert!(run(&s).is_ok());
        s.faults = FaultPlan(vec![failover(1_000, 1_000, Some(2))]);
        assert_eq!(refused(&s).0, "faults[0].replica");
        s.faults = FaultPlan(vec![
            failover(1_000, 1_000, None),
            failover(1_500, 1_000, None),
        ]);
        let (field, reason) = refused(&s);
        assert_eq!(field, "faults[1].at_ms");
        assert!(reason.contains("overlaps failover faults[0]"), "{reason}");
        s.faults = FaultPlan(vec![failover(59_000, 1_000, None)]);
        assert_eq!(refused(&s).0, "faults[0].duration_ms");
    }
}
