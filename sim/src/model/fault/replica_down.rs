//! `replica-down`: one replica's link to the primary is down for a
//! window (the replica's process stopped, or the network between them
//! failed for longer than `repl-timeout`), then it resyncs.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Invalid, Kind, Strike};
use crate::SimSpec;

/// While the window lasts, the primary has no link to replica `replica`:
/// Redis frees a replica's client when its link drops, so `INFO
/// replication` counts it out of `connected_slaves` (what Redisson reads
/// to size its `WAIT`, from 3.18.1) and `WAIT` does not count it. The
/// primary's writes wait in its backlog; when the window ends the replica
/// reconnects with a partial resync, acknowledges what it has and
/// receives what it missed, each write after its lag. Clients are not
/// affected. `replication-drop` is the other story: every replica stalls
/// but stays connected, as a stall shorter than `repl-timeout` does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplicaDown {
    /// When the link drops.
    pub at_ms: u64,
    /// How long until the replica is back.
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub duration_ms: u64,
    /// Which replica (from 0).
    #[serde(default)]
    pub replica: u32,
}

impl Kind for ReplicaDown {
    redis_window!();

    fn needs_replicas(&self) -> bool {
        true
    }

    fn holds_replies(&self) -> bool {
        false
    }

    fn check_plan(&self, _i: usize, spec: &SimSpec) -> Result<(), Invalid> {
        super::needs_replicas(spec, "a replica's link goes down")?;
        let replicas = spec.redis.replicas;
        if self.replica >= replicas {
            return Err((
                "replica",
                format!(
                    "Redis has {replicas} replica(s), numbered from 0; got {}",
                    self.replica
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
        // A promotion resyncs every replica from the new primary, which a
        // replica without a link cannot do; Sentinel would not promote one
        // either. Checked against the whole plan, whatever its order.
        let promotion = spec.faults.0.iter().enumerate().find(|(_, f)| {
            matches!(f, Fault::Failover(_) | Fault::Switchover(_))
                && f.at_ms() <= end
                && self.at_ms <= f.end_ms().unwrap_or(f.at_ms())
        });
        if let Some((j, f)) = promotion {
            return Err((
                "at_ms",
                format!(
                    "the window ({}..{end} ms) meets faults[{j}] ({}): a replica's link must be back before a promotion begins, or go down after it ends",
                    self.at_ms,
                    f.text()
                ),
            ));
        }
        Ok(())
    }

    fn text(&self) -> String {
        format!("replica {} down {}ms", self.replica, self.duration_ms)
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.replica_link(s, self.replica, false);
    }

    fn end(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.replica_link(s, self.replica, true);
    }
}

pub(crate) fn generate(r: &mut ChaCha8Rng, d: Draw) -> Fault {
    // The swarm gives Redis one or two replicas; a draw of the second
    // where there is one is refused and dropped.
    Fault::ReplicaDown(ReplicaDown {
        at_ms: d.at_ms,
        duration_ms: d.duration_ms,
        replica: r.random_range(0..2),
    })
}

#[cfg(test)]
mod tests {
    use crate::run::tests::{
        client, never_unlock, one_holder_replicated, refused_field, run_on, spec, thread,
    };
    use crate::{FaultPlan, Outcome, RecordKind, run};

    use super::*;

    /// 3.44.0 (`INFO` before a synced script) with one replica: with its
    /// link down from 0 to 3 s, `INFO` counts no replica, A's lock script
    /// at 0.1 s goes without `WAIT`, and `lock()` answers. With the link
    /// stalled instead (`replication-drop`, still connected), the script
    /// waits for one replica, which acknowledges nothing in the
    /// `WAIT`'s second, and `lock()` fails. The same on the turmoil
    /// engine.
    #[test]
    fn a_down_replica_is_not_waited_for_a_stalled_one_is() {
        let outcome = |fault: Fault, on_turmoil: bool| {
            let s = one_holder_replicated("3.44.0", 100, vec![fault]);
            let r = run_on(&s, on_turmoil);
            r.history
                .records
                .iter()
                .find_map(|rec| match &rec.kind {
                    RecordKind::Return { outcome, .. } => Some(outcome.clone()),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("A's lock() returns:\n{}", r.history))
        };
        let down = Fault::ReplicaDown(ReplicaDown {
            at_ms: 0,
            duration_ms: 3_000,
            replica: 0,
        });
        let stalled = Fault::ReplicationDrop(crate::faults::ReplicationDrop {
            at_ms: 0,
            duration_ms: 3_000,
            replica: Some(0),
        });
        for on_turmoil in [false, true] {
            let answered = outcome(down.clone(), on_turmoil);
            assert!(matches!(answered, Outcome::Acquired { .. }), "{answered:?}");
            let failed = outcome(stalled.clone(), on_turmoil);
            assert!(matches!(failed, Outcome::Error { .. }), "{failed:?}");
        }
    }

    /// Without replicas, with a replica Redis lacks, past the horizon or
    /// across a promotion, a down link is refused.
    #[test]
    fn bad_links_are_refused() {
        let mut s = spec(vec![client("A", vec![thread(0, never_unlock())])]);
        let down = |at_ms, duration_ms, replica| {
            Fault::ReplicaDown(ReplicaDown {
                at_ms,
                duration_ms,
                replica,
            })
        };
        s.faults = FaultPlan(vec![down(1_000, 1_000, 0)]);
        let field = refused_field;
        assert_eq!(field(&s), "faults[0].fault");
        s.redis.replicas = 1;
        s.faults = FaultPlan(vec![down(1_000, 1_000, 1)]);
        assert_eq!(field(&s), "faults[0].replica");
        s.faults = FaultPlan(vec![down(1_000, 60_000, 0)]);
        assert_eq!(field(&s), "faults[0].duration_ms");
        // The promotion listed after it, or before it.
        let failover = Fault::Failover(crate::model::fault::Failover {
            at_ms: 1_500,
            duration_ms: 500,
            replica: None,
        });
        s.faults = FaultPlan(vec![down(1_000, 1_000, 0), failover.clone()]);
        assert_eq!(field(&s), "faults[0].at_ms");
        s.faults = FaultPlan(vec![failover, down(2_000, 1_000, 0)]);
        assert_eq!(field(&s), "faults[1].at_ms");
        s.faults = FaultPlan(vec![down(0, 1_000, 0), down(500, 1_000, 0)]);
        assert!(run(&s).is_ok(), "windows on one link may overlap");
    }
}
