//! `interrupted-acquire-unlocks` (Redisson PR #7277 for #7272, unmerged).
//!
//! #7272 (open in 4.7.0): `scheduleExpirationRenewal` runs in a callback
//! of the acquire's future and `cancelExpirationRenewal` in one of the
//! unlock's; nothing orders them. After an interrupted
//! `lockInterruptibly()` the thread's `unlock()` can be answered (and its
//! cancel find no entry) before the acquire's late reply arms the
//! watchdog, which then renews a lock nobody holds for ever. PR #7277
//! registers the renewal before the acquire is sent, and when the
//! caller gave up before a successful acquire answered, drops the
//! renewal and unlocks. locksim models the part that decides the
//! outcome: an abandoned acquire that took the lock arms nothing and
//! sends the release's unlock script (fire and forget; a 3.24+ latch key
//! it leaves lives out its TTL). The unlock goes by thread id, so if the
//! thread has asked again meanwhile and re-entered, it counts that hold
//! down; it re-arms the key with the lease of the thread's latest
//! acquisition (Redisson's `internalLockLeaseTime`), which keeps the new
//! hold alive. The `fenced` profile has it.

use super::SwitchInfo;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "interrupted-acquire-unlocks",
    since: None,
    upstream: "#7272 (PR #7277, unmerged)",
    summary: "an acquire whose thread was interrupted, if it took the lock, arms no renewal and unlocks (not in any Redisson release)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, Purpose, ThreadId};
    use crate::Value;

    /// With the fix the late success is undone with an unlock, and no
    /// renewal follows.
    #[test]
    fn the_late_success_is_unlocked_not_renewed() {
        for (text, unlocks) in [("4.7.0", false), ("fenced", true)] {
            let mut h = Harness::short(release(text));
            h.call(ThreadId(1), "l", Call::LockInterruptibly { lease: None })
                .unwrap();
            let req = h.expect(Purpose::Acquire);
            h.m.interrupt(h.now, ThreadId(1));
            let acquired = if unlocks {
                Value::Array(vec![Value::Int(1), Value::Int(7)])
            } else {
                Value::Nil
            };
            h.reply(req, acquired);
            let sent = h.sends();
            assert_eq!(sent.contains(&Purpose::Unlock), unlocks, "{text}");
            h.advance(1_500);
            assert_eq!(h.sends().contains(&Purpose::Renew), !unlocks, "{text}");
        }
    }

    /// The thread asked again (lease 17 522 ms) before the late success
    /// answered: the undo counts that hold down and re-arms the key with
    /// the new call's lease, not the watchdog's (fenced seed 3218: with
    /// the 3 s watchdog lease the key expired under the new hold).
    #[test]
    fn the_undo_keeps_the_lease_of_the_threads_new_acquire() {
        let mut h = Harness::short(release("4.7.0 +interrupted-acquire-unlocks"));
        let again = || Call::TryLock {
            wait: Some(crate::Millis(5_000)),
            lease: Some(crate::Millis(17_522)),
        };
        h.call(ThreadId(1), "l", again()).unwrap();
        let first = h.expect(Purpose::Acquire);
        h.m.interrupt(h.now, ThreadId(1));
        let _ = h.until_return(ThreadId(1));
        h.call(ThreadId(1), "l", again()).unwrap();
        let _second = h.expect(Purpose::Acquire);
        h.reply(first, Value::Nil);
        let (_, purpose, command) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::Unlock);
        assert!(command.iter().any(|a| a == "17522"), "{command:?}");
        assert!(!command.iter().any(|a| a == "3000"), "{command:?}");
    }
}
