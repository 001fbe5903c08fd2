//! A lock left behind by an unlock that failed on the way.
//!
//! An unlock that fails with a transport error (it timed out, or its
//! connection broke) may never have reached Redis: the count the thread
//! let go of stays on the key. Redisson's caller sees the exception and
//! goes on; its next `lock()` re-enters on top of that count, its next
//! unlock only counts down, and the watchdog keeps the key for ever.
//! Whatever made that unlock fail explains the lock left behind (fenced
//! seed 22929: a 90% drop on A loses its unlock; A locks again, unlocks
//! once, and the key stays its lease), as long as the watchdog let go
//! too: a key still renewed after the thread's last unlock is the
//! watchdog's doing. An unlock Redis answered, even with "not locked by
//! current thread", is not this path.

use crate::model::history::{Outcome, RecordKind};
use crate::{History, SimSpec, SimTime, Violation};
use lockcore::Call;

/// The fault that made a thread of `v`'s clients lose an unlock of the
/// violated lock before `v`, as the cause's text.
pub(crate) fn explains<'s>(
    spec: &'s SimSpec,
    history: &History,
    v: &'s Violation,
) -> Option<(String, &'s crate::Fault)> {
    let lock = super::violated_lock(history, v)?;
    let mut calls: Vec<(&crate::model::history::Who, SimTime)> = Vec::new();
    let mut failed: Option<(SimTime, SimTime)> = None;
    for r in history.records.iter().take_while(|r| r.at <= v.at) {
        match &r.kind {
            RecordKind::Call {
                who,
                lock: l,
                call: Call::Unlock,
            } if *l == lock && v.clients.iter().any(|c| **c == *who.client) => {
                calls.push((who, r.at));
            }
            RecordKind::Return {
                who,
                lock: l,
                call: Call::Unlock,
                outcome: Outcome::Error { message },
            } if *l == lock && message.starts_with("transport error") => {
                if let Some(i) = calls.iter().position(|(w, _)| *w == who) {
                    failed = Some((calls.swap_remove(i).1, r.at));
                }
            }
            // A release since freed the key: that loss is not this one.
            RecordKind::Return {
                lock: l,
                call: Call::Unlock,
                outcome: Outcome::Unlocked { released: true },
                ..
            } if *l == lock => failed = None,
            _ => {}
        }
    }
    let (sent, failed_at) = failed?;
    // Renewed after the thread let go for good: the watchdog keeps the key
    // (3.8.0 renews after an unlock error, #1602), which no lost unlock
    // explains.
    let renewed_after = history.records.iter().any(|r| {
        r.at > v.at
            && matches!(&r.kind, RecordKind::RenewSent { process, lock: l, retry: false, .. }
                if *l == lock && v.clients.iter().any(|c| **c == *process.client))
    });
    if renewed_after {
        return None;
    }
    let f = super::faults_on(spec, v, sent.as_ms(), failed_at.as_ms()).next()?;
    let why = format!(
        "an unlock that failed at {failed_at} ({} at {}) left its count on the key",
        f.text(),
        SimTime::from_ms(f.at_ms())
    );
    Some((why, f))
}
