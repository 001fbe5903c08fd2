//! A generated thread on a multi-lock: with [`MULTI_CHANCE`], from a
//! stream of its own, one thread whose script a multi-lock can run calls
//! Redisson's `RedissonMultiLock` or `RedissonRedLock` over its own lock
//! and one or two more (`redisson:lock2`, [`THIRD_LOCK`]), taken in
//! a drawn order, so that `locksim explore` reaches the multi-locks' own
//! defects (#1606, #4050, the 3.27.2 unlock that stops at an error) while
//! the other threads contend for the constituents one by one. With
//! [`MASTERS_CHANCE`] its locks are on independent masters, one each.
//!
//! The multi-lock thread keeps its script but its writes: a multi-lock
//! has no fencing token and locksim's resource is one per lock, so a
//! write has no lock to guard. A lock another thread takes as a drawn
//! type (a fair or read-write lock on the same key) is never a
//! constituent, and a thread on such an object never draws a multi-lock:
//! constituents are `RLock`s, as a leased multi-lock's `expireAsync`
//! needs. A seed that does not draw keeps its spec as it was.

use lockcore::{LockKind, LockName, MultiKind};
use rand::RngExt;

use crate::model::multi::MultiSpec;
use crate::model::rng::{self, Stream};
use crate::{DEFAULT_LOCK, SimSpec, Step};

/// The chance that a generated scenario (any kinds but `classic`) gives
/// one of its threads a multi-lock.
pub const MULTI_CHANCE: f64 = 0.1;

/// The third lock a multi-lock may take.
pub const THIRD_LOCK: &str = "redisson:lock3";

/// With [`MULTI_CHANCE`], one thread that can run its script on a
/// multi-lock gets one (see the module's docs).
pub(crate) fn draw_multi(spec: &mut SimSpec) {
    let mut r = rng::stream(spec.seed, Stream::SwarmMulti);
    if !r.random_bool(MULTI_CHANCE) {
        return;
    }
    let pool = free_locks(spec);
    let candidates: Vec<(usize, usize, Vec<Step>)> = spec
        .clients
        .iter()
        .enumerate()
        .flat_map(|(c, client)| {
            client
                .threads
                .iter()
                .enumerate()
                .map(move |(t, th)| (c, t, th))
        })
        .filter(|(_, _, th)| th.multi.is_none() && pool.contains(&th.lock))
        .filter_map(|(c, t, th)| {
            let steps = without_writes(&th.steps);
            let probe = MultiSpec {
                kind: MultiKind::Multi,
                locks: vec![th.lock.clone()],
            };
            (!steps.is_empty() && probe.check(&steps).is_ok()).then_some((c, t, steps))
        })
        .collect();
    if candidates.is_empty() || pool.len() < 2 {
        return;
    }
    let (c, t, steps) = candidates[r.random_range(0..candidates.len())].clone();
    let kind = if r.random_bool(0.5) {
        MultiKind::Multi
    } else {
        MultiKind::Red
    };
    let own = spec.clients[c].threads[t].lock.clone();
    let mut others: Vec<LockName> = pool.into_iter().filter(|l| *l != own).collect();
    shuffle(&mut others, &mut r);
    let n = r.random_range(1..=others.len());
    let mut locks: Vec<LockName> = std::iter::once(own).chain(others.drain(..n)).collect();
    shuffle(&mut locks, &mut r);
    let thread = &mut spec.clients[c].threads[t];
    thread.steps = steps;
    thread.multi = Some(MultiSpec {
        kind,
        locks: locks.clone(),
    });
    place_on_masters(spec, &locks);
}

/// With [`MASTERS_CHANCE`], from a stream of its own, the multi-lock's
/// locks are on independent masters, one each in its order (the first on
/// master 0), as a red lock over several `RedissonClient`s is; not when
/// a thread takes a read lock (not modelled there yet).
fn place_on_masters(spec: &mut SimSpec, locks: &[LockName]) {
    let mut r = rng::stream(spec.seed, Stream::SwarmMasters);
    let read =
        (spec.clients.iter().flat_map(|c| &c.threads)).any(|t| t.object().kind() == LockKind::Read);
    if !r.random_bool(MASTERS_CHANCE) || read || locks.len() < 2 {
        return;
    }
    spec.redis.masters = locks.len() as u16;
    spec.redis.placement = lockcore::Placement::new(
        (locks.iter().enumerate().skip(1)).map(|(i, l)| (l.as_str().to_owned(), i as u16)),
    );
}

/// The chance that a drawn multi-lock's locks are on independent masters.
pub const MASTERS_CHANCE: f64 = 0.5;

/// The locks a multi-lock may take, in a fixed order: the generator's
/// three, but any that a thread takes as another object than an `RLock`.
fn free_locks(spec: &SimSpec) -> Vec<LockName> {
    let names = [DEFAULT_LOCK, crate::swarm::SECOND_LOCK, THIRD_LOCK];
    let typed: Vec<&LockName> = spec
        .clients
        .iter()
        .flat_map(|c| &c.threads)
        .filter(|t| t.multi.is_none() && t.object().kind() != LockKind::Lock)
        .map(|t| &t.lock)
        .collect();
    names
        .iter()
        .map(|n| LockName::new(*n).unwrap_or_else(|_| unreachable!()))
        .filter(|l| !typed.contains(&l))
        .collect()
}

