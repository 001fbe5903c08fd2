//! Which Redisson object each lock of a generated scenario is: `RLock`,
//! or a lock type drawn from [`LOCK_TYPES`] (the read and write lock of
//! an `RReadWriteLock`, ...), so that `locksim explore` reaches the
//! family's own defects (#1604, #1542, #2144, and the fair lock's #4153,
//! #4705 and #5019).
//!
//! Each type draws from a stream of its own named after it, as the
//! every-kind swarm's fault kinds do: adding a type leaves the spec of
//! every seed that does not draw it as it was. A thread's acquires become
//! the same calls on the object its type draws for it (`lock` as
//! `read-lock`, `lock-async` as `read-lock` with `async`: Redisson's read,
//! write, fair and fenced locks are `RLock`s with its async methods),
//! found in the step registration by [`Step::on_object`]; a lock whose
//! threads cannot all take a modelled object (a release whose read-write
//! lock lockcore refuses) stays an `RLock`, never half one.

use std::collections::BTreeSet;

use lockcore::{LockKind, LockName, Release};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::model::rng::{self, Stream};
use crate::{Fault, LockKey, SimSpec, Step};

/// A Redisson lock object a generated lock may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockType {
    /// Its name, which also names its stream.
    pub name: &'static str,
    /// The objects its threads draw from, uniformly (the read and the
    /// write lock of one `RReadWriteLock`).
    pub kinds: &'static [LockKind],
    /// The object the liveness probe takes: the one any other holder
    /// excludes (the write lock), so the probe's acquire says the whole
    /// lock is free again.
    pub probe: LockKind,
    /// The chance, in percent, that a generated scenario (any kinds but
    /// `classic`) makes one of its locks this type. The read-write lock
    /// has 30; each later type 10, so that `RLock`, the lock most users
    /// take and the one with most of Redisson's known defects, stays the
    /// lock of about half the seeds however many types there are.
    pub percent: u8,
    /// The keys of the object a `delete-key` on its lock may take, drawn
    /// uniformly: the lock's own key, and the fair lock's queue and
    /// timeout set, which Redisson gives no TTL.
    pub keys: &'static [LockKey],
}

/// The drawable lock types: one line each. A type whose kinds have no
/// step forms (no registered step names the kind) is never applied.
pub const LOCK_TYPES: &[LockType] = &[
    LockType {
        name: "rwlock",
        kinds: &[LockKind::Read, LockKind::Write],
        probe: LockKind::Write,
        percent: 30,
        keys: &[LockKey::Lock],
    },
    LockType {
        name: "fenced-lock",
        kinds: &[LockKind::Fenced],
        probe: LockKind::Fenced,
        percent: 10,
        keys: &[LockKey::Lock],
    },
    LockType {
        name: "spin",
        kinds: &[LockKind::Spin],
        probe: LockKind::Spin,
        percent: 10,
        keys: &[LockKey::Lock],
    },
    LockType {
        name: "fair",
        kinds: &[LockKind::Fair],
        probe: LockKind::Fair,
        percent: 10,
        keys: &LockKey::FAIR,
    },
];

