//! No lost wake-ups: a waiter does not sleep on while the lock is free
//! (for a reader, while it could share it).

use std::collections::BTreeMap;

use lockcore::{LockKind, LockName, VecMap};

use crate::judge::check::fault_index::FaultIndex;
use crate::judge::check::work::Count;
use crate::model::history::{Phase, RecordKind, Who};
use crate::model::name::Name;
use crate::{Fault, History, Invariant, SimTime, Violation};

/// Slack for timers rounded to whole milliseconds.
const SLACK_MS: u64 = 5;

/// A waiter is a thread inside `lock()` or `tryLock(wait)` (from its call
/// to its return, crash or the end). Once Redis frees the lock, a waiter
/// that is quick about it may still be finishing a round trip (its
/// subscription, or an attempt that saw the lock held) and then makes one
/// more attempt, a second round trip: so the lock cannot stay free longer
/// than four maximal one-way delays (plus timer rounding, plus the
/// longest pause of an `interleave` window) while a waiter waits. A waiter
/// whose process or link suffered a fault, or Redis a pause or restart,
/// since it started waiting is not judged: faults may lose wake-ups
/// legitimately (other checkers judge those runs). The application's own
/// scheduling (`interleave`, `interrupt`) excuses nothing.
///
/// An `RLock` waiter and a writer wait for the key to be free; a reader
/// waits for it to be free or held in `read` mode, which its script
/// joins at once (`RedissonReadLock`: `mode == 'read'` acquires). Redis
/// holds one key for all of a read-write lock's objects, so their waits
/// are judged against that key's record. The fair lock (a waiter waits
/// its turn in the queue, not for the key) and the spin lock (it polls
/// with a back-off that may outlast the bound) are not judged here.
///
/// One pass collects the waits, the stretches each lock was free and the
/// fault windows; each wait is then judged with two binary searches, so
/// the cost is O(n log n) in the history however many threads wait.
pub(crate) fn check(history: &History, work: &impl Count) -> Vec<Violation> {
    // A waiter sleeping on the TTL wakes when its timer fires: up to a
    // tick of Redisson's timer late; one of its callbacks may be held at
    // an interleaving point.
    let bound = 4 * history.meta.max_latency_ms
        + history.meta.max_timer_tick_ms
        + longest_pause_ms(history)
        + SLACK_MS;
    let index = Index::build(history, work, bound);
    let mut found = Vec::new();
    for wait in &index.waits {
        let Some(call) = history.records.get(wait.call) else {
            continue;
        };
        let start = call.at;
        let until = history
            .records
            .get(wait.end)
            .map_or(history.meta.horizon, |e| e.at);
        if index.faults.touched(&wait.who.client, start, until, work) {
            continue;
        }
        let Some((on, spans)) = index.spans_for(wait.lock) else {
            continue;
        };
        let first = wait.first_sent.unwrap_or(start);
        if let Some((fi, free_from)) = spans.too_long(first, until, work) {
            let (who, lock) = (wait.who, wait.lock);
            let state = match on {
                Judged::Free => "free",
                Judged::Shareable => "free or held by readers only",
            };
            found.push(Violation::new(
                Invariant::LostWakeup,
                free_from.plus_ms(bound),
                [who.client.clone()],
                format!(
                    "{who} kept waiting for {lock} from {free_from} to {until} while Redis had it {state} (bound {bound}ms)"
                ),
                vec![wait.call, fi],
            ));
        }
    }
    found
}

/// One wait: the call record and the record that ended it (its return,
/// its process's crash, or one past the last record).
struct Wait<'h> {
    who: &'h Who,
    lock: &'h LockName,
    call: usize,
    /// When its first acquire went: a waiter waits for a wake-up only
    /// from then, whatever its client asked first (the probe, `INFO`, a
    /// batch's `SCRIPT LOAD`: up to three round trips, 4.7.0 seed 613).
    first_sent: Option<SimTime>,
    end: usize,
}

/// What the checker needs of the history, gathered in one pass.
struct Index<'h> {
    /// Every wait, in the order of the calls.
    waits: Vec<Wait<'h>>,
    /// Per lock key, the stretches Redis had it free.
    free: BTreeMap<&'h LockName, FreeSpans>,
    /// Per lock key, the stretches Redis had it free or in `read` mode.
    shareable: BTreeMap<&'h LockName, FreeSpans>,
    /// Fault windows per client, and those on Redis.
    faults: FaultIndex<'h>,
}

