//! A write holder that had re-entered: Redis keeps its key for the sum
//! of its leases, not one, so a crash keeps it too long, and a count-down
//! unlock, which sets the TTL back to one lease without a message, wakes
//! no waiter that had read the longer TTL.

use lockcore::LockKind;
use sim::{History, RecordKind, Violation};

use super::{OpenIssue, UNREPORTED};

/// Found by locksim (4.7.0 seed 90584), not reported upstream (searched
/// 2026-11-29; #2144's thread asked in passing why the write lock adds
/// rather than takes the larger, and had no answer). Since #1110 (3.5.5,
/// commit cbda17c68) a re-entrant write acquire sets K's TTL to
/// `pttl(K) + leaseTime` (`RedissonWriteLock.tryLockInnerAsync`, read at
/// tag redisson-4.7.0), where an `RLock` re-entry sets it to the lease.
/// A holder that re-entered n times and then crashed before its next
/// renewal keeps K for up to n leases: three watchdog timeouts after a
/// crash in seed 90584, where one is the promise.
pub(super) const WRITE_REENTRY_ADDS_LEASE: OpenIssue = OpenIssue {
    upstream: UNREPORTED,
    path: "a write lock re-entered adds its lease to K's TTL (pttl + leaseTime, since #1110), so a holder that re-entered and crashed before its next renewal keeps K for the sum of its leases",
};

/// Whether the crashed client of a `release-after-crash` held a write
/// lock and Redis last showed its hold re-entered (a count of 2 or more)
/// before the crash.
pub(super) fn write_reentry_added(_: lockcore::Release, history: &History, v: &Violation) -> bool {
    if v.invariant != sim::Invariant::ReleaseAfterCrash {
        return false;
    }
    let Some(client) = v.clients.first() else {
        return false;
    };
    let before = history.records.iter().take_while(|r| r.at <= v.at);
    let crash = before
        .enumerate()
        .filter(|(_, r)| matches!(&r.kind, RecordKind::Crash { process } if *process.client == **client))
        .map(|(i, _)| i)
        .last();
    let Some(crash) = crash else {
        return false;
    };
    let mut wrote = false;
    let mut count = 0;
    for r in &history.records[..crash] {
        match &r.kind {
            RecordKind::Hold { who, lock, .. } if *who.client == **client => {
                wrote |= lock.kind() == LockKind::Write;
            }
            RecordKind::Server {
                holder: Some(h),
                count: c,
                ..
            } if *h.client == **client => count = *c,
            _ => {}
        }
    }
    wrote && count >= 2
}

/// Found by locksim (4.7.0 seed 231422), the same root as
/// [`WRITE_REENTRY_ADDS_LEASE`], not reported upstream (searched
/// 2026-11-29). A waiter that reads K's TTL after a write re-entry added
/// a lease to it sleeps on that TTL (`RedissonLock.lock`:
/// `getLatch().tryAcquire(ttl)`); the holder's count-down unlock sets K's
/// TTL back to one lease (`pexpire KEYS[1] ARGV[2]` in
/// `RedissonWriteLock.unlockInnerAsync`, read at tag redisson-4.7.0) and
/// publishes nothing; when the holder then stops renewing (starved,
/// paused, crashed), K expires up to the added leases before the TTL the
/// waiter read, and the waiter sleeps on with the lock free. Without the
/// re-entry's addition a count-down never shortens the TTL: every other
/// write of it sets one lease.
pub(super) const WRITE_COUNT_DOWN_SHORTENS: OpenIssue = OpenIssue {
    upstream: UNREPORTED,
    path: "a write lock's re-entry added its lease to K's TTL, a waiter read that TTL, and the holder's count-down unlock set it back to one lease without a message: K expired before the TTL the waiter read, and it slept on with the lock free",
};

/// Whether a lost wake-up began with K's expiry after a count-down write
/// unlock on K while the waiter waited, K having been held re-entered
/// (a count of 2 or more) before it went free.
pub(super) fn write_count_down_shortened(
    _: lockcore::Release,
    history: &History,
    v: &Violation,
) -> bool {
    let Some((free, key)) = super::rw_wakeup::count_down_then_expiry(history, v, LockKind::Write)
    else {
        return false;
    };
    history.records[..free].iter().any(|r| {
        matches!(&r.kind, RecordKind::Server { lock, count, shared: false, .. }
            if *count >= 2 && lock.with_kind(LockKind::Lock) == key)
    })
}
