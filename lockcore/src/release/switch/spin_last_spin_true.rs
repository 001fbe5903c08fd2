//! `spin-last-spin-true` (Redisson 3.17.1, #4197, commit 428f3cebb).
//!
//! `RedissonSpinLock.tryLock(wait, lease)` looped `while (ttl != null)`
//! and, after each attempt, subtracted the elapsed time and returned false
//! once the wait was spent, before looking at the attempt's result. An
//! attempt that took the lock on the spin that spent the wait therefore
//! answered false while the thread held K: until its lease, or for ever
//! with the watchdog, which the acquire's own callback had started
//! (`RedissonSpinLock.java` lines 150-170 at tag redisson-3.17.0). 3.17.1
//! returns true as soon as an attempt takes the lock. The async form
//! completed with true at once in every release.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "spin-last-spin-true",
    since: Some(Version::new(3, 17, 1)),
    upstream: "#4197",
    summary: "a spin lock's tryLock(wait) that takes the lock on the attempt that spends its wait returns true, not false while holding it",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, CallOutcome, LockKind, LockName, Millis, Purpose, ThreadId, Value};

    const T1: ThreadId = ThreadId(1);

    /// `tryLock(wait 5, lease 1 000)`: held (PTTL 3), then a 1 ms sleep,
    /// held, a 2 ms sleep, and the attempt at 3 ms answers 3 ms later (at
    /// 6 ms, past the wait) with the lock taken. What the call answers and
    /// whether the client counts the hold, by release.
    fn taken_on_the_last_spin(version: &str) -> (CallOutcome, bool) {
        let mut h = Harness::new(release(version));
        let call = Call::TryLock {
            wait: Some(Millis(5)),
            lease: Some(Millis(1_000)),
        };
        h.call_kind(T1, "l", LockKind::Spin, call).unwrap();
        let req = h.expect(Purpose::Acquire);
        h.reply(req, Value::Int(3));
        h.advance(1);
        let req = h.expect(Purpose::Acquire);
        h.reply(req, Value::Int(2));
        h.advance(2);
        let req = h.expect(Purpose::Acquire);
        h.advance(3);
        h.reply(req, Value::Nil);
        let outcome = h.expect_return(T1).unwrap();
        let lock = LockName::new("l").unwrap().with_kind(LockKind::Spin);
        (outcome, h.m.hold_count(T1, &lock) == 1)
    }

    /// #4197: under 3.17.0 the call answers false while its thread holds
    /// the lock; under 3.17.1 it answers true.
    #[test]
    fn issue_4197_the_last_spin_answers_true_from_3_17_1() {
        assert_eq!(
            taken_on_the_last_spin("3.17.0"),
            (CallOutcome::NotAcquired, true)
        );
        assert_eq!(
            taken_on_the_last_spin("3.17.1"),
            (CallOutcome::Acquired { token: None }, true)
        );
    }
}
