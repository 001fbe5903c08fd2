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
//!   named with its window. For a mutual-exclusion violation the key of
//!   the thread that still believes it holds the lock must have gone:
//!   Redis lost it (a restart, a delete, a failover), or it expired while
//!   faults on the holder's client or on Redis covered at least two thirds
//!   of the lease before the expiry (two renewal periods: with less, a
//!   renewal every third of the lease would have kept it), or a Redis
//!   clock jump fell within the hold's own lease, or every renewal sent
//!   since the last that succeeded failed under a fault lasting until no
//!   later renewal could be in time, or a fault held the acquire's reply
//!   back until the first renewal (a third of the lease after the reply)
//!   could no longer be in time. A fencing token handed out twice
//!   after Redis lost its data (the counter with it) is beyond the
//!   guarantee whenever the loss happened. For the other invariants, any
//!   fault on an involved client or on Redis from one lease before the
//!   first event involved to the violation. A fault counts until the last
//!   message or timer it held back arrives. `liveness` is judged only
//!   after every fault is over, so no fault explains it.
//! - [`Cause::Defect`]: nothing in the run explains it.
//!
//! The rules are first approximations, written down so a finding can be
//! argued with; they never look at the lock's code, only at the scenario
//! and the history.

use serde::{Deserialize, Serialize};

use crate::history::{RecordKind, ServerCause};
use crate::{History, Invariant, SimSpec, SimTime, Step, Violation};
use lockcore::{LockName, Purpose};

