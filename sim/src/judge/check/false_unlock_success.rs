//! No false unlock successes: an unlock that returns normally was run
//! for a thread that still held the lock. One whose hold was already lost
//! (the key expired, was deleted, or Redis lost it) and that returns
//! normally all the same hides the loss from the application, which
//! `RLock` tells it of with `IllegalMonitorStateException`; the read and
//! the write lock did not up to Redisson 3.43.x (commit 1ce49b7a2:
//! their unlock answered 1 when K had no `mode`).

use std::collections::BTreeMap;

use lockcore::{Call, LockKind, Purpose, VecMap};

use crate::judge::check::work::Count;
use crate::model::history::{Outcome, RecordKind, ReleaseCause, ServerCause, Who};
use crate::{History, Invariant, Violation};

/// A thread's belief that it holds one object of a key, from its
/// [`RecordKind::Hold`] to its [`RecordKind::Release`].
#[derive(Default)]
struct Belief {
    /// The record at which Redis was seen without the key since the
    /// thread last acquired it (by any object of the key).
    lost: Option<usize>,
}

/// A belief is lost when Redis is seen without its key (holder `None`)
/// for any cause but an unlock of the believer's own process: an expiry,
/// a delete, a restart or failover, another process's `forceUnlock`. Its
/// own process's unlock is left out, so an unlock that ran, lost its
/// reply and was sent again (answered from the 3.24+ latch) never counts,
/// nor does a sibling thread's release. The loss ends when the thread
/// holds again: an acquire of it returns, or Redis names it holder (a
/// re-entrant acquire that timed out on the client yet ran once a Redis
/// pause ended made the key its again).
///
/// An unlock is judged by what was lost before it was called: a loss
/// while it is out may come after the script ran (its reply late), which
/// the history cannot tell apart. A hold made again while it is out
/// (Redis names the thread holder) clears it. One whose thread had lost its hold
/// before the call and that returned normally is one violation, its
/// events the loss, the call and the return. It is the lock's own
/// answer: a fault, or a lease too short for the work, may explain the
/// loss, never the report of a release that did not happen, so it is
/// marked [`Violation::own_doing`]. One pass: O(n log n).
pub(crate) fn check(history: &History, work: &impl Count) -> Vec<Violation> {
    // By key (the read and the write lock of one key are objects of one
    // lock, and Redis's view is the key's), then by thread and object.
    let mut open: BTreeMap<&str, VecMap<(&Who, LockKind), Belief>> = BTreeMap::new();
    // Beliefs just ended by a last unlock, lost before it.
    let mut let_go: VecMap<(&Who, &str, LockKind), usize> = VecMap::new();
    // The unlocks out, with the loss their thread had when it called.
    let mut pending: VecMap<(&Who, &str, LockKind), (usize, usize)> = VecMap::new();
    let mut found = Vec::new();
    for (i, r) in work.records(history) {
        match &r.kind {
            RecordKind::Hold { who, lock, .. } => {
                work.search(let_go.len());
                let_go.remove(&(who, lock.as_str(), lock.kind()));
                let beliefs = open.entry(lock.as_str()).or_default();
                work.search(beliefs.len());
                beliefs.insert((who, lock.kind()), Belief::default());
            }
            RecordKind::Release { who, lock, cause } => {
                let Some(beliefs) = open.get_mut(lock.as_str()) else {
                    continue;
                };
                work.search(beliefs.len());
                let belief = beliefs.remove(&(who, lock.kind()));
                // The thread lets go as it calls its last unlock (the
                // release is recorded first): that call is judged by the
                // belief it ends.
                if let (Some(loss), ReleaseCause::Unlock) = (belief.and_then(|b| b.lost), cause) {
                    let_go.insert((who, lock.as_str(), lock.kind()), loss);
                }
            }
            RecordKind::Server {
                lock,
                holder,
                cause,
                ..
            } => {
                let by_own = |who: &Who, purposes: &[Purpose]| {
                    matches!(cause, ServerCause::Command { by, purpose }
                        if *by == who.process() && purposes.contains(purpose))
                };
                // Redis names the thread holder: not a sibling's acquire
                // of the same process (Redisson's testExpireWrite).
                let holds_again = |who: &Who| holder.as_ref() == Some(who);
                // An acquire that ran late (its call timed out) may make
                // the key the thread's again while its unlock is out,
                // before the unlock's script runs.
                work.tick(pending.len() as u64);
                pending.retain(|(who, key, _), _| !(*key == lock.as_str() && holds_again(who)));
                let Some(beliefs) = open.get_mut(lock.as_str()) else {
                    continue;
                };
                work.tick(beliefs.len() as u64);
                for ((who, _), b) in beliefs.iter_mut() {
                    if holds_again(who) {
                        b.lost = None;
                    } else if holder.is_none() && !by_own(who, &[Purpose::Unlock, Purpose::ForceUnlock]) {
                        b.lost.get_or_insert(i);
                    }
                }
            }
            RecordKind::Return {
                who,
                lock,
                outcome: Outcome::Acquired { .. },
                ..
            } => {
                if let Some(beliefs) = open.get_mut(lock.as_str()) {
                    work.tick(beliefs.len() as u64);
                    for (_, b) in beliefs.iter_mut().filter(|((w, _), _)| *w == who) {
                        b.lost = None;
                    }
                }
            }
            RecordKind::Call {
                who,
                lock,
                call: Call::Unlock,
            } => {
                let key = (who, lock.as_str(), lock.kind());
                work.search(let_go.len());
                let last = let_go.remove(&key);
                let lost = open.get(lock.as_str()).and_then(|beliefs| {
                    work.search(beliefs.len());
                    beliefs.get(&(who, lock.kind()))?.lost
                });
                let lost = lost.or(last);
                if let Some(loss) = lost {
                    pending.insert(key, (loss, i));
                }
            }
            RecordKind::Return {
                who,
                lock,
                call: Call::Unlock,
                outcome,
            } => {
                work.search(pending.len());
                let Some((loss, call)) = pending.remove(&(who, lock.as_str(), lock.kind())) else {
                    continue;
                };
                if !matches!(outcome, Outcome::Unlocked { .. }) {
                    continue;
                }
                let freed = match &history.records[loss].kind {
                    RecordKind::Server { cause, .. } => freed_by(cause),
                    _ => "freed",
                };
                found.push(
                    Violation::new(
                        Invariant::FalseUnlockSuccess,
                        r.at,
                        [who.client.clone()],
                        format!(
                            "{who}'s unlock of {lock} returned normally although the key was {freed} at {} while it held it",
                            history.records[loss].at
                        ),
                        vec![loss, call, i],
                    )
                    .own_doing(),
                );
            }
            _ => {}
        }
    }
    found
}

