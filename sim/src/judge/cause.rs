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
//!   Redis lost it (a restart, a delete, a failover, unless the holder's
//!   client had read a server that has `WAIT` as one without and sent its
//!   lock scripts unsynced: #6775), or it expired while
//!   faults on the holder's client or on Redis covered at least two thirds
//!   of the lease before the expiry (two renewal periods: with less, a
//!   renewal every third of the lease would have kept it), or a Redis
//!   clock jump fell within the hold's own lease, or every renewal sent
//!   since the last that succeeded failed under a fault, and that fault
//!   or another in force when the next fell due lasted until no later
//!   renewal could be in time, or a fault held the acquire's reply
//!   back until the first renewal (a third of the lease after the reply)
//!   could no longer be in time. A fencing token handed out twice
//!   after Redis lost its data (the counter with it) is beyond the
//!   guarantee whenever the loss happened. For the other invariants, any
//!   fault on an involved client or on Redis from one lease before the
//!   first event involved to the violation. A fault counts until the last
//!   message or timer it held back arrives. `liveness` is judged only
//!   after every fault is over, so no fault explains it. In a cluster, a
//!   fault on one master (`shard-pause`) explains only a violation of a
//!   lock that master serves (`shard`).
//! - [`Cause::Defect`]: nothing in the run explains it.
//!
//! The rules are first approximations, written down so a finding can be
//! argued with; they never look at the lock's code, only at the scenario
//! and the history.

use serde::{Deserialize, Serialize};

use crate::model::history::{RecordKind, ServerCause};
use crate::steps;
use crate::{History, Invariant, SimSpec, SimTime, Step, Violation};
use lockcore::{LockName, Purpose};

mod blocked;
mod chain;
mod crash;
mod latch;
mod late_reply;
mod leftover;
mod lost_unlock;
mod shard;
mod unsynced;

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
        /// The fault it blames, by its place in the spec's plan, when it
        /// names one (a chart labels the violation with it, explore
        /// counts losses by its kind). Not serialized: `explained_by`
        /// says it in words.
        #[serde(skip)]
        fault: Option<usize>,
    },
    /// Nothing in the run explains it.
    #[default]
    Defect,
}

impl Cause {
    /// Beyond the guarantee, `explained_by`, blaming `fault` (one of
    /// `spec`'s faults) if given.
    fn beyond(spec: &SimSpec, explained_by: String, fault: Option<&crate::Fault>) -> Cause {
        let fault = fault.and_then(|f| spec.faults.0.iter().position(|g| std::ptr::eq(g, f)));
        Cause::BeyondGuarantee {
            explained_by,
            fault,
        }
    }

    /// The place in the spec's plan of the fault a cause beyond the
    /// guarantee blames (`None` for the other causes, or when it blames
    /// what Redis did rather than a fault).
    pub fn fault(&self) -> Option<usize> {
        match self {
            Cause::BeyondGuarantee { fault, .. } => *fault,
            _ => None,
        }
    }

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
            Cause::BeyondGuarantee { explained_by, .. } => {
                write!(f, "beyond the guarantee: {explained_by}")
            }
            Cause::Defect => f.write_str("defect: nothing in the run explains it"),
        }
    }
}

/// Classifies `v`, a violation of the run of `spec` that recorded `history`.
pub fn classify(spec: &SimSpec, history: &History, v: &Violation) -> Cause {
    // In a cluster, a fault on one master explains nothing of a lock
    // another master serves: it is judged without them.
    if let Some((narrow, kept)) = shard::narrowed(spec, history, v) {
        let mut cause = classify_all(&narrow, history, v);
        if let Cause::BeyondGuarantee { fault: Some(i), .. } = &mut cause {
            *i = kept[*i];
        }
        return cause;
    }
    classify_all(spec, history, v)
}

