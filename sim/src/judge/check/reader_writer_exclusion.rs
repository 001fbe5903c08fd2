//! Reader-writer exclusion: while a thread believes it holds an
//! `RReadWriteLock`'s write lock, no other thread believes it holds that
//! lock's read or write lock; readers may share.

use std::collections::BTreeMap;

use lockcore::{LockKind, VecMap};

use crate::judge::check::work::Count;
use crate::model::history::{RecordKind, Who};
use crate::{History, Invariant, Violation};

/// Beliefs run from [`RecordKind::Hold`] to [`RecordKind::Release`], as
/// for mutual exclusion, grouped by the key: the read and the write lock
/// of one key are two objects of one lock. An acquisition that starts
/// while another thread's belief on the key is open, one of the two
/// being a write, is one violation. `RLock` beliefs are mutual
/// exclusion's.
pub(crate) fn check(history: &History, work: &impl Count) -> Vec<Violation> {
    let is_rw = |kind| matches!(kind, LockKind::Read | LockKind::Write);
    let mut holders: BTreeMap<&str, VecMap<&Who, (usize, LockKind)>> = BTreeMap::new();
    let mut found = Vec::new();
    for (i, r) in work.records(history) {
        match &r.kind {
            RecordKind::Hold { who, lock, .. } if is_rw(lock.kind()) => {
                let open = holders.entry(lock.as_str()).or_default();
                let writes = lock.kind() == LockKind::Write;
                let clash = open
                    .iter()
                    .find(|(w, (_, kind))| **w != who && (writes || *kind == LockKind::Write));
                if let Some((other, &(j, kind))) = clash {
                    let theirs = lock.with_kind(kind);
                    found.push(Violation::new(
                        Invariant::ReaderWriterExclusion,
                        r.at,
                        [who.client.clone(), other.client.clone()],
                        format!("{who} acquired the {lock} while {other} still believes it holds the {theirs}"),
                        vec![j, i],
                    ));
                }
                open.insert(who, (i, lock.kind()));
            }
            RecordKind::Release { who, lock, .. } if is_rw(lock.kind()) => {
                if let Some(open) = holders.get_mut(lock.as_str()) {
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
    use lockcore::LockName;

    fn object(kind: LockKind) -> LockName {
        LockName::of_kind("rw", kind).unwrap()
    }

    /// Two readers at once pass; a writer after both let go passes.
    #[test]
    fn readers_share() {
        let h = Sample::new(5)
            .hold_on(10, who("A", 1), object(LockKind::Read))
            .hold_on(20, who("B", 1), object(LockKind::Read))
            .release_on(30, who("A", 1), object(LockKind::Read), ReleaseCause::Unlock)
            .release_on(40, who("B", 1), object(LockKind::Read), ReleaseCause::Unlock)
            .hold_on(50, who("C", 1), object(LockKind::Write))
            .build();
        assert!(check(&h, &Work::default()).is_empty());
    }

    /// A writer acquiring while a reader still believes it holds (the
    /// reader's timeout keys expired, #1604) is one violation naming
    /// both; so is a reader acquiring under a writer.
    #[test]
    fn a_writer_beside_a_reader_fails() {
        let h = Sample::new(5)
            .hold_on(10, who("A", 1), object(LockKind::Read))
            .hold_on(200, who("B", 1), object(LockKind::Write))
            .hold_on(300, who("C", 1), object(LockKind::Read))
            .build();
        let v = check(&h, &Work::default());
        assert_eq!(v.len(), 2, "{v:?}");
        assert_eq!(v[0].clients, vec!["A".to_owned(), "B".to_owned()]);
        assert_eq!(v[0].events, vec![0, 1]);
        assert_eq!(v[1].clients, vec!["B".to_owned(), "C".to_owned()]);
    }

    /// `RLock` beliefs on the same key are not this invariant's.
    #[test]
    fn rlock_beliefs_are_ignored() {
        let h = Sample::new(5)
            .hold_on(10, who("A", 1), object(LockKind::Lock))
            .hold_on(20, who("B", 1), object(LockKind::Write))
            .build();
        assert!(check(&h, &Work::default()).is_empty());
    }
}
