//! Release after crash: a crashed holder's lock frees itself within its
//! lease.

use std::collections::BTreeMap;

use lockcore::{Call, LockName};

use crate::history::{Outcome, Phase, Proc, RecordKind, Who};
use crate::{Fault, History, Invariant, SimTime, Violation};

/// For each crash of a process that Redis names as a lock's holder: the
/// key's last refresh happened no later than the last successful acquire
/// or renewal the process saw, or one message delay after an acquire or
/// renewal it sent without seeing the reply. The lock must be free (or
/// held by someone else) on Redis by that instant plus the lease plus one
/// message delay (plus any Redis pause, which delays commands). A lock
/// still held past that bound, or never freed before the end, is a
/// violation.
pub(crate) fn check(history: &History) -> Vec<Violation> {
    let max_lat = history.meta.max_latency_ms;
    let mut found = Vec::new();
    for (ci, r) in history.iter() {
        let RecordKind::Crash { process } = &r.kind else {
            continue;
        };
        for (lock, held_at) in held_by(history, ci, process) {
            let Some((base, lease_ms, evidence)) = last_refresh(history, ci, process, lock) else {
                continue;
            };
            let mut deadline = base.plus_ms(lease_ms.saturating_add(2 * max_lat + 2));
            for rec in &history.records {
                if let RecordKind::Fault {
                    fault: Fault::RedisPause { at_ms, duration_ms },
                    phase: Phase::Begin,
                } = &rec.kind
                    && SimTime::from_ms(*at_ms) <= deadline
                {
                    deadline = deadline.plus_ms(*duration_ms);
                }
            }
            let freed = history.records[ci..]
                .iter()
                .enumerate()
                .find_map(|(k, x)| match &x.kind {
                    RecordKind::Server {
                        lock: l, holder, ..
                    } if l == lock && holder.as_ref().is_none_or(|h| h.process() != *process) => {
                        Some((ci + k, x.at))
                    }
                    _ => None,
                });
            let late = match freed {
                Some((_, at)) => at > deadline,
                None => history.meta.horizon > deadline,
            };
            if late {
                let mut events = vec![held_at, evidence, ci];
                let how = match freed {
                    Some((fi, at)) => {
                        events.push(fi);
                        format!("freed only at {at}")
                    }
                    None => "never freed".to_owned(),
                };
                events.sort_unstable();
                events.dedup();
                found.push(Violation::new(
                    Invariant::ReleaseAfterCrash,
                    deadline,
                    [process.client.clone()],
                    format!(
                        "{lock} of crashed {process} should be free by {deadline} (lease {lease_ms}ms), {how}"
                    ),
                    events,
                ));
            }
        }
    }
    found
}

/// The locks Redis names `process` as holder of just before record `ci`,
/// with the index of that server record.
fn held_by<'h>(history: &'h History, ci: usize, process: &Proc) -> Vec<(&'h LockName, usize)> {
    let mut last: Vec<(&LockName, usize, bool)> = Vec::new();
    for (i, r) in history.records[..ci].iter().enumerate() {
        if let RecordKind::Server { lock, holder, .. } = &r.kind {
            let mine = holder.as_ref().is_some_and(|h| h.process() == *process);
            match last.iter_mut().find(|(l, _, _)| *l == lock) {
                Some(e) => *e = (lock, i, mine),
                None => last.push((lock, i, mine)),
            }
        }
    }
    last.into_iter()
        .filter(|(_, _, mine)| *mine)
        .map(|(l, i, _)| (l, i))
        .collect()
}