mod chain;
mod latch;
mod late_reply;
mod lost_unlock;

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
    if v.invariant == Invariant::Fencing
        && let Some((text, at)) = lost_data(spec, v.at.as_ms())
    {
        return Cause::BeyondGuarantee {
            explained_by: format!(
                "Redis lost its data, the fencing counter with it ({text} at {})",
                SimTime::from_ms(at)
            ),
        };
    }
    if v.invariant == Invariant::LostWakeup
        && let Some(why) = lost_subscription(spec, history, v)
    {
        return Cause::BeyondGuarantee { explained_by: why };
    }
    // Liveness is judged only after the last fault's effect is over, so
    // no fault can explain it.
    if v.invariant == Invariant::Liveness {
        return Cause::Defect;
    }
    let lease = lease_ms(spec);
    if v.invariant == Invariant::MutualExclusion
        && let Some(cause) = lost_key(spec, history, v, lease)
    {
        return cause;
    }
    if v.invariant == Invariant::FalseUnlockError
        && v.own_doing
        && let Some(why) = latch::latch_lost(spec, history, v)
    {
        return Cause::BeyondGuarantee { explained_by: why };
    }
    if v.invariant == Invariant::LockLeftBehind
        && let Some(why) = lost_unlock::explains(spec, history, v)
    {
        return Cause::BeyondGuarantee { explained_by: why };
    }
    // An unlock Redis ran but refused as not held is the lock's own doing
    // whatever delayed the reply (Redisson's unlock latch, #4871, exists
    // for it); a timeout, or an unlock that never ran, can blame a fault.
    if v.own_doing {
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

/// The first fault before `until` that loses Redis's data (a restart, a
/// failover, a stop that comes back empty): a fencing counter kept in
/// Redis goes back with it, whenever it happened.
fn lost_data(spec: &SimSpec, until: u64) -> Option<(String, u64)> {
    spec.faults.0.iter().find_map(|f| {
        let loses = match f {
            crate::Fault::RedisRestart(_) | crate::Fault::Failover(_) => true,
            crate::Fault::RedisDown(d) => !d.keep_data,
            _ => false,
        };
        (loses && f.at_ms() <= until).then(|| (f.text(), f.at_ms()))
    })
}

/// Redisson's `subscriptionTimeout`: a SUBSCRIBE that got no answer is
/// given up (and sent again) only this long after it went out.
const SUBSCRIPTION_TIMEOUT_MS: u64 = 7_500;

/// A waiter's SUBSCRIBE that a fault dropped within a subscription
/// timeout before the lost wake-up: the waiter was not listening, and a
/// fault's window can end long before the subscription is made again
/// (fenced seed 70282: a drop window ended 3.5 s before the wait).
///
/// Likewise a connection close a fault hid (Redis restarted during a
/// partition, fenced seed 57571): the client learns of it only at its next
/// connection ping, and until then believes it is subscribed.
fn lost_subscription(spec: &SimSpec, history: &History, v: &Violation) -> Option<String> {
    let from = v.at.as_ms().saturating_sub(crate::world::PING_INTERVAL_MS);
    history
        .records
        .iter()
        .take_while(|r| r.at <= v.at)
        .filter(|r| r.at.as_ms() >= from)
        .find_map(|r| match &r.kind {
            RecordKind::Drop { process, what, .. }
                if v.clients.iter().any(|c| **c == *process.client)
                    && (what.starts_with("connection close")
                        || what.starts_with("SUBSCRIBE ")
                            && r.at.as_ms() + SUBSCRIPTION_TIMEOUT_MS >= v.at.as_ms()) =>
            {
                let ms = r.at.as_ms();
                let fault = excusing(spec).find(|f| {
                    f.client().is_none_or(|c| *c == *process.client)
                        && f.at_ms() <= ms
                        && ms <= f.effect_end_ms().unwrap_or(f.at_ms())
                })?;
                let thing = what.split(" (").next().unwrap_or(what);
                Some(format!(
                    "{}'s {thing} was dropped at {} ({}), so it was not listening",
                    process,
                    r.at,
                    fault.text()
                ))
            }
            _ => None,
        })
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
    excusing(spec).filter_map(move |f| {
        let on_us = f.client().is_none_or(|c| v.clients.iter().any(|x| x == c));
        let (at, until) = (f.at_ms(), f.effect_end_ms().unwrap_or(f.at_ms()));
        (on_us && at <= end && until >= start).then(|| (f.text(), at))
    })
}

/// The plan's faults that can explain a violation (not an interrupt or
/// interleaved callbacks: the application's own doing, which the lock
/// must handle).
fn excusing(spec: &SimSpec) -> impl Iterator<Item = &crate::Fault> {
    spec.faults.0.iter().filter(|f| f.kind().excuses())
}

/// Mutual exclusion: how the holder's key went before the other thread
/// took the lock. `None` when the history does not say.
fn lost_key(spec: &SimSpec, history: &History, v: &Violation, lease: u64) -> Option<Cause> {
    let lock = violated_lock(history, v)?;
    // The believer's own lease, when it asked for a longer one: a clock
    // jump anywhere in it moved the expiry.
    let hold_lease = match v.events.iter().min().and_then(|&i| history.records.get(i)) {
        Some(crate::history::Record {
            kind: RecordKind::Hold { lease_ms, .. },
            ..
        }) => lease.max(*lease_ms),
        _ => lease,
    };
    let freed = believer_key_gone(history, v, &lock).or_else(|| {
        history.records.iter().rev().find(|r| {
            r.at <= v.at
                && matches!(&r.kind, RecordKind::Server { lock: l, holder: None, .. } if *l == lock)
        })
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
            // The renewal is due a third of the lease after the refresh,
            // and fires up to a tick of the client's timer later: faults
            // covering the rest of the lease leave it no chance.
            let tick = history.meta.max_timer_tick_ms;
            if (covered + tick) * 3 >= (end - start) * 2 {
                let (text, f_at) = faults_on(spec, v, start, end).next()?;
                Cause::BeyondGuarantee {
                    explained_by: format!(
                        "the key expired at {at} after faults covered {covered} ms of the {} ms before it ({text} at {})",
                        end - start,
                        SimTime::from_ms(f_at)
                    ),
                }
            } else if let Some(jump) = spec.faults.0.iter().find(|f| {
                matches!(f, crate::Fault::ClockJump(_))
                    && (end.saturating_sub(hold_lease)..=end).contains(&f.at_ms())
            }) {
                Cause::BeyondGuarantee {
                    explained_by: format!(
                        "the key expired at {at}, its lease cut short by {} at {}",
                        jump.text(),
                        SimTime::from_ms(jump.at_ms())
                    ),
                }
            } else if let Some(why) = renewals_blocked(spec, history, v, (start, end)) {
                Cause::BeyondGuarantee {
                    explained_by: format!("the key expired at {at}: {why}"),
                }
            } else if let Some(why) = chain::chain_stalled(spec, history, v, (start, end)) {
                Cause::BeyondGuarantee {
                    explained_by: format!("the key expired at {at}: {why}"),
                }
            } else if let Some(why) = late_reply::late_reply(spec, history, v, end) {
                Cause::BeyondGuarantee {
                    explained_by: format!("the key expired at {at}: {why}"),
                }
            } else {
                return Some(Cause::Defect);
            }
        }
    })
}

