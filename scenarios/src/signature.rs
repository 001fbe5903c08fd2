//! A defect's signature: what identifies it across runs, as data.
//!
//! Two runs show the same defect when the same invariant breaks after the
//! same decisive steps: the kinds of the records the checker cites, and
//! the last thing the involved clients' lock reported before it (a
//! renewal stopped, a lease lost). Each step is built from a history
//! record's fields (never from its `Debug` text) and keeps only words:
//! times, seeds and names are left out, so a sweep's thousands of
//! defective runs fold into a handful of groups. It prints, and
//! serializes, as one line: `mutual-exclusion: lock stopped renewal
//! (not-held) > return lock acquired`.

use std::fmt;

use serde::{Serialize, Serializer};
use sim::{History, Invariant, Outcome, RecordKind, ReleaseCause, ServerCause, Violation};

/// What identifies a defect: the invariant, then the decisive steps in
/// the history's order (two equal steps in a row count once).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Signature {
    /// The invariant it broke.
    pub invariant: Invariant,
    /// The decisive steps.
    pub steps: Vec<Step>,
}

impl Signature {
    /// Whether a run's defect of signature `other` is this one where a
    /// changed release adds steps before its path: the same invariant,
    /// and this one's steps are the last of `other`'s (a fix of the
    /// renewal map stops the renewal one more time on the way, `renewal
    /// stopped (not-held) > return unlock error > renew-sent`).
    pub(crate) fn ends(&self, other: &Signature) -> bool {
        self.invariant == other.invariant && other.steps.ends_with(&self.steps)
    }
}

/// One decisive step of a defect: a record's kind in a few words, without
/// times, names or values. Names are the kebab-case names the history's
/// JSON gives the variants (`not-acquired`, `renew-sent`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    /// A thread called the lock: `call try-lock`.
    Call {
        /// The call's name.
        call: &'static str,
    },
    /// A call returned: `return unlock error`.
    Return {
        /// The call's name.
        call: &'static str,
        /// The outcome's name.
        outcome: &'static str,
    },
    /// A thread came to believe it holds the lock: `hold (watchdog)`.
    Hold {
        /// Whether the watchdog keeps it alive (else a lease).
        watchdog: bool,
    },
    /// A thread stopped believing it holds it: `release crash`.
    Release {
        /// Why.
        cause: &'static str,
    },
    /// Redis's view changed: `redis free expiry`.
    Redis {
        /// Whether the key is held after it.
        held: bool,
        /// What changed it.
        cause: &'static str,
    },
    /// A renewal's reply reached the client: `renew reply error`.
    RenewReply {
        /// `1`, `0`, or `error`.
        reply: &'static str,
    },
    /// A write to the resource: `write refused`.
    Write {
        /// Whether the resource took it.
        accepted: bool,
    },
    /// The lock stopped renewing: `renewal stopped (not-held)`.
    RenewalStopped {
        /// The reason's first word (`error` of `error: transport ...`).
        reason: String,
    },
    /// The lock learned its lease was lost: `lease lost`.
    LeaseLost,
    /// Any other record, by its kind's name alone: `crash`.
    Record {
        /// The kind's name.
        kind: &'static str,
    },
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Call { call } => write!(f, "call {call}"),
            Step::Return { call, outcome } => write!(f, "return {call} {outcome}"),
            Step::Hold { watchdog: true } => f.write_str("hold (watchdog)"),
            Step::Hold { watchdog: false } => f.write_str("hold (lease)"),
            Step::Release { cause } => write!(f, "release {cause}"),
            Step::Redis { held, cause } => {
                write!(f, "redis {} {cause}", if *held { "held" } else { "free" })
            }
            Step::RenewReply { reply } => write!(f, "renew reply {reply}"),
            Step::Write { accepted: true } => f.write_str("write accepted"),
            Step::Write { accepted: false } => f.write_str("write refused"),
            Step::RenewalStopped { reason } => write!(f, "renewal stopped ({reason})"),
            Step::LeaseLost => f.write_str("lease lost"),
            Step::Record { kind } => f.write_str(kind),
        }
    }
}

