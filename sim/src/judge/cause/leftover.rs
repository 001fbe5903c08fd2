//! A fair-lock queue entry (or another family key) left behind, and the
//! two faults that explain it: the crash of the client whose thread it
//! names, which died before it could take the lock or remove itself; and
//! a `delete-key` that took the fair lock's queue or timeout set, after
//! which Redisson's scripts cannot make the two agree again (a waiter
//! whose deadline went queues a second time, and a departed thread's
//! place without a deadline is never purged, which also keeps the lock
//! from its waiters). Nothing else does. A reply held back past the response timeout is
//! Redisson's to handle: from 4.7.0 `tryLock` sends `acquireFailed` when
//! an attempt inside its wait loop times out (#5019), so the same fault
//! leaving the entry under 4.6.x is the defect that fix removes.

use lockcore::LockName;

use crate::model::history::{Outcome, RecordKind, Who};
use crate::{Fault, History, SimSpec, SimTime, Violation};

/// The lock and the entries of the leftover key `v` cites.
fn left<'h>(history: &'h History, v: &Violation) -> Option<(&'h LockName, &'h [Who])> {
    v.events
        .iter()
        .filter_map(|&i| history.records.get(i))
        .find_map(|r| match &r.kind {
            RecordKind::Leftover { lock, entries, .. } => Some((lock, entries.as_slice())),
            _ => None,
        })
}

/// The crash fault of a process a leftover key of `v` names, with the
/// words that say so.
pub(super) fn crashed_owner<'s>(
    spec: &'s SimSpec,
    history: &History,
    v: &Violation,
) -> Option<(String, &'s Fault)> {
    let (_, entries) = left(history, v)?;
    history.records.iter().find_map(|r| {
        let RecordKind::Crash { process } = &r.kind else {
            return None;
        };
        let named = entries
            .iter()
            .find(|w| w.client == process.client && w.life == process.life)?;
        let fault = crash_fault(spec, &process.client, r.at)?;
        let why = format!(
            "{named}'s client crashed at {} with its entry queued ({})",
            SimTime::from_ms(fault.at_ms()),
            fault.text()
        );
        Some((why, fault))
    })
}

/// The `delete-key` fault that took a queue or timeout set of the lock
/// whose family key `v` finds left, with the words that say so.
pub(super) fn deleted_family_key<'s>(
    spec: &'s SimSpec,
    history: &History,
    v: &Violation,
) -> Option<(String, &'s Fault)> {
    let (lock, _) = left(history, v)?;
    family_key_delete(spec, lock, v)
}

/// A fair lock kept from its waiters after a `delete-key` took its queue
/// or timeout set, with the words that say so: a place whose deadline
/// went is never purged, so a thread that left without removing it (a
/// crash, a failed call) blocks the queue for good. Not when a script of
/// the lock failed inside: then the scripts, not the lost state, kept the
/// lock (#4153 and #6434, which Redisson fixed; `scripts-run` names them).
pub(super) fn lost_fair_state<'s>(
    spec: &'s SimSpec,
    history: &History,
    v: &Violation,
) -> Option<(String, &'s Fault)> {
    let lock = super::violated_lock(history, v)?;
    let script_failed = history.records.iter().any(|r| {
        matches!(&r.kind, RecordKind::Return {
            lock: l,
            outcome: Outcome::Error { script: true, .. },
            ..
        } if l.as_str() == lock.as_str())
    });
    if script_failed {
        return None;
    }
    family_key_delete(spec, &lock, v)
}

/// The last `delete-key` before `v` of `lock`'s queue or timeout set.
fn family_key_delete<'s>(
    spec: &'s SimSpec,
    lock: &LockName,
    v: &Violation,
) -> Option<(String, &'s Fault)> {
    let fault = spec
        .faults
        .0
        .iter()
        .filter(|f| f.at_ms() <= v.at.as_ms())
        .filter(|f| {
            matches!(f, Fault::DeleteKey(d)
                if d.key != crate::LockKey::Lock && d.lock.as_str() == lock.as_str())
        })
        .max_by_key(|f| f.at_ms())?;
    let why = format!(
        "someone else deleted part of the fair lock's state at {} ({}), and Redisson's scripts cannot rebuild the queue and its deadlines",
        SimTime::from_ms(fault.at_ms()),
        fault.text()
    );
    Some((why, fault))
}

/// The crash fault of `client` recorded at `at`: the hosted engines
/// record a crash a little after its instant.
fn crash_fault<'s>(spec: &'s SimSpec, client: &str, at: SimTime) -> Option<&'s Fault> {
    spec.faults
        .0
        .iter()
        .filter(|f| matches!(f, Fault::Crash(c) if *c.client == *client))
        .filter(|f| f.at_ms() <= at.as_ms())
        .max_by_key(|f| f.at_ms())
}

/// A fair lock kept from its waiters by the queue place of a waiter whose
/// client crashed while it waited, with the words that say so. Redisson
/// keeps a departed waiter's place until its deadline, the holder's TTL
/// plus the thread wait (5 minutes by default): by design, as Redisson
/// answered #3254 ("might happen if one of waiting threads was
/// terminated"), and longer than the liveness bound. When Redis still had
/// the queue at the horizon, the waiter must be in it.
pub(super) fn crashed_waiter<'s>(
    spec: &'s SimSpec,
    history: &History,
    v: &Violation,
) -> Option<(String, &'s Fault)> {
    // By key: the violation may cite Redis's record of it, which names
    // the key whatever object the calls took it as.
    let lock = super::violated_lock(history, v)?;
    let on_key = |l: &lockcore::LockName| l.as_str() == lock.as_str();
    let fair = |l: &lockcore::LockName| on_key(l) && l.kind() == lockcore::LockKind::Fair;
    let mut waiting: Vec<&Who> = Vec::new();
    let mut crashed: Vec<(&Who, SimTime)> = Vec::new();
    for r in &history.records {
        match &r.kind {
            RecordKind::Call { who, lock: l, call } if fair(l) && call.waits() => {
                waiting.push(who);
            }
            RecordKind::Return { who, lock: l, .. } if on_key(l) => {
                waiting.retain(|w| *w != who);
            }
            RecordKind::Crash { process } if r.at <= v.at => waiting.retain(|w| {
                let dead = w.client == process.client && w.life == process.life;
                if dead {
                    crashed.push((w, r.at));
                }
                !dead
            }),
            RecordKind::Leftover {
                lock: l, entries, ..
            } if on_key(l) => crashed.retain(|(w, _)| entries.contains(w)),
            _ => {}
        }
    }
    let &(who, at) = crashed.first()?;
    let fault = crash_fault(spec, &who.client, at)?;
    let why = format!(
        "{who}'s client crashed at {} while it waited in the fair lock's queue ({}), and Redisson keeps a departed waiter's place until the holder's TTL plus the thread wait (5 minutes) have passed",
        SimTime::from_ms(fault.at_ms()),
        fault.text()
    );
    Some((why, fault))
}
