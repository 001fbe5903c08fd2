//! Liveness after healing: once every fault is over, the lock becomes
//! acquirable again within a bound.
//!
//! A lease-based lock may lose liveness for a while during faults (a
//! crashed holder's key lives out its lease; a waiter cut off from Redis
//! cannot hear it was freed), but once the run has healed nothing of the
//! fault may linger: a key no thread believes it holds must expire, and a
//! free lock must go to a waiter. A watchdog that keeps renewing a key its
//! thread unlocked, or a waiter whose wake-up was lost for good, breaks
//! this even when the fault that started it is long over.

use std::collections::BTreeMap;

use lockcore::{Call, LockName, VecMap};

use crate::judge::check::work::Count;
use crate::model::history::{Phase, RecordKind, Who};
use crate::{History, Invariant, SimTime, Violation};

/// What the bound allows beyond the longest lease and the faults' own
/// hold-ups: a command's timeout and retries (Redisson's defaults, 3 s and
/// 3 x 1.5 s), the timer tick and a few round trips.
pub(crate) const GRACE_MS: u64 = 10_000;

/// Heal is the instant the last fault's effect ends (a crash's, at the
/// crash; a partition's, when the last message it held arrives). From
/// then on, for each lock, a stretch in which Redis holds the
/// key for a thread outside its critical section (between its hold and
/// its release), or has it free while a thread waits in `lock()` or
/// `tryLock(wait)`, may not last longer than the bound: the longest lease
/// any hold had or any acquire asked for, plus every fault's delay of a
/// key's freedom (a Redis pause, a clock jump back), plus [`GRACE_MS`].
/// Only the part of a
/// stretch after heal counts; a stretch still open at the end counts to
/// the horizon. O(n log n): one pass with ordered maps per lock.
pub(crate) fn check(history: &History, work: &impl Count) -> Vec<Violation> {
    let (heal, bound) = heal_and_bound(history, work);
    // By key: the read and the write lock of a key are one lock to Redis
    // (its `Server` records name the key), and a waiter for either waits
    // for the key. Each key keeps the first name it was seen by, for text.
    let mut locks: BTreeMap<&str, (&LockName, LockState<'_>)> = BTreeMap::new();
    let mut waits: VecMap<&Who, &LockName> = VecMap::new();
    let mut found = Vec::new();
    for (i, r) in work.records(history) {
        let lock = match &r.kind {
            RecordKind::Hold { who, lock, .. } => {
                state_of(&mut locks, lock).holding.insert(who, ());
                lock
            }
            RecordKind::Release { who, lock, .. } => {
                state_of(&mut locks, lock).holding.remove(&who);
                lock
            }
            RecordKind::Server { lock, holder, .. } => {
                state_of(&mut locks, lock).server = holder.as_ref();
                lock
            }
            RecordKind::Call { who, lock, call } if waits_for_it(call) => {
                waits.insert(who, lock);
                state_of(&mut locks, lock).waiting.insert(who, ());
                lock
            }
            RecordKind::Return { who, lock, .. } => {
                waits.remove(&who);
                state_of(&mut locks, lock).waiting.remove(&who);
                lock
            }
            RecordKind::Crash { process } => {
                let dead: Vec<&Who> = waits
                    .keys()
                    .filter(|w| w.client == process.client && w.life == process.life)
                    .copied()
                    .collect();
                for who in dead {
                    if let Some(lock) = waits.remove(&who)
                        && let Some((lock, state)) = locks.get_mut(lock.as_str())
                    {
                        state.waiting.remove(&who);
                        state.update(i, r.at, lock, (heal, bound), &mut found);
                    }
                }
                continue;
            }
            _ => continue,
        };
        if let Some((lock, state)) = locks.get_mut(lock.as_str()) {
            state.update(i, r.at, lock, (heal, bound), &mut found);
        }
    }
    for (lock, state) in locks.values_mut() {
        state.close(history.meta.horizon, lock, (heal, bound), &mut found);
    }
    found
}

/// The state of `lock`'s key, made on first sight.
fn state_of<'h, 'm>(
    locks: &'m mut BTreeMap<&'h str, (&'h LockName, LockState<'h>)>,
    lock: &'h LockName,
) -> &'m mut LockState<'h> {
    &mut locks
        .entry(lock.as_str())
        .or_insert_with(|| (lock, LockState::default()))
        .1
}

/// Calls that wait for the lock.
fn waits_for_it(call: &Call) -> bool {
    call.waits()
}

/// The heal instant and the bound, in ms.
fn heal_and_bound(history: &History, work: &impl Count) -> (SimTime, u64) {
    let (mut heal, mut lease, mut delays) = (SimTime::ZERO, 0, 0u64);
    for (_, r) in work.records(history) {
        match &r.kind {
            RecordKind::Fault {
                fault,
                phase: Phase::Begin,
            } => {
                let end = fault.effect_end_ms().unwrap_or(fault.at_ms());
                heal = heal.max(SimTime::from_ms(end));
                delays = delays.saturating_add(fault.kind().free_delay_ms().unwrap_or(0));
            }
            RecordKind::Crash { .. } => heal = heal.max(r.at),
            // A partition's effect lasts until the last message it held
            // arrives, with TCP's first retransmission after the heal:
            // what the client sends meanwhile queues behind it (4.7.0
            // seed 969676: B's probe held from 56 s to 108 s after a
            // partition that ended at 64 s, and B's lock() from 82 s timed
            // out behind it with the lock free).
            RecordKind::Held { until, .. } => heal = heal.max(*until),
            RecordKind::Hold { lease_ms, .. } => lease = lease.max(*lease_ms),
            // A key set by an acquire whose caller gave up (an interrupt)
            // has no hold, but lives its TTL.
            RecordKind::Server {
                holder: Some(_),
                ttl_ms,
                ..
            } => lease = lease.max(u64::try_from(*ttl_ms).unwrap_or(0)),
            // An acquire whose reply was lost sets its key all the same.
            RecordKind::Call { call, .. } if call.lease().is_some() => {
                lease = lease.max(call.lease().map_or(0, |l| l.0));
            }
            _ => {}
        }
    }
    (heal, lease.saturating_add(delays).saturating_add(GRACE_MS))
}

/// One lock as the sweep sees it.
#[derive(Default)]
struct LockState<'h> {
    /// Who Redis says holds it.
    server: Option<&'h Who>,
    /// The threads that believe they hold it.
    holding: VecMap<&'h Who, ()>,
    /// The threads waiting for it.
    waiting: VecMap<&'h Who, ()>,
    /// The unavailable stretch under way: its first record, its start and
    /// what makes it unavailable.
    stuck: Option<(usize, SimTime, Why<'h>)>,
}

/// Why no one can have a lock, kept as references and worded only when a
/// stretch is reported (the sweep asks after every record).
#[derive(Debug, PartialEq)]
enum Why<'h> {
    /// Redis kept it for a thread outside its critical section.
    KeptFor(&'h Who),
    /// It was free while these threads waited.
    FreeWhile(Vec<&'h Who>),
}

impl std::fmt::Display for Why<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Why::KeptFor(holder) => write!(
                f,
                "Redis kept it for {holder}, which was not in its critical section"
            ),
            Why::FreeWhile(waiting) => {
                f.write_str("it was free while ")?;
                for (i, w) in waiting.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{w}")?;
                }
                f.write_str(" waited")
            }
        }
    }
}

