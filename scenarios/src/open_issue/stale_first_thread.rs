//! A client's renewal entry renews its first thread's hold: a thread
//! whose hold Redis lost while it kept working stays first, and a sibling
//! thread that took the lock after the loss is not renewed until the
//! entry has dropped the stale thread, one round for each of its holds.
//! The same happens to a sibling reader while the first thread's unlock
//! has run on Redis and its reply, whose handler takes the thread off the
//! entry, is on its way.

use sim::{History, RecordKind, ServerCause, Violation, Who};

use super::{OpenIssue, UNREPORTED};

/// Found by locksim (4.7.0 seed 1235191; 1055099 under PCT), not
/// reported upstream (searched 2026-11-29; #3712 and #3714, fixed in
/// 3.16.1, are a thread taking the lock again after the renewal's 0).
/// `LockTask.buildChunk` renews each lock for `entry.getFirstThreadId()`
/// (`hexists KEYS[i] ARGV[i + 1]`, the first queued thread's lock name),
/// and a 0 only calls `cancelExpirationRenewal(key, threadId)`, which
/// takes one hold of that thread off the entry (`LockEntry.removeThreadId`;
/// read at tag redisson-4.7.0, `renewal/LockTask.java` and
/// `renewal/RenewalTask.java`). When Redis loses a hold whose thread
/// keeps working (a delete, a failover to a replica that lacked it) and
/// another thread of the same client takes the lock, that thread joins
/// the entry behind the stale one: the next round renews the stale field
/// and gets 0, and the live holder's key is renewed only in the round
/// after (a round for each hold the stale thread had). Its key lives one
/// `lockWatchdogTimeout / 3` less than the watchdog promises, so a
/// renewal late by that much, or a stale thread with three holds, lets it
/// expire under its holder. From 3.16.1 to 3.43.x a 0 cancels the whole
/// entry (`cancelExpirationRenewal(null, null)`), so the live holder is
/// never renewed again; 3.44.0's batched renewal (#6303) removed that.
///
/// A read lock's two reader threads of one client meet the same path
/// with no hold lost (3.23.4 seed 2897): the first thread's unlock runs
/// on Redis, and until its reply's handler calls
/// `cancelExpirationRenewal(threadId)` (`RedissonBaseLock.unlockAsync0`,
/// tags 3.23.4 and 4.7.0) a round renews its missing field and gets 0.
/// The read lock's renewal script renews every reader's timeout key only
/// when that field exists, and the unlock has just cut the key's TTL to
/// the longest remaining reader's, so the sibling's key can expire first.
pub(super) const STALE_FIRST_THREAD_RENEWED: OpenIssue = OpenIssue {
    upstream: UNREPORTED,
    path: "a thread whose hold was gone from Redis (lost, or unlocked with the unlock's reply on its way) stayed first in its client's renewal entry, so the renewal renewed its missing field (0) instead of a sibling thread's hold, whose key expired before a round renewed it",
};

/// Whether a renewal of a lock answered 0 while Redis named a thread of
/// the same process its holder (the renewal checked another thread's
/// field), and the lock then expired under that holder, a client of the
/// violation, before it.
pub(super) fn stale_first_thread_renewed(
    _: lockcore::Release,
    history: &History,
    v: &Violation,
) -> bool {
    let of = |who: &Who| v.clients.iter().any(|c| **c == *who.client);
    // By key: Redis's record names the key as an `RLock`, a renewal the
    // lock it renews (a read lock's, a fair lock's), so names of other
    // kinds would never meet (3.23.4 seed 2897).
    let mut holders: Vec<(&str, &Who)> = Vec::new();
    // Holds a renewal passed over, by key.
    let mut skipped: Vec<(&str, &Who)> = Vec::new();
    for r in history.records.iter().take_while(|r| r.at <= v.at) {
        match &r.kind {
            RecordKind::Server {
                lock,
                holder,
                cause,
                ..
            } => {
                let key = lock.as_str();
                let before = holders.iter().position(|(l, _)| *l == key);
                let previous = before.map(|i| holders.swap_remove(i).1);
                if let Some(who) = holder {
                    holders.push((key, who));
                }
                let passed = skipped.iter().position(|(l, _)| *l == key);
                let Some(passed) = passed.map(|i| skipped.swap_remove(i).1) else {
                    continue;
                };
                let expired_under = holder.is_none()
                    && matches!(cause, ServerCause::Expiry)
                    && previous.is_some_and(|p| p == passed);
                if expired_under && of(passed) {
                    return true;
                }
                if holder.as_ref() == Some(passed) {
                    skipped.push((key, passed));
                }
            }
            RecordKind::RenewReply {
                process,
                lock,
                reply,
                ..
            } if reply == "0" => {
                let key = lock.as_str();
                let held = holders.iter().find(|(l, _)| *l == key).map(|(_, w)| *w);
                if let Some(who) = held.filter(|w| w.process() == *process)
                    && !skipped.iter().any(|(l, _)| *l == key)
                {
                    skipped.push((key, who));
                }
            }
            _ => {}
        }
    }
    false
}
