//! Mutual exclusion: no two threads believe they hold one lock at once.

use std::collections::BTreeMap;

use lockcore::{LockKind, LockName, VecMap};

use crate::judge::check::work::Count;
use crate::model::history::{Outcome, RecordKind, Who};
use crate::{History, Invariant, Violation};

/// Beliefs run from a successful acquire to the unlock call, a crash or a
/// lease-lost signal ([`RecordKind::Hold`] to [`RecordKind::Release`]).
/// Each acquisition that starts while another thread's belief is open is
/// one violation. A lock a multi-lock's acquire takes is a belief of the
/// application once that acquire returns acquired (until then the thread
/// is inside the call, not in its critical section, and a red lock may
/// still give the lock back or let its lease run out while it waits on
/// another lock's master); an acquire that fails never made it one.
pub(crate) fn check(history: &History, work: &impl Count) -> Vec<Violation> {
    // Per lock, its few open beliefs (a `BTreeMap` made and dropped a
    // node for each belief).
    let mut holders: BTreeMap<&LockName, VecMap<&Who, usize>> = BTreeMap::new();
    // The threads inside a multi-lock's acquire, and the holds it took.
    let mut acquiring: VecMap<&Who, Vec<(&LockName, usize)>> = VecMap::new();
    let mut found = Vec::new();
    for (i, r) in work.records(history) {
        match &r.kind {
            // A read or write lock's beliefs are reader-writer
            // exclusion's (readers share).
            RecordKind::Hold { lock, .. } | RecordKind::Release { lock, .. }
                if matches!(lock.kind(), LockKind::Read | LockKind::Write) => {}
            RecordKind::MultiCall { who, call, .. } if call.is_acquire() => {
                acquiring.insert(who, Vec::new());
            }
            RecordKind::MultiReturn { who, outcome, .. } => {
                let Some(taken) = acquiring.remove(&who) else {
                    continue;
                };
                if matches!(outcome, Outcome::Acquired { .. }) {
                    for (lock, j) in taken {
                        let open = holders.entry(lock).or_default();
                        found.extend(acquired(open, who, lock, (j, i), r.at));
                    }
                }
            }
            RecordKind::Hold { who, lock, .. } => {
                if let Some(taken) = acquiring.get_mut(&who) {
                    taken.push((lock, i));
                    continue;
                }
                let open = holders.entry(lock).or_default();
                found.extend(acquired(open, who, lock, (i, i), r.at));
            }
            RecordKind::Release { who, lock, .. } => {
                if let Some(taken) = acquiring.get_mut(&who)
                    && let Some(k) = taken.iter().position(|(l, _)| *l == lock)
                {
                    taken.remove(k);
                    continue;
                }
                if let Some(open) = holders.get_mut(lock) {
                    open.remove(&who);
                }
            }
            _ => {}
        }
    }
    found
}

/// `who`'s belief in `lock` opens (its hold is record `hold`, the call
/// that made it a belief record `at_record`, at `at`): a violation if
/// another thread's is open.
fn acquired<'h>(
    open: &mut VecMap<&'h Who, usize>,
    who: &'h Who,
    lock: &LockName,
    (hold, at_record): (usize, usize),
    at: crate::SimTime,
) -> Option<Violation> {
    let found = open.iter().find(|(w, _)| **w != who).map(|(other, &j)| {
        let events = if hold == at_record {
            vec![j, hold]
        } else {
            vec![j, hold, at_record]
        };
        Violation::new(
            Invariant::MutualExclusion,
            at,
            [who.client.clone(), other.client.clone()],
            format!("{who} acquired {lock} while {other} still believes it holds it"),
            events,
        )
    });
    open.insert(who, hold);
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::check::sample::{self, Sample, who};
    use crate::judge::check::work::Work;
    use crate::model::history::ReleaseCause;

    /// Two holds in turn (A unlocks before B acquires) pass.
    #[test]
    fn holds_in_turn_pass() {
        let h = Sample::new(5)
            .hold(10, who("A", 1), 30_000, None)
            .release(20, who("A", 1), ReleaseCause::Unlock)
            .hold(25, who("B", 1), 30_000, None)
            .build();
        assert!(check(&h, &Work::default()).is_empty());
    }

    /// B acquiring while A still believes it holds (A's lease expired
    /// during a pause, document 002's STW scenario) is one violation naming
    /// both clients and both holds.
    #[test]
    fn overlapping_holds_fail() {
        let h = Sample::new(5)
            .hold(10, who("A", 1), 100, None)
            .hold(200, who("B", 1), 100, None)
            .release(300, who("A", 1), ReleaseCause::Unlock)
            .build();
        let v = check(&h, &Work::default());
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].clients, vec!["A".to_owned(), "B".to_owned()]);
        assert_eq!(v[0].events, vec![0, 1]);
        assert_eq!(v[0].at, crate::SimTime::from_ms(200));
    }

    /// A red lock's acquire takes the lock, then waits on another
    /// master past the lease (4.7.0 seed 63844 of a cluster): B taking
    /// the lock then is no violation, since A is still inside the call,
    /// and the acquire fails. Had it returned acquired with B's belief
    /// still open, that would be one, at its return.
    #[test]
    fn a_multi_locks_holds_are_beliefs_once_its_acquire_returns() {
        let locks = vec![sample::lock(), LockName::new("other").unwrap()];
        let multi = lockcore::MultiLock::new(lockcore::MultiKind::Red, locks).unwrap();
        let call = lockcore::Call::Lock { lease: None };
        let multi_call = |w| RecordKind::MultiCall {
            who: w,
            multi: multi.clone(),
            call: call.clone(),
        };
        let multi_return = |w, outcome| RecordKind::MultiReturn {
            who: w,
            multi: multi.clone(),
            call: call.clone(),
            outcome,
        };
        let sample = |outcome| {
            Sample::new(5)
                .at(5, multi_call(who("A", 2)))
                .hold(10, who("A", 2), 100, None)
                .hold(200, who("B", 1), 30_000, None)
                .at(300, multi_return(who("A", 2), outcome))
                .build()
        };
        let failed = sample(crate::model::history::Outcome::NotAcquired);
        assert!(check(&failed, &Work::default()).is_empty());
        let took = sample(crate::model::history::Outcome::Acquired { token: None });
        let v = check(&took, &Work::default());
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].at, crate::SimTime::from_ms(300));
        assert_eq!(v[0].events, vec![2, 1, 3]);
    }

    /// A crash ends a belief: a later holder is no violation.
    #[test]
    fn crash_ends_the_belief() {
        let h = Sample::new(5)
            .hold(10, who("A", 1), 100, None)
            .release(50, who("A", 1), ReleaseCause::Crash)
            .hold(200, who("B", 1), 100, None)
            .build();
        assert!(check(&h, &Work::default()).is_empty());
    }
}