impl<'h> LockState<'h> {
    /// Why no one can have the lock now, if no one can. A key is in use
    /// while any thread believes it holds it: a read lock's hash names one
    /// field in its `Server` record (a crashed reader's, say) while other
    /// readers hold it in their critical sections, and an exclusive key
    /// held by a thread other than its holder is mutual exclusion's to
    /// judge, not this check's.
    fn unavailable(&self) -> Option<Why<'h>> {
        match self.server {
            Some(holder) if self.holding.is_empty() => Some(Why::KeptFor(holder)),
            None if !self.waiting.is_empty() => {
                Some(Why::FreeWhile(self.waiting.keys().copied().collect()))
            }
            _ => None,
        }
    }

    /// Opens or closes the stretch after record `i`.
    fn update(
        &mut self,
        i: usize,
        at: SimTime,
        lock: &LockName,
        judge: (SimTime, u64),
        found: &mut Vec<Violation>,
    ) {
        match (self.unavailable(), &mut self.stuck) {
            (Some(why), None) => self.stuck = Some((i, at, why)),
            // The stretch goes on for another reason: report the latest.
            (Some(why), Some((_, _, was))) => *was = why,
            (None, Some(_)) => self.close(at, lock, judge, found),
            (None, None) => {}
        }
    }

    /// Ends the stretch under way at `end`, judging it.
    fn close(
        &mut self,
        end: SimTime,
        lock: &LockName,
        (heal, bound): (SimTime, u64),
        found: &mut Vec<Violation>,
    ) {
        let Some((i, start, why)) = self.stuck.take() else {
            return;
        };
        let from = start.max(heal);
        if end.as_ms().saturating_sub(from.as_ms()) <= bound {
            return;
        }
        let clients = self
            .server
            .into_iter()
            .chain(self.waiting.keys().copied())
            .map(|w| w.client.clone());
        found.push(Violation::new(
            Invariant::Liveness,
            from.plus_ms(bound),
            clients,
            format!(
                "{lock} stayed unavailable from {from} (heal at {heal}) to {end}: {why} (bound {bound}ms)"
            ),
            vec![i],
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::check::sample::{Sample, lock_call, who};
    use crate::judge::check::work::Work;
    use crate::model::history::{Outcome, ReleaseCause};

    /// A key kept alive for a thread that unlocked (Redisson #7272: a
    /// renewal outlives the unlock) keeps the lock from everyone.
    #[test]
    fn key_kept_for_a_thread_that_unlocked_fails() {
        let h = Sample::new(5)
            .server(10, Some(who("A", 1)))
            .hold(12, who("A", 1), 30_000, None)
            .release(1_000, who("A", 1), ReleaseCause::Unlock)
            .at(100_000, RecordKind::Done { who: who("A", 1) })
            .build();
        let v = check(&h, &Work::default());
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].detail.contains("not in its critical section"), "{v:?}");
        assert_eq!(v[0].at, SimTime::from_ms(1_000 + 40_000));
    }

    /// The same key expiring within its lease after the unlock is no
    /// failure: that is what a lost unlock reply costs.
    #[test]
    fn key_expiring_within_its_lease_passes() {
        let h = Sample::new(5)
            .server(10, Some(who("A", 1)))
            .hold(12, who("A", 1), 30_000, None)
            .release(1_000, who("A", 1), ReleaseCause::Unlock)
            .server(31_000, None)
            .at(100_000, RecordKind::Done { who: who("A", 1) })
            .build();
        assert!(check(&h, &Work::default()).is_empty());
    }

    /// A waiter left asleep while the lock is free fails; one that gets
    /// it passes.
    #[test]
    fn waiter_asleep_on_a_free_lock_fails() {
        let asleep = Sample::new(5)
            .server(10, Some(who("A", 1)))
            .hold(12, who("A", 1), 30_000, None)
            .call(20, who("B", 1), lock_call())
            .release(1_000, who("A", 1), ReleaseCause::Unlock)
            .server(1_003, None)
            .at(100_000, RecordKind::Done { who: who("A", 1) })
            .build();
        assert_eq!(check(&asleep, &Work::default()).len(), 1);
        let woken = Sample::new(5)
            .server(10, Some(who("A", 1)))
            .hold(12, who("A", 1), 30_000, None)
            .call(20, who("B", 1), lock_call())
            .release(1_000, who("A", 1), ReleaseCause::Unlock)
            .server(1_003, None)
            .server(1_010, Some(who("B", 1)))
            .ret(
                1_012,
                who("B", 1),
                lock_call(),
                Outcome::Acquired { token: None },
            )
            .hold(1_012, who("B", 1), 30_000, None)
            .at(100_000, RecordKind::Done { who: who("A", 1) })
            .build();
        assert!(check(&woken, &Work::default()).is_empty());
    }

    /// A crashed reader's field named by Redis while live readers hold
    /// the read lock in their critical sections is no stretch; once they
    /// have left, the field's leftover lifetime is (found by `explore
    /// --strategy directed` seed 1 under 3.23.4, which was called a liveness
    /// defect for 40 s of live readers).
    #[test]
    fn a_crashed_readers_field_under_live_readers_passes() {
        let live = Sample::new(5)
            .server(10, Some(who("C", 2)))
            .hold(12, who("C", 2), 30_000, None)
            .release(20, who("C", 2), ReleaseCause::Crash)
            .hold(30, who("D", 1), 30_000, None)
            .call(40, who("A", 1), lock_call())
            .release(90_000, who("D", 1), ReleaseCause::Unlock)
            .server(92_000, None)
            .server(92_010, Some(who("A", 1)))
            .ret(
                92_012,
                who("A", 1),
                lock_call(),
                Outcome::Acquired { token: None },
            )
            .hold(92_012, who("A", 1), 30_000, None)
            .at(150_000, RecordKind::Done { who: who("A", 1) })
            .build();
        assert!(check(&live, &Work::default()).is_empty());
        let left = Sample::new(5)
            .server(10, Some(who("C", 2)))
            .hold(12, who("C", 2), 30_000, None)
            .release(20, who("C", 2), ReleaseCause::Crash)
            .hold(30, who("D", 1), 30_000, None)
            .release(1_000, who("D", 1), ReleaseCause::Unlock)
            .at(150_000, RecordKind::Done { who: who("D", 1) })
            .build();
        let v = check(&left, &Work::default());
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].detail.contains("Redis kept it for C/t2"), "{v:?}");
    }

    /// A lock held by a thread in its critical section is available in
    /// the lock's sense, however long the work.
    #[test]
    fn a_long_critical_section_passes() {
        let h = Sample::new(5)
            .server(10, Some(who("A", 1)))
            .hold(12, who("A", 1), 30_000, None)
            .call(20, who("B", 1), lock_call())
            .at(110_000, RecordKind::Done { who: who("B", 1) })
            .build();
        assert!(check(&h, &Work::default()).is_empty());
    }
}
