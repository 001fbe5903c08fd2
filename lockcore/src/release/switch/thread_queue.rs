//! `thread-queue` (Redisson 3.37.0, commit 981d7332c; the defect is #6144).
//!
//! Commit 981d7332c ("refactoring", 2024-09-11) replaced
//! `ExpirationEntry`'s `LinkedHashMap` of hold counts with a count map and
//! a `ConcurrentLinkedQueue` of thread ids that `addThreadId` appends to
//! on *every* hold, while `removeThreadId` removes one occurrence when a
//! thread's count reaches 0. A thread that held the lock twice leaves its
//! id at the head of the queue after its last unlock, so the entry is not
//! empty, its timer is not cancelled, and renewal goes on for that thread:
//!
//! - 3.37.0 to 3.43.x: the stale timer renews for the gone thread, gets 0
//!   and removes the entry; a sibling thread that took the lock in
//!   between joined that entry and is never renewed.
//! - 3.44.0 to 3.45.x (`LockEntry`, the batched chain): the head's lock
//!   name is forgotten, so each round renews it with an empty field, gets
//!   0, and `cancelExpirationRenewal(key, threadId)` finds no count to take
//!   off: the entry stays for good, a renewal is sent every round for a
//!   lock the client no longer holds, and a sibling that joins is never
//!   renewed.
//!
//! `queue-cleared-on-unlock` (3.46.0) is the fix.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "thread-queue",
    since: Some(Version::new(3, 37, 0)),
    upstream: "commit 981d7332c (#6144)",
    summary: "the renewal entry queues a thread once per hold and the last unlock removes one place only: a re-entrant holder stays at the head, renewed in vain, and a sibling joining the entry is never renewed",
    // Not a fix: it brought #6144's stale queue head.
    fixes: false,
};

#[cfg(test)]
pub(super) mod tests {
    use crate::Value;
    use crate::machine::harness::{Harness, release};
    use crate::{Call, Purpose, ThreadId};

    const T1: ThreadId = ThreadId(1);
    const T2: ThreadId = ThreadId(2);

    /// Redisson's `testLockReentrantRenew` (a98cd54a1), in the harness:
    /// thread 1 takes the lock twice and unlocks twice, then thread 2
    /// takes it. Returns the field of each renewal sent over the next
    /// four renewal periods, each answered as Redis would (1 for thread
    /// 2's field, 0 for any other).
    pub(crate) fn renewals_after_reentrant_hold(version: &str) -> Vec<String> {
        let mut h = Harness::short(release(version));
        h.acquire(T1, "l");
        h.acquire(T1, "l");
        for reply in [0, 1] {
            h.call(T1, "l", Call::Unlock).unwrap();
            let unlock = h.expect(Purpose::Unlock);
            h.reply(unlock, Value::Int(reply));
            let (_, result) = h.until_return(T1);
            assert!(result.is_ok(), "{result:?}");
        }
        h.acquire(T2, "l");
        let mut fields = Vec::new();
        for _ in 0..4 {
            h.advance(1_000);
            while let Some(output) = h.next() {
                if let crate::Output::Send {
                    request,
                    purpose: Purpose::Renew,
                    command,
                    ..
                } = output
                {
                    let field = String::from_utf8_lossy(&command[command.len() - 1]).into_owned();
                    let held = i64::from(field == "uuid-a:2");
                    fields.push(field);
                    let reply = h.renewal_value(&[held]);
                    h.reply(request, reply);
                }
            }
        }
        fields
    }

    /// 3.36: the entry forgets thread 1 with its last unlock and renews
    /// thread 2 every period. 3.37 (one timer per lock): the stale head's
    /// renewal gets 0 and removes the entry, thread 2's renewal with it.
    #[test]
    fn from_3_37_0_a_sibling_after_a_reentrant_hold_is_not_renewed() {
        assert_eq!(renewals_after_reentrant_hold("3.36.0"), vec!["uuid-a:2"; 4]);
        assert_eq!(renewals_after_reentrant_hold("3.37.0"), vec!["uuid-a:1"]);
        assert_eq!(renewals_after_reentrant_hold("3.43.0"), vec!["uuid-a:1"]);
    }

    /// 3.44 to 3.45 (batched chain): the stale head is renewed with an
    /// empty field every round, for good; thread 2 never is.
    #[test]
    fn batched_releases_renew_the_stale_head_for_good() {
        assert_eq!(renewals_after_reentrant_hold("3.45.1"), vec![""; 4]);
    }
}
