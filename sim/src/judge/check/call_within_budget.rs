//! Calls within their budget: `tryLock(wait)` returns within its wait
//! plus the command overhead Redisson documents.

use lockcore::{Call, VecMap};

use crate::judge::check::work::Count;
use crate::model::history::{Phase, RecordKind};
use crate::model::name::Name;
use crate::{Fault, History, Invariant, SimTime, Violation};

/// Slack for timers rounded to whole milliseconds.
const SLACK_MS: u64 = 5;

/// A `tryLock(wait)` must return within `wait` plus one command's budget
/// (the attempt under way when the wait runs out may still take that
/// long) plus a round trip. A fault on its client or on Redis while it
/// was out restarts that bound at the fault's effect end, as if the call
/// began then (an attempt held back by the fault fails by its own timers
/// within one budget after it, and the wait goes on as without a fault):
/// a call hung long after a Redis outage ended is judged, where it once
/// was excused by the outage however long after it hung. A fault that moved
/// the client's clock (a drift or a skew) moves the call's own measure
/// of its wait, so it is not judged. A call still out when the run ends
/// is judged against the same bound, unless its process crashed (a
/// `tryLock` hung while Redis was unreachable once showed only as a
/// liveness failure, or not at all).
pub(crate) fn check(history: &History, work: &impl Count) -> Vec<Violation> {
    let windows = windows(history, work);
    // The wait's bound and each timeout and retry of the last attempt fire
    // up to a tick of Redisson's timer late.
    // The longest one command may take before lockcore gives up on it
    // (`lockcore::Config::command_budget`: 16.5 s with Redisson 3.x's
    // defaults, which every simulated client keeps, 22 s from 3.48).
    let retries = history.meta.retries();
    let timers = 2 * u64::from(retries.attempts) + 2;
    let slack = retries.budget_ms
        + 2 * history.meta.max_latency_ms
        + timers * history.meta.max_timer_tick_ms
        + SLACK_MS;
    // The few calls open at once (a `BTreeMap` made and dropped a node
    // for each).
    let mut open: VecMap<(Name<'_>, u32, u64), (usize, u64)> = VecMap::new();
    let mut found = Vec::new();
    for (i, r) in work.records(history) {
        match &r.kind {
            RecordKind::Call { who, call, .. } => {
                if let Some(wait) = bounded_wait(call) {
                    open.insert((Name(&who.client), who.life, who.thread), (i, wait));
                }
            }
            RecordKind::Return {
                who, call, lock, ..
            } => {
                if bounded_wait(call).is_none() {
                    continue;
                }
                let Some((c, wait)) = open.remove(&(Name(&who.client), who.life, who.thread))
                else {
                    continue;
                };
                let start = history.records[c].at;
                let Some(bound) = bound(&windows, &who.client, (start, r.at), wait + slack) else {
                    continue;
                };
                if r.at > bound {
                    let took = SimTime(r.at.0 - start.0);
                    found.push(Violation::new(
                        Invariant::CallWithinBudget,
                        bound,
                        [who.client.clone()],
                        format!(
                            "{who}'s tryLock({wait}) on {lock} returned after {took}, past its wait plus {slack} ms"
                        ),
                        vec![c, i],
                    ));
                }
            }
            // A crashed process's calls never return.
            RecordKind::Crash { process } => {
                open.retain(|(client, life, _), _| {
                    !(*client.0 == *process.client && *life == process.life)
                });
            }
            _ => {}
        }
    }
    let horizon = history.meta.horizon;
    for &(c, wait) in open.values() {
        let RecordKind::Call { who, lock, .. } = &history.records[c].kind else {
            continue;
        };
        let start = history.records[c].at;
        match bound(&windows, &who.client, (start, horizon), wait + slack) {
            Some(bound) if horizon > bound => found.push(Violation::new(
                Invariant::CallWithinBudget,
                bound,
                [who.client.clone()],
                format!(
                    "{who}'s tryLock({wait}) on {lock} had not returned when the run ended at {horizon}, past its wait plus {slack} ms"
                ),
                vec![c],
            )),
            _ => {}
        }
    }
    found.sort_by_key(|v| v.at);
    found
}

/// A fault window: its client (`None`: Redis), begin, effect end, and
/// whether it moves the client's clock.
type Window<'h> = (Option<&'h str>, SimTime, SimTime, bool);

