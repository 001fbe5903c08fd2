//! The oracle: why an invariant broke.
//!
//! A watchdog lock promises mutual exclusion only while the holder's code
//! and timers keep running, its renewals can reach Redis in time, and
//! Redis keeps the key. Every violation is classified against that
//! guarantee:
//!
//! - [`Cause::Misuse`]: the run's own script asked for it: an explicit
//!   lease no longer than the work it covers, a thread that takes a lock
//!   and never unlocks it, a `forceUnlock`, or a `lockWatchdogTimeout`
//!   whose renewal period (a third of it) is not longer than a round trip
//!   plus Redisson's 100 ms timer tick.
//! - [`Cause::BeyondGuarantee`]: a fault no lease-based lock can survive,
//!   named with its window. For a mutual-exclusion violation the holder's
//!   key must have gone: Redis lost it (a restart, a delete, a failover),
//!   or it expired while faults on the holder's client or on Redis
//!   covered at least two thirds of the lease before the expiry (two
//!   renewal periods: with less, a renewal every third of the lease
//!   would have kept it). For the other invariants, any fault on an
//!   involved client or on Redis from one lease before the first event
//!   involved to the violation.
//! - [`Cause::Defect`]: nothing in the run explains it.
//!
//! The rules are first approximations, written down so a finding can be
//! argued with; they never look at the lock's code, only at the scenario
//! and the history.

use serde::{Deserialize, Serialize};

use crate::history::{RecordKind, ServerCause};
use crate::{History, Invariant, SimSpec, SimTime, Step, Violation};
use lockcore::{LockName, Purpose};

/// Redisson's timer tick before 3.49: every timer may fire this late.
const TICK_MS: u64 = 100;

/// Why an invariant broke.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case", tag = "cause")]
pub enum Cause {
    /// The run's script asked for it.
    Misuse {
        /// What in the script.
        why: String,
    },
    /// A fault no lease-based lock survives.
    BeyondGuarantee {
        /// The fault and its window.
        explained_by: String,
    },
    /// Nothing in the run explains it.
    #[default]
    Defect,
}

impl Cause {
    /// `misuse`, `beyond-guarantee` or `defect`.
    pub fn name(&self) -> &'static str {
        match self {
            Cause::Misuse { .. } => "misuse",
            Cause::BeyondGuarantee { .. } => "beyond-guarantee",
            Cause::Defect => "defect",
        }
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cause::Misuse { why } => write!(f, "misuse: {why}"),
            Cause::BeyondGuarantee { explained_by } => {
                write!(f, "beyond the guarantee: {explained_by}")
            }
            Cause::Defect => f.write_str("defect: nothing in the run explains it"),
        }
    }
}

/// Classifies `v`, a violation of the run of `spec` that recorded `history`.
pub fn classify(spec: &SimSpec, history: &History, v: &Violation) -> Cause {
    if let Some(why) = misuse(spec, v) {
        return Cause::Misuse { why };
    }
    let lease = lease_ms(spec);
    if v.invariant == Invariant::MutualExclusion
        && let Some(cause) = lost_key(spec, history, v, lease)
    {
        return cause;
    }
    // An unlock Redis ran but reported as failed is the lock's own doing
    // whatever delayed the reply (Redisson's unlock latch, #4871, exists
    // for it); only an unlock that never ran can blame a fault.
    if v.invariant == Invariant::FalseUnlockError && v.detail.contains("Redis ran") {
        return Cause::Defect;
    }
    let first = v
        .events
        .iter()
        .filter_map(|&i| history.records.get(i))
        .map(|r| r.at)
        .min()
        .unwrap_or(v.at);
    let start = first.as_ms().saturating_sub(lease);
    match faults_on(spec, v, start, v.at.as_ms()).next() {
        Some((text, at)) => Cause::BeyondGuarantee {
            explained_by: format!("{text} at {}", SimTime::from_ms(at)),
        },
        None => Cause::Defect,
    }
}

/// The longest watchdog timeout any client runs with.
fn lease_ms(spec: &SimSpec) -> u64 {
    spec.clients
        .iter()
        .filter_map(|c| c.watchdog_timeout_ms)
        .chain([spec.watchdog_timeout_ms])
        .max()
        .unwrap_or(spec.watchdog_timeout_ms)
}

/// The faults on an involved client or on Redis overlapping `[start,
/// end]`: their text and start.
fn faults_on<'a>(
    spec: &'a SimSpec,
    v: &'a Violation,
    start: u64,
    end: u64,
) -> impl Iterator<Item = (String, u64)> + 'a {
    spec.faults.0.iter().filter_map(move |f| {
        let on_us = f.client().is_none_or(|c| v.clients.iter().any(|x| x == c));
        let (at, until) = (f.at_ms(), f.effect_end_ms().unwrap_or(f.at_ms()));
        (on_us && at <= end && until >= start).then(|| (f.text(), at))
    })
}

