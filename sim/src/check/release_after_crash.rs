//! Release after crash: a crashed holder's lock frees itself within its
//! lease.

use std::collections::{BTreeMap, BTreeSet};

use lockcore::{Call, LockName};

use crate::check::work::Work;
use crate::history::{Outcome, Phase, Proc, RecordKind, Who};
use crate::{History, Invariant, SimTime, Violation};

/// A process, as a map key: (client, life).
type ProcKey<'h> = (&'h str, u32);

/// For each crash of a process that Redis names as a lock's holder: the
/// key's last refresh happened no later than the last successful acquire
/// or renewal the process saw, or one message delay after an acquire or
/// renewal it sent without seeing the reply. The lock must be free (or
/// held by someone else) on Redis by that instant plus the lease plus one
/// message delay (plus any Redis pause, which delays commands). A lock
/// still held past that bound, or never freed before the end, is a
/// violation.
///
/// One pass keeps, per process and lock, what the crash needs; the Redis
/// pauses that push a deadline are a prefix of them in time order, found
/// by one search: O(n log n) in the history.
pub(crate) fn check(history: &History, work: &Work) -> Vec<Violation> {
    let delay = history.meta.max_latency_ms;
    let mut state = State::default();
    let mut pending: Vec<Pending<'_>> = Vec::new();
    let mut waiting_on: BTreeMap<&LockName, Vec<usize>> = BTreeMap::new();
    let mut pauses = Vec::new();
    for (i, r) in work.records(history) {
        match &r.kind {
            RecordKind::Server { lock, holder, .. } => {
                let by = holder.as_ref().map(|h| (h.client.as_str(), h.life));
                if let Some(open) = waiting_on.get_mut(lock) {
                    open.retain(|&p| {
                        work.tick(1);
                        let c = &mut pending[p];
                        if by.is_some_and(|b| b == c.process) {
                            return true;
                        }
                        c.freed = Some((i, r.at));
                        false
                    });
                }
                state.server(lock, by, i);
            }
            RecordKind::Crash { process } => {
                let key = (process.client.as_str(), process.life);
                let crash = r.at;
                for (lock, held_at) in state.held_by(key) {
                    let Some(refresh) = state.refresh.get(&(key, lock)) else {
                        continue;
                    };
                    let Some((base, lease_ms, evidence)) = refresh.last(crash, delay) else {
                        continue;
                    };
                    waiting_on.entry(lock).or_default().push(pending.len());
                    pending.push(Pending {
                        process: key,
                        proc: process,
                        lock,
                        held_at,
                        crash: i,
                        base,
                        lease_ms,
                        evidence,
                        freed: None,
                    });
                }
            }
            RecordKind::Fault {
                fault,
                phase: Phase::Begin,
            } if fault.kind().free_delay_ms().is_some() => {
                let delay = fault.kind().free_delay_ms().unwrap_or(0);
                pauses.push((fault.at_ms(), delay));
            }
            kind => state.client_record(kind, i, r.at, delay),
        }
    }
    let pauses = Pauses::new(pauses);
    pending
        .into_iter()
        .filter_map(|p| p.judge(history, &pauses, work))
        .collect()
}

/// What one pass keeps.
#[derive(Default)]
struct State<'h> {
    /// Per lock: its holder's process on Redis and that server record.
    server: BTreeMap<&'h LockName, (Option<ProcKey<'h>>, usize)>,
    /// The order in which locks first appeared on Redis.
    first_seen: BTreeMap<&'h LockName, usize>,
    /// Per process, the locks Redis names it holder of, in that order.
    held: BTreeMap<ProcKey<'h>, BTreeSet<(usize, &'h LockName)>>,
    /// Per process and lock, its refreshes so far.
    refresh: BTreeMap<(ProcKey<'h>, &'h LockName), Refresh>,
}

impl<'h> State<'h> {
    fn server(&mut self, lock: &'h LockName, by: Option<ProcKey<'h>>, i: usize) {
        let next = self.first_seen.len();
        let order = *self.first_seen.entry(lock).or_insert(next);
        if let Some((Some(old), _)) = self.server.get(lock)
            && let Some(set) = self.held.get_mut(old)
        {
            set.remove(&(order, lock));
        }
        if let Some(p) = by {
            self.held.entry(p).or_default().insert((order, lock));
        }
        self.server.insert(lock, (by, i));
    }

    /// The locks Redis names `process` holder of, with the server record
    /// that shows it.
    fn held_by(&self, process: ProcKey<'h>) -> Vec<(&'h LockName, usize)> {
        let Some(set) = self.held.get(&process) else {
            return Vec::new();
        };
        set.iter()
            .filter_map(|&(_, lock)| self.server.get(lock).map(|&(_, i)| (lock, i)))
            .collect()
    }

    fn entry(&mut self, who: &'h Who, lock: &'h LockName) -> &mut Refresh {
        let key = ((who.client.as_str(), who.life), lock);
        self.refresh.entry(key).or_default()
    }