/// When Redis last refreshed `lock` for `process` at the latest (before
/// the crash record `ci`), the longest lease it may have set, and the
/// record that shows it. A refresh is an acquire that returned, a renewal
/// that replied 1, a renewal in flight (it lands within one delay), or an
/// acquire still waiting at the crash (it may land up to one delay after).
fn last_refresh(
    history: &History,
    ci: usize,
    process: &Proc,
    lock: &LockName,
) -> Option<(SimTime, u64, usize)> {
    let delay = history.meta.max_latency_ms;
    let crash = history.records[ci].at;
    let mut lease_ms: Option<u64> = None;
    let mut base: Option<(SimTime, usize)> = None;
    let mut waiting: BTreeMap<&Who, usize> = BTreeMap::new();
    let later = |base: &mut Option<(SimTime, usize)>, at: SimTime, i: usize| {
        if base.is_none_or(|(b, _)| at >= b) {
            *base = Some((at, i));
        }
    };
    for (i, r) in history.records[..ci].iter().enumerate() {
        match &r.kind {
            RecordKind::Hold {
                who,
                lock: l,
                lease_ms: lease,
                ..
            } if l == lock && who.process() == *process => {
                lease_ms = Some(lease_ms.unwrap_or(0).max(*lease));
            }
            RecordKind::Call {
                who,
                lock: l,
                call: Call::Lock { lease } | Call::TryLock { lease, .. },
            } if l == lock && who.process() == *process => {
                if let Some(lease) = lease {
                    lease_ms = Some(lease_ms.unwrap_or(0).max(lease.0));
                }
                waiting.insert(who, i);
            }
            RecordKind::Return {
                who,
                lock: l,
                outcome,
                ..
            } if l == lock && who.process() == *process => {
                waiting.remove(who);
                if matches!(outcome, Outcome::Acquired { .. }) {
                    later(&mut base, r.at, i);
                }
            }
            RecordKind::RenewReply {
                process: p,
                lock: l,
                reply,
                ..
            } if l == lock && p == process && reply == "1" => later(&mut base, r.at, i),
            RecordKind::RenewSent {
                process: p,
                lock: l,
                ..
            } if l == lock && p == process => later(&mut base, r.at.plus_ms(delay), i),
            _ => {}
        }
    }
    if let Some(&w) = waiting.values().next() {
        later(&mut base, crash.plus_ms(delay), w);
    }
    let (at, i) = base?;
    Some((at, lease_ms?, i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::sample::{Sample, lock_call, proc, who};
    use crate::history::ReleaseCause;

    /// A holds with the watchdog (30 s), crashes at 5 s; Redis frees the
    /// key at 30.01 s when the last lease runs out: within the bound.
    #[test]
    fn expiry_within_lease_passes() {
        let h = Sample::new(5)
            .call(0, who("A", 1), lock_call())
            .server(3, Some(who("A", 1)))
            .hold(6, who("A", 1), 30_000, None)
            .at(5_000, RecordKind::Crash { process: proc("A") })
            .release(5_000, who("A", 1), ReleaseCause::Crash)
            .server(30_004, None)
            .build();
        assert!(check(&h).is_empty(), "{:?}", check(&h));
    }

    /// The key outlives the crashed holder's lease by far (as if something
    /// kept renewing for a dead process): a violation.
    #[test]
    fn lock_kept_after_lease_fails() {
        let h = Sample::new(5)
            .call(0, who("A", 1), lock_call())
            .server(3, Some(who("A", 1)))
            .hold(6, who("A", 1), 30_000, None)
            .at(5_000, RecordKind::Crash { process: proc("A") })
            .server(90_000, None)
            .build();
        let v = check(&h);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(
            v[0].detail.contains("freed only at 90.000000s"),
            "{}",
            v[0].detail
        );
    }

    /// Never freed before the end of the run, long past the lease: a
    /// violation too.
    #[test]
    fn never_freed_fails() {
        let h = Sample::new(5)
            .call(0, who("A", 1), lock_call())
            .server(3, Some(who("A", 1)))
            .hold(6, who("A", 1), 30_000, None)
            .at(5_000, RecordKind::Crash { process: proc("A") })
            .build();
        assert_eq!(check(&h).len(), 1);
    }
}
