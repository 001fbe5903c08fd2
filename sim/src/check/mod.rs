//! Invariant checkers over a history: pure functions, one per invariant.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{History, SimTime};
use work::{Count, Uncounted, Work};

pub(crate) mod call_within_budget;
mod false_unlock_error;
mod fault_index;
mod fencing;
pub(crate) mod liveness;
mod lock_left_behind;
mod lost_wakeup;
mod mutual_exclusion;
mod release_after_crash;
mod renewal_after_unlock;
#[cfg(test)]
pub(crate) mod sample;
mod try_lock_answers;
mod work;

/// A named invariant.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Invariant {
    /// No two threads believe they hold the same lock at the same instant.
    MutualExclusion,
    /// The protected resource never accepts a write whose token is lower
    /// than one it already accepted (or that reuses, from another writer,
    /// the highest one). Writes without a token are not judged.
    Fencing,
    /// After the holder crashes, the lock becomes acquirable within its
    /// lease plus network delay.
    ReleaseAfterCrash,
    /// No renewal is sent for a lock its client no longer holds.
    RenewalAfterUnlock,
    /// No waiter keeps waiting while the lock has been free for longer than
    /// one message delay plus its retry.
    LostWakeup,
    /// At the end, no lock is still held whose holder finished its script.
    LockLeftBehind,
    /// No unlock reports failure although Redis released the lock for its
    /// thread (or still names the thread holder).
    FalseUnlockError,
    /// Every `tryLock(wait)` returns within its wait plus one command's
    /// documented overhead (timeouts and retries) and a round trip.
    CallWithinBudget,
    /// Once every fault is over, the lock becomes acquirable again within
    /// a bound: Redis keeps no key for a thread outside its critical
    /// section, nor leaves the lock free while a thread waits, for longer
    /// than the longest lease plus the faults' hold-ups and a grace.
    Liveness,
    /// A `tryLock(wait)` whose wait loop hit a response timeout returns
    /// false rather than throwing (Redisson #5019).
    TryLockAnswers,
}

impl Invariant {
    /// Every invariant, in a fixed order.
    pub const ALL: [Invariant; 10] = [
        Invariant::MutualExclusion,
        Invariant::Fencing,
        Invariant::ReleaseAfterCrash,
        Invariant::RenewalAfterUnlock,
        Invariant::LostWakeup,
        Invariant::LockLeftBehind,
        Invariant::FalseUnlockError,
        Invariant::CallWithinBudget,
        Invariant::Liveness,
        Invariant::TryLockAnswers,
    ];

    /// The invariant's name (`mutual-exclusion`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Invariant::MutualExclusion => "mutual-exclusion",
            Invariant::Fencing => "fencing",
            Invariant::ReleaseAfterCrash => "release-after-crash",
            Invariant::RenewalAfterUnlock => "renewal-after-unlock",
            Invariant::LostWakeup => "lost-wakeup",
            Invariant::LockLeftBehind => "lock-left-behind",
            Invariant::FalseUnlockError => "false-unlock-error",
            Invariant::CallWithinBudget => "call-within-budget",
            Invariant::Liveness => "liveness",
            Invariant::TryLockAnswers => "try-lock-answers",
        }
    }

    /// Runs this invariant's checker over `history`; violations by time.
    pub fn check(self, history: &History) -> Vec<Violation> {
        self.check_counted(history, &Uncounted)
    }

    fn check_counted(self, history: &History, work: &impl Count) -> Vec<Violation> {
        let mut found = match self {
            Invariant::MutualExclusion => mutual_exclusion::check(history, work),
            Invariant::Fencing => fencing::check(history, work),
            Invariant::ReleaseAfterCrash => release_after_crash::check(history, work),
            Invariant::RenewalAfterUnlock => renewal_after_unlock::check(history, work),
            Invariant::LostWakeup => lost_wakeup::check(history, work),
            Invariant::LockLeftBehind => lock_left_behind::check(history, work),
            Invariant::FalseUnlockError => false_unlock_error::check(history, work),
            Invariant::CallWithinBudget => call_within_budget::check(history, work),
            Invariant::Liveness => liveness::check(history, work),
            Invariant::TryLockAnswers => try_lock_answers::check(history, work),
        };
        found.sort_by_key(|v| v.at);
        found
    }
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A broken invariant: which, when, who, and the events that show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// The invariant.
    pub invariant: Invariant,
    /// The virtual time it was first broken.
    pub at: SimTime,
    /// The clients involved, by name.
    pub clients: Vec<String>,
    /// One line that says what happened.
    pub detail: String,
    /// Indexes into the history of the events involved.
    pub events: Vec<usize>,
    /// Why it broke (see [`crate::Cause`]); set by [`crate::run`].
    #[serde(default, flatten)]
    pub cause: crate::Cause,
    /// The lock itself gave a wrong definite answer (an unlock Redis ran,
    /// refused as "not locked by current thread"): no fault excuses it.
    #[serde(skip)]
    pub(crate) own_doing: bool,
}

impl Violation {
    /// A violation; `clients` are deduplicated and sorted.
    pub(crate) fn new(
        invariant: Invariant,
        at: SimTime,
        clients: impl IntoIterator<Item = impl AsRef<str>>,
        detail: String,
        events: Vec<usize>,
    ) -> Violation {
        let mut clients: Vec<String> = clients.into_iter().map(|c| c.as_ref().to_owned()).collect();
        clients.sort();
        clients.dedup();
        Violation {
            invariant,
            at,
            clients,
            detail,
            events,
            cause: crate::Cause::Defect,
            own_doing: false,
        }
    }

    /// Marks it as the lock's own wrong answer (see `own_doing`).
    pub(crate) fn own_doing(mut self) -> Violation {
        self.own_doing = true;
        self
    }
}

impl fmt::Display for Violation {
    /// `12.000000s  mutual-exclusion  [A, B]  detail (events 3, 9)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let events: Vec<String> = self.events.iter().map(|e| e.to_string()).collect();
        write!(
            f,
            "{}  {}  [{}]  {} (events {})",
            self.at,
            self.invariant,
            self.clients.join(", "),
            self.detail,
            events.join(", ")
        )
    }
}

/// Runs every checker over `history`, in the order of [`Invariant::ALL`].
pub fn check_all(history: &History) -> Vec<Violation> {
    checked(history, &Uncounted, &Invariant::ALL)
}

/// Runs the checkers of `invariants` alone over `history`, in the order
/// of [`Invariant::ALL`].
pub(crate) fn check_only(history: &History, invariants: &[Invariant]) -> Vec<Violation> {
    checked(history, &Uncounted, invariants)
}

/// [`check_all`], with the work the checkers did: elementary steps (a
/// record visited, a probe of a binary search), not time. Every checker
/// is O(n log n) in the history; a test holds them to it by this count.
pub fn check_all_counted(history: &History) -> (Vec<Violation>, u64) {
    let work = Work::default();
    let found = checked(history, &work, &Invariant::ALL);
    (found, work.total())
}

fn checked(history: &History, work: &impl Count, invariants: &[Invariant]) -> Vec<Violation> {
    Invariant::ALL
        .into_iter()
        .filter(|inv| invariants.contains(inv))
        .flat_map(|inv| inv.check_counted(history, work))
        .collect()
}
