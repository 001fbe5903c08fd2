//! Calls within their budget: `tryLock(wait)` returns within its wait
//! plus the command overhead Redisson documents.

use lockcore::{Call, VecMap};

use crate::judge::check::fault_index::FaultIndex;
use crate::judge::check::work::Count;
use crate::model::history::RecordKind;
use crate::model::name::Name;
use crate::{History, Invariant, SimTime, Violation};

/// Slack for timers rounded to whole milliseconds.
const SLACK_MS: u64 = 5;

/// A `tryLock(wait)` must return within `wait` plus one command's budget
/// (the attempt under way when the wait runs out may still take that
/// long) plus a round trip. A call whose client, or Redis, suffered a
/// fault while it was out is not judged (a stop-the-world pause delays
/// the return legitimately), nor is one cut short by the horizon.
pub(crate) fn check(history: &History, work: &impl Count) -> Vec<Violation> {
    let faults = FaultIndex::build(history, work);
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
                let bound = start.plus_ms(wait.saturating_add(slack));
                if r.at > bound && !faults.touched(&who.client, start, r.at, work) {
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
            _ => {}
        }
    }
    found
}

/// The wait of a `tryLock(wait)` or `tryLockAsync(wait)`, in ms.
fn bounded_wait(call: &Call) -> Option<u64> {
    match call {
        Call::TryLock {
            wait: Some(wait), ..
        }
        | Call::TryLockAsync {
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
}
