//! Defects with no fix, in any release or pull request, that attribution
//! could try: open upstream, or found by locksim and not reported yet.
//! Recognised by the path the run took, so a finding can still name the
//! upstream issue a user would search for, or say what to report.
//!
//! Attribution by experiment ([`crate::defect`]) needs a switch that
//! removes the defect. For an open issue without a fix there is none, so
//! each known path here is a predicate over the run's history, tried only
//! when no fix removes the defect. A new one is a `const` and a
//! predicate plus one line in [`KNOWN`].

mod fair_place_restored;
mod multi_unlock_stops;
mod one_permit;
mod rw_wakeup;
mod stale_first_thread;
mod write_reentry;
mod zero_replica_count;

use lockcore::{LockKind, LockName, Release, Switch};
use serde::Serialize;
use sim::{History, Outcome, RecordKind, ServerCause, Violation, Who};

/// An upstream issue, open with no fix, whose path a run took; or a
/// defect no upstream issue reports (`UNREPORTED`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OpenIssue {
    /// The upstream issue (`#4109`), or `UNREPORTED`.
    pub upstream: &'static str,
    /// What happens on the path, in one line.
    pub path: &'static str,
}

/// The `upstream` of a defect locksim found that no upstream issue
/// reports (searched when it was added).
pub const UNREPORTED: &str = "unreported";

impl OpenIssue {
    /// Where it stands upstream, in a few words: `open upstream: #4109`
    /// or `not reported upstream`.
    pub fn status(&self) -> String {
        if self.upstream == UNREPORTED {
            "not reported upstream".to_owned()
        } else {
            format!("open upstream: {}", self.upstream)
        }
    }
}

impl std::fmt::Display for OpenIssue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.upstream == UNREPORTED {
            write!(f, "a path not reported upstream: {}", self.path)
        } else {
            write!(
                f,
                "the path of {}, open upstream: {}",
                self.upstream, self.path
            )
        }
    }
}

/// Redisson #4109 ("response timeout in a job lead to deadlock", open
/// since 3.9.0): an acquire times out on the client after the script ran
/// on Redis. Redisson has no request id for an acquire, so the thread has
/// a hold it does not know of; when it tries again it re-enters (count
/// 2), its one unlock counts down to 1, and the watchdog its second
/// acquire armed keeps the lock for ever. #7367 (open) is the same count
/// reached by Redisson's own resend in replicated mode.
const TIMED_OUT_ACQUIRE_RAN: OpenIssue = OpenIssue {
    upstream: "#4109",
    path: "an acquire timed out on the client after it ran on Redis, so the thread holds a count it does not know of",
};

/// Found by locksim (4.7.0 seeds 15828 and 21410), not reported upstream
/// (searched 2026-11-26). Since 3.20.1 (#4822) `unlockAsync` runs
/// `unlockAsync0` inside `ServiceManager.execute`, which tries it again
/// when `WAIT` synced no replica, and `unlockAsync0`'s handler calls
/// `cancelExpirationRenewal(threadId)` after every attempt (read at tags
/// redisson-3.52.0 and redisson-4.7.0, `RedissonBaseLock.unlockAsync0`;
/// `LockEntry.removeThreadId` takes one count per call). So a count-down
/// unlock of a re-entrant hold that is tried twice takes two counts off
/// the renewal entry: the entry goes, renewal stops, and the key expires
/// under a thread that still holds it once. (Since 3.52.0, #6651, the
/// retry replays the latch and Redis keeps the count; before, it ran the
/// script again and took the count on Redis too.)
const RETRIED_COUNT_DOWN_CANCELS: OpenIssue = OpenIssue {
    upstream: UNREPORTED,
    path: "a count-down unlock tried again for too few synced replicas cancelled renewal once per attempt, so the watchdog let go of a lock its thread still holds",
};

/// Found by locksim (3.43.0 seed 3096); the crash form of the same path
/// is open upstream as #4595 and #6150, and Redisson's answer to #3254
/// is that a terminated waiter holds the queue up. A fair-lock waiter
/// queues itself in its first acquire script; `RedissonLock.lock()` never
/// calls `acquireFailed`, and `tryLock(wait)` calls it only when the wait
/// runs out (and, from 4.7.0, on a response timeout inside its loop,
/// #5019): read at tags redisson-3.43.0 and redisson-4.7.0. So a live
/// thread whose acquire is interrupted, or fails on a timeout, after its
/// script ran keeps its place until its deadline (the holder's TTL plus
/// the thread wait, 5 minutes by default), and each waiter behind it is
/// told `max(0, PTTL)` = 0 and tries again at once, with the lock free.
const FAIR_PLACE_LEFT: OpenIssue = OpenIssue {
    upstream: "#4595",
    path: "a fair-lock acquire failed (interrupted or timed out) after its script queued the thread, and nothing removed its place: the waiters behind it wait out its deadline (the holder's TTL plus 5 minutes) with the lock free",
};

