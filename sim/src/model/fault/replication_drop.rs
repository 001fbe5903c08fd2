//! `replication-drop`: the link from the primary to its replicas (or to
//! one of them) is down for a window, so replication stalls; a failover
//! inside it loses every write made since it began.

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Invalid, Kind, Strike};
use crate::SimSpec;

/// While the window lasts no write reaches any replica (or replica
/// `replica`), and none acknowledges one; when it ends the replicas catch
/// up and the held writes arrive, each after its lag. The link is held,
/// not closed (shorter than `repl-timeout`): the primary still counts the
/// replicas as connected, in `INFO` and in `WAIT`'s numbers. Clients are
/// not affected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplicationDrop {
    /// When replication stops.
    pub at_ms: u64,
    /// How long.
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub duration_ms: u64,
    /// The one replica (from 0) whose link stalls; by default every
    /// replica's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<u32>,
}

impl Kind for ReplicationDrop {
    redis_window!();

    fn needs_replicas(&self) -> bool {
        true
    }

    fn holds_replies(&self) -> bool {
        false
    }

    fn check_plan(&self, _i: usize, spec: &SimSpec) -> Result<(), Invalid> {
        super::needs_replicas(
            spec,
            "replication stalls between the primary and its replicas",
        )?;
        if let Some(r) = self.replica
            && r >= spec.redis.replicas
        {
            return Err((
                "replica",
                format!(
                    "Redis has {} replica(s), numbered from 0; got {r}",
                    spec.redis.replicas
                ),
            ));
        }
        let end = self.at_ms.saturating_add(self.duration_ms);
        if end > spec.horizon_ms {
            return Err((
                "duration_ms",
                format!(
                    "the window ends at {end} ms, after the horizon ({} ms)",
                    spec.horizon_ms
                ),
            ));
        }
        Ok(())
    }

    fn text(&self) -> String {
        match self.replica {
            Some(r) => format!("replication to replica {r} stalls {}ms", self.duration_ms),
            None => format!("replication stalls {}ms", self.duration_ms),
        }
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.stall_replication(s, true, self.replica);
    }

    fn end(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.stall_replication(s, false, self.replica);
    }
}

pub(crate) fn generate(_r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::ReplicationDrop(ReplicationDrop {
        at_ms: d.at_ms,
        duration_ms: d.duration_ms,
        replica: None,
    })
}

#[cfg(test)]
mod tests {
    use crate::FaultPlan;
    use crate::run::tests::{
        client, never_unlock, one_holder_replicated, refused_field, run_on, spec, thread,
    };

    use super::*;

    /// Replication stalls from 0 to 3 s; A acquires at about 0 s. A
    /// failover at 2 s promotes a replica that never got the key (lost);
    /// a failover at 4 s, after the stall and its catch-up, keeps it. The
    /// same on the turmoil engine. Redisson 3.16.6, whose acquire does not
    /// wait for the replica (later ones fail and roll it back: see
    /// `failover::tests`).
    #[test]
    fn a_stall_loses_the_writes_it_held() {
        let lost = |failover_at: u64, on_turmoil: bool| {
            let faults = vec![
                Fault::ReplicationDrop(ReplicationDrop {
                    at_ms: 0,
                    duration_ms: 3_000,
                    replica: None,
                }),
                Fault::Failover(crate::model::fault::Failover {
                    at_ms: failover_at,
                    duration_ms: 500,
                    replica: None,
                }),
            ];
            let s = one_holder_replicated("3.16.6", 0, faults);
            crate::model::fault::failover::tests::lost_at_failover(&run_on(&s, on_turmoil))
        };
        for on_turmoil in [false, true] {
            assert!(lost(2_000, on_turmoil));
            assert!(!lost(4_000, on_turmoil));
        }
    }

    /// Without replicas, or past the horizon, a stall is refused.
    #[test]
    fn bad_stalls_are_refused() {
        let mut s = spec(vec![client("A", vec![thread(0, never_unlock())])]);
        s.faults = FaultPlan(vec![Fault::ReplicationDrop(ReplicationDrop {
            at_ms: 1_000,
            duration_ms: 60_000,
            replica: None,
        })]);
        let field = refused_field;
        assert_eq!(field(&s), "faults[0].fault");
        s.redis.replicas = 1;
        assert_eq!(field(&s), "faults[0].duration_ms");
    }
}
