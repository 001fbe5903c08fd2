//! A client that once read no connected replica never waits for one
//! again, so a failover can lose a lock it was told it holds.

use lockcore::{Release, Switch};
use sim::{History, RecordKind, ServerCause, Violation};

use super::{OpenIssue, UNREPORTED};

/// Found by locksim (while modelling #6518's fix), not reported upstream
/// (searched 2026-11-30: #6518 describes a count kept too low after a
/// replica came back, and its fix, 67cc43151 in 3.46.0, forgets the count
/// when a `WAIT` counts more; none names a count of 0). From 3.27.0
/// (#5614, commit 0ee5155b5) `CommandAsyncService.syncedEval` keeps the
/// replica count `INFO` gave in `MasterSlaveEntry.availableSlaves` and
/// forgets it only when a `WAIT` counts a different number; with 0,
/// `CommandBatchService` adds no `WAIT` (`getSyncSlaves() > 0`), so
/// nothing counts, and the 0 stays for the client's life (read at tags
/// redisson-3.27.0 and redisson-4.7.0, and on master at
/// 4.7.0-62-g66863978b). Every later lock script goes unsynced, and a
/// failover to a replica it had not reached loses the key.
pub(super) const ZERO_REPLICA_COUNT_KEPT: OpenIssue = OpenIssue {
    upstream: UNREPORTED,
    path: "the client read 0 connected replicas once (3.27.0+ keeps the count, and with 0 no WAIT follows a lock script, so none counts differently), so it never waited for a replica again and a failover lost a lock it was told it holds",
};

/// Whether `v` is a mutual exclusion whose believer's client keeps
/// replica counts (3.27.0+) and last read 0 before its hold, and whose
/// key a failover lost (freed, or gave to an older holder) once its
/// acquire had run. Redis's records name the key, not the kind of lock
/// held on it: they are compared by key (4.7.0 seed 108190, a fenced
/// lock's).
pub(super) fn zero_count_kept(release: Release, history: &History, v: &Violation) -> bool {
    if v.invariant != sim::Invariant::MutualExclusion || !release.has(Switch::ReplicaCountCached) {
        return false;
    }
    let Some(&first) = v.events.iter().min() else {
        return false;
    };
    let Some(RecordKind::Hold { who, lock, .. }) = history.records.get(first).map(|r| &r.kind)
    else {
        return false;
    };
    let counted = history.last_event_before(&who.process(), first, |e| match e {
        lockcore::Event::ReplicasCounted { connected } => Some(*connected),
        _ => None,
    });
    // From the acquire that made it the holder: a failover can free the
    // key before the reply reaches the thread (4.7.0 seed 100255, `--branch
    // 50555:7`: a partition held the reply past the switchover).
    let from = history.records[..first]
        .iter()
        .rposition(|r| {
            matches!(&r.kind, RecordKind::Server { lock: l, holder: Some(h), .. }
                if l.as_str() == lock.as_str() && h == who)
        })
        .unwrap_or(first);
    // The failover freed the key, or put a replica's older holder in its
    // place (4.7.0 seed 84095: replication had stalled since another
    // client's hold).
    let lost = history.records[from..].iter().any(|r| {
        r.at <= v.at
            && matches!(&r.kind, RecordKind::Server {
                lock: l,
                holder,
                cause: ServerCause::Failover,
                ..
            } if l.as_str() == lock.as_str() && holder.as_ref() != Some(who))
    });
    counted == Some(0) && lost
}
