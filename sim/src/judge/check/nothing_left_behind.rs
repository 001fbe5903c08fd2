//! Nothing left behind: once every thread has left a lock (the run ends
//! with no thread in a call on it and Redis naming no holder), Redis
//! keeps none of its family's keys beside the hash: no fair-lock queue
//! or timeout-set entry, reader timeout key or unlock latch without a TTL
//! (the engines record them as [`RecordKind::Leftover`]; a key with a
//! TTL is taken as gone). `lock-left-behind` judges the hash itself, per
//! thread that finished holding it; this judges what outlives every
//! thread, per key, and names the key's kind.

use lockcore::{LockKind, LockName, VecMap};

use crate::judge::check::work::Count;
use crate::model::history::{RecordKind, Who};
use crate::{History, Invariant, Violation};

/// One violation per leftover key of a lock that no thread is calling
/// and Redis names no holder of, with the last call on the lock of each
/// thread the key names.
pub(crate) fn check(history: &History, work: &impl Count) -> Vec<Violation> {
    let mut holder: VecMap<LockName, bool> = VecMap::new();
    let mut calling: VecMap<(&Who, LockName), usize> = VecMap::new();
    let mut last_call: VecMap<(&Who, LockName), usize> = VecMap::new();
    let mut found = Vec::new();
    for (i, r) in work.records(history) {
        match &r.kind {
            RecordKind::Server { lock, holder: h, .. } => {
                holder.insert(lock.with_kind(LockKind::Lock), h.is_some());
            }
            RecordKind::Call { who, lock, .. } => {
                calling.insert((who, lock.with_kind(LockKind::Lock)), i);
                last_call.insert((who, lock.with_kind(LockKind::Lock)), i);
            }
            RecordKind::Return { who, lock, .. } => {
                calling.remove(&(who, lock.with_kind(LockKind::Lock)));
            }
            RecordKind::Crash { process } => {
                let dead: Vec<(&Who, LockName)> = calling
                    .iter()
                    .filter(|((w, _), _)| w.client == process.client && w.life == process.life)
                    .map(|(k, _)| k.clone())
                    .collect();
                for k in dead {
                    calling.remove(&k);
                }
            }
            RecordKind::Leftover {
                lock,
                what,
                key,
                entries,
            } => {
                let held = holder.get(lock).copied().unwrap_or(false);
                work.tick(calling.len() as u64);
                if held || calling.iter().any(|((_, l), _)| l == lock) {
                    continue;
                }
                let mut events: Vec<usize> = entries
                    .iter()
                    .filter_map(|w| last_call.get(&(w, lock.clone())).copied())
                    .collect();
                events.push(i);
                events.sort_unstable();
                events.dedup();
                let names: Vec<String> = entries.iter().map(Who::to_string).collect();
                let of = if names.is_empty() {
                    String::new()
                } else {
                    format!(" naming {}", names.join(", "))
                };
                found.push(Violation::new(
                    Invariant::NothingLeftBehind,
                    r.at,
                    entries.iter().map(|w| w.client.clone()),
                    format!(
                        "{lock}'s {} {key}{of} is left without a TTL after every thread left",
                        what.words()
                    ),
                    events,
                ));
            }
            _ => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::check::sample::{Sample, lock, lock_call, try_wait, who};
    use crate::judge::check::work::Work;
    use crate::model::history::Outcome;
    use crate::model::leftover::LeftoverKind;

    fn queue(entries: Vec<Who>) -> RecordKind {
        RecordKind::Leftover {
            lock: lock(),
            what: LeftoverKind::Queue,
            key: "redisson_lock_queue:{redisson:lock}".to_owned(),
            entries,
        }
    }

    /// B's tryLock threw and left its queue entry: once A has unlocked
    /// and nobody calls, the entry is a violation naming the queue, B and
    /// B's call.
    #[test]
    fn an_entry_after_everyone_left_fails() {
        let h = Sample::new(5)
            .server(10, Some(who("A", 1)))
            .call(1_000, who("B", 1), try_wait(60_000))
            .ret(
                31_000,
                who("B", 1),
                try_wait(60_000),
                Outcome::Error {
                    message: "response timeout".to_owned(),
                    script: false,
                },
            )
            .server(35_000, None)
            .at(100_000, queue(vec![who("B", 1)]))
            .build();
        let v = check(&h, &Work::default());
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].events, vec![1, 4]);
        assert_eq!(v[0].clients, ["B"]);
        assert!(v[0].detail.contains("queue redisson_lock_queue:"), "{}", v[0].detail);
    }

    /// A thread still waiting at the end, or a holder, keeps the queue
    /// in use: no violation.
    #[test]
    fn a_lock_still_in_use_passes() {
        let waiting = Sample::new(5)
            .server(10, None)
            .call(1_000, who("B", 1), lock_call())
            .at(100_000, queue(vec![who("B", 1)]))
            .build();
        assert!(check(&waiting, &Work::default()).is_empty());
        let held = Sample::new(5)
            .server(10, Some(who("A", 1)))
            .at(100_000, queue(vec![who("B", 1)]))
            .build();
        assert!(check(&held, &Work::default()).is_empty());
    }
}
