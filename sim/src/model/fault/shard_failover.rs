//! `shard-failover`: one master of several fails and one of its replicas
//! is promoted in its place, with only the writes it had received.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Invalid, Kind, Strike};
use crate::SimSpec;

/// At `at_ms` master `shard` (of a cluster, `[sim.redis] shards`, or of
/// the independent masters, `masters`; each has `replicas` replicas of
/// its own) fails: its connections close and every command or
/// subscription to it fails fast; the writes it had not yet replicated
/// are lost with it. `duration_ms` later (a cluster's failure detection
/// and election, `cluster-node-timeout`; or a managed endpoint's) a
/// replica of it is promoted (by default the most up to date) and serves
/// its slots, or its locks, while the other masters go on as they were.
/// A lock whose acquire had not reached the replica is free on the new
/// master although its holder still believes it holds it: the failure a
/// Redis Cluster's asynchronous replication allows, and Redisson's `WAIT`
/// after each lock script (3.16.7+) narrows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShardFailover {
    /// The master, numbered from 0 (a cluster's in slot order).
    pub shard: u16,
    /// When it fails.
    pub at_ms: u64,
    /// How long until one of its replicas is promoted.
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub duration_ms: u64,
    /// Which of its replicas (from 0); by default the most up to date.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<u32>,
}

impl Kind for ShardFailover {
    redis_window!();

    fn needs_replicas(&self) -> bool {
        true
    }

    fn needs_cluster(&self) -> bool {
        true
    }

    fn shard(&self) -> Option<u16> {
        Some(self.shard)
    }

    fn check_plan(&self, i: usize, spec: &SimSpec) -> Result<(), Invalid> {
        super::check_promotion(
            spec,
            (Some(self.shard), self.replica),
            (self.at_ms, self.duration_ms),
            "shard-failover promotes a replica of",
            |end, horizon| {
                format!(
                    "the promotion at {end} ms comes at or after the horizon ({horizon} ms), so it would never happen"
                )
            },
        )?;
        let end = self.at_ms.saturating_add(self.duration_ms);
        let shard = self.shard;
        super::no_overlap(
            i,
            self.at_ms,
            end,
            spec,
            "shard-failover of one master",
            |f| matches!(f, Fault::ShardFailover(o) if o.shard == shard),
        )
    }

    fn text(&self) -> String {
        let who = super::promoted(self.replica);
        format!(
            "shard {} failover {}ms (promote {who})",
            self.shard, self.duration_ms
        )
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.fail_over(s, true, None, Some(self.shard));
    }

    fn end(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.fail_over(s, false, self.replica, Some(self.shard));
    }
}

/// A failover of one of the first three masters (a drawn deployment has
/// two or three; a fault naming one it lacks is dropped), promoted
/// within 5 s, as `failover` is drawn.
pub(crate) fn generate(r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::ShardFailover(ShardFailover {
        shard: r.random_range(0..3),
        at_ms: d.at_ms,
        duration_ms: d.duration_ms.min(5_000),
        replica: None,
    })
}

#[cfg(test)]
mod tests {
    use crate::model::fault::shard_restart::tests::{only_b_lost, two_masters};
    use crate::run::tests::{client, critical, spec, thread};
    use crate::{Fault, FaultPlan, validate_spec};

    use super::*;

    /// Two independent masters with a replica each, replication lagging
    /// 50 ms: A takes "a" on master 0 and "b" on master 1 at once, and
    /// master 1 fails 10 ms later, before b's key reached its replica. The
    /// replica promoted 1 s later has no b, so B takes it while A holds
    /// it; a, on the master that did not fail, stays A's.
    #[test]
    fn a_master_failing_over_loses_only_its_unreplicated_locks() {
        let (r, text) = two_masters(|s| {
            s.redis.replicas = 1;
            s.redis.replication_lag = crate::LatencyRange {
                min_ms: 50,
                max_ms: 50,
            };
            s.faults = FaultPlan(vec![Fault::ShardFailover(ShardFailover {
                shard: 1,
                at_ms: 10,
                duration_ms: 1_000,
                replica: None,
            })]);
        });
        assert!(text.contains("shard 1 failover 1000ms"), "{text}");
        only_b_lost(&r, &text, "failover");
    }

    /// What a master's failover needs is asked for by name.
    #[test]
    fn a_failover_of_one_master_needs_several_with_replicas() {
        let mut s = spec(vec![client("A", vec![thread(0, critical(100))])]);
        s.horizon_ms = 20_000;
        let failover = |shard| {
            Fault::ShardFailover(ShardFailover {
                shard,
                at_ms: 100,
                duration_ms: 1_000,
                replica: None,
            })
        };
        s.faults = FaultPlan(vec![failover(1)]);
        let refused = |s: &crate::SimSpec, words: &str| {
            let e = validate_spec(s).unwrap_err().to_string();
            assert!(e.contains(words), "{e}");
        };
        refused(&s, "Redis is one");
        s.redis.shards = 2;
        refused(&s, "give `replicas = 1`");
        s.redis.replicas = 1;
        assert_eq!(validate_spec(&s), Ok(()));
        s.faults = FaultPlan(vec![failover(2)]);
        refused(&s, "Redis has 2 master(s)");
        s.faults = FaultPlan(vec![failover(1), failover(1)]);
        refused(&s, "one shard-failover of one master must end");
        s.faults = FaultPlan(vec![failover(0), failover(1)]);
        assert_eq!(validate_spec(&s), Ok(()));
        // Redis's one primary's failover does not say which master.
        s.faults = FaultPlan(vec![Fault::Failover(crate::faults::Failover {
            at_ms: 100,
            duration_ms: 1_000,
            replica: None,
        })]);
        refused(&s, "name one with shard-failover");
    }
}
