//! Independent masters (`[sim.redis] masters`): their rules.
//!
//! Several Redis servers that share nothing, each lock on the one its
//! `placement` names (master 0 when none): the servers a red lock is
//! built over. Each client reaches every master as a Redisson instance of
//! its own in single-server mode (see `lockcore::Placement`). With
//! `replicas`, each master has that many of its own, and a client reaches
//! each master as a managed endpoint that follows its primary through a
//! `shard-failover` (single-server mode sends no `WAIT`). Refused by
//! name: a cluster or a proxy besides, a client `mode`, a lock
//! name with a brace (a lock's keys are routed by the name between their
//! braces), a placement of a lock no thread takes or on a master that is
//! not there, and a read lock, whose `ReadLockTask` (3.44.0+) is one chain
//! per instance, which the model does not split yet.

use std::collections::BTreeSet;

use lockcore::{LockKind, LockName};

use crate::model::validate::invalid;
use crate::{SimError, SimSpec};

/// Every lock a thread of `spec` takes, alone or in a multi-lock.
fn names(spec: &SimSpec) -> impl Iterator<Item = &LockName> {
    (spec.clients.iter().flat_map(|c| &c.threads))
        .flat_map(|t| std::iter::once(&t.lock).chain(t.multi.iter().flat_map(|m| &m.locks)))
}

pub(crate) fn validate(spec: &SimSpec) -> Result<(), SimError> {
    let r = &spec.redis;
    if r.masters == 0 {
        if let Some((name, _)) = r.placement.iter().next() {
            return invalid(
                "redis.placement",
                format!(
                    "lock '{name}' is placed on a master, but there are none: give `masters = 2` or more"
                ),
            );
        }
        return Ok(());
    }
    if r.masters > lockcore::MAX_MASTERS {
        let most = lockcore::MAX_MASTERS;
        return invalid(
            "redis.masters",
            format!("at most {most} masters, got {}", r.masters),
        );
    }
    let besides = [(r.shards > 0, "shards"), (r.proxy, "proxy")];
    if let Some((_, what)) = besides.iter().find(|(on, _)| *on) {
        return invalid(
            "redis.masters",
            format!(
                "independent masters are modelled alone, without {what}: leave redis.{what} out"
            ),
        );
    }
    if let Some(c) = spec.clients.iter().find(|c| c.mode.is_some()) {
        return invalid(
            "redis.masters",
            format!(
                "client '{}' sets mode, but it reaches each independent master as a single server: leave mode out",
                c.name
            ),
        );
    }
    let taken: BTreeSet<&str> = names(spec).map(LockName::as_str).collect();
    for (name, master) in r.placement.iter() {
        if master >= r.masters {
            return invalid(
                "redis.placement",
                format!(
                    "lock '{name}' is placed on master {master}, but there are {} (numbered from 0)",
                    r.masters
                ),
            );
        }
        if !taken.contains(name) {
            return invalid(
                "redis.placement",
                format!("lock '{name}' is placed, but no thread takes it"),
            );
        }
    }
    if let Some(lock) = names(spec).find(|l| l.as_str().contains(['{', '}'])) {
        return invalid(
            "redis.masters",
            format!(
                "lock '{}' has a brace: on independent masters a lock is named without one",
                lock.as_str()
            ),
        );
    }
    if let Some(lock) = names(spec).find(|l| l.kind() == LockKind::Read) {
        return invalid(
            "redis.masters",
            format!(
                "'{}' is a read lock: a read lock on independent masters is not modelled yet (issue #49)",
                lock.as_str()
            ),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use lockcore::{LockKind, LockName, Placement};

    use crate::run::tests::{client, critical, spec, thread};
    use crate::validate_spec;

    fn masters() -> crate::SimSpec {
        let mut s = spec(vec![client(
            "A",
            vec![thread(0, critical(100)), thread(0, critical(100))],
        )]);
        s.clients[0].threads[1].lock = LockName::new("b").unwrap();
        s.redis.masters = 3;
        s.redis.placement = Placement::new([("b".to_owned(), 2)]);
        s
    }

    /// What independent masters are not modelled with, or a placement
    /// that cannot be, is refused, naming the field and saying what to do.
    #[test]
    fn what_independent_masters_lack_is_refused_by_name() {
        assert_eq!(validate_spec(&masters()), Ok(()));
        let refused = |edit: &dyn Fn(&mut crate::SimSpec), field: &str, words: &str| {
            let mut s = masters();
            edit(&mut s);
            let e = validate_spec(&s).unwrap_err().to_string();
            assert!(e.contains(field) && e.contains(words), "{e}");
        };
        refused(&|s| s.redis.masters = 17, "redis.masters", "at most 16");
        refused(&|s| s.redis.shards = 2, "redis.masters", "redis.shards out");
        refused(
            &|s| s.redis.proxy = true,
            "redis.masters",
            "redis.proxy out",
        );
        let mut replicated = masters();
        replicated.redis.replicas = 2;
        assert_eq!(validate_spec(&replicated), Ok(()));
        refused(
            &|s| s.clients[0].mode = Some(lockcore::ServerMode::Single),
            "redis.masters",
            "leave mode out",
        );
        refused(&|s| s.redis.masters = 2, "redis.placement", "there are 2");
        refused(
            &|s| s.redis.placement = Placement::new([("zz".to_owned(), 1)]),
            "redis.placement",
            "no thread takes it",
        );
        refused(
            &|s| {
                s.redis.masters = 0;
            },
            "redis.placement",
            "there are none",
        );
        refused(
            &|s| s.clients[0].threads[0].lock = LockName::new("{a}x").unwrap(),
            "redis.masters",
            "brace",
        );
        refused(
            &|s| {
                let b = LockName::new("b").unwrap().with_kind(LockKind::Read);
                s.clients[0].threads[1].lock = b;
            },
            "redis.masters",
            "read lock",
        );
    }
}