/// `steps` without their writes (inside repeats too); a repeat left with
/// no step goes too.
fn without_writes(steps: &[Step]) -> Vec<Step> {
    steps
        .iter()
        .filter(|s| !matches!(s, Step::Write(_)))
        .filter_map(|s| {
            let mut s = s.clone();
            if let Some(body) = s.kind_mut().body_mut() {
                *body = without_writes(body);
                if body.is_empty() {
                    return None;
                }
            }
            Some(s)
        })
        .collect()
}

/// Fisher–Yates, from `r`.
fn shuffle<T>(items: &mut [T], r: &mut rand_chacha::ChaCha8Rng) {
    for i in (1..items.len()).rev() {
        let j = r.random_range(0..=i);
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Workload, generate_with};

    /// `spec` as it was before its draw: the multi-lock thread back on
    /// its own lock. (Its writes are gone; compared without them.)
    fn without_multi(spec: &SimSpec) -> SimSpec {
        let mut back = spec.clone();
        for t in back.clients.iter_mut().flat_map(|c| &mut c.threads) {
            t.multi = None;
        }
        back
    }

    /// About one seed in ten draws a multi-lock; each such spec is valid,
    /// its multi-lock takes the thread's own lock and one or two more,
    /// both kinds are drawn, and nothing changed but that thread's
    /// multi-lock and writes, unless (about half of them) its locks were
    /// put on independent masters, one each; the liveness probe takes
    /// every constituent.
    #[test]
    fn some_seeds_draw_a_multi_lock_and_nothing_else_changes() {
        let (mut drawn, mut kinds, mut sizes) = (0, Vec::new(), Vec::new());
        let mut placed = 0;
        for seed in 0..2_000 {
            let spec = generate_with(seed, None, Workload::default());
            let multis: Vec<_> = (spec.clients.iter().flat_map(|c| &c.threads))
                .filter_map(|t| t.multi.as_ref().map(|m| (t, m)))
                .collect();
            let Some(&(thread, multi)) = multis.first() else {
                continue;
            };
            drawn += 1;
            assert_eq!(multis.len(), 1, "seed {seed}");
            assert_eq!(
                crate::model::validate::validate_spec(&spec),
                Ok(()),
                "seed {seed}"
            );
            assert!(multi.locks.contains(&thread.lock), "seed {seed}");
            assert!((2..=3).contains(&multi.locks.len()), "seed {seed}");
            kinds.push(multi.kind);
            sizes.push(multi.locks.len());
            let probe = spec.clients.last().expect("a probe");
            for lock in &multi.locks {
                assert!(
                    probe.threads.iter().any(|t| t.lock == *lock),
                    "seed {seed}: no probe on {lock}"
                );
            }
            if spec.redis.masters > 0 {
                // On independent masters, one each: the rest of the spec
                // is drawn for them (no replicas, proxy or server draw).
                placed += 1;
                assert_eq!(usize::from(spec.redis.masters), multi.locks.len());
                for (i, lock) in multi.locks.iter().enumerate() {
                    assert_eq!(
                        usize::from(spec.redis.route(lock.as_str())),
                        i,
                        "seed {seed}"
                    );
                }
                continue;
            }
            let mut plain = without_multi(&spec);
            let mut redrawn = crate::swarm::generate_without_multi(seed, Workload::default());
            for t in (plain.clients.iter_mut().chain(redrawn.clients.iter_mut()))
                .flat_map(|c| &mut c.threads)
            {
                t.steps = without_writes(&t.steps);
            }
            // The probe's threads: one for each constituent.
            plain.clients.pop();
            redrawn.clients.pop();
            assert_eq!(plain, redrawn, "seed {seed}");
        }
        assert!((120..=300).contains(&drawn), "{drawn} of 2000 seeds draw");
        assert!(
            (drawn / 4..drawn * 3 / 4).contains(&placed),
            "{placed} of {drawn} on independent masters"
        );
        assert!(kinds.contains(&MultiKind::Multi) && kinds.contains(&MultiKind::Red));
        assert!(sizes.contains(&2) && sizes.contains(&3));
    }

    /// A write inside a repeat goes, and a repeat left empty goes too.
    #[test]
    fn writes_go_and_empty_repeats_with_them() {
        use crate::steps;
        let write = Step::Write(steps::Write {});
        let work = Step::Work(steps::Work { ms: 5 });
        let repeat = |body: Vec<Step>| {
            Step::Repeat(steps::Repeat {
                times: 2,
                steps: body,
            })
        };
        let steps = vec![
            write.clone(),
            repeat(vec![work.clone(), write.clone()]),
            repeat(vec![write]),
        ];
        assert_eq!(without_writes(&steps), vec![repeat(vec![work])]);
    }
}
