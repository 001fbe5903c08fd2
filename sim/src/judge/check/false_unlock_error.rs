//! No false unlock errors: an unlock that reports failure did not, in
//! fact, release the lock (or leave its thread holding it).

use lockcore::{Call, LockName, Purpose, VecMap};

use crate::judge::check::Case;
use crate::judge::check::work::Count;
use crate::model::history::{Direction, Outcome, RecordKind, ServerCause, Who};
use crate::model::name::Name;
use crate::{History, Invariant, SimTime, Violation};

/// How lockcore's errors that say "no answer" begin (`TransportError`).
const TRANSPORT: &str = "transport error";

/// A thread's unlock of one lock, from its call to its return.
struct Pending {
    call: usize,
    /// A server record showing Redis ran an unlock of this process on
    /// this lock while the call was out.
    ran: Option<usize>,
    /// The unlock scripts the call sent (its first, its resends) and the
    /// runs credited to it.
    sent: u32,
    runs: u32,
    /// When the last message a partition held on the process's way to
    /// Redis during the call arrives.
    held_until: Option<SimTime>,
}

/// An unlock that returned an error is false when Redis ran an unlock
/// script of the caller's process on that lock while the call was out
/// (the caller was told it failed, yet the lock was released or counted
/// down for it: a reply lost and the resend answered "not locked", as
/// before Redisson 3.24's unlock latch, #4871), or when Redis still names
/// the caller as holder when the error returns. One pass: O(n log n).
pub(crate) fn check(history: &History, work: &impl Count) -> Vec<Violation> {
    // Keyed by (client, life, lock, thread): an unlock run by a process
    // finds its threads' pending unlocks of that lock in one stretch. Few
    // unlocks are pending at once and few locks are named, so both maps
    // are sorted vectors (a `BTreeMap` made and dropped a node for each
    // unlock).
    let mut pending: VecMap<(Name<'_>, u32, &LockName, u64), Pending> = VecMap::new();
    let mut holder: VecMap<&LockName, (Option<&Who>, usize)> = VecMap::new();
    // Scripts of a thread's earlier unlocks that timed out and may still
    // arrive (a partition holds them until TCP retransmits): they run
    // before a later unlock's, on the same connection.
    let mut orphans: VecMap<(Name<'_>, u32, &LockName, u64), u32> = VecMap::new();
    let mut found = Vec::new();
    for (i, r) in work.records(history) {
        match &r.kind {
            RecordKind::Call {
                who,
                lock,
                call: Call::Unlock,
            } => {
                let p = Pending {
                    call: i,
                    ran: None,
                    sent: 0,
                    runs: 0,
                    held_until: None,
                };
                pending.insert(key(who, lock), p);
            }
            RecordKind::UnlockSent { process, lock, .. } => {
                // The script is the newest pending call's of its process on
                // that lock (a resend follows its call's first send).
                let (c, life) = (Name(&process.client), process.life);
                let range = (c, life, lock, 0)..=(c, life, lock, u64::MAX);
                work.tick(pending.len() as u64);
                if let Some((_, p)) = pending
                    .iter_mut()
                    .filter(|(k, _)| range.contains(*k))
                    .max_by_key(|(_, p)| p.call)
                {
                    p.sent += 1;
                }
            }
            RecordKind::Held {
                process,
                direction: Direction::Up,
                until,
                ..
            } => {
                let (c, life) = (Name(&process.client), process.life);
                work.tick(pending.len() as u64);
                for (_, p) in pending
                    .iter_mut()
                    .filter(|(k, _)| k.0 == c && k.1 == life)
                {
                    p.held_until = p.held_until.max(Some(*until));
                }
            }
            RecordKind::Server {
                lock,
                holder: h,
                cause,
                ..
            } => {
                let before = holder.insert(lock, (h.as_ref(), i)).and_then(|(w, _)| w);
                if let ServerCause::Command {
                    by,
                    purpose: Purpose::Unlock,
                } = cause
                {
                    let (c, life) = (Name(&by.client), by.life);
                    // The script counts down only its caller's hold: when
                    // Redis named a thread of this process holder just
                    // before, the unlock was that thread's (another thread
                    // of the process may be unlocking too).
                    let (first, last) = match before {
                        Some(w) if Name(&w.client) == c && w.life == life => (w.thread, w.thread),
                        _ => (0, u64::MAX),
                    };
                    // A scan of the pending unlocks (at most one a thread).
                    work.tick(pending.len() as u64);
                    let range = (c, life, lock, first)..=(c, life, lock, last);
                    // A script an earlier call sent is that call's run,
                    // not the pending one's (4.7.0 seed 7276).
                    if let Some((_, n)) = orphans
                        .iter_mut()
                        .find(|(k, n)| range.contains(*k) && **n > 0)
                    {
                        *n -= 1;
                        continue;
                    }
                    for (_, p) in pending.iter_mut().filter(|(k, _)| range.contains(*k)) {
                        p.ran.get_or_insert(i);
                        p.runs += 1;
                    }
                }
            }
            RecordKind::Return {
                who,
                lock,
                call: Call::Unlock,
                outcome,
            } => {
                let Some(p) = pending.remove(&key(who, lock)) else {
                    continue;
                };
                let timed_out = matches!(outcome, Outcome::Error { message, .. } if message.starts_with(TRANSPORT));
                // A script it sent may still arrive: one, when none ran (a
                // timeout waited for it); when one ran, those it sent after
                // it that a partition still held (4.7.0 seed 433008: the
                // retry after too few replicas synced ran 8 s after the
                // call timed out, past its latch, and counted down).
                let in_flight = p.held_until.is_some_and(|u| u > r.at);
                let unrun = match p.ran {
                    None => 1,
                    Some(_) if in_flight => p.sent.saturating_sub(p.runs),
                    Some(_) => 0,
                };
                if timed_out && unrun > 0 {
                    *orphans.get_or_default(key(who, lock)) += unrun;
                } else if !timed_out {
                    // Redis answered this call's script, so whatever an
                    // earlier call sent on the connection ran or was lost.
                    orphans.remove(&key(who, lock));
                }
                let Outcome::Error { message, .. } = outcome else {
                    continue;
                };
                let still = holder
                    .get(&lock)
                    .filter(|(h, _)| h.is_some_and(|h| h == who))
                    .map(|(_, at)| *at);
                let (case, evidence) = match (p.ran, still) {
                    (Some(s), _) => (Case::UnlockRan, s),
                    (None, Some(s)) => (Case::StillHolder, s),
                    (None, None) => continue,
                };
                let v = Violation::new(
                    Invariant::FalseUnlockError,
                    r.at,
                    [who.client.clone()],
                    format!(
                        "{who}'s unlock of {lock} reported \"{message}\" {}",
                        case.words()
                    ),
                    vec![p.call, evidence, i],
                )
                .with_case(case);
                // A timeout says "I do not know"; a refusal of an unlock
                // Redis ran is a wrong answer (Redisson #4871).
                let refused = !message.starts_with(TRANSPORT);
                found.push(if case == Case::UnlockRan && refused {
                    v.own_doing()
                } else {
                    v
                });
            }
            _ => {}
        }
    }
    found
}

fn key<'h>(who: &'h Who, lock: &'h LockName) -> (Name<'h>, u32, &'h LockName, u64) {
    (Name(&who.client), who.life, lock, who.thread)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::check::sample::{Sample, lock, who};
    use crate::judge::check::work::Work;

    fn unlock_ran(s: Sample, ms: u64) -> Sample {
        unlock_by(s, ms, "A")
    }

    /// Redis ran `client`'s unlock at `ms`: the lock is free.
    fn unlock_by(s: Sample, ms: u64, client: &str) -> Sample {
        s.at(
            ms,
            RecordKind::Server {
                lock: lock(),
                holder: None,
                count: 0,
                shared: false,
                ttl_ms: -2,
                cause: ServerCause::Command {
                    by: crate::judge::check::sample::proc(client),
                    purpose: Purpose::Unlock,
                },
            },
        )
    }

    fn not_locked() -> Outcome {
        Outcome::Error {
            message: "attempt to unlock lock, not locked by current thread".into(),
            script: false,
        }
    }

    /// The unlock ran on Redis (the key is gone), but its reply was late,
    /// the resend found nothing and the thread was told it failed: a
    /// false error. The same error with no unlock run on Redis (the key
    /// had expired and is someone else's) is a true one.
    #[test]
    fn error_after_the_unlock_ran_is_false() {
        let base = || {
            Sample::new(5)
                .server(0, Some(who("A", 1)))
                .call(1_000, who("A", 1), Call::Unlock)
        };
        let h = unlock_ran(base(), 1_002)
            .ret(4_010, who("A", 1), Call::Unlock, not_locked())
            .build();
        let v = check(&h, &Work::default());
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].case, Case::UnlockRan, "{}", v[0].detail);
        assert!(v[0].own_doing, "a refusal of an unlock Redis ran");
        let h = base()
            .server(1_001, Some(who("B", 1)))
            .ret(1_004, who("A", 1), Call::Unlock, not_locked())
            .build();
        assert!(check(&h, &Work::default()).is_empty());
    }

    /// An error while Redis still names the caller holder is false too.
    #[test]
    fn error_while_still_holding_is_false() {
        let h = Sample::new(5)
            .server(0, Some(who("A", 1)))
            .call(1_000, who("A", 1), Call::Unlock)
            .ret(
                4_000,
                who("A", 1),
                Call::Unlock,
                Outcome::Error {
                    message: "transport error: timed out waiting for a reply".into(),
                    script: false,
                },
            )
            .build();
        let v = check(&h, &Work::default());
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].case, Case::StillHolder, "{}", v[0].detail);
        assert!(!v[0].own_doing, "a timeout says it does not know");
    }

    /// Two threads of one process unlock at once: Redis runs the one that
    /// holds it, the other's refusal is true (explored seed 1472 under
    /// `fenced`: B/t2's unlock ran and B/t1's "not locked" was flagged).
    #[test]
    fn another_threads_unlock_does_not_count() {
        let h = Sample::new(5)
            .server(10, Some(who("B", 2)))
            .call(20, who("B", 1), Call::Unlock)
            .call(21, who("B", 2), Call::Unlock);
        let h = unlock_by(h, 25, "B")
            .ret(26, who("B", 1), Call::Unlock, not_locked())
            .build();
        assert!(check(&h, &Work::default()).is_empty());
    }

    /// An unlock timed out while a partition held its script; the thread
    /// unlocked again, the held script ran first and freed the lock, and
    /// the new call's own script was refused: a true answer (4.7.0 seed
    /// 7276). Without the earlier timeout the same refusal is false.
    #[test]
    fn an_earlier_calls_late_script_is_not_this_calls() {
        let timed_out = Outcome::Error {
            message: "transport error: timed out waiting for a reply".into(),
            script: false,
        };
        let h = Sample::new(5)
            .server(0, Some(who("A", 1)))
            .call(1_000, who("A", 1), Call::Unlock)
            .ret(4_000, who("A", 1), Call::Unlock, timed_out)
            .call(5_000, who("A", 1), Call::Unlock);
        let h = unlock_ran(h, 6_000)
            .ret(6_010, who("A", 1), Call::Unlock, not_locked())
            .build();
        let v = check(&h, &Work::default());
        assert!(v.iter().all(|v| v.case != Case::UnlockRan), "{v:?}");
        let h = Sample::new(5)
            .server(0, Some(who("A", 1)))
            .call(5_000, who("A", 1), Call::Unlock);
        let h = unlock_ran(h, 6_000)
            .ret(6_010, who("A", 1), Call::Unlock, not_locked())
            .build();
        let v = check(&h, &Work::default());
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].case, Case::UnlockRan);
    }
    /// A count-down unlock ran, its retry after too few replicas synced
    /// was held by a partition and the call timed out; the thread
    /// unlocked again (also held) and a third time. The retry and the
    /// second call's script ran when TCP retransmitted, the retry past its
    /// latch, and freed the lock: the third call's "not locked" is true
    /// (4.7.0 seed 433008). Had nothing held the retry, it would have run
    /// before the call's timeout and the third call's refusal would be
    /// false.
    #[test]
    fn a_timed_out_calls_held_retry_is_not_a_later_calls() {
        let timed_out = || Outcome::Error {
            message: "transport error: timed out waiting for a reply".into(),
            script: false,
        };
        let a = || who("A", 1);
        let sent = |attempt| RecordKind::UnlockSent {
            process: crate::judge::check::sample::proc("A"),
            lock: lock(),
            request: 1,
            attempt,
        };
        let held = RecordKind::Held {
            process: crate::judge::check::sample::proc("A"),
            direction: Direction::Up,
            what: "EVALSHA".into(),
            until: SimTime::from_ms(9_000),
        };
        let run = |holder: Option<Who>| RecordKind::Server {
            lock: lock(),
            holder,
            count: 0,
            shared: false,
            ttl_ms: -2,
            cause: ServerCause::Command {
                by: crate::judge::check::sample::proc("A"),
                purpose: Purpose::Unlock,
            },
        };
        let history = |retry_held: bool| {
            let mut h = Sample::new(5)
                .server(0, Some(a()))
                .call(1_000, a(), Call::Unlock)
                .at(1_000, sent(0))
                .at(1_002, run(Some(a())))
                .at(2_000, sent(1));
            if retry_held {
                h = h.at(2_000, held.clone());
            }
            h.ret(4_000, a(), Call::Unlock, timed_out())
                .call(5_000, a(), Call::Unlock)
                .at(5_000, sent(0))
                .ret(8_000, a(), Call::Unlock, timed_out())
                .call(8_500, a(), Call::Unlock)
                .at(8_500, sent(0))
                .at(9_000, run(Some(a())))
                .at(9_005, run(None))
                .ret(9_010, a(), Call::Unlock, not_locked())
                .build()
        };
        let ran = |h: &History| {
            check(h, &Work::default())
                .into_iter()
                .filter(|v| v.case == Case::UnlockRan && v.at.as_ms() == 9_010)
                .count()
        };
        assert_eq!(ran(&history(true)), 0);
        assert_eq!(ran(&history(false)), 1);
    }
}