    /// Acquires, renewals and calls that refresh a process's key.
    fn client_record(&mut self, kind: &'h RecordKind, i: usize, at: SimTime, delay: u64) {
        match kind {
            RecordKind::Hold {
                who,
                lock,
                lease_ms,
                ..
            } => self.entry(who, lock).lease(*lease_ms),
            RecordKind::Call {
                who,
                lock,
                call: Call::Lock { lease } | Call::TryLock { lease, .. },
            } => {
                let r = self.entry(who, lock);
                if let Some(lease) = lease {
                    r.lease(lease.0);
                }
                r.waiting.insert(who.thread, i);
            }
            RecordKind::Return {
                who, lock, outcome, ..
            } => {
                let r = self.entry(who, lock);
                r.waiting.remove(&who.thread);
                if matches!(outcome, Outcome::Acquired { .. }) {
                    r.later(at, i);
                }
            }
            RecordKind::RenewReply {
                process,
                lock,
                reply,
                ..
            } if reply == "1" => self.refresh_of(process, lock).later(at, i),
            RecordKind::RenewSent { process, lock, .. } => {
                self.refresh_of(process, lock).later(at.plus_ms(delay), i)
            }
            _ => {}
        }
    }

    fn refresh_of(&mut self, process: &'h Proc, lock: &'h LockName) -> &mut Refresh {
        let key = ((process.client.as_str(), process.life), lock);
        self.refresh.entry(key).or_default()
    }
}

/// When Redis last refreshed one process's key at the latest, the longest
/// lease it may have set, and the acquires still waiting.
#[derive(Default)]
struct Refresh {
    lease_ms: Option<u64>,
    base: Option<(SimTime, usize)>,
    /// Threads inside an acquire, with the call's record.
    waiting: BTreeMap<u64, usize>,
}

impl Refresh {
    fn lease(&mut self, ms: u64) {
        self.lease_ms = Some(self.lease_ms.unwrap_or(0).max(ms));
    }

    fn later(&mut self, at: SimTime, i: usize) {
        if self.base.is_none_or(|(b, _)| at >= b) {
            self.base = Some((at, i));
        }
    }

    /// At a crash: a refresh is an acquire that returned, a renewal that
    /// replied 1, a renewal in flight (it lands within one delay), or an
    /// acquire still waiting at the crash (it may land up to one delay
    /// after). The base, the lease and the record that shows it.
    fn last(&self, crash: SimTime, delay: u64) -> Option<(SimTime, u64, usize)> {
        let mut base = self.base;
        if let Some(&w) = self.waiting.values().next() {
            let at = crash.plus_ms(delay);
            if base.is_none_or(|(b, _)| at >= b) {
                base = Some((at, w));
            }
        }
        let (at, i) = base?;
        Some((at, self.lease_ms?, i))
    }
}

/// A crash of a lock's holder, waiting for Redis to free the lock.
struct Pending<'h> {
    process: ProcKey<'h>,
    proc: &'h Proc,
    lock: &'h LockName,
    held_at: usize,
    crash: usize,
    base: SimTime,
    lease_ms: u64,
    evidence: usize,
    freed: Option<(usize, SimTime)>,
}

impl Pending<'_> {
    fn judge(self, history: &History, pauses: &Pauses, work: &Work) -> Option<Violation> {
        let max_lat = history.meta.max_latency_ms;
        let lease_ms = self.lease_ms;
        let base = self.base.plus_ms(lease_ms.saturating_add(2 * max_lat + 2));
        let deadline = pauses.extend(base, work);
        let late = match self.freed {
            Some((_, at)) => at > deadline,
            None => history.meta.horizon > deadline,
        };
        if !late {
            return None;
        }
        let mut events = vec![self.held_at, self.evidence, self.crash];
        let how = match self.freed {
            Some((fi, at)) => {
                events.push(fi);
                format!("freed only at {at}")
            }
            None => "never freed".to_owned(),
        };
        events.sort_unstable();
        events.dedup();
        let (lock, process) = (self.lock, self.proc);
        Some(Violation::new(
            Invariant::ReleaseAfterCrash,
            deadline,
            [process.client.clone()],
            format!(
                "{lock} of crashed {process} should be free by {deadline} (lease {lease_ms}ms), {how}"
            ),
            events,
        ))
    }
}

/// Redis pauses in time order. A pause that starts by a deadline delays
/// it by its length; since deadlines only grow and pauses are sorted, the
/// pauses that apply are a prefix: the longest one where each pause
/// starts by the base plus the pauses before it.
struct Pauses {
    /// Per pause: the latest `start - (sum of earlier lengths)` so far.
    need: Vec<SimTime>,
    /// Per pause: the sum of the lengths up to and including it, in ms.
    sum: Vec<u64>,
}

impl Pauses {
    fn new(mut pauses: Vec<(u64, u64)>) -> Pauses {
        pauses.sort_unstable();
        let (mut need, mut sum) = (Vec::new(), Vec::new());
        let (mut before, mut latest) = (0u64, SimTime::ZERO);
        for (at_ms, duration_ms) in pauses {
            let start = SimTime::from_ms(at_ms);
            latest = latest.max(SimTime(
                start.0.saturating_sub(before.saturating_mul(1_000)),
            ));
            before = before.saturating_add(duration_ms);
            need.push(latest);
            sum.push(before);
        }
        Pauses { need, sum }
    }

    fn extend(&self, base: SimTime, work: &Work) -> SimTime {
        work.search(self.need.len());
        let n = self.need.partition_point(|&need| need <= base);
        match n {
            0 => base,
            n => base.plus_ms(self.sum[n - 1]),
        }
    }
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
        assert!(
            check(&h, &Work::default()).is_empty(),
            "{:?}",
            check(&h, &Work::default())
        );
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
        let v = check(&h, &Work::default());
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
        assert_eq!(check(&h, &Work::default()).len(), 1);
    }
}
