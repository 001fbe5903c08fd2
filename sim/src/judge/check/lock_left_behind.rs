//! Lock left behind: a thread finished its script, yet its lock is still
//! held at the end (the documents' experiment 1: never unlocking, the
//! watchdog keeps the lock for ever).

use std::collections::BTreeMap;

use lockcore::{LockName, VecMap};

use crate::judge::check::work::Count;
use crate::model::history::{RecordKind, Who};
use crate::{History, Invariant, Violation};

/// At the end of the history, for every lock: if Redis still holds it for a
/// thread that recorded [`RecordKind::Done`], or a thread that is done
/// still believes it holds it, that is one violation per (thread, lock).
pub(crate) fn check(history: &History, work: &impl Count) -> Vec<Violation> {
    // Few threads and locks, each written over and over: sorted vectors
    // (a `BTreeMap` made and dropped a node for each belief).
    let mut done: VecMap<&Who, usize> = VecMap::new();
    let mut beliefs: VecMap<(&Who, &LockName), usize> = VecMap::new();
    let mut server: VecMap<&LockName, (Option<&Who>, usize)> = VecMap::new();
    for (i, r) in work.records(history) {
        match &r.kind {
            RecordKind::Done { who } => {
                done.insert(who, i);
            }
            RecordKind::Hold { who, lock, .. } => {
                beliefs.insert((who, lock), i);
            }
            RecordKind::Release { who, lock, .. } => {
                beliefs.remove(&(who, lock));
            }
            RecordKind::Server { lock, holder, .. } => {
                server.insert(lock, (holder.as_ref(), i));
            }
            _ => {}
        }
    }
    let mut left: BTreeMap<(&Who, &LockName), (Vec<usize>, bool, bool)> = BTreeMap::new();
    for ((who, lock), &i) in beliefs.iter() {
        if let Some(&d) = done.get(who) {
            let e = left.entry((*who, *lock)).or_default();
            e.0.extend([i, d]);
            e.1 = true;
        }
    }
    for (lock, (holder, i)) in server.iter() {
        if let Some(who) = holder
            && let Some(&d) = done.get(who)
        {
            let e = left.entry((*who, *lock)).or_default();
            e.0.extend([d, *i]);
            e.2 = true;
        }
    }
    left.into_iter()
        .map(|((who, lock), (mut events, believed, on_server))| {
            events.sort_unstable();
            events.dedup();
            let at = events
                .iter()
                .filter_map(|&e| history.records.get(e).map(|r| r.at))
                .max()
                .unwrap_or_default();
            let state = match (believed, on_server) {
                (true, true) => "still holds it on Redis and believes it does",
                (true, false) => "still believes it holds it",
                _ => "still holds it on Redis",
            };
            Violation::new(
                Invariant::LockLeftBehind,
                at,
                [who.client.clone()],
                format!("{who} finished its script but {state}: {lock} left behind"),
                events,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::check::sample::{Sample, who};
    use crate::judge::check::work::Work;
    use crate::model::history::ReleaseCause;

    /// Experiment 1 of the documents: lock, work, never unlock; the
    /// watchdog keeps the key alive after the script is over.
    #[test]
    fn never_unlocking_fails() {
        let h = Sample::new(5)
            .server(10, Some(who("A", 1)))
            .hold(12, who("A", 1), 30_000, None)
            .at(1_000, RecordKind::Done { who: who("A", 1) })
            .build();
        let v = check(&h, &Work::default());
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].events, vec![0, 1, 2]);
        assert!(v[0].detail.contains("A/t1"), "{}", v[0].detail);
    }

    /// Unlocking before finishing leaves nothing behind.
    #[test]
    fn unlocking_passes() {
        let h = Sample::new(5)
            .server(10, Some(who("A", 1)))
            .hold(12, who("A", 1), 30_000, None)
            .release(500, who("A", 1), ReleaseCause::Unlock)
            .server(503, None)
            .at(504, RecordKind::Done { who: who("A", 1) })
            .build();
        assert!(check(&h, &Work::default()).is_empty());
    }

    /// A holder that is still running at the end (its script not done)
    /// is not a lock left behind.
    #[test]
    fn holder_still_running_passes() {
        let h = Sample::new(5)
            .server(10, Some(who("A", 1)))
            .hold(12, who("A", 1), 30_000, None)
            .build();
        assert!(check(&h, &Work::default()).is_empty());
    }
}