/// Found by locksim (4.7.0 seeds 23817, 32279 and 34197); the path of
/// Redisson #3829 (open since 2021: a fair lock's keys lost in a cluster
/// switch, and its waiters wait out the 5-minute thread wait). A waiter
/// whose queue entry Redis lost (a restart without persistence, a
/// failover) is queued again by its next attempt inside `lock()`'s loop,
/// and the enqueue answers the last waiter's deadline − now, unclamped:
/// that waiter's whole wait (5 minutes by default) and more, where a
/// queued waiter is told `max(0, PTTL)` (`RedissonFairLock`'s acquire
/// script, `return ttl` after the `zadd`/`rpush`; `RedissonLock.lock`
/// then sleeps `tryAcquire(ttl)` on its latch; read at tag
/// redisson-4.7.0). Only an unlock message on its own channel wakes it,
/// and an unlock publishes to the queue's head alone: if it is not in the
/// queue when the holder unlocks (Redis lost the queue again: seed
/// 34197), or misses the message while it resubscribes after an outage
/// (seed 23817), or the holder's key expires with no unlock, it sleeps
/// out that ttl with the lock free. (The hypothesis of a negative reply
/// and an untimed wait, #5503's class, did not hold: every reply these
/// seeds' waiters got was positive.)
const FAIR_REQUEUED_SLEEPS: OpenIssue = OpenIssue {
    upstream: "#3829",
    path: "Redis lost a fair lock's queue under a waiting lock(): its next attempt queued it again and was answered the last waiter's deadline (5 minutes and more), which it sleeps out on its latch with the lock free unless an unlock's message reaches it",
};

/// #3730 (open since 2021, no fix commit): a fair lock whose holder's key
/// expires, with no unlock and so no message, leaves its waiters asleep.
/// A thread that queues behind another is answered that waiter's
/// deadline − now (`RedissonFairLock.tryLockInnerAsync` at tag
/// redisson-4.7.0: `ttl = zscore(last) − now` when the queue has a last
/// thread, the holder's PTTL only when it has none), the waiter's whole
/// thread wait of 5 minutes and more; `lock()` sleeps that on its latch,
/// and only an unlock message to the queue's head wakes it. 4.7.0 seed
/// 51417: two threads of C are rolled back after their `WAIT` synced no
/// replica and queue again behind each other; D's acquire runs on Redis
/// after its call timed out (#4109's path), so D never unlocks, and once
/// D's key expires C's threads sleep on with the lock free.
const FAIR_EXPIRED_SLEEPS: OpenIssue = OpenIssue {
    upstream: "#3730",
    path: "a fair lock's key expired with no unlock message while threads waited in its queue: a waiter queued behind another was told that waiter's deadline (5 minutes and more) and sleeps it out with the lock free",
};

/// Found by locksim (4.7.0 seeds 77, 113, 1120, 1493 and 2037), not
/// reported upstream (searched 2026-11-28). #5019's fix (PR #7224, 4.7.0)
/// made a response timeout inside `RedissonLock.tryLock`'s wait loop
/// return `false`; `RedissonSpinLock.tryLock` has a loop of its own
/// (back-off sleeps between attempts, read at tag redisson-4.7.0) with no
/// such catch, so the spin lock still throws there, in every release.
const SPIN_TRY_LOCK_THROWS: OpenIssue = OpenIssue {
    upstream: UNREPORTED,
    path: "a spin lock's tryLock(wait) threw a response timeout from inside its back-off loop: #5019's fix (4.7.0) changed RedissonLock.tryLock only",
};