/// Whether faults blocked every renewal the involved clients sent in the
/// lease before an expiry after the last that succeeded: each failed (an
/// error, a 0, or no reply before the expiry) while a fault on its client
/// or on Redis was in force. A
/// renewal goes every third of the lease and the third is due as the key
/// expires, so two blocked renewals lose the key whatever the fault's
/// share of the lease.
fn renewals_blocked(
    spec: &SimSpec,
    history: &History,
    v: &Violation,
    (start, end): (u64, u64),
) -> Option<String> {
    let lease = end - start;
    // The renewal that set the key's last TTL ran a one-way delay after
    // it was sent, so the window reaches back by a round trip.
    let rtt = 2 * history.meta.max_latency_ms;
    let start = start.saturating_sub(rtt);
    // Another lock's renewals (a client may hold two) say nothing of it.
    let key = violated_lock(history, v)?;
    // Request ids start again with each life of a process.
    let mut sent: Vec<(u64, &str, (u32, u64))> = Vec::new();
    let mut ok = std::collections::BTreeSet::new();
    let mut answered = std::collections::BTreeSet::new();
    let mut other_thread = std::collections::BTreeSet::new();
    for r in &history.records {
        let ms = r.at.as_ms();
        match &r.kind {
            RecordKind::RenewSent {
                process,
                request,
                lock,
                ..
            } if (start..end).contains(&ms)
                && *lock == key
                && v.clients.iter().any(|c| **c == *process.client) =>
            {
                sent.push((ms, &*process.client, (process.life, *request)));
            }
            RecordKind::RenewReply {
                process,
                request,
                reply,
                ..
            } if ms <= end => {
                answered.insert((&*process.client, (process.life, *request)));
                match reply.as_str() {
                    "1" => {
                        ok.insert((&*process.client, (process.life, *request)));
                    }
                    "0" => {
                        other_thread.insert((&*process.client, (process.life, *request)));
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    // The key was the believer's all through the window, so a renewal of
    // it that found no hold renewed another thread of the client (a stale
    // head of its renewal entry, 3.44.0 seed 26953): not the believer's.
    sent.retain(|&(_, c, r)| !other_thread.contains(&(c, r)));
    // Only the renewals after the last that succeeded (it set the TTL
    // that ran out) had to get through.
    if let Some(last_ok) = sent.iter().rposition(|&(_, c, r)| ok.contains(&(c, r))) {
        sent.drain(..=last_ok);
    }
    if sent.is_empty() {
        return None;
    }
    let mut blamed = None;
    let mut healed = 0;
    for &(ms, client, _) in &sent {
        let on_it = excusing(spec).find(|f| {
            // A fault that struck while the renewal was on its way to
            // Redis blocked it too (4.7.0 seed 8923: sent 4 ms before a
            // Redis pause).
            f.client().is_none_or(|c| c == client)
                && f.at_ms() <= ms + history.meta.max_latency_ms
                && ms <= f.effect_end_ms().unwrap_or(f.at_ms())
        })?;
        blamed.get_or_insert_with(|| on_it.text());
        healed = healed.max(on_it.effect_end_ms().unwrap_or(on_it.at_ms()));
    }
    // Every renewal failed under a fault, but the faults ended in time for
    // the next renewal (a third of the lease later) and none came: the
    // watchdog gave up on its own (the documents' network drop, #3194).
    // When the fault lost the last one outright, the next comes only when
    // the command layer resends it after its response timeout: Redisson
    // sets the next renewal in the reply's callback (4.7.0 seed 5119: a
    // dropped reply, a 3 s lease).
    let next = match sent.last() {
        Some(&(ms, client, request)) if !answered.contains(&(client, request)) => {
            (healed + lease / 3).max(ms + chain::resend_after_ms(spec, client))
        }
        _ => healed + lease / 3,
    };
    if end > next + history.meta.max_timer_tick_ms + rtt {
        return None;
    }
    Some(format!(
        "all {} renewal(s) sent in the lease before it failed under faults ({})",
        sent.len(),
        blamed.unwrap_or_default()
    ))
}

/// The record at which Redis last stopped naming the thread that still
/// believes it holds `lock` (the violation's first hold): after that hold,
/// the first server record that frees the key or names another holder,
/// unless a later one (before the violation) names the thread again, its
/// own acquire having made the key anew (then the search goes on from
/// there: a key deleted, then re-created by the thread's re-entrant
/// acquire, is not what it lost; 3.16.0's stale entry after a renewal's 0
/// is). It counts if it freed the key or a failover put a replica's older
/// holder in its place. The last free record before the violation may be
/// someone else's key expiring in between.
fn believer_key_gone<'h>(
    history: &'h History,
    v: &Violation,
    lock: &LockName,
) -> Option<&'h crate::history::Record> {
    let first = *v.events.iter().min()?;
    let RecordKind::Hold { who, .. } = &history.records.get(first)?.kind else {
        return None;
    };
    let mut gone = None;
    for r in history.records[first..].iter().take_while(|r| r.at <= v.at) {
        if let RecordKind::Server {
            lock: l, holder, ..
        } = &r.kind
            && l == lock
        {
            match (holder.as_ref() == Some(who), gone) {
                (true, _) => gone = None,
                (false, None) => gone = Some(r),
                (false, Some(_)) => {}
            }
        }
    }
    gone.filter(|r| {
        matches!(
            &r.kind,
            RecordKind::Server { holder: None, .. }
                | RecordKind::Server {
                    cause: ServerCause::Failover,
                    ..
                }
        )
    })
}

/// How much of `[start, end]` faults on an involved client or on Redis
/// cover; an instant fault inside it (a clock jump, which moves the
/// expiry itself) covers all of it.
fn coverage(spec: &SimSpec, v: &Violation, start: u64, end: u64) -> u64 {
    let ours =
        excusing(spec).filter(|f| f.client().is_none_or(|c| v.clients.iter().any(|x| x == c)));
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
    let rtt = 2 * spec.latency.max_ms + crate::world::max_timer_tick_ms(spec);
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
            let takes = steps.iter().filter(|s| s.is_acquire()).count();
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
        let Some(lease) = s.lease_ms() else {
            continue;
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
