//! A client's renewal entry renews its first thread's hold: a thread
//! whose hold Redis lost while it kept working stays first, and a sibling
//! thread that took the lock after the loss is not renewed until the
//! entry has dropped the stale thread, one round for each of its holds.

use lockcore::LockName;
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
pub(super) const STALE_FIRST_THREAD_RENEWED: OpenIssue = OpenIssue {
    upstream: UNREPORTED,
    path: "a thread whose hold Redis lost stayed first in its client's renewal entry, so the renewal renewed its missing field (0) instead of the sibling thread that had taken the lock since, whose key expired before a round renewed it",
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
    let mut holders: Vec<(&LockName, &Who)> = Vec::new();
    // Holds a renewal passed over, by lock.
    let mut skipped: Vec<(&LockName, &Who)> = Vec::new();
    for r in history.records.iter().take_while(|r| r.at <= v.at) {
        match &r.kind {
            RecordKind::Server {
                lock,
                holder,
                cause,
                ..
            } => {
                let before = holders.iter().position(|(l, _)| *l == lock);
                let previous = before.map(|i| holders.swap_remove(i).1);
                if let Some(who) = holder {
                    holders.push((lock, who));
                }
                let passed = skipped.iter().position(|(l, _)| *l == lock);
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
                    skipped.push((lock, passed));
                }
            }
            RecordKind::RenewReply {
                process,
                lock,
                reply,
                ..
            } if reply == "0" => {
                let held = holders.iter().find(|(l, _)| *l == lock).map(|(_, w)| *w);
                if let Some(who) = held.filter(|w| w.process() == *process)
                    && !skipped.iter().any(|(l, _)| *l == lock)
                {
                    skipped.push((lock, who));
                }
            }
            _ => {}
        }
    }
    false
}