/// Found by locksim (4.7.0 seed 4927); #5019's own case (read
/// 2026-11-29: "the tryLock method throws a redis timeout exception, and
/// the key `redisson_lock_queue` and `redisson_lock_timeout` in redis is
/// not removed ... a redis timeout may have occurred when calling
/// acquireFailed", against 3.21.0, which resent the script), which its
/// fix (4.7.0) answers by resending it again; the issue is open upstream.
/// A fair lock's `tryLock(wait)` whose wait runs out sends
/// `acquireFailed` and waits for it (`RedissonBaseLock.acquireFailed` is
/// `commandExecutor.get(acquireFailedAsync(...))`, read at tag
/// redisson-4.7.0); for the fair lock that is a script, and when its
/// reply times out (after its retries: none from 3.37.0 to 4.6.x,
/// `85be4d67a`; `retryAttempts` from 4.7.0, PR #7223) the timeout
/// escapes tryLock, which throws instead of returning false. #5019's fix
/// retries it but lets the last timeout out; `RLock`'s `acquireFailed`
/// sends nothing, so only the fair lock has this path. #5019's fix is a
/// second way in (4.7.0 seed 20907): an attempt inside the loop that
/// times out is caught, and the catch calls the same blocking
/// `acquireFailed` before `return false`, so a timeout of that script
/// escapes too, before the wait has run out.
const FAIR_ACQUIRE_FAILED_THREW: OpenIssue = OpenIssue {
    upstream: "#5019",
    path: "a fair lock's tryLock(wait) gave up (its wait ran out, or an attempt in its loop timed out) and its acquireFailed script timed out, and the timeout escaped tryLock instead of false",
};

/// Found by locksim (4.7.0 seed 935), not reported upstream (searched
/// 2026-11-28). `RedissonFairLock.unlockInnerAsync` still begins, as
/// `RLock`'s did before 3.10.6 (#2018, commit fc58dd0b2) and the
/// read-write lock's before 3.44.0 (commit 1ce49b7a2), with `if
/// (redis.call('exists', KEYS[1]) == 0) then ... return 1; end;` (read at
/// tags redisson-3.8.0 and redisson-4.7.0): an unlock of a fair lock
/// whose key expired or was deleted returns normally instead of throwing
/// `IllegalMonitorStateException`, so the thread is never told it lost
/// the lock.
const FAIR_UNLOCK_ABSENT_ONE: OpenIssue = OpenIssue {
    upstream: UNREPORTED,
    path: "a fair lock's unlock found no key (it expired or was deleted under its holder) and its script answered 1, so unlock returned as if it had released",
};

/// Found by locksim (4.7.0 seed 1796), not reported upstream (searched
/// 2026-11-28). 1ce49b7a2 (3.44.0) made the read and write unlock answer
/// nil for a K with no `mode`, but left the line before it, which sets
/// the unlock latch to 1 (`RedissonWriteLock` and `RedissonReadLock`
/// `unlockInnerAsync`, read at tags redisson-3.44.0 and redisson-4.7.0).
/// An unlock sent again under the same request id (its `WAIT` synced no
/// replica, or its reply timed out) reads the latch and answers 1: the
/// unlock of an expired or deleted read-write lock returns normally.
const RW_UNLOCK_LATCHES_ONE: OpenIssue = OpenIssue {
    upstream: UNREPORTED,
    path: "a read or write unlock found no K, answered nil but set its latch to 1, and its resend read the latch: unlock returned as if it had released",
};

/// Found by locksim (4.7.0 seed 28028), not reported upstream (searched
/// 2026-11-28; #2144 is its acquire form, fixed in 3.11.1, and #5462 asks
/// why the renewal touches every reader's keys). A read lock's renewal
/// sets the hash K's TTL to the watchdog timeout, whatever lease another
/// reader asked for: `pexpire KEYS[1] ARGV[1]` in
/// `RedissonReadLock.renewExpirationAsync` from tag redisson-3.8.1 (#1604;
/// before it `RLock`'s renewal did the same) and in
/// `renewal/ReadLockTask`'s batched script at tag redisson-4.7.0. #2144's
/// fix (25914b000) keeps the longer TTL in the acquire script only. So
/// when the watchdog reader stops renewing (paused, crashed) K expires
/// one watchdog timeout after its last renewal, while a reader with a
/// longer lease still holds it, and a writer takes the lock.
const READ_RENEWAL_SHORTENS: OpenIssue = OpenIssue {
    upstream: UNREPORTED,
    path: "a read lock's renewal set K's TTL to the watchdog timeout under a reader with a longer lease, and K expired inside that lease once the renewals stopped: #2144's fix keeps the longer TTL in the acquire only",
};

