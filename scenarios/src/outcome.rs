//! What a run gave, reduced to what expectations talk about: the verdict,
//! the broken invariants, the unlock errors, and a flat list of observed
//! events in a small, stable vocabulary.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sim::{CutShort, Invariant, Run, SimTime};

/// Safe (no invariant broken) or violated (at least one).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Every invariant held.
    Safe,
    /// At least one invariant was broken.
    Violated,
}

impl Verdict {
    /// `safe` or `violated`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Safe => "safe",
            Verdict::Violated => "violated",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The kinds of events an expectation can count or time. The names are the
/// scenario-file vocabulary; they are mapped from the simulator's history,
/// so scenario files do not depend on how the history stores them.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// A thread's lock call returned success.
    Acquired,
    /// A thread's try-lock gave up (wait time over).
    AcquireFailed,
    /// A thread's lock or try-lock threw (a timeout, Redis down, too few
    /// replicas synced).
    AcquireError,
    /// The watchdog sent a renewal.
    Renewal,
    /// A renewal reply said the key was extended.
    Renewed,
    /// A renewal reply said the key was no longer ours (or gone).
    RenewalMissed,
    /// A renewal failed on the wire (an error reply, or a timeout after
    /// its retries).
    RenewalError,
    /// The watchdog stopped renewing a lock (unlocked, not held, or an error).
    RenewalStopped,
    /// `fenced`: the client learned its lease was lost.
    LeaseLost,
    /// An unlock released the lock (key deleted, unlock message published).
    Released,
    /// An unlock failed.
    UnlockError,
    /// The lock's key expired in Redis.
    Expired,
    /// The protected resource accepted a write.
    WriteAccepted,
    /// The protected resource rejected a (stale) write.
    WriteRejected,
    /// A client process crashed.
    Crash,
}

impl EventKind {
    /// Every kind, in a fixed order.
    pub const ALL: [EventKind; 15] = [
        EventKind::Acquired,
        EventKind::AcquireFailed,
        EventKind::AcquireError,
        EventKind::Renewal,
        EventKind::Renewed,
        EventKind::RenewalMissed,
        EventKind::RenewalError,
        EventKind::RenewalStopped,
        EventKind::LeaseLost,
        EventKind::Released,
        EventKind::UnlockError,
        EventKind::Expired,
        EventKind::WriteAccepted,
        EventKind::WriteRejected,
        EventKind::Crash,
    ];

    /// The script steps (by their scenario-file names) whose running
    /// produces this event; none for the watchdog's and Redis's own.
    pub fn made_by_steps(self) -> &'static [&'static str] {
        match self {
            EventKind::Acquired | EventKind::AcquireFailed | EventKind::AcquireError => {
                &["lock", "try-lock"]
            }
            EventKind::Released | EventKind::UnlockError => &["unlock", "force-unlock"],
            EventKind::WriteAccepted | EventKind::WriteRejected => &["write"],
            _ => &[],
        }
    }

    /// The name used in scenario files (`acquired`, `renewal`, ...).
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Acquired => "acquired",
            EventKind::AcquireFailed => "acquire-failed",
            EventKind::AcquireError => "acquire-error",
            EventKind::Renewal => "renewal",
            EventKind::Renewed => "renewed",
            EventKind::RenewalMissed => "renewal-missed",
            EventKind::RenewalError => "renewal-error",
            EventKind::RenewalStopped => "renewal-stopped",
            EventKind::LeaseLost => "lease-lost",
            EventKind::Released => "released",
            EventKind::UnlockError => "unlock-error",
            EventKind::Expired => "expired",
            EventKind::WriteAccepted => "write-accepted",
            EventKind::WriteRejected => "write-rejected",
            EventKind::Crash => "crash",
        }
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One observed event: when, who, what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observation {
    /// Virtual time.
    pub at: SimTime,
    /// The client, by name (empty for events of Redis itself, such as expiry).
    pub client: String,
    /// The thread, when the event belongs to one.
    pub thread: Option<u64>,
    /// What happened.
    pub kind: EventKind,
}

/// A broken invariant, as reports show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Broken {
    /// Which invariant.
    pub invariant: Invariant,
    /// When it was first broken.
    pub at: SimTime,
    /// The checker's one-line explanation.
    pub detail: String,
    /// Why it broke: misuse, beyond the guarantee, or a defect.
    #[serde(default)]
    pub cause: sim::Cause,
}

/// The facts of one run that expectations are judged against.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Outcome {
    /// Broken invariants, in the checkers' order.
    pub broken: Vec<Broken>,
    /// How many unlocks failed.
    pub unlock_errors: usize,
    /// The observed events, in time order.
    pub events: Vec<Observation>,
    /// Threads still working at the horizon.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cut_short: Vec<CutShort>,
    /// The keys the run left in Redis without a TTL ([`sim::Residue`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<String>,
}

impl Outcome {
    /// The outcome of a finished run.
    pub fn of(run: &Run) -> Outcome {
        Outcome {
            broken: Outcome::broken_of(run),
            unlock_errors: run.history.unlock_errors().len(),
            events: crate::observe::observations(&run.history),
            cut_short: run.cut_short.clone(),
            left: run.residue.iter().map(|r| r.key.clone()).collect(),
        }
    }

    /// [`Outcome::broken`] of `run` alone: explore keeps only it, and
    /// listing the run's observations too cost a hundredth of a sweep.
    pub fn broken_of(run: &Run) -> Vec<Broken> {
        run.violations
            .iter()
            .map(|v| Broken {
                invariant: v.invariant,
                at: v.at,
                detail: v.detail.clone(),
                cause: v.cause.clone(),
            })
            .collect()
    }

    /// Safe when nothing is broken.
    pub fn verdict(&self) -> Verdict {
        if self.broken.is_empty() {
            Verdict::Safe
        } else {
            Verdict::Violated
        }
    }

    /// Whether `invariant` was broken.
    pub fn is_broken(&self, invariant: Invariant) -> bool {
        self.broken.iter().any(|b| b.invariant == invariant)
    }

    /// The broken invariants, each once, in the checkers' order.
    pub fn broken_invariants(&self) -> Vec<Invariant> {
        Invariant::ALL
            .into_iter()
            .filter(|i| self.is_broken(*i))
            .collect()
    }
}