/// [`classify`] with every fault of the plan.
fn classify_all(spec: &SimSpec, history: &History, v: &Violation) -> Cause {
    // An unlock that returned normally for a hold lost before its call:
    // what lost the hold (a fault, a lease the script made too short, a
    // `forceUnlock`) is not what answered "released", which the lock's
    // script did on its own (Redisson 1ce49b7a2). Nothing excuses it.
    if v.invariant == Invariant::FalseUnlockSuccess {
        return Cause::Defect;
    }
    if let Some(why) = misuse(spec, v) {
        return Cause::Misuse { why };
    }
    if matches!(v.invariant, Invariant::Fencing | Invariant::TokenOrder)
        && let Some(f) = lost_data(spec, v.at.as_ms())
    {
        let why = format!(
            "Redis lost its data, the fencing counter with it ({} at {})",
            f.text(),
            SimTime::from_ms(f.at_ms())
        );
        return Cause::beyond(spec, why, Some(f));
    }
    if v.invariant == Invariant::LostWakeup
        && let Some((why, f)) = lost_subscription(spec, history, v)
    {
        return Cause::beyond(spec, why, Some(f));
    }
    if v.invariant == Invariant::LostWakeup
        && let Some(cause) = lost_unlock::slept_past_expiry(spec, history, v)
    {
        return cause;
    }
    // Liveness is judged only after the last fault's effect is over, so
    // no fault can explain it, but for a crash that left a fair-lock
    // waiter's place queued, which Redisson keeps for minutes by design,
    // and a delete of the fair lock's queue or timeout set, whose lost
    // deadlines no script can restore.
    if v.invariant == Invariant::Liveness {
        let explained = leftover::crashed_waiter(spec, history, v)
            .or_else(|| leftover::lost_fair_state(spec, history, v));
        return match explained {
            Some((why, f)) => Cause::beyond(spec, why, Some(f)),
            None => Cause::Defect,
        };
    }
    // A call judged late is late past every fault on its client or on
    // Redis that overlapped it, by its wait and a command's budget after
    // the fault's effect ended (the checker's bound): blaming that fault
    // again would excuse a call that hangs for ever after an outage.
    if v.invariant == Invariant::CallWithinBudget {
        return Cause::Defect;
    }
    // A script that fails inside is the lock's own code failing, whatever
    // a fault did to the keys it read: Redisson's fixes make its scripts
    // take a lost deadline (#4153, #6434) or a long lease (#7089).
    if v.invariant == Invariant::ScriptsRun {
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
        && let Some((why, f)) = latch::latch_lost(spec, history, v)
    {
        return Cause::beyond(spec, why, Some(f));
    }
    if v.invariant == Invariant::LockLeftBehind
        && let Some((why, f)) = lost_unlock::explains(spec, history, v)
    {
        return Cause::beyond(spec, why, Some(f));
    }
    if v.invariant == Invariant::NothingLeftBehind {
        let explained = leftover::crashed_owner(spec, history, v)
            .or_else(|| leftover::deleted_family_key(spec, history, v));
        return match explained {
            Some((why, f)) => Cause::beyond(spec, why, Some(f)),
            None => Cause::Defect,
        };
    }
    // Kept, or renewed, by renewals after every fault was over: the
    // catch-all below would blame the run's first fault for them.
    if matches!(
        v.invariant,
        Invariant::LockLeftBehind | Invariant::RenewalAfterUnlock
    ) && lost_unlock::renewed_after_faults(spec, history, v)
    {
        return Cause::Defect;
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
    match faults_on(spec, v, start, v.at.as_ms()).find(|f| crash::may_excuse(v, f)) {
        Some(f) => {
            let why = format!("{} at {}", f.text(), SimTime::from_ms(f.at_ms()));
            Cause::beyond(spec, why, Some(f))
        }
        None => Cause::Defect,
    }
}

/// The first fault before `until` that loses Redis's data (a restart, a
/// failover, a stop that comes back empty): a fencing counter kept in
/// Redis goes back with it, whenever it happened.
fn lost_data(spec: &SimSpec, until: u64) -> Option<&crate::Fault> {
    spec.faults.0.iter().find(|f| {
        let loses = match f {
            f if f.restarts_redis() || f.promotes_replica() => true,
            crate::Fault::RedisDown(d) => !d.keep_data,
            _ => false,
        };
        loses && f.at_ms() <= until
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
/// connection ping, and until then believes it is subscribed. And a
/// SUBSCRIBE's confirmation a fault dropped: Redis subscribed the client,
/// but a thread that joins the subscription waits for it until the
/// SUBSCRIBE goes again after its timeout (4.7.0 seed 1713518: the
/// confirmation of a resubscription after a restart, dropped at 9.36 s,
/// held a `lock()` called at 11.45 s until 13.24 s, through the unlock
/// message at 12.20 s). Redisson 4.7.0 holds it on the channel's
/// `AsyncSemaphore`, which the resubscription keeps until its response
/// timeout fails it (`PubSubConnectionEntry.subscribe`, `addListeners`).
fn lost_subscription<'s>(
    spec: &'s SimSpec,
    history: &History,
    v: &Violation,
) -> Option<(String, &'s crate::Fault)> {
    // A close is news to the client until its next ping, so it was deaf
    // to the wake-up if the close came within a ping interval before the
    // lock was free for its wait (the later of the wait's call and the
    // freeing record), not before the violation's instant, a bound later
    // (4.7.0 seed 560672: a close dropped at 21.935 s, found by the ping
    // at 51.935 s; the lock was free at 51.69 s, the violation 52.02 s).
    let free = v
        .events
        .iter()
        .take(2)
        .filter_map(|&i| history.records.get(i))
        .map(|r| r.at)
        .max()
        .unwrap_or(v.at)
        .min(v.at);
    let from = free
        .as_ms()
        .saturating_sub(crate::model::config::PING_INTERVAL_MS);
    history
        .records
        .iter()
        .take_while(|r| r.at <= v.at)
        .filter(|r| r.at.as_ms() >= from)
        .find_map(|r| match &r.kind {
            RecordKind::Drop { process, what, .. }
                if v.clients.iter().any(|c| **c == *process.client)
                    && (what.starts_with("connection close")
                        || what.starts_with("SUBSCRIBE")
                            && r.at.as_ms() + SUBSCRIPTION_TIMEOUT_MS >= v.at.as_ms()) =>
            {
                let ms = r.at.as_ms();
                let fault = excusing(spec).find(|f| {
                    f.client().is_none_or(|c| *c == *process.client)
                        && f.at_ms() <= ms
                        && ms <= f.effect_end_ms().unwrap_or(f.at_ms())
                })?;
                let thing = what.split(" (").next().unwrap_or(what);
                let so = match thing.ends_with("confirmation") {
                    true => "so its waiters waited for the subscription",
                    false => "so it was not listening",
                };
                let why = format!(
                    "{}'s {thing} was dropped at {} ({}), {so}",
                    process,
                    r.at,
                    fault.text()
                );
                Some((why, fault))
            }
            _ => None,
        })
}

/// The last fault of `spec` that `kind` accepts at or before the
/// violation.
fn last_before<'s>(
    spec: &'s SimSpec,
    v: &Violation,
    kind: impl Fn(&crate::Fault) -> bool,
) -> Option<&'s crate::Fault> {
    let at = v.at.as_ms();
    spec.faults
        .0
        .iter()
        .filter(|f| f.at_ms() <= at && kind(f))
        .max_by_key(|f| f.at_ms())
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
) -> impl Iterator<Item = &'a crate::Fault> + 'a {
    excusing(spec).filter(move |f| {
        let on_us = f.client().is_none_or(|c| v.clients.iter().any(|x| x == c));
        let (at, until) = (f.at_ms(), f.effect_end_ms().unwrap_or(f.at_ms()));
        on_us && at <= end && until >= start
    })
}

/// The longest delay an `interleave` window on a client of `v` open
/// within `start..end` puts on a callback (0 without one).
fn interleave_delay(spec: &SimSpec, v: &Violation, start: u64, end: u64) -> u64 {
    spec.faults
        .0
        .iter()
        .filter_map(|f| match f {
            crate::Fault::Interleave(i)
                if v.clients.contains(&i.client)
                    && i.at_ms <= end
                    && f.effect_end_ms().unwrap_or(i.at_ms) >= start =>
            {
                Some(i.max_delay_ms)
            }
            _ => None,
        })
        .max()
        .unwrap_or(0)
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
        Some(crate::model::history::Record {
            kind: RecordKind::Hold { lease_ms, .. },
            ..
        }) => lease.max(*lease_ms),
        _ => lease,
    };
    let freed = believer_key_gone(history, v, &lock).or_else(|| {
        history.records.iter().rev().find(|r| {
            r.at <= v.at
                && matches!(&r.kind, RecordKind::Server { lock: l, holder: None, .. } if l.as_str() == lock.as_str())
        })
    })?;
    let RecordKind::Server { cause, .. } = &freed.kind else {
        return None;
    };
    let at = freed.at;
    Some(match cause {
        // What Redis did is named in words; the fault blamed is the last
        // of the kinds that do it before the violation.
        ServerCause::Restart => Cause::beyond(
            spec,
            format!("Redis lost the key (restart) at {at}"),
            last_before(spec, v, |f| {
                f.restarts_redis() || matches!(f, crate::Fault::RedisDown(_))
            }),
        ),
        ServerCause::Deleted => Cause::beyond(
            spec,
            format!("someone else deleted the key at {at}"),
            last_before(spec, v, |f| matches!(f, crate::Fault::DeleteKey(_))),
        ),
        // A client that misread its server and synced nothing lost what
        // a synced lock keeps (#6775).
        ServerCause::Failover if unsynced::misread_sync(spec, history, v) => Cause::Defect,
        // A client that waited for fewer replicas than were connected
        // lost what a `WAIT` for each of them keeps (#6518).
        ServerCause::Failover if unsynced::waited_for_too_few(spec, history, v) => Cause::Defect,
        ServerCause::Failover => Cause::beyond(
            spec,
            format!("a failover lost the key at {at}"),
            last_before(spec, v, crate::Fault::promotes_replica),
        ),
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
            // and fires up to a tick of the client's timer later (and,
            // under `interleave`, its chain's callback runs up to that
            // window's delay later: 4.7.0 seed 14453, a pause right after
            // the held-back renewal was due): faults covering the rest of
            // the lease leave it no chance.
            let tick = history.meta.max_timer_tick_ms + interleave_delay(spec, v, start, end);
            if (covered + tick) * 3 >= (end - start) * 2 {
                let f = faults_on(spec, v, start, end).next()?;
                let why = format!(
                    "the key expired at {at} after faults covered {covered} ms of the {} ms before it ({} at {})",
                    end - start,
                    f.text(),
                    SimTime::from_ms(f.at_ms())
                );
                Cause::beyond(spec, why, Some(f))
            } else if let Some(jump) = spec.faults.0.iter().find(|f| {
                matches!(f, crate::Fault::ClockJump(_))
                    && (end.saturating_sub(hold_lease)..=end).contains(&f.at_ms())
            }) {
                let why = format!(
                    "the key expired at {at}, its lease cut short by {} at {}",
                    jump.text(),
                    SimTime::from_ms(jump.at_ms())
                );
                Cause::beyond(spec, why, Some(jump))
            } else if let Some((why, f)) = blocked::renewals_blocked(spec, history, v, (start, end))
            {
                Cause::beyond(spec, format!("the key expired at {at}: {why}"), f)
            } else if let Some((why, f)) = chain::chain_stalled(spec, history, v, (start, end)) {
                Cause::beyond(spec, format!("the key expired at {at}: {why}"), Some(f))
            } else if let Some((why, f)) = late_reply::late_reply(spec, history, v, end) {
                Cause::beyond(spec, format!("the key expired at {at}: {why}"), Some(f))
            } else if let Some((why, f)) = lost_unlock::renewal_cancelled(spec, history, v, end) {
                Cause::beyond(spec, format!("the key expired at {at}: {why}"), Some(f))
            } else {
                return Some(Cause::Defect);
            }
        }
    })
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
) -> Option<&'h crate::model::history::Record> {
    let first = *v.events.iter().min()?;
    let RecordKind::Hold { who, .. } = &history.records.get(first)?.kind else {
        return None;
    };
    // A reply that came after Redis had already let the key go (4.7.0
    // seed 1920297: an acquire's reply held back past its 1 s lease; seed
    // 1025008: past another client's hold since) finds it gone before the
    // hold begins: the record that ended Redis's last naming of the thread.
    let before = &history.records[..first];
    let named = before.iter().rposition(|r| {
        matches!(&r.kind, RecordKind::Server { lock: l, holder: Some(h), .. }
            if l.as_str() == lock.as_str() && h == who)
    });
    let mut gone = named
        .and_then(|j| {
            before[j + 1..]
                .iter()
                .find(|r| matches!(&r.kind, RecordKind::Server { lock: l, .. } if l.as_str() == lock.as_str()))
        })
        .filter(|r| match &r.kind {
            RecordKind::Server { holder: None, .. } => true,
            RecordKind::Server {
                holder,
                cause: ServerCause::Failover,
                ..
            } => holder.as_ref() != Some(who),
            _ => false,
        });
    for r in history.records[first..].iter().take_while(|r| r.at <= v.at) {
        if let RecordKind::Server {
            lock: l, holder, ..
        } = &r.kind
            && l.as_str() == lock.as_str()
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

/// When `who` last called before record `before` (ms): the call a hold
/// at `before` answers.
pub(super) fn called_at(history: &History, who: &crate::Who, before: usize) -> Option<u64> {
    history.records[..before.min(history.records.len())]
        .iter()
        .rev()
        .find_map(|r| match &r.kind {
            RecordKind::Call { who: w, .. } if w == who => Some(r.at.as_ms()),
            _ => None,
        })
}

/// The lock the violation's events name.
pub(crate) fn violated_lock(history: &History, v: &Violation) -> Option<LockName> {
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
    let renews = spec.watchdog_timeout_ms / 3;
    let round_trip = 2 * spec.latency.max_ms;
    // Past the round trip plus the longest possible tick, the clients'
    // ticks (two ChaCha streams each) need not be worked out.
    if renews <= round_trip.saturating_add(lockcore::MAX_TIMER_TICK.0) {
        let rtt = round_trip + crate::model::config::max_timer_tick_ms(spec);
        if renews <= rtt {
            return Some(format!(
                "lockWatchdogTimeout {} ms renews every {renews} ms, not more than a round trip plus the timer tick ({rtt} ms)",
                spec.watchdog_timeout_ms,
            ));
        }
    }
    for c in &spec.clients {
        let involved = v.clients.contains(&c.name);
        for (t, thread) in c.threads.iter().enumerate() {
            let steps = flatten(&thread.steps);
            if steps.iter().any(|s| matches!(s, Step::ForceUnlock(_))) {
                return Some(format!("{}/t{} calls forceUnlock", c.name, t + 1));
            }
            if !involved {
                continue;
            }
            if let Some(why) = short_lease(&steps) {
                return Some(format!("{}/t{}: {why}", c.name, t + 1));
            }
            let takes = steps.iter().filter(|s| s.is_acquire()).count();
            let gives = steps
                .iter()
                .filter(|s| matches!(s, Step::Unlock(_)))
                .count();
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
            .take_while(|s| !matches!(s, Step::Unlock(_)))
            .map(|s| match s {
                Step::Work(steps::Work { ms }) | Step::Sleep(steps::Sleep { ms }) => *ms,
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
            Step::Repeat(steps::Repeat { times, steps }) => {
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