/// Whether the run of a history, under a release, took a path to a
/// violation.
type Took = fn(Release, &History, &Violation) -> bool;

/// Each known path and how to recognise it, the first that fits winning:
/// the narrower first. A fair waiter that Redis's lost queue put to sleep
/// (4.7.0 seed 34197) can also have a waiter ahead of it that left its
/// place, whose queue went with the same loss. A run can take both: 4.7.0 seed 15828's thread
/// holds a count it does not know of (#4109's path, which alone would
/// leave the lock behind), but what lets the other client in is the
/// renewal its retried count-down unlock stopped.
const KNOWN: &[(OpenIssue, Took)] = &[
    (FAIR_REQUEUED_SLEEPS, fair_requeued_slept),
    (FAIR_PLACE_LEFT, fair_place_left),
    (
        fair_place_restored::FAIR_PLACE_RESTORED,
        fair_place_restored::fair_place_restored,
    ),
    (SPIN_TRY_LOCK_THROWS, spin_try_lock_threw),
    (FAIR_ACQUIRE_FAILED_THREW, fair_acquire_failed_threw),
    (FAIR_UNLOCK_ABSENT_ONE, fair_unlock_absent_one),
    (RW_UNLOCK_LATCHES_ONE, rw_unlock_latches_one),
    (READ_RENEWAL_SHORTENS, read_renewal_shortened),
    (rw_wakeup::RW_MESSAGE_MISSED, rw_wakeup::rw_message_missed),
    (
        rw_wakeup::RW_COUNT_DOWN_SHORTENS,
        rw_wakeup::rw_count_down_shortened,
    ),
    (
        write_reentry::WRITE_REENTRY_ADDS_LEASE,
        write_reentry::write_reentry_added,
    ),
    (
        write_reentry::WRITE_COUNT_DOWN_SHORTENS,
        write_reentry::write_count_down_shortened,
    ),
    // The same path seen by a waiter, after the waiter paths above.
    (READ_RENEWAL_SHORTENS, rw_wakeup::read_renewal_then_expiry),
    (
        one_permit::ONE_PERMIT_STALE_TTL,
        one_permit::one_permit_stale_ttl,
    ),
    (FAIR_EXPIRED_SLEEPS, fair_expired_slept),
    (
        stale_first_thread::STALE_FIRST_THREAD_RENEWED,
        stale_first_thread::stale_first_thread_renewed,
    ),
    (RETRIED_COUNT_DOWN_CANCELS, count_down_stopped_renewal),
    (
        multi_unlock_stops::MULTI_UNLOCK_STOPPED,
        multi_unlock_stops::multi_unlock_stopped,
    ),
    (
        zero_replica_count::ZERO_REPLICA_COUNT_KEPT,
        zero_replica_count::zero_count_kept,
    ),
    (TIMED_OUT_ACQUIRE_RAN, timed_out_acquire_ran),
];

/// The open issue whose path the run of `history` took to break `v`, if
/// one is known.
pub(crate) fn open_issue(release: Release, history: &History, v: &Violation) -> Option<OpenIssue> {
    KNOWN
        .iter()
        .find(|(_, took)| took(release, history, v))
        .map(|(issue, _)| *issue)
}

/// Whether a thread of the violation's clients had an acquire answer
/// with an error after Redis made it the holder, or Redis made it the
/// holder after its acquire failed and before it called anything else;
/// for a lost wake-up, a
/// thread of the client that held the lock before it went free without
/// a message (its unknown count kept the key until it expired: fenced
/// seeds 44624 and 76079).
fn timed_out_acquire_ran(release: Release, history: &History, v: &Violation) -> bool {
    if v.invariant == sim::Invariant::LostWakeup {
        return last_holder(history, v)
            .is_some_and(|holder| timed_out_acquire_ran_by(history, v, release, |c| c == holder));
    }
    let of = |c: &str| v.clients.iter().any(|x| **x == *c);
    timed_out_acquire_ran_by(history, v, release, of)
}

