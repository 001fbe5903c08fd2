//! A multi-lock's `unlock()` that stopped at the first lock whose unlock
//! threw.

use lockcore::{Call, Release, Switch};
use sim::{History, Outcome, RecordKind, Violation};

use super::{OpenIssue, UNREPORTED};

/// Read in Redisson's source (the guide's `multi-unlock.toml`), not
/// reported upstream (searched 2026-12-02: #4456 is an interrupted async
/// acquire, #3243 the feature whose commit brought it). From 3.27.2
/// (commit 0f05a859f) `RedissonMultiLock.unlock()` is
/// `locks.forEach(Lock::unlock)` (read at tags redisson-3.27.2 and
/// redisson-4.7.0): a lock whose unlock throws (its key expired or was
/// deleted under the holder: `IllegalMonitorStateException`) ends it, and
/// the locks after it are never unlocked; their watchdog keeps them for
/// as long as the client lives. Up to 3.27.1 it sent every unlock first.
pub(super) const MULTI_UNLOCK_STOPPED: OpenIssue = OpenIssue {
    upstream: UNREPORTED,
    path: "a multi-lock's unlock() (from 3.27.2 each lock's unlock() in turn) stopped at a lock whose unlock threw, and the locks after it stayed held, renewed for as long as the client lives",
};

/// Whether a thread of the violation's clients called `unlock()` of a
/// multi-lock over the violated lock, which answered an error without
/// calling that lock's unlock (under a release that unlocks in turn).
pub(super) fn multi_unlock_stopped(release: Release, history: &History, v: &Violation) -> bool {
    if !release.has(Switch::MultiUnlockInOrder) {
        return false;
    }
    let Some(key) = v.key(history) else {
        return false;
    };
    let of = |c: &str| v.clients.iter().any(|x| **x == *c);
    let mut open: Option<(&sim::Who, bool)> = None;
    for r in &history.records {
        match &r.kind {
            RecordKind::MultiCall {
                who,
                multi,
                call: Call::Unlock,
            } if of(&who.client) && multi.locks().iter().any(|l| l.as_str() == key) => {
                open = Some((who, false));
            }
            RecordKind::Call {
                who,
                lock,
                call: Call::Unlock,
            } if lock.as_str() == key => {
                if let Some((w, reached)) = open.as_mut()
                    && *w == who
                {
                    *reached = true;
                }
            }
            RecordKind::MultiReturn {
                who,
                call: Call::Unlock,
                outcome,
                ..
            } => {
                if let Some((w, reached)) = open
                    && w == who
                {
                    if !reached && matches!(outcome, Outcome::Error { .. }) {
                        return true;
                    }
                    open = None;
                }
            }
            _ => {}
        }
    }
    false
}
