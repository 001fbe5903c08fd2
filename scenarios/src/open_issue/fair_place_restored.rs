//! A failover gives a fair lock's queue back with a place its thread had
//! already left, and the waiters behind it wait out that place's
//! deadline with the lock free.

use lockcore::LockName;
use sim::{History, Phase, RecordKind, ServerCause, Violation, Who};

use super::OpenIssue;

/// #4595's path (a fair-lock place nobody waits in holds the queue up
/// until its deadline), reached through Redis rather than the client.
/// A waiting thread leaves the queue in the acquire script that takes
/// the lock (`lpop`/`zrem` in `RedissonFairLock.tryLockInnerAsync`, read
/// at tag redisson-4.7.0). When that script's writes had not reached the
/// replica a failover promotes, the promoted queue still holds the
/// thread, which no longer waits: each waiter behind it is told
/// `max(0, PTTL)` and tries again at once until the place's deadline
/// (the holder's TTL plus the 5 minute thread wait) passes, with the lock
/// free (4.7.0 seed 98382, directed: replication stalled 6 s before B/t2
/// took the lock, and the switchover put B/t2 back at the queue's head).
pub(super) const FAIR_PLACE_RESTORED: OpenIssue = OpenIssue {
    upstream: "#4595",
    path: "a failover to a replica that had not received a fair lock's dequeue put back the place of a thread that had taken the lock: the waiters behind it wait out its deadline (the holder's TTL plus 5 minutes) with the lock free",
};

/// Whether `v` is a fair lock's liveness (or queue left behind) whose
/// queue, at the horizon, holds a thread that had taken the lock before
/// a failover and did not wait for it again after.
pub(super) fn fair_place_restored(_: lockcore::Release, history: &History, v: &Violation) -> bool {
    use sim::Invariant::{Liveness, NothingLeftBehind};
    if !matches!(v.invariant, Liveness | NothingLeftBehind) {
        return false;
    }
    let Some(key) = super::fair_key(history, v) else {
        return false;
    };
    let on_key = |l: &LockName| l.as_str() == key;
    // Threads that held the lock when a failover struck it, and have
    // not waited for it since.
    let mut held: Vec<&Who> = Vec::new();
    let mut restored: Vec<&Who> = Vec::new();
    for r in &history.records {
        match &r.kind {
            RecordKind::Hold { who, lock, .. } if on_key(lock) => held.push(who),
            RecordKind::Server {
                lock,
                cause: ServerCause::Failover,
                ..
            } if on_key(lock) => restored.append(&mut held),
            // A promotion that left the key's holder as it was (free on
            // both) records nothing of the key, but may give the queue
            // back all the same (4.7.0 seed 448875: A/t1 took and released
            // the lock during a replication stall, and a switchover 1.7 s
            // later restored its place with the lock free).
            RecordKind::Fault {
                fault: sim::Fault::Failover(_),
                phase: Phase::End,
            }
            | RecordKind::Fault {
                fault: sim::Fault::Switchover(_),
                phase: Phase::Begin,
            } => restored.append(&mut held),
            RecordKind::Call { who, lock, call } if on_key(lock) && call.waits() => {
                held.retain(|w| *w != who);
                restored.retain(|w| *w != who);
            }
            RecordKind::Leftover { lock, entries, .. } if on_key(lock) => {
                return restored.iter().any(|w| entries.contains(w));
            }
            _ => {}
        }
    }
    false
}