/// Whether an interrupt of a call on `kind` under `release` cancels the
/// future its acquire's callback hangs on, so that a script that ran
/// anyway is a hold its thread does not know of, as after a timeout
/// (lockcore's `interrupt`). From 3.16.3 (#2714) the cancel reaches the
/// acquire's own future: to 3.20.0 for every kind (3.16.6 seed 86100: a
/// `lock(lease)` left behind for its lease), and in every later release
/// for a spin lock, whose acquire is outside the retry wrapper (4.7.0
/// seed 633698: an interrupted `lock()` whose script then took the lock
/// for its lease). Otherwise the late reply's callback runs: #2714's or
/// #5358's path, not this one.
fn interrupt_hides(release: Release, kind: LockKind) -> bool {
    release.has(Switch::InterruptCancelsAcquire)
        && (!kind.acquire_retried() || !release.has(Switch::AcquireRetryWrapper))
}

/// The client Redis named holder last before the lock went free (the
/// lost wake-up's second cited record).
fn last_holder<'h>(history: &'h History, v: &Violation) -> Option<&'h str> {
    let free = *v.events.get(1)?;
    let RecordKind::Server { lock, .. } = &history.records.get(free)?.kind else {
        return None;
    };
    history.records[..free]
        .iter()
        .rev()
        .find_map(|r| match &r.kind {
            RecordKind::Server {
                lock: l,
                holder: Some(who),
                ..
            } if l == lock => Some(&*who.client),
            _ => None,
        })
}

fn timed_out_acquire_ran_by(
    history: &History,
    v: &Violation,
    release: Release,
    of: impl Fn(&str) -> bool,
) -> bool {
    let mut calling: Vec<&Who> = Vec::new();
    let mut ran: Vec<&Who> = Vec::new();
    // Threads whose acquire failed with an error and that asked for no
    // lock since: a script Redis runs for one of them now, raising its
    // count, is that acquire, held back on the way (a timeout before the
    // script ran, not after: fenced seed 89456, a re-entrant
    // `lock(lease)`; 4.7.0 seed 206060, a `lock()` held by a partition
    // that ran after the thread's next call, an unlock).
    let mut failed: Vec<&Who> = Vec::new();
    // Acquires out, with the count Redis showed for their thread when
    // they were called: two holds more while one call is out means a
    // script ran twice for it. Either an acquire that failed ran behind
    // the thread's next one (fenced seed 24462: a tryLock times out, the
    // next one is in flight when both scripts run), or the call's first
    // attempt timed out on the client after it ran and Redisson's resend
    // ran it again (3.8.0 seed 984: a dropped reply; #7367's path in
    // replicated mode).
    let mut retrying: Vec<(&Who, i64)> = Vec::new();
    // The holder Redis names on each lock, and its count.
    let mut holders: Vec<(&LockName, &Who, i64)> = Vec::new();
    let interrupted = lockcore::LockError::Interrupted.to_string();
    for r in &history.records {
        if r.at > v.at {
            break;
        }
        match &r.kind {
            RecordKind::Call { who, call, .. } => {
                if call.is_acquire() {
                    failed.retain(|w| *w != who);
                }
                if call.is_acquire() && of(&who.client) {
                    calling.push(who);
                    retrying.push((who, count_of(&holders, who)));
                }
            }
            RecordKind::Server {
                lock,
                holder,
                count,
                cause,
                ..
            } => {
                let before = (holders.iter())
                    .find(|(l, _, _)| *l == lock)
                    .map(|&(_, w, c)| (w, c));
                holders.retain(|(l, _, _)| *l != lock);
                let Some(who) = holder else {
                    continue;
                };
                holders.push((lock, who, *count));
                if !matches!(cause, ServerCause::Command { .. }) {
                    continue;
                }
                // Only an acquire raises a thread's count: an unlock of
                // a failed thread counts down.
                let rose = before.is_none_or(|(w, c)| w != who || c < *count);
                if failed.contains(&who) && rose
                    || retrying
                        .iter()
                        .any(|(w, base)| *w == who && *count >= base + 2)
                {
                    return true;
                }
                if calling.contains(&who) && !ran.contains(&who) {
                    ran.push(who);
                }
            }
            RecordKind::Return {
                who,
                call,
                outcome,
                lock,
            } if call.is_acquire() => {
                let error = matches!(outcome, Outcome::Error { .. });
                // From 4.7.0 (#5019) a timeout inside tryLock's wait loop
                // answers false, and RLock's acquireFailed undoes nothing:
                // a false after Redis made the thread holder is the same
                // unknown count (4.7.0 seed 56801, a fair lock).
                let gave_up = matches!(outcome, Outcome::NotAcquired);
                if ran.contains(&who) && (error || gave_up) {
                    return true;
                }
                // An interrupted acquire that runs later is #5358's path
                // (the late reply's callback), unless the release drops
                // that reply.
                let interrupted = !interrupt_hides(release, lock.kind())
                    && matches!(outcome, Outcome::Error { message, .. } if *message == interrupted);
                if error && !interrupted && calling.contains(&who) {
                    failed.push(who);
                }
                calling.retain(|w| *w != who);
                ran.retain(|w| *w != who);
                retrying.retain(|(w, _)| *w != who);
            }
            _ => {}
        }
    }
    false
}

