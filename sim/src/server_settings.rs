//! Redis's own settings for generated scenarios (issue 52): with some
//! chance per seed, the default workload's Redis is a replicated
//! deployment of a drawn release line, with or without an AOF on the
//! primary and on the replicas, drawn from a stream of its own so that
//! every other draw of every seed, and every seed that draws none, stays
//! as it was.
//!
//! Redisson 3.46+ probes `WAIT 0 0; WAITAOF 0 0 0` and parses the
//! server's unknown-command text (6.2's backticks, 7.0's quotes), and
//! follows lock scripts with `WAITAOF` when `INFO` says `aof_enabled:1`:
//! a 6.2 or 7.0 server with an AOF refuses it (#6579, #6618), and a 7.2
//! server's `WAITAOF` counts only replicas that write one (#6920). These
//! defects need no fault, only the deployment users run.
//!
//! With a chance of its own, a Redis without replicas is a Redis Cluster
//! behind a proxy on one address (`[sim.redis] proxy`): from Redisson
//! 3.44.0 the watchdog's one renewal `EVAL` over a client's locks of two
//! slots is refused with `CROSSSLOT` (#6867, #7116), again without a
//! fault.

use fake_redis::RedisVersion;
use rand::RngExt;

use crate::SimSpec;
use crate::model::rng::{self, Stream};

/// The chance that a scenario of the default kinds
/// ([`crate::SwarmKinds::Swarm`]) draws its Redis: a release line, the
/// AOFs, and replicas when its faults gave it none.
pub const SERVER_CHANCE: f64 = 0.25;

/// With [`SERVER_CHANCE`], Redis answers as a release line drawn evenly
/// from [`RedisVersion::ALL`], its primary writes an AOF in half the
/// draws and its replicas in half, and a Redis without replicas gets one
/// or two (a deployment with a fault that needs replicas keeps its own).
/// Every value is drawn whether it is used or not, so a draw never moves
/// another.
pub(crate) fn draw_server(spec: &mut SimSpec) {
    let mut r = rng::stream(spec.seed, Stream::SwarmServer);
    if !r.random_bool(SERVER_CHANCE) || spec.redis.has_masters() {
        return;
    }
    let version = RedisVersion::ALL[r.random_range(0..RedisVersion::ALL.len())];
    let appendonly = r.random_bool(0.5);
    let replica_appendonly = r.random_bool(0.5);
    let replicas = r.random_range(1..=2);
    let redis = &mut spec.redis;
    redis.version = version;
    redis.appendonly = appendonly;
    redis.replica_appendonly = replica_appendonly;
    if redis.replicas == 0 {
        redis.replicas = replicas;
    }
}

/// With `chance`, drawn from a stream of its own, Redis is a cluster of
/// two or three masters (or as many as a fault of `plan` names) when a
/// fault of `plan` acts on one of its masters and the workload gave Redis
/// no replicas of its own; its clients reach it in cluster mode. Whether
/// it made one, or Redis already has independent masters (which take the
/// faults as drawn). Every value is drawn whether it is used or not.
pub(crate) fn give_shards(spec: &mut SimSpec, plan: &[crate::Fault], chance: f64) -> bool {
    if spec.redis.masters > 0 {
        // Independent masters already: the faults act on them.
        return true;
    }
    if !plan.iter().any(|f| f.kind().needs_cluster()) {
        return false;
    }
    let mut r = rng::stream(spec.seed, Stream::SwarmCluster);
    let drawn = r.random_bool(chance);
    let shards: u16 = r.random_range(2..=3);

    if !drawn || spec.redis.replicas > 0 {
        return false;
    }
    let named = plan.iter().filter_map(|f| f.shard().map(|s| s + 1));
    let shards = named.fold(shards, u16::max);
    // A slot can move only to another master the cluster has: a plan
    // whose only cluster faults could not is no reason for one.
    let moves = |f: &crate::Fault| {
        f.slot_move().is_none_or(|(lock, to)| {
            to < shards && lockcore::shard_of(shards, lock.as_str()).0 != to
        })
    };
    if !plan.iter().any(moves) {
        return false;
    }
    spec.redis.shards = shards;
    true
}

/// The chance that a scenario of the default kinds whose Redis has no
/// replicas reaches it through a cluster proxy.
pub const PROXY_CHANCE: f64 = 0.25;

/// With [`PROXY_CHANCE`], drawn from a stream of its own after every
/// other draw of the deployment, Redis is a cluster behind a proxy; a
/// deployment with replicas never is (not modelled behind a proxy).
pub(crate) fn draw_proxy(spec: &mut SimSpec) {
    let mut r = rng::stream(spec.seed, Stream::SwarmProxy);
    if r.random_bool(PROXY_CHANCE) && spec.redis.replicas == 0 && !spec.redis.has_masters() {
        spec.redis.proxy = true;
    }
}

