//! Read-write lock waiters asleep while they could have the lock: two
//! paths, both still in 4.7.0, that `lost-wakeup` finds since it judges a
//! reader against the key's `read` mode and a writer against the key.

use lockcore::{Call, LockKind, LockName};
use sim::{History, Outcome, RecordKind, ReleaseCause, ServerCause, Violation, Who};

use super::{OpenIssue, UNREPORTED};

/// #3891 (open since 3.16.3; #4744 reports the same race and was closed
/// as a question). `LockPubSub.onMessage` answers the read-write lock's
/// message (`READ_UNLOCK_MESSAGE`, 1) with
/// `getLatch().release(getLatch().getQueueLength())` (read at tags
/// redisson-3.8.2 and redisson-4.7.0): a permit for each thread already
/// blocked on the latch, none kept. `RLock`'s message releases one
/// permit whoever waits, so a thread that reads the TTL, and only then
/// waits on the latch, finds it. A read-write waiter between its
/// attempt's reply and its wait (a blocking call before `tryAcquire`, an
/// async one before its listener is added) takes nothing from the
/// message, and sleeps out the TTL its attempt read with the lock free.
pub(super) const RW_MESSAGE_MISSED: OpenIssue = OpenIssue {
    upstream: "#3891",
    path: "a read-write lock's unlock message (1) reached the client while its waiter was between an attempt and its wait on the latch: LockPubSub releases one permit per thread already waiting, none for it, so it slept out the TTL it had read",
};

/// Found by locksim (4.7.0 seeds 2779 and 3485), not reported upstream
/// (searched 2026-11-29). A reader's unlock that leaves other readers
/// sets K's TTL to the longest remaining reader's timeout (`pexpire
/// KEYS[1] maxRemainTime` in `RedissonReadLock.unlockInnerAsync`, read at
/// tags redisson-3.8.0 and redisson-4.7.0), which can be shorter than
/// K's TTL was, and publishes nothing. A waiter sleeps on the TTL its
/// last attempt read (`RedissonLock.lock`: `getLatch().tryAcquire(ttl)`),
/// so when K then expires, with no message, the waiter sleeps on past it
/// with the lock free, up to the difference.
pub(super) const RW_COUNT_DOWN_SHORTENS: OpenIssue = OpenIssue {
    upstream: UNREPORTED,
    path: "a reader's unlock that left other readers shortened K's TTL to the longest remaining reader's and published nothing; K expired before the TTL a waiter had read, and the waiter slept on with the lock free",
};

/// The waiting thread, its lock (a read or write lock) and the record
/// that began the stretch the lock was free (the lost wake-up's cited
/// records).
fn rw_wait<'h>(history: &'h History, v: &Violation) -> Option<(&'h Who, &'h LockName, usize)> {
    if v.invariant != sim::Invariant::LostWakeup {
        return None;
    }
    let (&call, &free) = (v.events.first()?, v.events.get(1)?);
    match &history.records.get(call)?.kind {
        RecordKind::Call { who, lock, .. }
            if matches!(lock.kind(), LockKind::Read | LockKind::Write) =>
        {
            Some((who, lock, free))
        }
        _ => None,
    }
}

/// Whether the waiter's process received the lock's message after the
/// lock went free (by an unlock, or at the instant of its expiry, when
/// an unlock that found no key still publishes), and the waiter slept on.
pub(super) fn rw_message_missed(_: lockcore::Release, history: &History, v: &Violation) -> bool {
    let Some((who, lock, free)) = rw_wait(history, v) else {
        return false;
    };
    history.records[free..]
        .iter()
        .take_while(|r| r.at <= v.at)
        .any(|r| match &r.kind {
            RecordKind::Deliver {
                process, channel, ..
            } => {
                *process.client == *who.client
                    && process.life == who.life
                    && channel == lock.channel()
            }
            _ => false,
        })
}

/// Whether K expired (no unlock, no message) after a reader's unlock on
/// it counted down while the waiter waited.
pub(super) fn rw_count_down_shortened(
    _: lockcore::Release,
    history: &History,
    v: &Violation,
) -> bool {
    count_down_then_expiry(history, v, LockKind::Read).is_some()
}

/// When a read-write waiter's lost wake-up began with K's expiry after
/// an unlock of `kind` on K counted down while it waited: the record of
/// the expiry, and K.
pub(super) fn count_down_then_expiry(
    history: &History,
    v: &Violation,
    kind: LockKind,
) -> Option<(usize, LockName)> {
    let (_, lock, free) = rw_wait(history, v)?;
    let (&call, start) = (v.events.first()?, history.records.get(free)?);
    let expired = matches!(
        &start.kind,
        RecordKind::Server {
            cause: ServerCause::Expiry,
            ..
        }
    );
    let key = lock.with_kind(LockKind::Lock);
    // A call made after K was freed (the waiter's first event later than
    // the expiry) saw no count-down before it.
    let between = history.records.get(call..free).unwrap_or_default();
    let counted_down = between.iter().any(|r| match &r.kind {
        RecordKind::Return {
            lock: l,
            call: Call::Unlock,
            outcome: Outcome::Unlocked { released: false },
            ..
        } => l.kind() == kind && l.with_kind(LockKind::Lock) == key,
        _ => false,
    });
    (expired && counted_down).then_some((free, key))
}

/// Whether a read-write waiter's lost wake-up began with K's expiry
/// inside the lease of a reader that held K with a lease of its own and
/// had not unlocked, after a read lock's renewal on K since that hold: the renewal
/// set K's TTL to the watchdog timeout under the longer lease, so K
/// expired, with no message, before the TTL the waiter had read (the
/// open path `READ_RENEWAL_SHORTENS`, seen by a waiter: 4.7.0 seeds
/// 426553 and 1102043).
pub(super) fn read_renewal_then_expiry(
    _: lockcore::Release,
    history: &History,
    v: &Violation,
) -> bool {
    let Some((_, lock, free)) = rw_wait(history, v) else {
        return false;
    };
    let Some(start) = history.records.get(free) else {
        return false;
    };
    if !matches!(
        &start.kind,
        RecordKind::Server {
            cause: ServerCause::Expiry,
            ..
        }
    ) {
        return false;
    }
    let key = lock.with_kind(LockKind::Lock);
    let read_on_key =
        |l: &LockName| l.kind() == LockKind::Read && l.with_kind(LockKind::Lock) == key;
    let before = &history.records[..free];
    before.iter().enumerate().any(|(i, r)| match &r.kind {
        RecordKind::Hold {
            who,
            lock: l,
            lease_ms,
            watchdog: false,
            ..
        } if read_on_key(l) && r.at.as_ms() + lease_ms > start.at.as_ms() => {
            let since = &before[i..];
            // An unlock takes the reader's lease off Redis; a crash
            // leaves it there (4.7.0 seed 1102043).
            let released = since.iter().any(|s| {
                matches!(&s.kind, RecordKind::Release { who: w, lock: rl, cause: ReleaseCause::Unlock } if w == who && rl == l)
            });
            let renewed = since
                .iter()
                .any(|s| matches!(&s.kind, RecordKind::RenewSent { lock: rl, .. } if read_on_key(rl)));
            renewed && !released
        }
        _ => false,
    })
}