/// The fault windows of the run, with their effect ends (a partition's
/// held messages arrive after it, a starved timer fires after it).
fn windows<'h>(history: &'h History, work: &impl Count) -> Vec<Window<'h>> {
    work.records(history)
        .filter_map(|(_, r)| match &r.kind {
            RecordKind::Fault {
                fault,
                phase: Phase::Begin,
            } => {
                let end = fault.effect_end_ms().unwrap_or(fault.at_ms());
                let clock = matches!(fault, Fault::ClockDrift(_) | Fault::ClockSkew(_));
                Some((fault.client(), r.at, SimTime::from_ms(end), clock))
            }
            _ => None,
        })
        .collect()
}

/// When a call of `client` out over `span` must have returned: `within`
/// after its start, or after the effect end of the last fault on its
/// client or on Redis that overlapped it (the whole wait again: the
/// fault may have held back everything before); `None` when such a fault
/// moved the client's clock.
fn bound(
    windows: &[Window<'_>],
    client: &str,
    (start, until): (SimTime, SimTime),
    within: u64,
) -> Option<SimTime> {
    let mut from = start;
    for &(on, begin, end, clock) in windows {
        if on.is_some_and(|c| c != client) || begin > until || end < start {
            continue;
        }
        if clock {
            return None;
        }
        from = from.max(end);
    }
    Some(from.plus_ms(within))
}

/// The wait of a `tryLock(wait)` or `tryLockAsync(wait)`, in ms.
fn bounded_wait(call: &Call) -> Option<u64> {
    match call {
        Call::TryLock {
            wait: Some(wait), ..
        }
        | Call::TryLockAsync {
            wait: Some(wait), ..
        }
        | Call::TryLockAndGetToken {
            wait: Some(wait), ..
        } => Some(wait.0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::check::sample::{Sample, try_wait, who};
    use crate::judge::check::work::Work;
    use crate::model::history::Outcome;

    /// A tryLock(5000) that returns after 5 s passes; one that returns
    /// after 30 s, with nothing to explain it, is a violation.
    #[test]
    fn returns_past_the_budget_fail() {
        let within = Sample::new(5)
            .call(0, who("A", 1), try_wait(5_000))
            .ret(5_004, who("A", 1), try_wait(5_000), Outcome::NotAcquired)
            .build();
        assert!(check(&within, &Work::default()).is_empty());
        let late = Sample::new(5)
            .call(0, who("A", 1), try_wait(5_000))
            .ret(30_000, who("A", 1), try_wait(5_000), Outcome::NotAcquired)
            .build();
        let v = check(&late, &Work::default());
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].at, SimTime::from_ms(5_000 + 16_500 + 10 + 5));
    }

    /// Redis down from 1 s to 6 s.
    fn redis_down() -> RecordKind {
        RecordKind::Fault {
            fault: Fault::RedisDown(crate::faults::RedisDown {
                at_ms: 1_000,
                duration_ms: 5_000,
                keep_data: true,
            }),
            phase: Phase::Begin,
        }
    }

    /// A tryLock(5000) made while Redis was down is judged from the
    /// outage's end: returning 20 s after it is within its wait and
    /// budget; returning 60 s after it (the outage once excused it
    /// however late) is a violation, bounded from the outage's end.
    #[test]
    fn a_fault_excuses_a_call_only_until_its_effect_ends() {
        let call = try_wait(5_000);
        let run = |ret_ms: u64| {
            let h = Sample::new(5)
                .at(1_000, redis_down())
                .call(2_000, who("A", 1), call.clone())
                .ret(ret_ms, who("A", 1), call.clone(), Outcome::NotAcquired)
                .build();
            check(&h, &Work::default())
        };
        assert!(run(26_000).is_empty());
        let v = run(66_000);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].at, SimTime::from_ms(6_000 + 5_000 + 16_500 + 10 + 5));
    }

    /// A tryLock that has not returned when the run ends is judged (Redisson
    /// #2790: 3.12.5's refused acquire is never answered); one whose
    /// process crashed, or still within its bound at the end, is not.
    #[test]
    fn a_call_still_out_at_the_end_is_judged() {
        let call = try_wait(5_000);
        let hung = Sample::new(5)
            .at(1_000, redis_down())
            .call(2_000, who("A", 1), call.clone())
            .build();
        let v = check(&hung, &Work::default());
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].detail.contains("had not returned"), "{}", v[0].detail);
        let crashed = Sample::new(5)
            .call(2_000, who("A", 1), call.clone())
            .at(
                3_000,
                RecordKind::Crash {
                    process: crate::judge::check::sample::proc("A"),
                },
            )
            .build();
        assert!(check(&crashed, &Work::default()).is_empty());
        let recent = Sample::new(5).call(110_000, who("A", 1), call).build();
        assert!(check(&recent, &Work::default()).is_empty());
    }
}
