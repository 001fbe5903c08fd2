//! Fair order: an `RFairLock` grants its waiters in the order they joined
//! its queue. A waiter that joined earlier, and is still waiting within
//! its thread wait time, is not overtaken by a thread that joined later.
//!
//! The history does not show the queue (`redisson_lock_queue:{K}`), so
//! the join order is read from the calls: a waiter is a fair-lock acquire
//! that waits (`lock`, `tryLock(wait)`) and began while Redis named
//! another thread holder, so its first attempt found the lock held and
//! queued it. A later call joined after it when it began more than a
//! few round trips later (`EVALSHA`'s `NOSCRIPT` and 3.46+'s first
//! `WAIT` probe each cost one before the acquire runs): its attempt
//! reached Redis after the earlier waiter's did.

use lockcore::{Call, LockKind, LockName, VecMap};

use crate::judge::check::work::Count;
use crate::model::history::{RecordKind, Who};
use crate::{History, Invariant, SimTime, Violation};

/// `threadWaitTime` since 3.13.3 (#2883), `Config.fairLockWaitTimeout`'s
/// default since 3.46.0: how long a `lock()` waiter stays in the queue
/// past the deadline of the thread before it.
const THREAD_WAIT_MS: u64 = 300_000;

/// The round trips before a call's first acquire runs on Redis, at most
/// (the `WAIT` probe, `NOSCRIPT`'s reload, the acquire itself).
const ROUND_TRIPS_BEFORE_QUEUED: u64 = 3;

/// One fair-lock acquire call in progress.
#[derive(Debug, Clone, Copy)]
struct Caller {
    /// The `Call` record's index.
    call: usize,
    /// When it began.
    at: SimTime,
    /// Until when it waits in the queue (its call plus its wait).
    until_ms: u64,
    /// It began while another thread held the lock: it queued.
    queued: bool,
}

/// Walks the history keeping each fair-lock acquire in progress; a `Hold`
/// of one is a violation when a waiter that queued more than
/// [`ROUND_TRIPS_BEFORE_QUEUED`] round trips before it began is still in
/// its call and within its wait.
pub(crate) fn check(history: &History, work: &impl Count) -> Vec<Violation> {
    let margin_ms = ROUND_TRIPS_BEFORE_QUEUED * 2 * history.meta.max_latency_ms
        + history.meta.max_timer_tick_ms;
    let mut holder: VecMap<LockName, Option<&Who>> = VecMap::new();
    let mut callers: VecMap<(&Who, LockName), Caller> = VecMap::new();
    let mut found = Vec::new();
    for (i, r) in work.records(history) {
        match &r.kind {
            RecordKind::Server { lock, holder: h, .. } => {
                holder.insert(lock.with_kind(LockKind::Lock), h.as_ref());
            }
            RecordKind::Call { who, lock, call } if is_fair_acquire(lock, call) => {
                let key = lock.with_kind(LockKind::Lock);
                let held_by_other = holder.get(&key).copied().flatten().is_some_and(|h| h != who);
                let caller = Caller {
                    call: i,
                    at: r.at,
                    until_ms: r.at.as_ms().saturating_add(wait_ms(call)),
                    queued: held_by_other && call.waits(),
                };
                callers.insert((who, key), caller);
            }
            RecordKind::Hold { who, lock, .. } if lock.kind() == LockKind::Fair => {
                let key = lock.with_kind(LockKind::Lock);
                let Some(&me) = callers.get(&(who, key.clone())) else {
                    continue;
                };
                work.tick(callers.len() as u64);
                let overtaken = callers.iter().find(|((w, k), c)| {
                    *w != who
                        && *k == key
                        && c.queued
                        && c.at.as_ms().saturating_add(margin_ms) < me.at.as_ms()
                        && r.at.as_ms() < c.until_ms
                });
                if let Some(((other, _), earlier)) = overtaken {
                    found.push(Violation::new(
                        Invariant::FairOrder,
                        r.at,
                        [who.client.clone(), other.client.clone()],
                        format!(
                            "{who} took the {lock}, called at {}, while {other}, queued since {}, still waited",
                            me.at, earlier.at
                        ),
                        vec![earlier.call, me.call, i],
                    ));
                }
            }
            RecordKind::Return { who, lock, .. } if lock.kind() == LockKind::Fair => {
                callers.remove(&(who, lock.with_kind(LockKind::Lock)));
            }
            RecordKind::Crash { process } => {
                let dead: Vec<(&Who, LockName)> = callers
                    .iter()
                    .filter(|((w, _), _)| w.client == process.client && w.life == process.life)
                    .map(|(k, _)| k.clone())
                    .collect();
                for k in dead {
                    callers.remove(&k);
                }
            }
            _ => {}
        }
    }
    found
}

