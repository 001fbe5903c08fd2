//! What the real engine needs of a replicated spec, and a promotion as a
//! switchover or failover carries it out.

use std::cell::RefCell;
use std::rc::Rc;

use super::effects::Promotion;
use super::nodes::Nodes;
use super::{RealRedis, RedisTarget};
use crate::engines::hosted::monitor::Shadow;
use crate::engines::hosted::recorder::Shared;
use crate::{LatencyRange, SimError, SimSpec};

fn unsupported(what: String) -> SimError {
    SimError::Unsupported {
        engine: "redis".to_owned(),
        what,
    }
}

/// Refuses what real replica processes cannot be made to do: a
/// replication lag of the spec's choosing (a loopback replica's is its
/// own, well under a millisecond).
pub(super) fn check(spec: &SimSpec) -> Result<(), SimError> {
    let redis = &spec.redis;
    if redis.replicas > 0 && redis.replication_lag != LatencyRange::default() {
        return Err(unsupported(format!(
            "[sim.redis] replication_lag {}-{}ms: a real replica's lag is the loopback's; run it on the fast or turmoil engine",
            redis.replication_lag.min_ms, redis.replication_lag.max_ms
        )));
    }
    Ok(())
}

/// Why the engine, as `opts` sets it, cannot run `spec`, if it cannot:
/// `plan`'s refusals, and replicas or a cluster on a Redis it did not
/// start.
pub(crate) fn refusal(spec: &SimSpec, opts: &RealRedis) -> Option<SimError> {
    if let Err(e) = super::plan(spec) {
        return Some(e);
    }
    if let Some(e) = super::cluster::refusal(spec, opts) {
        return Some(e);
    }
    let replicas = spec.redis.replicas;
    (matches!(opts.target, RedisTarget::Url(_)) && replicas > 0).then(|| not_spawned(replicas))
}

/// The refusal of replicas on a Redis the engine did not start.
pub(super) fn not_spawned(replicas: u32) -> SimError {
    unsupported(format!(
        "[sim.redis] replicas = {replicas} on --redis redis://...: the engine starts replicas itself; run it with --redis spawn"
    ))
}

/// Carries out `p`: Sentinel's promotion, then for a failover the
/// clients' move to the new primary and the old primary's return as its
/// replica.
pub(super) async fn promote(
    nodes: &Nodes<'_>,
    p: Promotion,
    recorder: &Shared,
    shadow: &Rc<RefCell<Shadow>>,
) {
    let old = nodes.primary_node();
    nodes
        .promote(p.replica, p.switchover, p.at, recorder, shadow)
        .await;
    if !p.switchover {
        nodes.follow_primary();
        nodes.rejoin(old);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::tests::{client, critical, spec, thread};

    /// Replicas are run, but not a replication lag of the spec's choosing
    /// (a loopback replica's is its own): it is refused by name before
    /// anything starts. A promotion inside a replication-drop is run.
    #[test]
    fn what_real_replicas_cannot_do_is_refused() {
        let mut s = spec(vec![client("A", vec![thread(0, critical(1_000))])]);
        s.redis.replicas = 2;
        assert!(super::super::plan(&s).is_ok());
        s.redis.replication_lag = crate::LatencyRange {
            min_ms: 100,
            max_ms: 100,
        };
        let Err(SimError::Unsupported { engine, what }) = super::super::plan(&s) else {
            panic!("a lag must be refused");
        };
        assert_eq!(engine, "redis");
        assert!(
            what.starts_with("[sim.redis] replication_lag 100-100ms"),
            "{what}"
        );
        s.redis.replication_lag = crate::LatencyRange::default();
        s.faults = crate::FaultPlan(vec![
            crate::Fault::ReplicationDrop(crate::faults::ReplicationDrop {
                at_ms: 1_000,
                duration_ms: 2_000,
                replica: None,
            }),
            crate::Fault::Switchover(crate::faults::Switchover {
                at_ms: 2_000,
                duration_ms: 1_000,
                replica: None,
            }),
        ]);
        assert!(super::super::plan(&s).is_ok());
    }

    /// Replicas need processes the engine starts: on a url they are
    /// refused by name before anything runs (`report` and `compare` ask
    /// this first), and with `spawn` they are run.
    #[test]
    fn replicas_on_a_url_are_refused() {
        let mut s = spec(vec![client("A", vec![thread(0, critical(1_000))])]);
        s.redis.replicas = 1;
        let url = RealRedis {
            target: RedisTarget::Url("redis://127.0.0.1:6379".to_owned()),
            time_scale: 10,
        };
        let Some(SimError::Unsupported { engine, what }) = refusal(&s, &url) else {
            panic!("replicas on a url must be refused");
        };
        assert_eq!(engine, "redis");
        assert!(
            what.starts_with("[sim.redis] replicas = 1 on --redis redis://"),
            "{what}"
        );
        let spawn = RealRedis {
            target: RedisTarget::Spawn,
            time_scale: 10,
        };
        assert!(refusal(&s, &spawn).is_none());
        s.redis.replicas = 0;
        assert!(refusal(&s, &url).is_none());
    }
}