/// Mutual exclusion: how the holder's key went before the other thread
/// took the lock. `None` when the history does not say.
fn lost_key(spec: &SimSpec, history: &History, v: &Violation, lease: u64) -> Option<Cause> {
    let lock = violated_lock(history, v)?;
    let freed = history.records.iter().rev().find(|r| {
        r.at <= v.at
            && matches!(&r.kind, RecordKind::Server { lock: l, holder: None, .. } if *l == lock)
    })?;
    let RecordKind::Server { cause, .. } = &freed.kind else {
        return None;
    };
    let at = freed.at;
    Some(match cause {
        ServerCause::Restart => Cause::BeyondGuarantee {
            explained_by: format!("Redis lost the key (restart) at {at}"),
        },
        ServerCause::Deleted => Cause::BeyondGuarantee {
            explained_by: format!("someone else deleted the key at {at}"),
        },
        ServerCause::Failover => Cause::BeyondGuarantee {
            explained_by: format!("a failover lost the key at {at}"),
        },
        ServerCause::Command {
            purpose: Purpose::ForceUnlock,
            by,
        } => Cause::Misuse {
            why: format!("{by}'s forceUnlock freed it at {at}"),
        },
        ServerCause::Command { .. } => return None,
        ServerCause::Expiry => {
            let end = at.as_ms();
            let start = end.saturating_sub(lease);
            let covered = coverage(spec, v, start, end);
            if covered * 3 >= (end - start) * 2 {
                let (text, f_at) = faults_on(spec, v, start, end).next()?;
                Cause::BeyondGuarantee {
                    explained_by: format!(
                        "the key expired at {at} after faults covered {covered} ms of the {} ms before it ({text} at {})",
                        end - start,
                        SimTime::from_ms(f_at)
                    ),
                }
            } else {
                return Some(Cause::Defect);
            }
        }
    })
}

/// How much of `[start, end]` faults on an involved client or on Redis
/// cover; an instant fault inside it (a clock jump, which moves the
/// expiry itself) covers all of it.
fn coverage(spec: &SimSpec, v: &Violation, start: u64, end: u64) -> u64 {
    let ours = spec
        .faults
        .0
        .iter()
        .filter(|f| f.client().is_none_or(|c| v.clients.iter().any(|x| x == c)));
    let mut spans = Vec::new();
    for f in ours {
        match f.effect_end_ms() {
            Some(e) if e > f.at_ms() => {
                let (a, b) = (f.at_ms().max(start), e.min(end));
                if a < b {
                    spans.push((a, b));
                }
            }
            _ if (start..=end).contains(&f.at_ms()) => return end - start,
            _ => {}
        }
    }
    spans.sort_unstable();
    let (mut total, mut reach) = (0, start);
    for (a, b) in spans {
        let a = a.max(reach);
        if b > a {
            total += b - a;
            reach = b;
        }
    }
    total
}

/// The lock the violation's events name.
fn violated_lock(history: &History, v: &Violation) -> Option<LockName> {
    v.events
        .iter()
        .find_map(|&i| match &history.records.get(i)?.kind {
            RecordKind::Hold { lock, .. }
            | RecordKind::Call { lock, .. }
            | RecordKind::Return { lock, .. }
            | RecordKind::Release { lock, .. }
            | RecordKind::Server { lock, .. } => Some(lock.clone()),
            _ => None,
        })
}

/// What in the script asked for the violation, if anything.
fn misuse(spec: &SimSpec, v: &Violation) -> Option<String> {
    let rtt = 2 * spec.latency.max_ms + TICK_MS;
    if spec.watchdog_timeout_ms / 3 <= rtt {
        return Some(format!(
            "lockWatchdogTimeout {} ms renews every {} ms, not more than a round trip plus the timer tick ({rtt} ms)",
            spec.watchdog_timeout_ms,
            spec.watchdog_timeout_ms / 3
        ));
    }
    for c in &spec.clients {
        let involved = v.clients.contains(&c.name);
        for (t, thread) in c.threads.iter().enumerate() {
            let steps = flatten(&thread.steps);
            if steps.iter().any(|s| matches!(s, Step::ForceUnlock)) {
                return Some(format!("{}/t{} calls forceUnlock", c.name, t + 1));
            }
            if !involved {
                continue;
            }
            if let Some(why) = short_lease(&steps) {
                return Some(format!("{}/t{}: {why}", c.name, t + 1));
            }
            let takes = steps
                .iter()
                .filter(|s| matches!(s, Step::Lock { .. } | Step::TryLock { .. }))
                .count();
            let gives = steps.iter().filter(|s| matches!(s, Step::Unlock)).count();
            if takes > gives {
                return Some(format!(
                    "{}/t{} takes the lock {takes} time(s) and unlocks {gives}",
                    c.name,
                    t + 1
                ));
            }
        }
    }
    None
}

/// An explicit lease no longer than the work and sleep before the next
/// unlock.
fn short_lease(steps: &[&Step]) -> Option<String> {
    for (i, s) in steps.iter().enumerate() {
        let lease = match s {
            Step::Lock { lease_ms: Some(l) }
            | Step::TryLock {
                lease_ms: Some(l), ..
            } => *l,
            _ => continue,
        };
        let busy: u64 = steps[i + 1..]
            .iter()
            .take_while(|s| !matches!(s, Step::Unlock))
            .map(|s| match s {
                Step::Work { ms } | Step::Sleep { ms } => *ms,
                _ => 0,
            })
            .sum();
        if busy >= lease {
            return Some(format!("a {lease} ms lease covers {busy} ms of work"));
        }
    }
    None
}

/// The steps with each `repeat` unrolled (bounded by validation).
fn flatten(steps: &[Step]) -> Vec<&Step> {
    let mut out = Vec::new();
    for s in steps {
        match s {
            Step::Repeat { times, steps } => {
                let inner = flatten(steps);
                for _ in 0..(*times).min(2) {
                    out.extend(inner.iter().copied());
                }
            }
            other => out.push(other),
        }
    }
    out
}
