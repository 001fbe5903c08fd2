//! `switchover`: Sentinel promotes a replica and demotes the live primary
//! to its replica, closing the clients' connections; they reconnect to
//! the demoted one and stay on it until they learn the new primary.

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Invalid, Kind, Strike};
use crate::SimSpec;

/// At `at_ms` Sentinel promotes `replica` (by default the most up to
/// date) with what it had received and turns the primary into its
/// replica (`REPLICAOF`), which resyncs from it; the primary's process
/// stays up, but Sentinel's transaction ends `CLIENT KILL TYPE normal`
/// and `pubsub`, so the clients' connections close (a command in flight
/// fails) and they reconnect to it. Until `duration_ms` later
/// (when Redisson's sentinel manager handles `+switch-master` and moves
/// its connections to the new primary) the clients talk to a replica:
/// scripts that write are refused with `READONLY You can't write against
/// a read only replica.`, and `WAIT` with `ERR WAIT cannot be used with
/// replica instances. …`, which Redisson retries only from 3.45.1
/// (commit 58947344d). `failover` is the other story, a primary that
/// dies and takes its connections with it. A failover, `redis-restart` or
/// `redis-down` that begins during a switchover first moves the clients
/// to the promoted replica, which is then the Redis it strikes; a switchover that begins while Redis is
/// down or failing over finds no live primary to demote and does nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Switchover {
    /// When the primary is demoted.
    pub at_ms: u64,
    /// How long until the clients move to the new primary.
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub duration_ms: u64,
    /// Which replica (from 0) is promoted; by default the most up to date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<u32>,
}

impl Kind for Switchover {
    redis_window!();

    fn needs_replicas(&self) -> bool {
        true
    }

    fn check_plan(&self, i: usize, spec: &SimSpec) -> Result<(), Invalid> {
        super::check_promotion(
            spec,
            (None, self.replica),
            (self.at_ms, self.duration_ms),
            "a switchover promotes a replica",
            |end, horizon| {
                format!(
                    "the clients move at {end} ms, at or after the horizon ({horizon} ms), so they would never learn the new primary"
                )
            },
        )?;
        let end = self.at_ms.saturating_add(self.duration_ms);
        // A failover may overlap it (the engines finish the switchover
        // first, see `Effects::switch_over`), so explore's plans, which
        // draw each kind alone, stay valid; two switchovers may not.
        super::no_overlap(i, self.at_ms, end, spec, "switchover", |f| {
            matches!(f, Fault::Switchover(_))
        })
    }

    fn text(&self) -> String {
        let who = super::promoted(self.replica);
        format!("switchover {}ms (promote {who})", self.duration_ms)
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.switch_over(s, true, self.replica);
    }

    fn end(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.switch_over(s, false, self.replica);
    }
}

pub(crate) fn generate(_r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::Switchover(Switchover {
        at_ms: d.at_ms,
        duration_ms: d.duration_ms.min(5_000),
        replica: None,
    })
}

#[cfg(test)]
mod tests {
    use crate::run::tests::{client, critical, spec, thread};
    use crate::{FaultPlan, Invariant, Run, SimError, Step, run, run_turmoil, steps};

    use super::*;