/// The count Redis shows for `who` now (0 when it holds nothing).
fn count_of(holders: &[(&LockName, &Who, i64)], who: &Who) -> i64 {
    holders
        .iter()
        .find(|(_, w, _)| *w == who)
        .map_or(0, |(_, _, count)| *count)
}

/// The start of Redisson's `NoSyncedSlavesException` text, in every
/// release that throws it (`machine/sync.rs`).
const NO_SYNCED_REPLICAS: &str = "None of slaves were synced";

/// Whether renewal of a lock stopped as "unlocked" while a thread of the
/// violation's clients had an unlock of it out that came back as a count
/// down (or as too few synced replicas, every attempt having counted
/// down), the thread still believing it held the lock up to the
/// violation.
fn count_down_stopped_renewal(_: Release, history: &History, v: &Violation) -> bool {
    let of = |c: &str| v.clients.iter().any(|x| **x == *c);
    // Unlocks out, and those out when their lock's renewal stopped.
    let mut out: Vec<(&Who, &LockName)> = Vec::new();
    let mut stopped_under: Vec<(&Who, &LockName)> = Vec::new();
    // Threads whose count-down unlock stopped renewal, and the lock.
    let mut suspects: Vec<(&Who, &LockName)> = Vec::new();
    // Threads that believe they hold a lock (a thread lets go before it
    // calls its last unlock, so a count-down of that one is #4109's).
    let mut believing: Vec<(&Who, &LockName)> = Vec::new();
    for r in &history.records {
        if r.at > v.at {
            break;
        }
        match &r.kind {
            RecordKind::Call {
                who,
                lock,
                call: lockcore::Call::Unlock,
            } if of(&who.client) => out.push((who, lock)),
            RecordKind::Lock {
                process,
                event: lockcore::Event::RenewalStopped { lock, reason },
            } if reason == "unlocked" => stopped_under.extend(out.iter().filter(|(w, l)| {
                *l == lock && w.client == process.client && w.life == process.life
            })),
            RecordKind::Return {
                who, lock, outcome, ..
            } => {
                let key = (who, lock);
                // An unlock whose every attempt synced no replica throws
                // after Redis counted down (4.7.0 seed 25489): the thread
                // holds the rest of its count as after a clean count-down.
                let counted_down = match outcome {
                    Outcome::Unlocked { released } => !released,
                    Outcome::Error { message, .. } => message.contains(NO_SYNCED_REPLICAS),
                    _ => false,
                };
                if counted_down && stopped_under.contains(&key) && believing.contains(&key) {
                    suspects.push(key);
                }
                out.retain(|k| *k != key);
                stopped_under.retain(|k| *k != key);
            }
            RecordKind::Hold { who, lock, .. } => believing.push((who, lock)),
            RecordKind::Release { who, lock, .. } => {
                suspects.retain(|k| *k != (who, lock));
                believing.retain(|k| *k != (who, lock));
            }
            _ => {}
        }
    }
    !suspects.is_empty()
}

/// Whether a fair lock's liveness broke, or its queue was left behind,
/// after a waiting acquire of it failed with an error and its thread did
/// not hold the lock since; when Redis still had the queue at the
/// horizon, that thread must be in it.
fn fair_place_left(_: Release, history: &History, v: &Violation) -> bool {
    use sim::Invariant::{Liveness, NothingLeftBehind};
    if !matches!(v.invariant, Liveness | NothingLeftBehind) {
        return false;
    }
    let Some(key) = fair_key(history, v) else {
        return false;
    };
    let on_key = |l: &LockName| l.as_str() == key;
    let mut left: Vec<&Who> = Vec::new();
    for r in &history.records {
        match &r.kind {
            RecordKind::Return {
                who,
                lock: l,
                call,
                outcome: Outcome::Error { .. },
            } if on_key(l) && call.waits() && r.at <= v.at => left.push(who),
            RecordKind::Hold { who, lock: l, .. } if on_key(l) => left.retain(|w| *w != who),
            RecordKind::Leftover {
                lock: l, entries, ..
            } if on_key(l) => return left.iter().any(|w| entries.contains(w)),
            _ => {}
        }
    }
    !left.is_empty()
}

