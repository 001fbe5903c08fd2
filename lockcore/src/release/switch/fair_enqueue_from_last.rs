//! `fair-enqueue-from-last` (Redisson 3.11.1, #2099, PR #2100, commit
//! 6dbc972b6, "Fix timeout drift in RedissonFairLock").
//!
//! Up to 3.11.0 a fair-lock waiter took its ttl from the queue's head on
//! every attempt (the head's deadline − now, or K's PTTL when it was the
//! head itself) and wrote its deadline again (`ZADD` updates a queued
//! member), taking the lock moved no other deadline, and a failed
//! `tryLock` took the wait off every deadline only when it headed the
//! queue. From 3.11.1 a new waiter queues behind the last thread
//! (deadline = the last one's + wait), a queued one is answered its own
//! deadline − wait − now without rewriting it, the thread that takes the
//! lock takes the wait off every remaining deadline, and `acquireFailed`
//! off those queued behind it alone; the acquire's third argument is the
//! wait instead of now + wait, and `tryLock()` sends the wait too (read
//! at tags redisson-3.10.4 and redisson-3.11.1).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "fair-enqueue-from-last",
    since: Some(Version::new(3, 11, 1)),
    upstream: "#2099",
    summary: "a fair-lock waiter queues behind the last thread and keeps its deadline; taking the lock or giving up moves the deadlines behind",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::script::LockScript;
    use crate::{Call, LockKind, Millis, Purpose, ThreadId, Value};

    fn sent(version: &str, call: Call) -> Vec<String> {
        let mut h = Harness::new(release(version));
        h.advance(1_000);
        h.call_kind(ThreadId(1), "l", LockKind::Fair, call).unwrap();
        h.expect_send().1
    }

    /// 3.10.4's `lock()` sends now + the 5 000 ms thread wait as
    /// `ARGV[3]`; 3.11.1's sends the wait itself, with its own script.
    #[test]
    fn the_acquire_sends_the_wait_from_3_11_1() {
        let lock = Call::Lock { lease: None };
        let old = sent("3.10.4", lock.clone());
        assert_eq!(old[1], LockScript::FairAcquireFromHead.text());
        assert_eq!(&old[6..], ["30000", "uuid-a:1", "6000", "1000"]);
        let new = sent("3.11.1", lock);
        assert_eq!(new[1], LockScript::FairAcquireUncheckedPurge.text());
        assert_eq!(&new[6..], ["30000", "uuid-a:1", "5000", "1000"]);
    }

    /// `tryLock()` sends no wait before 3.11.1 and the thread wait after.
    #[test]
    fn try_lock_once_sends_the_wait_from_3_11_1() {
        let once = Call::TryLock {
            wait: None,
            lease: Some(Millis(500)),
        };
        let old = sent("3.10.4", once.clone());
        assert_eq!(old[1], LockScript::FairTryAcquireLegacy.text());
        assert_eq!(&old[6..], ["500", "uuid-a:1", "1000"]);
        let new = sent("3.11.1", once);
        assert_eq!(new[1], LockScript::FairTryAcquireUncheckedPurge.text());
        assert_eq!(&new[6..], ["500", "uuid-a:1", "1000", "5000"]);
    }

    /// A giving-up `tryLock(wait)` sends the head-only `acquireFailed`
    /// before 3.11.1.
    #[test]
    fn acquire_failed_takes_the_wait_off_all_only_at_the_head_before_3_11_1() {
        for (version, script) in [
            ("3.10.4", LockScript::FairAcquireFailedHead),
            ("3.11.1", LockScript::FairAcquireFailed),
        ] {
            let mut h = Harness::new(release(version));
            let wait = Call::TryLock {
                wait: Some(Millis(2_000)),
                lease: None,
            };
            h.call_kind(ThreadId(1), "l", LockKind::Fair, wait).unwrap();
            let second = h.held_then_subscribed(20_000);
            h.reply(second, Value::Int(20_000));
            h.advance(2_000);
            let (_, command) = h.expect_send_of(Purpose::AcquireFailed);
            assert_eq!(command[1], script.text(), "{version}");
            assert_eq!(&command[5..], ["uuid-a:1", "5000"], "{version}");
        }
    }
}