impl fmt::Display for Signature {
    /// `mutual-exclusion: call lock > hold (watchdog) > ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.invariant)?;
        for (i, step) in self.steps.iter().enumerate() {
            if i > 0 {
                f.write_str(" > ")?;
            }
            write!(f, "{step}")?;
        }
        Ok(())
    }
}

/// As its one line, as reports have always shown it.
impl Serialize for Signature {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl Signature {
    /// The signature of `v`, a violation of the run that recorded
    /// `history`: the steps of the records it cites, in the history's
    /// order, with the involved clients' last lock event before it among
    /// them. A renewal that stopped before the believer's hold began (a
    /// stale entry it joined, #3194) signs apart from one that stopped
    /// during it (#6303's error that ends the chain).
    pub fn of(history: &History, v: &Violation) -> Signature {
        let mut cited = v.events.clone();
        cited.sort_unstable();
        let mut steps: Vec<(usize, Step)> = cited
            .iter()
            .filter_map(|&i| Some((i, step(&history.records.get(i)?.kind))))
            .collect();
        if let Some(event) = last_lock_event(history, v) {
            let at = steps.partition_point(|(i, _)| *i < event.0);
            steps.insert(at, event);
        }
        let mut steps: Vec<Step> = steps.into_iter().map(|(_, s)| s).collect();
        steps.dedup();
        Signature {
            invariant: v.invariant,
            steps,
        }
    }
}

/// What the involved clients' lock last reported about its lease before
/// the violation (a renewal stopped and why, a lease lost), and where.
fn last_lock_event(history: &History, v: &Violation) -> Option<(usize, Step)> {
    history
        .records
        .iter()
        .enumerate()
        .take_while(|(_, r)| r.at <= v.at)
        .filter_map(|(i, r)| match &r.kind {
            RecordKind::Lock { process, event }
                if v.clients.iter().any(|c| **c == *process.client) =>
            {
                match event {
                    lockcore::Event::RenewalStopped { reason, .. } => {
                        // lockcore's reason is a word, or `error: ` and
                        // the error's text: the word is what signs.
                        let word = reason.split(':').next().unwrap_or_default();
                        let reason = word.to_owned();
                        Some((i, Step::RenewalStopped { reason }))
                    }
                    lockcore::Event::LeaseLost { .. } => Some((i, Step::LeaseLost)),
                    _ => None,
                }
            }
            _ => None,
        })
        .last()
}

/// A record's kind as a step.
fn step(kind: &RecordKind) -> Step {
    match kind {
        RecordKind::Call { call, .. } => Step::Call {
            call: call_name(call),
        },
        RecordKind::Return { call, outcome, .. } => Step::Return {
            call: call_name(call),
            outcome: outcome_name(outcome),
        },
        RecordKind::Hold { watchdog, .. } => Step::Hold {
            watchdog: *watchdog,
        },
        RecordKind::Release { cause, .. } => Step::Release {
            cause: release_name(*cause),
        },
        RecordKind::Server { holder, cause, .. } => Step::Redis {
            held: holder.is_some(),
            cause: server_name(cause),
        },
        RecordKind::RenewReply { reply, .. } => Step::RenewReply {
            reply: match reply.as_str() {
                "1" => "1",
                "0" => "0",
                _ => "error",
            },
        },
        RecordKind::Write { accepted, .. } => Step::Write {
            accepted: *accepted,
        },
        other => Step::Record {
            kind: kind_name(other),
        },
    }
}

/// A call's name, as the history's JSON tags it.
fn call_name(call: &lockcore::Call) -> &'static str {
    use lockcore::Call;
    match call {
        Call::Lock { .. } => "lock",
        Call::LockInterruptibly { .. } => "lock-interruptibly",
        Call::TryLock { .. } => "try-lock",
        Call::LockAsync { .. } => "lock-async",
        Call::TryLockAsync { .. } => "try-lock-async",
        Call::Unlock => "unlock",
        Call::ForceUnlock => "force-unlock",
        Call::IsLocked => "is-locked",
        Call::IsHeldByThread => "is-held-by-thread",
        Call::HoldCount => "hold-count",
        Call::RemainTtl => "remain-ttl",
        Call::TryLockAndGetToken { .. } => "try-lock-and-get-token",
        Call::GetToken => "get-token",
    }
}