/// The key of the lock `v` cites, when some call took it as a fair lock.
/// By key: Redis's records name the key, whatever object the calls took
/// it as (4.7.0 seed 9640's liveness cites a server record).
fn fair_key<'h>(history: &'h History, v: &Violation) -> Option<&'h str> {
    let key = v
        .events
        .iter()
        .find_map(|&i| lock_of(history.records.get(i)?))
        .map(LockName::as_str)?;
    let fair = history.records.iter().any(|r| {
        matches!(&r.kind, RecordKind::Call { lock, .. }
            if lock.as_str() == key && lock.kind() == lockcore::LockKind::Fair)
    });
    fair.then_some(key)
}

/// Whether a fair lock's liveness broke while a waiting acquire of a
/// client the violation names was out when Redis lost the key (a restart
/// without persistence or a failover: the queue went with it), and that
/// thread did not wait behind another entry at the horizon: it was out
/// of the queue, or its head. A queued waiter that is not the head is
/// told `max(0, PTTL)` and tries again at once; one that is the head
/// takes a free lock at its next attempt; so one of them still waiting
/// with the lock free is asleep on a ttl its enqueue answered.
fn fair_requeued_slept(_: Release, history: &History, v: &Violation) -> bool {
    if v.invariant != sim::Invariant::Liveness {
        return false;
    }
    let Some(key) = fair_key(history, v) else {
        return false;
    };
    let on_key = |l: &LockName| l.as_str() == key;
    let of = |w: &Who| v.clients.iter().any(|c| **c == *w.client);
    let mut out: Vec<&Who> = Vec::new();
    let mut lost: Vec<&Who> = Vec::new();
    for r in &history.records {
        match &r.kind {
            RecordKind::Call { who, lock, call }
                if on_key(lock) && call.waits() && of(who) && r.at <= v.at =>
            {
                out.push(who);
            }
            RecordKind::Return { who, lock, .. } if on_key(lock) && r.at <= v.at => {
                out.retain(|w| *w != who);
                lost.retain(|w| *w != who);
            }
            RecordKind::Server {
                lock,
                cause: ServerCause::Restart | ServerCause::Failover,
                ..
            } if on_key(lock) && r.at <= v.at => {
                for w in &out {
                    if !lost.contains(w) {
                        lost.push(w);
                    }
                }
            }
            RecordKind::Leftover {
                lock,
                what: sim::LeftoverKind::Queue,
                entries,
                ..
            } if on_key(lock) => {
                return lost
                    .iter()
                    .any(|w| entries.first() == Some(*w) || !entries.contains(w));
            }
            _ => {}
        }
    }
    !lost.is_empty()
}

/// Whether a fair lock's liveness broke after its key expired (freed
/// with no unlock, so no message) while a waiting acquire of a client the
/// violation names was out, and nobody took the key again before the
/// violation.
fn fair_expired_slept(_: Release, history: &History, v: &Violation) -> bool {
    if v.invariant != sim::Invariant::Liveness {
        return false;
    }
    let Some(key) = fair_key(history, v) else {
        return false;
    };
    let on_key = |l: &LockName| l.as_str() == key;
    let of = |w: &Who| v.clients.iter().any(|c| **c == *w.client);
    let mut out: Vec<&Who> = Vec::new();
    let mut slept = false;
    for r in history.records.iter().take_while(|r| r.at <= v.at) {
        match &r.kind {
            RecordKind::Call { who, lock, call } if on_key(lock) && call.waits() && of(who) => {
                out.push(who);
            }
            RecordKind::Return { who, lock, .. } if on_key(lock) => out.retain(|w| *w != who),
            RecordKind::Server {
                lock,
                holder,
                cause,
                ..
            } if on_key(lock) => {
                slept = holder.is_none() && *cause == ServerCause::Expiry && !out.is_empty();
            }
            _ => {}
        }
    }
    slept
}

/// The lock a record names, if it names one.
fn lock_of(r: &sim::Record) -> Option<&LockName> {
    match &r.kind {
        RecordKind::Hold { lock, .. }
        | RecordKind::Call { lock, .. }
        | RecordKind::Return { lock, .. }
        | RecordKind::Release { lock, .. }
        | RecordKind::Server { lock, .. }
        | RecordKind::Leftover { lock, .. } => Some(lock),
        _ => None,
    }
}

