//! No lost wake-ups: a waiter does not sleep on while the lock is free.

use lockcore::{Call, LockName};

use crate::history::{Phase, RecordKind, Who};
use crate::{History, Invariant, SimTime, Violation};

/// Slack for timers rounded to whole milliseconds.
const SLACK_MS: u64 = 5;

/// A waiter is a thread inside `lock()` or `tryLock(wait)` (from its call
/// to its return, crash or the end). Once Redis frees the lock, a waiter
/// that is quick about it may still be finishing a round trip (its
/// subscription, or an attempt that saw the lock held) and then makes one
/// more attempt, a second round trip: so the lock cannot stay free longer
/// than four maximal one-way delays (plus timer rounding) while a waiter
/// waits. A waiter whose process or link suffered a fault, or Redis a
/// pause or restart, since it started waiting is not judged: faults may
/// lose wake-ups legitimately (other checkers judge those runs).
pub(crate) fn check(history: &History) -> Vec<Violation> {
    let bound = 4 * history.meta.max_latency_ms + SLACK_MS;
    let mut found = Vec::new();
    for (ci, r) in history.iter() {
        let RecordKind::Call { who, lock, call } = &r.kind else {
            continue;
        };
        let waits = matches!(
            call,
            Call::Lock { .. } | Call::TryLock { wait: Some(_), .. }
        );
        if !waits {
            continue;
        }
        let end = wait_end(history, ci, who);
        if faulted(history, ci, end, &who.client) {
            continue;
        }
        if let Some((fi, free_from)) = free_too_long(history, ci, end, lock, r.at, bound) {
            let until = history
                .records
                .get(end)
                .map_or(history.meta.horizon, |e| e.at);
            found.push(Violation::new(
                Invariant::LostWakeup,
                free_from.plus_ms(bound),
                [who.client.clone()],
                format!(
                    "{who} kept waiting for {lock} from {free_from} to {until} while Redis had it free (bound {bound}ms)"
                ),
                vec![ci, fi],
            ));
        }
    }
    found
}

/// The index of the record that ends the wait started at `ci` (its
/// return, its process's crash, or one past the last record).
fn wait_end(history: &History, ci: usize, who: &Who) -> usize {
    history.records[ci + 1..]
        .iter()
        .position(|r| match &r.kind {
            RecordKind::Return { who: w, .. } => w == who,
            RecordKind::Crash { process } => *process == who.process(),
            _ => false,
        })
        .map_or(history.records.len(), |k| ci + 1 + k)
}

/// Whether a fault touched `client` or Redis between records `from` and
/// `to` (a window open at `from` counts).
fn faulted(history: &History, from: usize, to: usize, client: &str) -> bool {
    let start = history.records[from].at;
    let until = history
        .records
        .get(to)
        .map_or(history.meta.horizon, |r| r.at);
    history.records.iter().any(|r| match &r.kind {
        RecordKind::Fault { fault, phase } => {
            let mine = fault.client().is_none_or(|c| c == client);
            let begin = SimTime::from_ms(fault.at_ms());
            let end = fault.end_ms().map_or(begin, SimTime::from_ms);
            *phase == Phase::Begin && mine && begin <= until && end >= start
        }
        _ => false,
    })
}

/// The first stretch inside the wait (records `ci..end`) where Redis had
/// `lock` free for longer than `bound`: the server record that freed it
/// and when the stretch (as seen by this waiter) began.
fn free_too_long(
    history: &History,
    ci: usize,
    end: usize,
    lock: &LockName,
    waiting_from: SimTime,
    bound: u64,
) -> Option<(usize, SimTime)> {
    let wait_until = history
        .records
        .get(end)
        .map_or(history.meta.horizon, |r| r.at);
    // Is the lock free when the wait starts? Find its last state before.
    let mut free: Option<(usize, SimTime)> = None;
    for (i, r) in history.records[..ci].iter().enumerate() {
        if let RecordKind::Server {
            lock: l, holder, ..
        } = &r.kind
            && l == lock
        {
            free = holder.is_none().then_some((i, waiting_from));
        }
    }
    let too_long = |(i, from): (usize, SimTime), to: SimTime| {
        (to.0.saturating_sub(from.0) > bound * 1_000).then_some((i, from))
    };
    for (k, r) in history.records[ci..end.min(history.records.len())]
        .iter()
        .enumerate()
    {
        if let RecordKind::Server {
            lock: l, holder, ..
        } = &r.kind
        {
            if l != lock {
                continue;
            }
            match (holder, free) {
                (Some(_), Some(f)) => {
                    if let Some(hit) = too_long(f, r.at) {
                        return Some(hit);
                    }
                    free = None;
                }
                (None, None) => free = Some((ci + k, r.at.max(waiting_from))),
                _ => {}
            }
        }
    }
    free.and_then(|f| too_long(f, wait_until))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Fault;
    use crate::check::sample::{Sample, lock_call, try_wait, who};
    use crate::history::Outcome;

    /// B waits in lock(); A unlocks at 1 s, B acquires 6 ms later (the
    /// message and the retry): passes.
    #[test]
    fn prompt_wakeup_passes() {
        let h = Sample::new(5)
            .server(0, Some(who("A", 1)))
            .call(10, who("B", 1), lock_call())
            .server(1_000, None)
            .server(1_006, Some(who("B", 1)))
            .ret(
                1_009,
                who("B", 1),
                lock_call(),
                Outcome::Acquired { token: None },
            )
            .build();
        assert!(check(&h).is_empty(), "{:?}", check(&h));
    }

    /// The unlock message is lost and B sleeps on for the holder's whole
    /// TTL: the lock is free from 1 s to 30 s while B waits. A violation.
    #[test]
    fn waiter_sleeping_through_free_lock_fails() {
        let h = Sample::new(5)
            .server(0, Some(who("A", 1)))
            .call(10, who("B", 1), lock_call())
            .server(1_000, None)
            .server(30_000, Some(who("B", 1)))
            .ret(
                30_003,
                who("B", 1),
                lock_call(),
                Outcome::Acquired { token: None },
            )
            .build();
        let v = check(&h);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].events, vec![1, 2]);
        assert_eq!(v[0].at, SimTime::from_ms(1_025));
    }

    /// A tryLock(wait) that gives up while the lock is free for long is a
    /// violation too; a fault on the waiter's link exempts the wait.
    #[test]
    fn try_lock_giving_up_on_a_free_lock() {
        let base = || {
            Sample::new(5)
                .server(0, Some(who("A", 1)))
                .call(10, who("B", 1), try_wait(5_000))
                .server(1_000, None)
        };
        let h = base()
            .ret(5_010, who("B", 1), try_wait(5_000), Outcome::NotAcquired)
            .build();
        assert_eq!(check(&h).len(), 1);
        let fault = Fault::Partition {
            client: "B".into(),
            at_ms: 500,
            duration_ms: 100,
        };
        let h = base()
            .at(
                500,
                RecordKind::Fault {
                    fault,
                    phase: Phase::Begin,
                },
            )
            .ret(5_010, who("B", 1), try_wait(5_000), Outcome::NotAcquired)
            .build();
        assert!(check(&h).is_empty());
    }
}