/// An outcome's name, as the history's JSON tags it.
fn outcome_name(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Acquired { .. } => "acquired",
        Outcome::NotAcquired => "not-acquired",
        Outcome::Unlocked { .. } => "unlocked",
        Outcome::Value { .. } => "value",
        Outcome::Error { .. } => "error",
    }
}

/// A release's cause, as the history's JSON names it.
fn release_name(cause: ReleaseCause) -> &'static str {
    match cause {
        ReleaseCause::Unlock => "unlock",
        ReleaseCause::Crash => "crash",
        ReleaseCause::LeaseLost => "lease-lost",
    }
}

/// What changed Redis's view, as the history's JSON tags it.
fn server_name(cause: &ServerCause) -> &'static str {
    match cause {
        ServerCause::Command { .. } => "command",
        ServerCause::Expiry => "expiry",
        ServerCause::Restart => "restart",
        ServerCause::Deleted => "deleted",
        ServerCause::Failover => "failover",
    }
}

/// A record kind's name, as the history's JSON tags it.
fn kind_name(kind: &RecordKind) -> &'static str {
    match kind {
        RecordKind::Start { .. } => "start",
        RecordKind::Call { .. } => "call",
        RecordKind::Return { .. } => "return",
        RecordKind::MultiCall { .. } => "multi-call",
        RecordKind::MultiReturn { .. } => "multi-return",
        RecordKind::Hold { .. } => "hold",
        RecordKind::Release { .. } => "release",
        RecordKind::Server { .. } => "server",
        RecordKind::AcquireSent { .. } => "acquire-sent",
        RecordKind::UnlockSent { .. } => "unlock-sent",
        RecordKind::RenewSent { .. } => "renew-sent",
        RecordKind::RenewReply { .. } => "renew-reply",
        RecordKind::Lock { .. } => "lock",
        RecordKind::Write { .. } => "write",
        RecordKind::Deliver { .. } => "deliver",
        RecordKind::Drop { .. } => "drop",
        RecordKind::Held { .. } => "held",
        RecordKind::Fault { .. } => "fault",
        RecordKind::Crash { .. } => "crash",
        RecordKind::Done { .. } => "done",
        RecordKind::Leftover { .. } => "leftover",
        RecordKind::End => "end",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names are the history JSON's own: over the records of explored
    /// runs (every kind, call and outcome they hold), each name equals the
    /// serde tag of its value, so a renamed variant cannot sign apart
    /// from its JSON.
    #[test]
    fn names_are_the_history_json_tags() {
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..40 {
            let spec = sim::generate_with(seed, None, sim::Workload::default());
            let run = sim::run(&spec).expect("an explored spec runs");
            for r in &run.history.records {
                let json = serde_json::to_value(&r.kind).expect("serializes");
                assert_eq!(json["kind"], kind_name(&r.kind), "{json}");
                seen.insert(kind_name(&r.kind));
                let tagged = |value: &serde_json::Value, tag: &str, name: &str| {
                    assert_eq!(value[tag], name, "{json}");
                };
                match &r.kind {
                    RecordKind::Call { call, .. } => tagged(&json["call"], "call", call_name(call)),
                    RecordKind::Return { call, outcome, .. } => {
                        tagged(&json["call"], "call", call_name(call));
                        tagged(&json["outcome"], "outcome", outcome_name(outcome));
                    }
                    RecordKind::Release { cause, .. } => {
                        assert_eq!(json["cause"], release_name(*cause), "{json}");
                    }
                    RecordKind::Server { cause, .. } => {
                        tagged(&json["cause"], "cause", server_name(cause));
                    }
                    _ => {}
                }
            }
        }
        assert!(seen.len() >= 10, "only {seen:?}: the runs tested little");
    }

    /// A signature prints its invariant and its steps, joined by `>`.
    #[test]
    fn prints_as_one_line() {
        let s = Signature {
            invariant: Invariant::MutualExclusion,
            steps: vec![
                Step::RenewalStopped {
                    reason: "not-held".into(),
                },
                Step::Return {
                    call: "lock",
                    outcome: "acquired",
                },
            ],
        };
        let line = "mutual-exclusion: renewal stopped (not-held) > return lock acquired";
        assert_eq!(s.to_string(), line);
        assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{line}\""));
    }
}