impl<'h> Index<'h> {
    fn build(history: &'h History, work: &impl Count, bound: u64) -> Index<'h> {
        // Keyed by (client, life, thread), in a map of the few waits open
        // at once (a `BTreeMap` made and dropped a node for each).
        let mut open: VecMap<(Name<'h>, u32, u64), (usize, &'h LockName, &'h Who)> = VecMap::new();
        // Each open wait's first acquire send, once it went.
        let mut sent: VecMap<(Name<'h>, u32, u64), SimTime> = VecMap::new();
        let mut waits = Vec::new();
        let mut free: BTreeMap<&'h LockName, FreeSpans> = BTreeMap::new();
        let mut shareable: BTreeMap<&'h LockName, FreeSpans> = BTreeMap::new();
        for (i, r) in work.records(history) {
            match &r.kind {
                RecordKind::Call { who, lock, call } if call.waits() => {
                    open.insert(key(who), (i, lock, who));
                    sent.remove(&key(who));
                }
                RecordKind::AcquireSent { process, lock, .. } => {
                    let (c, l) = (Name(&process.client), process.life);
                    work.tick(open.len() as u64);
                    for (k, (_, wait_lock, _)) in open.iter() {
                        if k.0 == c && k.1 == l && *wait_lock == lock && sent.get(k).is_none() {
                            sent.insert(*k, r.at);
                        }
                    }
                }
                RecordKind::Return { who, .. } => {
                    if let Some((call, lock, who)) = open.remove(&key(who)) {
                        waits.push(Wait {
                            who,
                            lock,
                            call,
                            first_sent: sent.remove(&key(who)),
                            end: i,
                        });
                    }
                }
                RecordKind::Crash { process } => {
                    let (c, l) = (Name(&process.client), process.life);
                    let dead: Vec<_> = open
                        .keys()
                        .filter(|(kc, kl, _)| *kc == c && *kl == l)
                        .copied()
                        .collect();
                    // A scan of the open waits (at most one a thread).
                    work.tick(open.len() as u64);
                    for k in dead {
                        if let Some((call, lock, who)) = open.remove(&k) {
                            waits.push(Wait {
                                who,
                                lock,
                                call,
                                first_sent: sent.remove(&k),
                                end: i,
                            });
                        }
                    }
                }
                RecordKind::Server {
                    lock,
                    holder,
                    shared,
                    ..
                } => {
                    free.entry(lock)
                        .or_default()
                        .observe(i, r.at, holder.is_none());
                    shareable
                        .entry(lock)
                        .or_default()
                        .observe(i, r.at, holder.is_none() || *shared);
                }
                _ => {}
            }
        }
        let end = history.len();
        waits.extend(open.iter().map(|(k, &(call, lock, who))| Wait {
            who,
            lock,
            call,
            first_sent: sent.get(k).copied(),
            end,
        }));
        waits.sort_by_key(|w| w.call);
        for spans in free.values_mut().chain(shareable.values_mut()) {
            spans.finish(bound);
        }
        Index {
            waits,
            free,
            shareable,
            faults: FaultIndex::excusing(history, work),
        }
    }
}

/// What a wait is judged against.
#[derive(Clone, Copy)]
enum Judged {
    /// The key free.
    Free,
    /// The key free or in `read` mode.
    Shareable,
}

impl<'h> Index<'h> {
    /// The stretches a waiter on `lock` could have acquired in, and what
    /// they are; `None` for a kind not judged, or a key never recorded.
    fn spans_for(&self, lock: &LockName) -> Option<(Judged, &FreeSpans)> {
        match lock.kind() {
            LockKind::Lock => Some((Judged::Free, self.free.get(lock)?)),
            LockKind::Write => Some((Judged::Free, self.free.get(&lock.with_kind(LockKind::Lock))?)),
            LockKind::Read => Some((
                Judged::Shareable,
                self.shareable.get(&lock.with_kind(LockKind::Lock))?,
            )),
            _ => None,
        }
    }
}

/// The longest an `interleave` window holds a paused callback: it delays
/// a wake-up by that much, and loses none (a lost one is a defect, #5761).
fn longest_pause_ms(history: &History) -> u64 {
    history
        .records
        .iter()
        .filter_map(|r| match &r.kind {
            RecordKind::Fault {
                fault: Fault::Interleave(i),
                phase: Phase::Begin,
            } => Some(i.max_delay_ms),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

fn key(who: &Who) -> (Name<'_>, u32, u64) {
    (Name(&who.client), who.life, who.thread)
}

/// The stretches one lock was free on Redis, in order: a stretch opens at
/// a server record that shows it free (after one that showed it held, or
/// none) and closes at the next that shows it held.
#[derive(Default)]
struct FreeSpans {
    spans: Vec<Span>,
    /// The stretch still open: its first record and its start.
    open: Option<(usize, SimTime)>,
    /// For each stretch, the first one from it on longer than the bound.
    next_long: Vec<Option<usize>>,
    /// The bound, in ms.
    bound: u64,
}

struct Span {
    record: usize,
    start: SimTime,
    end: SimTime,
}

impl FreeSpans {
    fn observe(&mut self, i: usize, at: SimTime, free: bool) {
        match (free, self.open) {
            (true, None) => self.open = Some((i, at)),
            (false, Some((record, start))) => {
                self.spans.push(Span {
                    record,
                    start,
                    end: at,
                });
                self.open = None;
            }
            _ => {}
        }
    }

    /// Closes a stretch still open at the end (it lasts past any wait)
    /// and indexes the long stretches.
    fn finish(&mut self, bound: u64) {
        if let Some((record, start)) = self.open.take() {
            self.spans.push(Span {
                record,
                start,
                end: SimTime(u64::MAX),
            });
        }
        let mut next = None;
        self.next_long = vec![None; self.spans.len()];
        for (k, s) in self.spans.iter().enumerate().rev() {
            if too_long(s.start, s.end, bound) {
                next = Some(k);
            }
            self.next_long[k] = next;
        }
        self.bound = bound;
    }
}

impl FreeSpans {
    /// The first stretch free for longer than the bound within
    /// `[start, until]` (clipped to it): its first record and when it
    /// began for the waiter. Only the first and the last stretches in the
    /// window are clipped, so past the first one only the next long
    /// stretch can qualify.
    fn too_long(
        &self,
        start: SimTime,
        until: SimTime,
        work: &impl Count,
    ) -> Option<(usize, SimTime)> {
        work.search(self.spans.len());
        let a = self.spans.partition_point(|s| s.end <= start);
        let clipped = |k: usize| {
            let s = self.spans.get(k)?;
            let from = s.start.max(start);
            (s.start < until && too_long(from, s.end.min(until), self.bound))
                .then_some((s.record, from))
        };
        clipped(a).or_else(|| {
            let next = self.next_long.get(a + 1).copied().flatten()?;
            clipped(next)
        })
    }
}

fn too_long(from: SimTime, to: SimTime, bound: u64) -> bool {
    to.0.saturating_sub(from.0) > bound.saturating_mul(1_000)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Fault;
    use crate::judge::check::sample::{Sample, lock_call, try_wait, who};
    use crate::judge::check::work::Work;
    use crate::model::history::{Outcome, Phase};

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
        assert!(
            check(&h, &Work::default()).is_empty(),
            "{:?}",
            check(&h, &Work::default())
        );
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
        let v = check(&h, &Work::default());
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
        assert_eq!(check(&h, &Work::default()).len(), 1);
        let fault = Fault::Partition(crate::model::fault::Partition {
            client: "B".into(),
            at_ms: 500,
            duration_ms: 100,
        });
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
        assert!(check(&h, &Work::default()).is_empty());
    }

    /// #1542 (before 3.8.2): the write unlock wakes one of three waiting
    /// readers. The one woken takes the read lock; the other two sleep on
    /// their TTL although they could share it. A writer waiting beside a
    /// reader's hold is not judged against the shared stretch.
    #[test]
    fn readers_asleep_beside_a_shared_hold_fail() {
        let base = |kind| {
            Sample::new(5)
                .server_in(0, Some(who("W", 1)), false)
                .call_on(10, who("B", 1), kind, lock_call())
                .server_in(1_000, None, false)
                .server_in(1_006, Some(who("A", 1)), true)
                .server_in(29_000, Some(who("C", 1)), false)
                .build()
        };
        let v = check(&base(LockKind::Read), &Work::default());
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].events, vec![1, 2]);
        assert!(v[0].detail.contains("held by readers only"), "{v:?}");
        let v = check(&base(LockKind::Write), &Work::default());
        assert!(v.is_empty(), "{v:?}");
    }

    /// A reader waiting while the key is free is judged as an `RLock`
    /// waiter is, against the read-write lock's one key.
    #[test]
    fn a_reader_asleep_beside_a_free_key_fails() {
        let h = Sample::new(5)
            .server_in(0, Some(who("W", 1)), false)
            .call_on(10, who("B", 1), LockKind::Read, lock_call())
            .server_in(1_000, None, false)
            .build();
        assert_eq!(check(&h, &Work::default()).len(), 1);
    }
}