/// With each type's [`LockType::percent`] chance, from its own stream: the
/// type takes one of the scenario's locks (an earlier type in
/// [`LOCK_TYPES`] over a later one), and each thread on that lock
/// takes one of the type's objects.
pub(crate) fn draw_lock_types(spec: &mut SimSpec, types: &[LockType]) {
    let locks: Vec<LockName> = spec
        .clients
        .iter()
        .flat_map(|c| &c.threads)
        .map(|t| t.lock.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if locks.is_empty() {
        return;
    }
    let mut chosen: Vec<Option<(&LockType, ChaCha8Rng)>> = vec![None; locks.len()];
    for ty in types {
        let mut r = rng::stream(spec.seed, Stream::SwarmLockType(rng::kind_number(ty.name)));
        if !r.random_bool(ty.chance()) {
            continue;
        }
        let l = r.random_range(0..locks.len());
        // An earlier type keeps its lock, so a type added later changes
        // no seed that draws an earlier one.
        if chosen[l].is_none() {
            chosen[l] = Some((ty, r));
        }
    }
    for (lock, choice) in locks.iter().zip(chosen) {
        if let Some((ty, mut r)) = choice {
            assign(spec, lock, ty, &mut r);
        }
    }
}

impl LockType {
    /// [`Self::percent`] as a probability.
    fn chance(&self) -> f64 {
        f64::from(self.percent) / 100.0
    }
}

/// Every thread on `lock` takes an object of `ty` (its draw, else the
/// type's next object that it can take), or none does.
fn assign(spec: &mut SimSpec, lock: &LockName, ty: &LockType, r: &mut ChaCha8Rng) {
    let mut scripts = Vec::new();
    for (c, client) in spec.clients.iter().enumerate() {
        let release = client.profile.unwrap_or(spec.profile);
        for (t, thread) in client.threads.iter().enumerate() {
            if thread.lock != *lock {
                continue;
            }
            let first = r.random_range(0..ty.kinds.len());
            let order = ty.kinds[first..].iter().chain(&ty.kinds[..first]);
            let Some(steps) = order
                .into_iter()
                .find_map(|&k| on_object(&thread.steps, k, release))
            else {
                return;
            };
            scripts.push((c, t, steps));
        }
    }
    for (c, t, steps) in scripts {
        spec.clients[c].threads[t].steps = steps;
    }
}

/// `steps` with every acquire (inside repeats too) on `kind`'s object,
/// if each has that form and `release` models it.
fn on_object(steps: &[Step], kind: LockKind, release: Release) -> Option<Vec<Step>> {
    steps
        .iter()
        .map(|step| {
            let mut step = step.clone();
            if let Some(body) = step.kind_mut().body_mut() {
                *body = on_object(body, kind, release)?;
                return Some(step);
            }
            if !step.is_acquire() {
                return Some(step);
            }
            let watchdog = step.lease_ms().is_none();
            if kind.refusal(release, watchdog).is_some() {
                return None;
            }
            step.on_object(kind)
        })
        .collect()
}

/// Each `delete-key` of the plan on a lock whose threads take a type with
/// more keys than the lock's own takes one of them, drawn in the plan's
/// order from a stream of its own (a plan on `RLock`s alone draws
/// nothing, and every other draw of the seed stays as it was).
pub(crate) fn aim_deletes(spec: &mut SimSpec, types: &[LockType]) {
    let mut r = None;
    for i in 0..spec.faults.0.len() {
        let Fault::DeleteKey(d) = &spec.faults.0[i] else {
            continue;
        };
        let kinds: BTreeSet<LockKind> = spec
            .clients
            .iter()
            .flat_map(|c| &c.threads)
            .filter(|t| t.lock == d.lock)
            .map(|t| t.object().kind())
            .collect();
        let Some(ty) = types
            .iter()
            .find(|ty| kinds.iter().any(|k| ty.kinds.contains(k)))
            .filter(|ty| ty.keys.len() > 1)
        else {
            continue;
        };
        let r = r.get_or_insert_with(|| rng::stream(spec.seed, Stream::SwarmDeleteKey));
        let key = ty.keys[r.random_range(0..ty.keys.len())];
        if let Fault::DeleteKey(d) = &mut spec.faults.0[i] {
            d.key = key;
        }
    }
}

/// The probe's thread on a lock that other threads take as a drawn type
/// takes the type's probe object (see [`LockType::probe`]).
pub(crate) fn probe_lock_types(spec: &mut SimSpec, probe: &str, types: &[LockType]) {
    let Some((probe_client, others)) = spec.clients.split_last_mut() else {
        return;
    };
    if probe_client.name != probe {
        return;
    }
    let release = probe_client.profile.unwrap_or(spec.profile);
    for thread in &mut probe_client.threads {
        let kinds: BTreeSet<LockKind> = others
            .iter()
            .flat_map(|c| &c.threads)
            .filter(|t| t.lock == thread.lock)
            .map(|t| t.object().kind())
            .collect();
        let ty = types
            .iter()
            .find(|ty| kinds.iter().any(|k| ty.kinds.contains(k)));
        if let Some(steps) = ty.and_then(|ty| on_object(&thread.steps, ty.probe, release)) {
            thread.steps = steps;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::swarm::generate_typed;
    use crate::{Usage, Workload};

    /// `spec` with every acquire back on `RLock` and every delete on the
    /// lock's key: as it was before the draw, but for the probe (which
    /// takes the type's probe object).
    fn as_rlock(spec: &SimSpec) -> SimSpec {
        let mut back = spec.clone();
        for t in back.clients.iter_mut().flat_map(|c| &mut c.threads) {
            t.steps = t.steps.iter().map(rlock).collect();
        }
        for f in &mut back.faults.0 {
            if let Fault::DeleteKey(d) = f {
                d.key = LockKey::Lock;
            }
        }
        back
    }

    fn rlock(step: &Step) -> Step {
        let mut step = step.clone();
        if let Some(body) = step.kind_mut().body_mut() {
            *body = body.iter().map(rlock).collect();
            return step;
        }
        step.on_object(LockKind::Lock).unwrap_or(step)
    }

    /// The objects the threads of `spec` take.
    fn objects(spec: &SimSpec) -> BTreeSet<LockKind> {
        let threads = spec.clients.iter().flat_map(|c| &c.threads);
        threads.map(|t| t.object().kind()).collect()
    }

    /// About two in five default seeds (each type a stream of its own,
    /// and only when every thread on the lock can take the type) draw a
    /// lock type; each is valid, nothing but its acquires' objects
    /// changed, and the probe takes the drawn type's probe object;
    /// `classic` never draws (the regression corpus keeps its specs).
    /// Each type is drawn by some seeds.
    #[test]
    fn some_seeds_draw_a_lock_type_and_nothing_else_changes() {
        let mut drawn = 0;
        let mut by_type = BTreeSet::new();
        for seed in 0..400 {
            let w = Workload::default();
            let typed = generate_typed(seed, None, w, LOCK_TYPES, false);
            let plain = generate_typed(seed, None, w, &[], false);
            let generated = crate::generate_with(seed, None, w);
            let threads = generated.clients.iter().flat_map(|c| &c.threads);
            if threads.clone().all(|t| t.multi.is_none()) {
                assert_eq!(typed, generated);
            }
            assert_eq!(as_rlock(&typed), plain, "seed {seed}");
            if typed != plain {
                drawn += 1;
                assert_eq!(
                    crate::model::validate::validate_spec(&typed),
                    Ok(()),
                    "seed {seed}"
                );
                let drew = objects(&typed);
                let ty = LOCK_TYPES
                    .iter()
                    .find(|ty| ty.kinds.iter().any(|k| drew.contains(k)))
                    .expect("a drawn type");
                by_type.insert(ty.name);
                let probe = typed.clients.last().unwrap();
                assert!(
                    probe.threads.iter().any(|t| t.object().kind() == ty.probe),
                    "seed {seed}"
                );
            }
            let classic = crate::generate(seed, None);
            assert_eq!(objects(&classic), BTreeSet::from([LockKind::Lock]));
        }
        assert!((100..=260).contains(&drawn), "{drawn} of 400 seeds draw");
        let names: BTreeSet<&str> = LOCK_TYPES.iter().map(|t| t.name).collect();
        assert_eq!(by_type, names);
    }

    /// A release before the fair lock's first modelled one (3.8.0) never
    /// draws it: lockcore would refuse every acquire.
    #[test]
    fn a_release_before_the_fair_lock_never_draws_it() {
        let old: Release = "3.7.5".parse().unwrap();
        let new: Release = "3.8.0".parse().unwrap();
        assert!(LockKind::Fair.refusal(old, true).is_some());
        let mut fair = 0;
        for seed in 0..300 {
            let w = Workload::default();
            let before = generate_typed(seed, Some(old), w, LOCK_TYPES, true);
            assert!(!objects(&before).contains(&LockKind::Fair), "seed {seed}");
            let after = generate_typed(seed, Some(new), w, LOCK_TYPES, true);
            fair += usize::from(objects(&after).contains(&LockKind::Fair));
        }
        assert!(fair > 0);
    }

    /// Under 4.7.0 no drawn lock is refused, and read locks are drawn with
    /// the watchdog too (`ReadLockTask`); misuse scripts draw too.
    #[test]
    fn a_drawn_lock_is_one_lockcore_models() {
        let batched: Release = "4.7.0".parse().unwrap();
        let misuse = Workload {
            usage: Usage::Misuse,
            kinds: crate::SwarmKinds::Swarm,
            strategy: crate::Strategy::Uniform,
        };
        let (mut reads, mut watchdog_reads) = (0, 0);
        for seed in 0..300 {
            for w in [Workload::default(), misuse] {
                let spec = generate_typed(seed, Some(batched), w, LOCK_TYPES, true);
                for t in spec.clients.iter().flat_map(|c| &c.threads) {
                    let kind = t.object().kind();
                    reads += usize::from(kind == LockKind::Read);
                    let mut leases = Vec::new();
                    watchdog(&t.steps, &mut leases);
                    let refused = leases.iter().any(|&w| kind.refusal(batched, w).is_some());
                    assert!(!refused, "seed {seed}");
                    if kind == LockKind::Read && leases.contains(&true) {
                        watchdog_reads += 1;
                    }
                }
            }
        }
        assert!(reads > 0);
        assert!(watchdog_reads > 0);
    }

    /// Whether each acquire of `steps` runs on the watchdog.
    fn watchdog(steps: &[Step], out: &mut Vec<bool>) {
        for s in steps {
            if s.is_acquire() {
                out.push(s.lease_ms().is_none());
            }
            watchdog(s.body(), out);
        }
    }

    /// Adding a type (here one that draws the write lock alone) leaves the
    /// spec of every seed that does not draw it as it was.
    #[test]
    fn adding_a_type_keeps_other_seeds_specs() {
        let extra = LockType {
            name: "write-only",
            kinds: &[LockKind::Write],
            probe: LockKind::Write,
            percent: 10,
            keys: &[LockKey::Lock],
        };
        let more: Vec<LockType> = LOCK_TYPES.iter().copied().chain([extra]).collect();
        let mut drew = 0;
        for seed in 0..300 {
            let w = Workload::default();
            let before = generate_typed(seed, None, w, LOCK_TYPES, false);
            let after = generate_typed(seed, None, w, &more, false);
            // Also the registered types: without the last, as before it.
            let fewer = &LOCK_TYPES[..LOCK_TYPES.len() - 1];
            let last = LOCK_TYPES[LOCK_TYPES.len() - 1];
            let mut r = rng::stream(seed, Stream::SwarmLockType(rng::kind_number(last.name)));
            if !r.random_bool(last.chance()) {
                assert_eq!(
                    generate_typed(seed, None, w, fewer, false),
                    before,
                    "seed {seed}"
                );
            }
            let mut r = rng::stream(seed, Stream::SwarmLockType(rng::kind_number(extra.name)));
            if r.random_bool(extra.chance()) {
                drew += 1;
            } else {
                assert_eq!(before, after, "seed {seed}");
            }
        }
        assert!(drew > 0);
    }

    /// A `delete-key` on a fair lock takes the lock's key, its queue or its
    /// timeout set; on any other object, the lock's key.
    #[test]
    fn a_delete_on_a_fair_lock_takes_one_of_its_keys() {
        let mut fair = BTreeSet::new();
        for seed in 0..20_000 {
            let spec = generate_typed(seed, None, Workload::default(), LOCK_TYPES, true);
            for f in &spec.faults.0 {
                let Fault::DeleteKey(d) = f else { continue };
                let on_fair = spec
                    .clients
                    .iter()
                    .flat_map(|c| &c.threads)
                    .any(|t| t.lock == d.lock && t.object().kind() == LockKind::Fair);
                if on_fair {
                    fair.insert(d.key);
                } else {
                    assert_eq!(d.key, LockKey::Lock, "seed {seed}");
                }
            }
        }
        assert_eq!(fair, LockKey::FAIR.into_iter().collect());
    }

    /// An acquire moves to another object in the same form with its
    /// fields; a form the object lacks (`lock-interruptibly` of a read
    /// lock) and a non-acquire do not.
    #[test]
    fn an_acquire_moves_to_the_same_form_on_another_object() {
        use crate::steps;
        let lock = Step::Lock(steps::Lock { lease_ms: Some(5) });
        let read = Step::ReadLock(steps::ReadLock {
            lease_ms: Some(5),
            is_async: false,
        });
        assert_eq!(lock.on_object(LockKind::Read), Some(read.clone()));
        assert_eq!(read.on_object(LockKind::Lock), Some(lock));
        let try_lock = Step::TryLock(steps::TryLock {
            wait_ms: Some(7),
            lease_ms: None,
        });
        let try_write = Step::TryWriteLock(steps::TryWriteLock {
            wait_ms: Some(7),
            lease_ms: None,
            is_async: false,
        });
        assert_eq!(try_lock.on_object(LockKind::Write), Some(try_write));
        // The fair lock's steps have an `async` field, false by default.
        let fair = Step::FairLock(steps::FairLock {
            lease_ms: Some(5),
            is_async: false,
        });
        let lock = Step::Lock(steps::Lock { lease_ms: Some(5) });
        assert_eq!(lock.on_object(LockKind::Fair), Some(fair.clone()));
        assert_eq!(fair.on_object(LockKind::Lock), Some(lock));
        let interruptibly = Step::LockInterruptibly(steps::LockInterruptibly { lease_ms: None });
        assert_eq!(interruptibly.on_object(LockKind::Read), None);
        assert_eq!(
            Step::Unlock(steps::Unlock {}).on_object(LockKind::Read),
            None
        );
    }

    /// Issue #47: an async acquire moves to the async form of each object
    /// of the family (the read, write, fair and fenced locks' steps with
    /// `async`, the spin lock's `-async` kinds), fields kept, and back to
    /// `RLock`'s async form; the call it makes is the async one.
    #[test]
    fn an_async_acquire_moves_to_the_async_form_of_each_family_object() {
        use crate::steps;
        let lock_async = Step::LockAsync(steps::LockAsync { lease_ms: Some(5) });
        let try_lock_async = Step::TryLockAsync(steps::TryLockAsync {
            wait_ms: Some(7),
            lease_ms: None,
        });
        let expected = [
            (LockKind::Read, "read-lock", "try-read-lock"),
            (LockKind::Write, "write-lock", "try-write-lock"),
            (LockKind::Fair, "fair-lock", "try-fair-lock"),
            (LockKind::Fenced, "fenced-lock", "try-fenced-lock"),
            (LockKind::Spin, "spin-lock-async", "try-spin-lock-async"),
        ];
        for (kind, lock_name, try_name) in expected {
            for (step, name) in [(&lock_async, lock_name), (&try_lock_async, try_name)] {
                let moved = step.on_object(kind).expect("an async form");
                assert_eq!(moved.name(), name, "{kind}");
                assert_eq!(moved.kind().call(), step.kind().call(), "{kind}");
                assert_eq!(moved.kind().object(), Some(kind));
                assert_eq!(moved.on_object(LockKind::Lock).as_ref(), Some(step));
            }
        }
        let read = Step::ReadLock(steps::ReadLock {
            lease_ms: Some(5),
            is_async: true,
        });
        assert_eq!(lock_async.on_object(LockKind::Read), Some(read));
        // A step that is one form whichever its `async` keeps its own.
        let token = Step::FencedLockAndGetToken(steps::FencedLockAndGetToken {
            lease_ms: Some(5),
            is_async: true,
        });
        assert_eq!(token.on_object(LockKind::Fenced), Some(token.clone()));
    }

    /// An async client's lock is drawn as the family's types: some seeds
    /// give a thread on the async API a read or write lock, a fair lock and
    /// a fenced lock, and each such spec is valid.
    #[test]
    fn an_async_client_draws_the_family_objects() {
        let mut drew = BTreeSet::new();
        for seed in 0..2_000 {
            let spec = generate_typed(seed, None, Workload::default(), LOCK_TYPES, true);
            let mut on_async = false;
            for t in spec.clients.iter().flat_map(|c| &c.threads) {
                let mut calls = Vec::new();
                async_calls(&t.steps, &mut calls);
                if calls.contains(&true) {
                    drew.insert(t.object().kind());
                    on_async = true;
                }
            }
            if on_async {
                let valid = crate::model::validate::validate_spec(&spec);
                assert_eq!(valid, Ok(()), "seed {seed}");
            }
        }
        for kind in [
            LockKind::Read,
            LockKind::Write,
            LockKind::Fair,
            LockKind::Fenced,
        ] {
            assert!(drew.contains(&kind), "no async thread on {kind}: {drew:?}");
        }
    }

    /// Whether each acquire of `steps` is `lockAsync` or `tryLockAsync`.
    fn async_calls(steps: &[Step], out: &mut Vec<bool>) {
        for s in steps {
            if let Some(call) = s.kind().call().filter(lockcore::Call::is_acquire) {
                use lockcore::Call::{LockAsync, TryLockAsync};
                out.push(matches!(call, LockAsync { .. } | TryLockAsync { .. }));
            }
            async_calls(s.body(), out);
        }
    }
}
