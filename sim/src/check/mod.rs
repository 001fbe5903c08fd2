//! Invariant checkers over a history.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{History, SimTime};

/// A named invariant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Invariant {
    /// No two threads believe they hold the same lock at the same instant.
    MutualExclusion,
    /// The protected resource never accepts a write whose token is lower
    /// than one it already accepted.
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
}

impl Invariant {
    /// Every invariant, in a fixed order.
    pub const ALL: [Invariant; 6] = [
        Invariant::MutualExclusion,
        Invariant::Fencing,
        Invariant::ReleaseAfterCrash,
        Invariant::RenewalAfterUnlock,
        Invariant::LostWakeup,
        Invariant::LockLeftBehind,
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
        }
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
}

/// Runs every checker over `history`, in the order of [`Invariant::ALL`].
pub fn check_all(history: &History) -> Vec<Violation> {
    let _ = history;
    todo!("sim issue")
}
