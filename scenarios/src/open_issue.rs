//! Defects that are open upstream with no fix, in any release or pull
//! request, that attribution could try: recognised by the path the run
//! took, so a finding can still name the upstream issue a user would
//! search for.
//!
//! Attribution by experiment ([`crate::defect`]) needs a switch that
//! removes the defect. For an open issue without a fix there is none, so
//! each known path here is a predicate over the run's history, tried only
//! when no fix removes the defect. A new one is a `const` and a
//! predicate plus one line in [`KNOWN`].

use lockcore::LockName;
use serde::Serialize;
use sim::{History, Outcome, RecordKind, ServerCause, Violation, Who};

/// An upstream issue, open with no fix, whose path a run took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct OpenIssue {
    /// The upstream issue (`#4109`).
    pub upstream: &'static str,
    /// What happens on the path, in one line.
    pub path: &'static str,
}

impl std::fmt::Display for OpenIssue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the path of {}, open upstream: {}",
            self.upstream, self.path
        )
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

/// Whether the run of a history took a path to a violation.
type Took = fn(&History, &Violation) -> bool;

/// Each known path and how to recognise it.
const KNOWN: &[(OpenIssue, Took)] = &[(TIMED_OUT_ACQUIRE_RAN, timed_out_acquire_ran)];

/// The open issue whose path the run of `history` took to break `v`, if
/// one is known.
pub(crate) fn open_issue(history: &History, v: &Violation) -> Option<OpenIssue> {
    KNOWN
        .iter()
        .find(|(_, took)| took(history, v))
        .map(|(issue, _)| *issue)
}

/// Whether a thread of the violation's clients had an acquire answer
/// with an error after Redis made it the holder, or Redis made it the
/// holder after its acquire failed and before it called anything else;
/// for a lost wake-up, a
/// thread of the client that held the lock before it went free without
/// a message (its unknown count kept the key until it expired: fenced
/// seeds 44624 and 76079).
fn timed_out_acquire_ran(history: &History, v: &Violation) -> bool {
    if v.invariant == sim::Invariant::LostWakeup {
        return last_holder(history, v)
            .is_some_and(|holder| timed_out_acquire_ran_by(history, v, |c| c == holder));
    }
    timed_out_acquire_ran_by(history, v, |c| v.clients.iter().any(|x| **x == *c))
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

fn timed_out_acquire_ran_by(history: &History, v: &Violation, of: impl Fn(&str) -> bool) -> bool {
    let mut calling: Vec<&Who> = Vec::new();
    let mut ran: Vec<&Who> = Vec::new();
    // Threads whose acquire failed with an error and that called nothing
    // since: a script Redis runs for one of them now is that acquire,
    // held back on the way (a timeout before the script ran, not after:
    // fenced seed 89456, a re-entrant `lock(lease)`).
    let mut failed: Vec<&Who> = Vec::new();
    // Such threads that called an acquire again, with the count Redis
    // showed for them then: two holds more while that one call is out
    // means the failed acquire ran behind it (fenced seed 24462: a
    // tryLock times out, the next one is in flight when both scripts run).
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
                let was_failed = failed.contains(&who);
                failed.retain(|w| *w != who);
                if call.is_acquire() && of(&who.client) {
                    calling.push(who);
                    if was_failed {
                        retrying.push((who, count_of(&holders, who)));
                    }
                }
            }
            RecordKind::Server {
                lock,
                holder,
                count,
                cause,
                ..
            } => {
                holders.retain(|(l, _, _)| *l != lock);
                let Some(who) = holder else {
                    continue;
                };
                holders.push((lock, who, *count));
                if !matches!(cause, ServerCause::Command { .. }) {
                    continue;
                }
                if failed.contains(&who)
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
                who, call, outcome, ..
            } if call.is_acquire() => {
                let error = matches!(outcome, Outcome::Error { .. });
                if ran.contains(&who) && error {
                    return true;
                }
                // An interrupted acquire that runs later is #5358's path
                // (the late reply's callback), not this one.
                let interrupted =
                    matches!(outcome, Outcome::Error { message } if *message == interrupted);
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