/// What freed a key, in the violation's words.
fn freed_by(cause: &ServerCause) -> &'static str {
    match cause {
        ServerCause::Expiry => "expired",
        ServerCause::Deleted => "deleted",
        ServerCause::Restart => "lost in a Redis restart",
        ServerCause::Failover => "lost in a failover",
        ServerCause::Command { .. } => "freed by another process",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::check::sample::{Sample, proc, who};
    use crate::judge::check::work::Work;
    use lockcore::LockName;

    fn read() -> LockName {
        LockName::of_kind("rw", LockKind::Read).unwrap()
    }

    fn server(s: Sample, ms: u64, holder: Option<Who>, cause: ServerCause) -> Sample {
        let count = i64::from(holder.is_some());
        let lock = read().with_kind(LockKind::Lock);
        s.at(
            ms,
            RecordKind::Server {
                lock,
                holder,
                count,
                shared: false,
                ttl_ms: 1_000,
                cause,
            },
        )
    }

    fn unlock(s: Sample, ms: u64, w: Who, end_ms: u64, outcome: Outcome) -> Sample {
        let call = Call::Unlock;
        s.at(
            ms,
            RecordKind::Call {
                who: w.clone(),
                lock: read(),
                call: call.clone(),
            },
        )
        .at(
            end_ms,
            RecordKind::Return {
                who: w,
                lock: read(),
                call,
                outcome,
            },
        )
    }

    fn held(ms: u64) -> Sample {
        let s = Sample::new(5).hold_on(ms, who("A", 1), read());
        server(s, ms, Some(who("A", 1)), ServerCause::Expiry)
    }

    const RELEASED: Outcome = Outcome::Unlocked { released: true };

    /// A reader whose key expired under it, and whose later unlock
    /// returns normally (3.43's read unlock answering 1 for a K with no
    /// `mode`), is one violation naming the expiry, the call and the
    /// return; the same unlock failing with `IllegalMonitorStateException`
    /// (3.44.0) is none.
    #[test]
    fn an_unlock_of_an_expired_hold_that_returns_fails() {
        let lost = server(held(10), 1_010, None, ServerCause::Expiry);
        // The engines record the release as the last unlock is called.
        let lost = lost.release_on(2_000, who("A", 1), read(), ReleaseCause::Unlock);
        let h = unlock(lost, 2_000, who("A", 1), 2_005, RELEASED).build();
        let v = check(&h, &Work::default());
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].events, vec![2, 4, 5]);
        assert!(v[0].own_doing);
        assert!(v[0].detail.contains("expired at 1.010000s"), "{}", v[0].detail);
        let lost = server(held(10), 1_010, None, ServerCause::Expiry);
        let refused = Outcome::Error {
            message: "attempt to unlock lock, not locked by current thread".into(),
            script: false,
        };
        let h = unlock(lost, 2_000, who("A", 1), 2_005, refused).build();
        assert!(check(&h, &Work::default()).is_empty());
    }

    /// A key freed by the thread's own process (a sibling's unlock, or
    /// its own unlock sent again from the latch) is no loss; nor is a
    /// hold lost only after the unlock was called (the script may have
    /// run first), nor one the thread took again before unlocking.
    #[test]
    fn own_releases_late_losses_and_re_entries_pass() {
        let by = ServerCause::Command {
            by: proc("A"),
            purpose: Purpose::Unlock,
        };
        let ran = server(held(10), 300, None, by);
        let h = unlock(ran, 400, who("A", 1), 3_000, RELEASED).build();
        assert!(check(&h, &Work::default()).is_empty());
        let s = held(10).at(
            900,
            RecordKind::Call {
                who: who("A", 1),
                lock: read(),
                call: Call::Unlock,
            },
        );
        let late = server(s, 1_010, None, ServerCause::Expiry).at(
            1_020,
            RecordKind::Return {
                who: who("A", 1),
                lock: read(),
                call: Call::Unlock,
                outcome: RELEASED,
            },
        );
        assert!(check(&late.build(), &Work::default()).is_empty());
        let lost = server(held(10), 1_010, None, ServerCause::Expiry);
        let again = lost.at(
            1_500,
            RecordKind::Return {
                who: who("A", 1),
                lock: read(),
                call: Call::Lock { lease: None },
                outcome: Outcome::Acquired { token: None },
            },
        );
        let h = unlock(again, 2_000, who("A", 1), 2_005, RELEASED).build();
        assert!(check(&h, &Work::default()).is_empty());
    }

    /// A re-entrant acquire that timed out on the client but ran once a
    /// Redis pause ended makes the key the thread's again (Redis names
    /// it holder): its unlock then releases a hold it has (4.7.0 seed
    /// 5177, directed). A sibling's acquire does not.
    #[test]
    fn a_hold_made_again_by_a_late_acquire_is_held() {
        let lost = server(held(10), 1_010, None, ServerCause::Expiry);
        let by = ServerCause::Command {
            by: proc("A"),
            purpose: Purpose::Acquire,
        };
        let again = server(lost, 1_500, Some(who("A", 1)), by.clone());
        let h = unlock(again, 2_000, who("A", 1), 2_005, RELEASED).build();
        assert!(check(&h, &Work::default()).is_empty());
        // The same acquire running after the unlock was called, before its
        // script (the seed's own order).
        let lost = server(held(10), 1_010, None, ServerCause::Expiry)
            .release_on(2_000, who("A", 1), read(), ReleaseCause::Unlock)
            .at(
                2_000,
                RecordKind::Call {
                    who: who("A", 1),
                    lock: read(),
                    call: Call::Unlock,
                },
            );
        let again = server(lost, 2_300, Some(who("A", 1)), by).at(
            2_310,
            RecordKind::Return {
                who: who("A", 1),
                lock: read(),
                call: Call::Unlock,
                outcome: RELEASED,
            },
        );
        assert!(check(&again.build(), &Work::default()).is_empty());
        // A sibling thread's acquire makes the key its own, not A/t1's
        // (Redisson's testExpireWrite).
        let lost = server(held(10), 1_010, None, ServerCause::Expiry);
        let sibling = ServerCause::Command {
            by: proc("A"),
            purpose: Purpose::Acquire,
        };
        let theirs = server(lost, 1_500, Some(who("A", 2)), sibling);
        let h = unlock(theirs, 2_000, who("A", 1), 2_005, RELEASED).build();
        assert_eq!(check(&h, &Work::default()).len(), 1);
    }

    /// A thread that no longer believes it holds (its release recorded,
    /// the lease lost) is not judged; a delete by another is a loss.
    #[test]
    fn only_open_beliefs_are_judged() {
        let lost = server(held(10), 1_010, None, ServerCause::Deleted);
        let gone = lost.release_on(1_100, who("A", 1), read(), ReleaseCause::LeaseLost);
        let h = unlock(gone, 2_000, who("A", 1), 2_005, RELEASED).build();
        assert!(check(&h, &Work::default()).is_empty());
        let lost = server(held(10), 1_010, None, ServerCause::Deleted);
        let h = unlock(lost, 2_000, who("A", 1), 2_005, RELEASED).build();
        let v = check(&h, &Work::default());
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].detail.contains("deleted"), "{}", v[0].detail);
    }
}
