//! A Redis Cluster deployment (`[sim.redis] shards`): its rules.
//!
//! The clients reach the cluster in cluster mode (`useClusterServers()`),
//! each lock's commands going to the master of its slot (see
//! `lockcore::shard_of`); every engine that runs a cluster splits the
//! slots as `redis-cli --cluster create` does. With `replicas`, each
//! master has that many of its own (`shard-failover` promotes one), and
//! the clients' lock scripts wait for them (`WAIT`, 3.16.7+), as outside
//! single-server mode. `slot-migration` moves a lock's slot to another
//! master; the nodes carry each `PUBLISH` to one another. What is not
//! modelled yet (issue #49) is refused by name: a proxy in front, a
//! client `mode`, and a lock name with a brace that is no hash tag,
//! whose slot in Redis is not the one Redisson computes. A name's own
//! hash tag (`{inventory}orders`) is fine: its channel keeps it.

use crate::model::validate::invalid;
use crate::{SimError, SimSpec};

/// Whether every key of `lock` is where Redisson sends its commands: its
/// channel in its slot (a name with a hash tag keeps it, one without is
/// wrapped in braces, `prefixName`), and Redis's slot of the name the
/// one Redisson computes (they differ for a `}` before the first `{`).
fn one_slot(lock: &lockcore::LockName) -> bool {
    let key = lock.as_str();
    let slot = lockcore::calc_slot(key);
    slot == lockcore::calc_slot(lock.channel()) && slot == fake_redis::key_slot(key.as_bytes())
}

/// Where master `i` of a simulated cluster listens, as its `MOVED` and
/// `ASK` name it and the clients know it from `CLUSTER SLOTS`.
pub(crate) fn node_addr(i: u16) -> std::net::SocketAddr {
    std::net::SocketAddr::from(([127, 0, 0, 1], 7000 + i))
}

/// The most masters of a simulated Redis Cluster.
pub const MAX_SHARDS: u16 = 16;

/// A cluster (`redis.shards`) is reached in cluster mode, by every
/// client, without a proxy.
pub(crate) fn validate(spec: &SimSpec) -> Result<(), SimError> {
    let r = &spec.redis;
    if r.shards == 0 {
        return Ok(());
    }
    if r.shards > MAX_SHARDS {
        return invalid(
            "redis.shards",
            format!("at most {MAX_SHARDS} masters, got {}", r.shards),
        );
    }
    if r.proxy {
        return invalid(
            "redis.shards",
            "clients reach a cluster either in cluster mode (shards) or through a proxy (proxy), not both"
                .to_owned(),
        );
    }
    let names = (spec.clients.iter().flat_map(|c| &c.threads))
        .flat_map(|t| std::iter::once(&t.lock).chain(t.multi.iter().flat_map(|m| &m.locks)));
    if let Some(lock) = names.into_iter().find(|l| !one_slot(l)) {
        return invalid(
            "redis.shards",
            format!(
                "lock '{}' has a brace that is no hash tag, so its channel, or Redis's slot of its key, is not the slot Redisson computes for it; its keys would live on another master than the one locksim watches, which is not modelled yet: rename it",
                lock.as_str()
            ),
        );
    }
    if let Some(c) = spec.clients.iter().find(|c| c.mode.is_some()) {
        return invalid(
            "redis.shards",
            format!(
                "client '{}' sets mode = \"{}\", but a cluster's clients are in cluster mode: leave mode out",
                c.name,
                c.mode.map_or("", lockcore::ServerMode::name)
            ),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use lockcore::LockName;

    use crate::run::tests::{client, critical, spec, thread};
    use crate::validate_spec;

    fn cluster() -> crate::SimSpec {
        let mut s = spec(vec![client("A", vec![thread(0, critical(100))])]);
        s.redis.shards = 3;
        s
    }

    /// What a cluster is not modelled with is refused, naming the field
    /// and saying what to do.
    #[test]
    fn what_a_cluster_lacks_is_refused_by_name() {
        assert_eq!(validate_spec(&cluster()), Ok(()));
        let refused = |edit: &dyn Fn(&mut crate::SimSpec), words: &str| {
            let mut s = cluster();
            edit(&mut s);
            let e = validate_spec(&s).unwrap_err().to_string();
            assert!(e.contains("redis.shards") && e.contains(words), "{e}");
        };
        refused(&|s| s.redis.shards = 17, "at most 16 masters");
        refused(&|s| s.redis.proxy = true, "not both");
        let mut replicated = cluster();
        replicated.redis.replicas = 1;
        assert_eq!(validate_spec(&replicated), Ok(()));
        refused(
            &|s| s.clients[0].mode = Some(lockcore::ServerMode::Sentinel),
            "leave mode out",
        );
        refused(
            &|s| s.clients[0].threads[0].lock = LockName::new("user{:lock").unwrap(),
            "rename it",
        );
        refused(
            &|s| s.clients[0].threads[0].lock = LockName::new("a}b{c}").unwrap(),
            "rename it",
        );
        let mut tagged = cluster();
        tagged.clients[0].threads[0].lock = LockName::new("{user}:lock").unwrap();
        assert_eq!(validate_spec(&tagged), Ok(()));
    }
}