#[cfg(test)]
mod tests {
    use fake_redis::RedisVersion;

    use crate::{Workload, generate_with, validate_spec};

    /// About a quarter of the default workload's seeds draw their Redis,
    /// each release line and both AOF settings among them, always with
    /// replicas; every spec stays valid; the classic workload (the
    /// regression corpus's) and `--kinds all` never draw it.
    #[test]
    fn a_quarter_of_default_seeds_draw_their_redis() {
        let (mut drawn, mut versions, mut aof) = (0, [0; 3], 0);
        for seed in 0..400 {
            let spec = generate_with(seed, None, Workload::default());
            validate_spec(&spec).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            let redis = &spec.redis;
            if redis.version != RedisVersion::V7_0 || redis.appendonly || redis.replica_appendonly {
                assert!(redis.replicas > 0, "seed {seed}: {redis:?}");
            }
            if redis.appendonly || redis.version != RedisVersion::V7_0 {
                drawn += 1;
            }
            let line = RedisVersion::ALL.iter().position(|v| *v == redis.version);
            versions[line.expect("a modelled line")] += 1;
            aof += usize::from(redis.appendonly);
            for other in Workload::UNSET {
                let other = generate_with(seed, None, other);
                assert_eq!(other.redis.version, RedisVersion::V7_0, "seed {seed}");
                assert!(!other.redis.appendonly && !other.redis.replica_appendonly);
            }
        }
        // A draw of 7.0 without a primary AOF is not told apart here:
        // about 1/6 of the draws; seeds on a cluster or on independent
        // masters draw none.
        assert!(
            (50..125).contains(&drawn),
            "{drawn} of 400 seeds drew a Redis"
        );
        assert!(versions[0] > 10 && versions[2] > 10, "{versions:?}");
        assert!(aof > 20, "{aof} seeds with a primary AOF");
    }

    /// Some default seeds without replicas put Redis behind a cluster
    /// proxy, none with replicas; the other workloads never do.
    #[test]
    fn some_seeds_without_replicas_reach_redis_through_a_proxy() {
        let mut proxied = 0;
        for seed in 0..400 {
            let spec = generate_with(seed, None, Workload::default());
            validate_spec(&spec).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            if spec.redis.proxy {
                assert_eq!(spec.redis.replicas, 0, "seed {seed}");
                proxied += 1;
            }
            for other in Workload::UNSET {
                assert!(!generate_with(seed, None, other).redis.proxy, "seed {seed}");
            }
        }
        assert!((6..40).contains(&proxied), "{proxied} of 400 seeds");
    }
}

#[cfg(test)]
mod cluster_tests {
    use crate::{SwarmKinds, Workload, generate_with, validate_spec};

    /// About one default seed in five runs on a cluster, each with a
    /// pause, restart or failover of one of its masters, in cluster mode
    /// and without proxy; replicas exactly when a master fails over, and
    /// no fault on Redis's one primary's replicas; every spec is valid;
    /// the classic workload never draws one.
    #[test]
    fn some_default_seeds_run_on_a_cluster() {
        let mut clusters = 0;
        let mut replicated = 0;
        for seed in 0..1_000 {
            let spec = generate_with(seed, None, Workload::default());
            validate_spec(&spec).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            if spec.redis.shards > 0 {
                clusters += 1;
                assert!((2..=3).contains(&spec.redis.shards), "seed {seed}");
                assert!(!spec.redis.proxy);
                let fails_over = |f: &crate::Fault| matches!(f, crate::Fault::ShardFailover(_));
                let failover = spec.faults.0.iter().any(fails_over);
                assert_eq!(spec.redis.replicas > 0, failover, "seed {seed}");
                replicated += usize::from(failover);
                let one_primary =
                    |f: &crate::Fault| f.kind().needs_replicas() && f.shard().is_none();
                assert!(!spec.faults.0.iter().any(one_primary), "seed {seed}");
                assert!(spec.clients.iter().all(|c| c.mode.is_none()));
                let on_one = |f: &crate::Fault| f.shard().is_some() || f.slot_move().is_some();
                assert!(spec.faults.0.iter().any(on_one), "seed {seed}");
            }
            let classic = Workload {
                kinds: SwarmKinds::Classic,
                ..Workload::default()
            };
            assert_eq!(generate_with(seed, None, classic).redis.shards, 0);
        }
        assert!(
            (150..300).contains(&clusters),
            "{clusters} clusters in 1000"
        );
        assert!(
            (40..140).contains(&replicated),
            "{replicated} clusters with replicas in 1000"
        );
    }
}