    /// A holds the lock with the watchdog from 0.1 s and unlocks at about
    /// 5.1 s; B asks for it at 1 s. Redis has one replica; a switchover
    /// demotes the primary from 5 s to 6 s, so A's unlock reaches a
    /// replica.
    fn switchover_spec(release: &str) -> crate::SimSpec {
        let mut s = spec(vec![
            client("A", vec![thread(100, critical(5_000))]),
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
        s.horizon_ms = 60_000;
        s.profile = release.parse().expect("a release");
        s.redis.replicas = 1;
        s.faults = FaultPlan(vec![Fault::Switchover(Switchover {
            at_ms: 5_000,
            duration_ms: 1_000,
            replica: None,
        })]);
        s
    }

    fn false_unlock_error(r: &Run) -> bool {
        r.violations
            .iter()
            .any(|v| v.invariant == Invariant::FalseUnlockError)
    }

    /// Under 3.45.0 the unlock on the demoted primary fails with the
    /// replica's `WAIT` error (not its script's `READONLY`) while Redis
    /// still names A: a false unlock error. Under 3.45.1 the batch is
    /// retried after the 1.5 s retry interval, reaches the new primary
    /// and the unlock runs. Both engines tell the same story (the
    /// connections the demotion closed are back before the unlock); an
    /// engine that took Redis down at the demotion (a failover) or never
    /// demoted the primary would give no WAIT error at all.
    #[test]
    fn a_demoted_primary_fails_the_unlock_until_3_45_1() {
        let wait_error = "A/t1     unlock -> ERROR transport error: ERR WAIT cannot be used with replica instances";
        type Engine = fn(&crate::SimSpec) -> Result<Run, SimError>;
        for (engine, go) in [("fast", run as Engine), ("turmoil", run_turmoil as Engine)] {
            let broken = go(&switchover_spec("3.45.0")).expect("valid");
            let text = broken.history.to_string();
            assert!(text.contains(wait_error), "{engine}: {text}");
            assert!(
                text.contains("switchover 1000ms (promote the most up-to-date replica) begins"),
                "{engine}: {text}"
            );
            assert!(false_unlock_error(&broken), "{engine}: {text}");
            let fixed = go(&switchover_spec("3.45.1")).expect("valid");
            let text = fixed.history.to_string();
            assert!(!text.contains("unlock -> ERROR"), "{engine}: {text}");
            assert!(!false_unlock_error(&fixed), "{engine}: {text}");
        }
    }

    /// A failover of the new primary during the switchover: the clients
    /// first move to it (the switchover's end then does nothing), so A's
    /// unlock, failing at once under 3.45.0, is the one error; under
    /// 3.45.1 its retry meets Redis down (a failover's connection error)
    /// and fails. Both engines run it and agree.
    #[test]
    fn a_failover_during_a_switchover_fails_the_new_primary() {
        type Engine = fn(&crate::SimSpec) -> Result<Run, SimError>;
        for release in ["3.45.0", "3.45.1"] {
            let mut s = switchover_spec(release);
            s.faults.0.push(Fault::Failover(crate::faults::Failover {
                at_ms: 5_500,
                duration_ms: 2_000,
                replica: None,
            }));
            let mut errors = Vec::new();
            for go in [run as Engine, run_turmoil as Engine] {
                let r = go(&s).expect("valid");
                let text = r.history.to_string();
                assert!(text.contains("failover 2000ms"), "{release}: {text}");
                errors.push(text.matches("unlock -> ERROR").count());
            }
            assert_eq!(errors[0], errors[1], "{release}: {errors:?}");
            assert_eq!(errors[0], 1, "{release}");
        }
    }

    /// A Redis restart during the switchover strikes the new primary the
    /// clients first move to, not the demoted replica: the lock is lost
    /// with it (no persistence), A's unlock fails without the replica's
    /// WAIT error, and B, which got no unlock message, takes the lock when
    /// its wait ends; both engines alike.
    #[test]
    fn a_restart_during_a_switchover_restarts_the_new_primary() {
        type Engine = fn(&crate::SimSpec) -> Result<Run, SimError>;
        let mut s = switchover_spec("3.45.0");
        s.faults
            .0
            .push(Fault::RedisRestart(crate::faults::RedisRestart {
                at_ms: 5_050,
            }));
        let mut acquired = Vec::new();
        for go in [run as Engine, run_turmoil as Engine] {
            let r = go(&s).expect("valid");
            let text = r.history.to_string();
            assert!(text.contains("redisson:lock free (restart)"), "{text}");
            // "not locked" on the fast engine; turmoil's client is still
            // reconnecting after the restart (as in any restart there).
            assert!(text.contains("A/t1     unlock -> ERROR"), "{text}");
            assert!(!text.contains("ERR WAIT"), "{text}");
            let at = text
                .lines()
                .find(|l| l.contains("B/t1     lock -> acquired"))
                .and_then(|l| l.split_whitespace().next())
                .and_then(|t| t.trim_end_matches('s').parse::<f64>().ok())
                .unwrap_or_else(|| panic!("B never acquired: {text}"));
            acquired.push(at);
        }
        assert!((acquired[0] - acquired[1]).abs() < 1.0, "{acquired:?}");
    }

    fn refused(s: &crate::SimSpec) -> (String, String) {
        match run(s) {
            Err(SimError::Invalid { field, reason }) => (field, reason),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    /// A switchover without replicas, of a replica that does not exist,
    /// overlapping another, or ending at the horizon is refused, naming
    /// the field.
    #[test]
    fn bad_switchovers_are_refused() {
        let mut s = switchover_spec("3.45.1");
        s.redis.replicas = 0;
        let (field, reason) = refused(&s);
        assert_eq!(field, "faults[0].fault");
        assert!(reason.contains("has none"), "{reason}");
        s.redis.replicas = 1;
        s.faults.0[0] = Fault::Switchover(Switchover {
            at_ms: 5_000,
            duration_ms: 1_000,
            replica: Some(1),
        });
        assert_eq!(refused(&s).0, "faults[0].replica");
        let switchover = |at_ms| {
            Fault::Switchover(Switchover {
                at_ms,
                duration_ms: 1_000,
                replica: None,
            })
        };
        s.faults = FaultPlan(vec![switchover(5_000), switchover(5_500)]);
        let (field, reason) = refused(&s);
        assert_eq!(field, "faults[1].at_ms");
        assert!(reason.contains("overlaps switchover faults[0]"), "{reason}");
        s.faults = FaultPlan(vec![Fault::Switchover(Switchover {
            at_ms: 59_000,
            duration_ms: 1_000,
            replica: None,
        })]);
        assert_eq!(refused(&s).0, "faults[0].duration_ms");
    }
}
