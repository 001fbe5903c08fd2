//! Invariant checkers over a history: pure functions, one per invariant.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{History, SimTime};
use work::{Count, Uncounted, Work};

mod fault_index;
#[cfg(test)]
pub(crate) mod sample;
mod work;

/// Declares the invariants, one line each (its doc, its variant, its
/// checker's module and its name; those after `@tests` exist in sim's own
/// tests alone): the `Invariant` enum (serde: the
/// name), [`Invariant::ALL`] in registration order, [`Invariant::name`]
/// and the dispatch to each module's `check(history, work)`. A checker
/// registered here runs in [`check_all`]; one that is not has no variant
/// to be named by.
macro_rules! invariants {
    (
        $($(#[$doc:meta])* $variant:ident => $module:ident, $name:literal;)*
        @tests $($(#[$tdoc:meta])* $tvariant:ident => $tmodule:ident, $tname:literal;)*
    ) => {
        $(pub(crate) mod $module;)*
        $(#[cfg(test)] pub(crate) mod $tmodule;)*

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
        pub enum Invariant {
            $($(#[$doc])* #[serde(rename = $name)] $variant,)*
            $(#[cfg(test)] $(#[$tdoc])* #[serde(rename = $tname)] $tvariant,)*
        }

        impl Invariant {
            /// Every invariant, in a fixed order (registration's).
            pub const ALL: [Invariant; [$($name),*].len()] = [$(Invariant::$variant),*];

            /// The invariants of sim's own tests (the recipe's worked
            /// case): never in [`Invariant::ALL`], so no run checks them
            /// unasked.
            #[cfg(test)]
            pub(crate) const TESTS: [Invariant; [$($tname),*].len()] =
                [$(Invariant::$tvariant),*];

            /// The invariant's name (`mutual-exclusion`, ...).
            pub fn name(self) -> &'static str {
                match self {
                    $(Invariant::$variant => $name,)*
                    $(#[cfg(test)] Invariant::$tvariant => $tname,)*
                }
            }

            fn check_counted(self, history: &History, work: &impl Count) -> Vec<Violation> {
                let mut found = match self {
                    $(Invariant::$variant => $module::check(history, work),)*
                    $(#[cfg(test)] Invariant::$tvariant => $tmodule::check(history, work),)*
                };
                found.sort_by_key(|v| v.at);
                found
            }
        }
    };
}

invariants! {
    /// No two threads believe they hold the same lock at the same instant.
    MutualExclusion => mutual_exclusion, "mutual-exclusion";
    /// The protected resource never accepts a write whose token is lower
    /// than one it already accepted (or that reuses, from another writer,
    /// the highest one). Writes without a token are not judged.
    Fencing => fencing, "fencing";
    /// After the holder crashes, the lock becomes acquirable within its
    /// lease plus network delay.
    ReleaseAfterCrash => release_after_crash, "release-after-crash";
    /// No renewal is sent for a lock its client no longer holds.
    RenewalAfterUnlock => renewal_after_unlock, "renewal-after-unlock";
    /// No waiter keeps waiting while the lock has been free for longer than
    /// one message delay plus its retry.
    LostWakeup => lost_wakeup, "lost-wakeup";
    /// At the end, no lock is still held whose holder finished its script.
    LockLeftBehind => lock_left_behind, "lock-left-behind";
    /// No unlock reports failure although Redis released the lock for its
    /// thread (or still names the thread holder).
    FalseUnlockError => false_unlock_error, "false-unlock-error";
    /// Every `tryLock(wait)` returns within its wait plus one command's
    /// documented overhead (timeouts and retries) and a round trip.
    CallWithinBudget => call_within_budget, "call-within-budget";
    /// Once every fault is over, the lock becomes acquirable again within
    /// a bound: Redis keeps no key for a thread outside its critical
    /// section, nor leaves the lock free while a thread waits, for longer
    /// than the longest lease plus the faults' hold-ups and a grace.
    Liveness => liveness, "liveness";
    /// A `tryLock(wait)` whose wait loop hit a response timeout returns
    /// false rather than throwing (Redisson #5019).
    TryLockAnswers => try_lock_answers, "try-lock-answers";
    /// While a thread believes it holds an `RReadWriteLock`'s write lock,
    /// no other thread believes it holds its read or write lock; readers
    /// may share.
    ReaderWriterExclusion => reader_writer_exclusion, "reader-writer-exclusion";
    /// A token call of Redisson's `RFencedLock` that began after another
    /// acquisition of the lock returned its token gets a greater one.
    TokenOrder => token_order, "token-order";
    /// An `RFairLock` grants its waiters in queue order: a waiter that
    /// queued earlier and still waits within its wait is not overtaken.
    FairOrder => fair_order, "fair-order";
    /// Once every thread has left a lock, Redis keeps no key of its
    /// family without a TTL: no fair-lock queue or timeout-set entry,
    /// reader timeout key or unlock latch.
    NothingLeftBehind => nothing_left_behind, "nothing-left-behind";
    /// Every lock script a call sends runs to its end: Redis fails none
    /// with an error raised inside it (a Lua runtime error, or a command
    /// it calls refusing its arguments).
    ScriptsRun => scripts_run, "scripts-run";
    /// No unlock returns normally for a thread whose hold was lost (the
    /// key expired, was deleted or lost by Redis) before it called.
    FalseUnlockSuccess => false_unlock_success, "false-unlock-success";
    @tests
    /// The extension recipe's worked example (`example.rs`): every
    /// accepted write comes from a thread that believes it holds the lock.
    WriteWhileHeld => example, "write-while-held";
}

impl Invariant {
    /// Runs this invariant's checker over `history`; violations by time.
    pub fn check(self, history: &History) -> Vec<Violation> {
        self.check_counted(history, &Uncounted)
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
    /// Which of its invariant's cases it is, for the checkers that tell
    /// several apart (the oracle matches on it, never on `detail`). Not
    /// serialized: the detail already says it in words.
    #[serde(skip)]
    pub case: Case,
}

/// Which case of its invariant a violation is, when the checker tells
/// cases apart; [`Case::Only`] for the invariants that have one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Case {
    /// The invariant's only case.
    #[default]
    Only,
    /// `false-unlock-error`: Redis ran the caller's unlock script while
    /// the call was out (the violation's second event is that record).
    UnlockRan,
    /// `false-unlock-error`: Redis still names the caller holder when the
    /// error returns (the second event is the record that named it).
    StillHolder,
}

impl Case {
    /// The words the checker's detail uses for it (empty for
    /// [`Case::Only`]).
    pub fn words(self) -> &'static str {
        match self {
            Case::Only => "",
            Case::UnlockRan => "although Redis ran its unlock",
            Case::StillHolder => "although Redis still names it holder",
        }
    }
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
            case: Case::Only,
        }
    }

    /// Sets which case of its invariant it is.
    pub(crate) fn with_case(mut self, case: Case) -> Violation {
        self.case = case;
        self
    }

    /// Marks it as the lock's own wrong answer (see `own_doing`).
    pub(crate) fn own_doing(mut self) -> Violation {
        self.own_doing = true;
        self
    }

    /// The Redis key of the lock its events name, in `history` (the run
    /// that found it): one key for every object of a read-write lock.
    pub fn key(&self, history: &History) -> Option<String> {
        let lock = crate::judge::cause::violated_lock(history, self)?;
        Some(lock.with_kind(lockcore::LockKind::Lock).as_str().to_owned())
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

#[cfg(test)]
mod registry_tests;
