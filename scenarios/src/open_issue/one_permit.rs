//! An `RLock` unlock message wakes one waiting thread of a client, and a
//! thread it did not wake sleeps on the TTL its last attempt read.

use lockcore::{LockKind, LockName};
use sim::{History, RecordKind, ServerCause, Violation, Who};

use super::{OpenIssue, UNREPORTED};

/// Found by locksim (4.7.0 seed 526918), not reported upstream (searched
/// 2026-12-02). `LockPubSub.onMessage` answers the lock's unlock message
/// (0) with `tryRunListener()` and `getLatch().release()`: one async
/// listener and one permit per client, however many of its threads wait
/// (read at tag redisson-4.7.0, `pubsub/LockPubSub.java`). A blocked
/// waiter sleeps on `getLatch().tryAcquire(ttl)` with the TTL its last
/// attempt read (`RedissonLock.lock` and `tryLock`). When two threads of
/// a client wait and the message wakes one, which loses the race to
/// another client, the other sleeps on the TTL of the hold that ended.
/// If the new holder's key then goes without a message (its lease
/// expired, its process died) while the woken thread has given up, the
/// lock sits free until the stale TTL runs out. `RReadWriteLock`'s
/// message releases a permit for every waiting thread, so only `RLock`
/// (and `lockAsync`'s listeners) take this path.
pub(super) const ONE_PERMIT_STALE_TTL: OpenIssue = OpenIssue {
    upstream: UNREPORTED,
    path: "an unlock message woke one of a client's two waiting threads (LockPubSub releases one permit per message), which lost the lock to another client; the new holder's key expired with no message, and the thread not woken slept on the TTL of the hold that had ended",
};

/// Whether an `RLock` waiter's lost wake-up began with the key's expiry,
/// after an unlock message reached the waiter's process while another
/// of its threads waited for the same lock, and another holder took the
/// key after the unlock that published it.
pub(super) fn one_permit_stale_ttl(_: lockcore::Release, history: &History, v: &Violation) -> bool {
    if v.invariant != sim::Invariant::LostWakeup {
        return false;
    }
    let (Some(&call), Some(&free)) = (v.events.first(), v.events.get(1)) else {
        return false;
    };
    let Some(RecordKind::Call { who, lock, .. }) = history.records.get(call).map(|r| &r.kind)
    else {
        return false;
    };
    let expired = matches!(
        history.records.get(free).map(|r| &r.kind),
        Some(RecordKind::Server {
            cause: ServerCause::Expiry,
            ..
        })
    );
    if lock.kind() != LockKind::Lock || !expired {
        return false;
    }
    (call..free).any(|i| {
        let message = matches!(&history.records[i].kind, RecordKind::Deliver { process, channel, .. }
            if *process.client == *who.client && process.life == who.life && *channel == lock.channel());
        // The new holder may reach Redis before the message reaches the
        // client: look from the unlock that published it.
        let unlocked = history.records[..i].iter().rposition(|r| {
            matches!(&r.kind, RecordKind::Server { lock: l, holder: None, .. } if l.as_str() == lock.as_str())
        });
        message
            && sibling_waits(&history.records[..i], who, lock)
            && taken_by_another(&history.records[unlocked.unwrap_or(i)..free], who, lock)
    })
}

/// Whether a thread of `who`'s process other than `who` is inside a
/// waiting acquire of `lock` at the end of `before`.
fn sibling_waits(before: &[sim::Record], who: &Who, lock: &LockName) -> bool {
    let sibling =
        |w: &Who| *w.client == *who.client && w.life == who.life && w.thread != who.thread;
    let mut waiting: Vec<u64> = Vec::new();
    for r in before {
        match &r.kind {
            RecordKind::Call {
                who: w,
                lock: l,
                call,
            } if sibling(w) && l == lock && call.waits() => {
                waiting.push(w.thread);
            }
            RecordKind::Return { who: w, .. } if sibling(w) => waiting.retain(|&t| t != w.thread),
            _ => {}
        }
    }
    !waiting.is_empty()
}

/// Whether Redis named a holder of `lock` other than `who` in `after`.
fn taken_by_another(after: &[sim::Record], who: &Who, lock: &LockName) -> bool {
    after.iter().any(|r| {
        matches!(&r.kind, RecordKind::Server { lock: l, holder: Some(h), .. } if l.as_str() == lock.as_str() && h != who)
    })
}