/// Whether `call` on `lock` takes an `RFairLock`.
fn is_fair_acquire(lock: &LockName, call: &Call) -> bool {
    lock.kind() == LockKind::Fair && call.is_acquire()
}

/// How long `call` waits in the queue: `tryLock`'s wait, or the thread
/// wait time for the calls that wait as long as it takes.
fn wait_ms(call: &Call) -> u64 {
    match call {
        Call::TryLock { wait, .. } | Call::TryLockAsync { wait, .. } => {
            wait.map_or(0, |w| w.0)
        }
        _ => THREAD_WAIT_MS,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::check::sample::{Sample, lock_call, try_wait, who};
    use crate::judge::check::work::Work;
    use crate::model::history::{Outcome, ServerCause};

    fn fair() -> LockName {
        crate::judge::check::sample::lock().with_kind(LockKind::Fair)
    }

    fn server(s: Sample, ms: u64, h: Option<Who>) -> Sample {
        s.at(
            ms,
            RecordKind::Server {
                lock: crate::judge::check::sample::lock(),
                count: i64::from(h.is_some()),
                holder: h,
                shared: false,
                ttl_ms: 30_000,
                cause: ServerCause::Expiry,
            },
        )
    }

    fn call(s: Sample, ms: u64, w: Who, call: Call) -> Sample {
        s.at(ms, RecordKind::Call { who: w, lock: fair(), call })
    }

    fn acquired(s: Sample, ms: u64, w: Who, call: Call) -> Sample {
        s.hold_on(ms, w.clone(), fair()).at(
            ms,
            RecordKind::Return {
                who: w,
                lock: fair(),
                call,
                outcome: Outcome::Acquired { token: None },
            },
        )
    }

    /// A holds; B queues at 1 s, C at 2 s; A lets go and the lock goes to
    /// `first`, then to the other.
    fn two_waiters(first: Who, second: Who) -> History {
        let s = server(Sample::new(5), 10, Some(who("A", 1)));
        let s = call(s, 1_000, who("B", 1), lock_call());
        let s = call(s, 2_000, who("C", 1), lock_call());
        let s = server(s, 5_000, Some(first.clone()));
        let s = acquired(s, 5_005, first, lock_call());
        let s = server(s, 6_000, Some(second.clone()));
        acquired(s, 6_005, second, lock_call()).build()
    }

    /// Granted in queue order passes; the later waiter first fails, naming
    /// both calls and the hold.
    #[test]
    fn a_later_waiter_first_fails() {
        let ok = two_waiters(who("B", 1), who("C", 1));
        assert!(check(&ok, &Work::default()).is_empty());
        let bad = two_waiters(who("C", 1), who("B", 1));
        let v = check(&bad, &Work::default());
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].clients, ["B", "C"]);
        assert_eq!(v[0].events, vec![1, 2, 4]);
        assert!(v[0].detail.contains("C/t1 took"), "{}", v[0].detail);
    }

    /// Calls a round trip apart may reach Redis in either order; a waiter
    /// that gave up (its wait over) or crashed may be overtaken.
    #[test]
    fn close_calls_and_waiters_gone_pass() {
        let s = server(Sample::new(5), 10, Some(who("A", 1)));
        let s = call(s, 1_000, who("B", 1), lock_call());
        let s = call(s, 1_020, who("C", 1), lock_call());
        let close = acquired(server(s, 5_000, Some(who("C", 1))), 5_005, who("C", 1), lock_call());
        assert!(check(&close.build(), &Work::default()).is_empty());

        let s = server(Sample::new(5), 10, Some(who("A", 1)));
        let s = call(s, 1_000, who("B", 1), try_wait(2_000));
        let s = call(s, 2_000, who("C", 1), lock_call());
        let gave_up = acquired(server(s, 5_000, Some(who("C", 1))), 5_005, who("C", 1), lock_call());
        assert!(check(&gave_up.build(), &Work::default()).is_empty());

        let s = server(Sample::new(5), 10, Some(who("A", 1)));
        let s = call(s, 1_000, who("B", 1), lock_call());
        let s = call(s, 2_000, who("C", 1), lock_call());
        let s = s.at(3_000, RecordKind::Crash { process: crate::judge::check::sample::proc("B") });
        let crashed = acquired(server(s, 5_000, Some(who("C", 1))), 5_005, who("C", 1), lock_call());
        assert!(check(&crashed.build(), &Work::default()).is_empty());
    }

    /// RLock has no queue: the same order on it is no violation.
    #[test]
    fn rlock_is_not_judged() {
        let s = server(Sample::new(5), 10, Some(who("A", 1)));
        let s = s.call(1_000, who("B", 1), lock_call());
        let s = s.call(2_000, who("C", 1), lock_call());
        let s = server(s, 5_000, Some(who("C", 1))).hold(5_005, who("C", 1), 30_000, None);
        assert!(check(&s.build(), &Work::default()).is_empty());
    }
}
