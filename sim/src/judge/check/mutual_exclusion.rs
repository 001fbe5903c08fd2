//! Mutual exclusion: no two threads believe they hold one lock at once.

use std::collections::BTreeMap;

use lockcore::{LockKind, LockName, VecMap};

use crate::judge::check::work::Count;
use crate::model::history::{RecordKind, Who};
use crate::{History, Invariant, Violation};

/// Beliefs run from a successful acquire to the unlock call, a crash or a
/// lease-lost signal ([`RecordKind::Hold`] to [`RecordKind::Release`]).
/// Each acquisition that starts while another thread's belief is open is
/// one violation.
pub(crate) fn check(history: &History, work: &impl Count) -> Vec<Violation> {
    // Per lock, its few open beliefs (a `BTreeMap` made and dropped a
    // node for each belief).
    let mut holders: BTreeMap<&LockName, VecMap<&Who, usize>> = BTreeMap::new();
    let mut found = Vec::new();
    for (i, r) in work.records(history) {
        match &r.kind {
            // A read or write lock's beliefs are reader-writer
            // exclusion's (readers share).
            RecordKind::Hold { lock, .. } | RecordKind::Release { lock, .. }
                if matches!(lock.kind(), LockKind::Read | LockKind::Write) => {}
            RecordKind::Hold { who, lock, .. } => {
                let open = holders.entry(lock).or_default();
                if let Some((other, &j)) = open.iter().find(|(w, _)| **w != who) {
                    found.push(Violation::new(
                        Invariant::MutualExclusion,
                        r.at,
                        [who.client.clone(), other.client.clone()],
                        format!("{who} acquired {lock} while {other} still believes it holds it"),
                        vec![j, i],
                    ));
                }
                open.insert(who, i);
            }
            RecordKind::Release { who, lock, .. } => {
                if let Some(open) = holders.get_mut(lock) {
                    open.remove(&who);
                }
            }
            _ => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::check::sample::{Sample, who};
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
