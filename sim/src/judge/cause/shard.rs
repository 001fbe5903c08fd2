//! With several masters (a cluster, or independent ones), which faults
//! can explain a violation: those on the master that serves its lock (or
//! another lock of a multi-lock that takes it), on a client, or on every
//! master. A pause of another master may still be why the lock
//! misbehaved (a renewal round that waits on it), but that is the lock's
//! doing: the fault did nothing to this lock's key or to the commands
//! that reach it.

use super::violated_lock;
use crate::{History, SimSpec, Violation};

/// `spec` without the faults on masters other than the violated lock's,
/// and the plan place of each fault kept; `None` when none is left out.
pub(super) fn narrowed(
    spec: &SimSpec,
    history: &History,
    v: &Violation,
) -> Option<(SimSpec, Vec<usize>)> {
    let on_one = |f: &crate::Fault| f.shard().is_some() || f.slot_move().is_some();
    if !spec.redis.has_masters() || !spec.faults.0.iter().any(on_one) {
        return None;
    }
    let lock = violated_lock(history, v)?;
    let locks = reaching(spec, &lock);
    let slots: Vec<u16> = locks.iter().map(|l| lockcore::calc_slot(l)).collect();
    let moved = |f: &crate::Fault| {
        f.slot_move()
            .filter(|(l, _)| slots.contains(&lockcore::calc_slot(l.as_str())))
            .map(|(_, to)| to)
    };
    // A slot that moves is served by its new master too.
    let mut serving: Vec<u16> = locks.iter().map(|l| spec.redis.route(l)).collect();
    serving.extend(spec.faults.0.iter().filter_map(moved));
    let kept: Vec<usize> = (0..spec.faults.0.len())
        .filter(|&i| {
            let f = &spec.faults.0[i];
            f.shard().is_none_or(|s| serving.contains(&s))
                && (f.slot_move().is_none() || moved(f).is_some())
        })
        .collect();
    if kept.len() == spec.faults.0.len() {
        return None;
    }
    let mut narrow = spec.clone();
    narrow.faults.0 = kept.iter().map(|&i| spec.faults.0[i].clone()).collect();
    Some((narrow, kept))
}

/// The locks whose masters' faults can reach `lock`: itself, and the
/// other locks of a leased multi-lock that takes it. A multi-lock's
/// thread waits on each of its locks' masters in turn, so a paused master
/// can hold it past the lease of a lock on another (4.7.0 seed 78613 on
/// independent masters: a leased multi-lock, re-entered while master 0
/// was paused for 15 s, outlived its lease on master 1's lock). A
/// watchdog's lock lost while another master holds its renewal round is
/// not the pause's doing but the round's (`slots-renewed-apart`).
fn reaching<'a>(spec: &'a SimSpec, lock: &'a lockcore::LockName) -> Vec<&'a str> {
    let leased = (spec.clients.iter().flat_map(|c| &c.threads))
        .filter(|t| leases(&t.steps))
        .filter_map(|t| t.multi.as_ref())
        .filter(|m| m.locks.iter().any(|l| l.as_str() == lock.as_str()));
    let mut locks: Vec<&str> = std::iter::once(lock)
        .chain(leased.flat_map(|m| &m.locks))
        .map(|l| l.as_str())
        .collect();
    locks.sort_unstable();
    locks.dedup();
    locks
}

/// Whether any acquire of `steps` (inside repeats too) has a lease.
fn leases(steps: &[crate::Step]) -> bool {
    steps
        .iter()
        .any(|s| s.lease_ms().is_some() || leases(s.body()))
}

#[cfg(test)]
mod tests {
    use lockcore::{LockName, MultiKind};

    use crate::model::multi::MultiSpec;
    use crate::run::tests::{client, spec, thread};
    use crate::{Fault, FaultPlan, Invariant, Step, faults, run, steps};

    /// A watchdog multi-lock over "orders" (master 0) and "inventory"
    /// (master 2) of a 4.7.0 cluster; master 2 is paused 9-34 s. The
    /// round at 10 s waits on it and ends, so orders expires unrenewed
    /// and B takes it: the renewal chain's defect, which the pause of the
    /// other master does not excuse though the multi-lock takes a lock
    /// there (only a leased multi-lock's thread is held by it).
    #[test]
    fn a_watchdog_multi_lock_keeps_the_chain_s_defect() {
        let name = |n: &str| LockName::new(n).unwrap();
        let mut a = thread(
            0,
            vec![
                Step::Lock(steps::Lock { lease_ms: None }),
                Step::Work(steps::Work { ms: 40_000 }),
                Step::Unlock(steps::Unlock {}),
            ],
        );
        a.lock = name("orders");
        a.multi = Some(MultiSpec {
            kind: MultiKind::Multi,
            locks: vec![name("orders"), name("inventory")],
        });
        let mut b = thread(
            31_000,
            vec![
                Step::Lock(steps::Lock { lease_ms: None }),
                Step::Unlock(steps::Unlock {}),
            ],
        );
        b.lock = name("orders");
        let mut s = spec(vec![client("A", vec![a]), client("B", vec![b])]);
        s.profile = "4.7.0".parse().unwrap();
        s.horizon_ms = 60_000;
        s.redis.shards = 3;
        s.faults = FaultPlan(vec![Fault::ShardPause(faults::ShardPause {
            shard: 2,
            at_ms: 9_000,
            duration_ms: 25_000,
        })]);
        let r = run(&s).expect("valid");
        let v = (r.violations.iter())
            .find(|v| v.invariant == Invariant::MutualExclusion)
            .unwrap_or_else(|| panic!("{}", r.history));
        assert_eq!(v.cause.name(), "defect", "{v}");
    }
}