/// Whether `v` is a spin lock's `tryLock(wait)` that threw inside its
/// wait loop.
fn spin_try_lock_threw(_: Release, history: &History, v: &Violation) -> bool {
    breaks_on(
        history,
        v,
        sim::Invariant::TryLockAnswers,
        &[LockKind::Spin],
    )
}

/// Whether `v` breaks `invariant` and one of its events is on a lock of
/// one of `kinds`.
fn breaks_on(
    history: &History,
    v: &Violation,
    invariant: sim::Invariant,
    kinds: &[LockKind],
) -> bool {
    v.invariant == invariant
        && v.events
            .iter()
            .filter_map(|&i| lock_of(history.records.get(i)?))
            .any(|lock| kinds.contains(&lock.kind()))
}

/// Whether `v` is a fair lock's unlock that returned normally for a hold
/// lost before it was called.
fn fair_unlock_absent_one(_: Release, history: &History, v: &Violation) -> bool {
    breaks_on(
        history,
        v,
        sim::Invariant::FalseUnlockSuccess,
        &[LockKind::Fair],
    )
}

/// Whether `v` is a read or write lock's unlock that returned normally
/// for a hold lost before it was called, under a release with the unlock
/// latch: tried only when 1ce49b7a2's fix did not remove it, so the
/// resend answered from the latch (3.43.0 seed 6187: its first attempt
/// was lost in a Redis restart).
fn rw_unlock_latches_one(release: Release, history: &History, v: &Violation) -> bool {
    let rw = [LockKind::Read, LockKind::Write];
    release.has(Switch::UnlockLatch)
        && breaks_on(history, v, sim::Invariant::FalseUnlockSuccess, &rw)
}

/// Whether `v` is a fair lock's `tryLock(wait)` that threw after its wait
/// had run out (no attempt goes out then, only `acquireFailed`), or,
/// where a timed-out attempt in the loop is caught (`trylock-timeout-
/// false`, 4.7.0), at any time: the catch's `acquireFailed` is then all
/// that can throw a timeout.
fn fair_acquire_failed_threw(release: Release, history: &History, v: &Violation) -> bool {
    if v.invariant != sim::Invariant::TryLockAnswers {
        return false;
    }
    let [call, ret] = v.events[..] else {
        return false;
    };
    let (Some(call), Some(ret)) = (history.records.get(call), history.records.get(ret)) else {
        return false;
    };
    let RecordKind::Call {
        lock,
        call: lockcore::Call::TryLock {
            wait: Some(wait), ..
        },
        ..
    } = &call.kind
    else {
        return false;
    };
    let caught = release.has(Switch::TryLockTimeoutFalse);
    lock.kind() == lockcore::LockKind::Fair
        && (caught || ret.at.as_ms() >= call.at.as_ms() + wait.0)
}

/// Whether `v` is a writer let in while a reader that holds the read lock
/// with a lease believes it holds: K expired inside that lease, and a
/// renewal of the read lock (another hold's watchdog: the believer has
/// none) went out between the believer's hold and the expiry.
fn read_renewal_shortened(_: Release, history: &History, v: &Violation) -> bool {
    if v.invariant != sim::Invariant::ReaderWriterExclusion {
        return false;
    }
    let Some(held) = v.events.first().and_then(|&i| history.records.get(i)) else {
        return false;
    };
    let RecordKind::Hold {
        lock,
        lease_ms,
        watchdog: false,
        ..
    } = &held.kind
    else {
        return false;
    };
    if lock.kind() != lockcore::LockKind::Read {
        return false;
    }
    let lease_ends = held.at.as_ms() + lease_ms;
    let on_key = |l: &LockName| l.as_str() == lock.as_str();
    let mut renewed = false;
    for r in history
        .records
        .iter()
        .filter(|r| held.at <= r.at && r.at <= v.at)
    {
        match &r.kind {
            RecordKind::RenewSent { lock: l, .. } if on_key(l) => {
                renewed |= l.kind() == lockcore::LockKind::Read;
            }
            RecordKind::Server {
                lock: l,
                holder: None,
                cause: ServerCause::Expiry,
                ..
            } if on_key(l) => return renewed && r.at.as_ms() < lease_ends,
            _ => {}
        }
    }
    false
}
