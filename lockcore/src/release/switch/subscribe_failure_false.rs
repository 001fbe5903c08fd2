//! `subscribe-failure-false` (Redisson 3.17.0).
//!
//! From 3.17.0 (tag `redisson-3.17.0`, `RedissonLock.tryLock(waitTime,
//! leaseTime, unit)`: `subscribeFuture.get(time, ...)` inside `catch
//! (ExecutionException | TimeoutException e) { ...; return false; }`), a
//! `tryLock(wait)` whose subscription to the unlock channel fails returns
//! false. Before (3.16.x: `subscribeFuture.await(time)`), a failed
//! subscription counted as done and the error surfaced from the loop;
//! locksim models that as the call failing with the subscription's error.
//! `lock()` throws in every release (`commandExecutor.get(future)`).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "subscribe-failure-false",
    since: Some(Version::new(3, 17, 0)),
    upstream: "tag redisson-3.17.0",
    summary: "a tryLock(wait) whose subscription fails returns false instead of throwing",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, CallOutcome, LockError, Millis, Purpose, ThreadId, TransportError};
    use crate::Value;

    fn subscription_fails(version: &str, call: Call) -> Result<CallOutcome, LockError> {
        let mut h = Harness::short(release(version));
        h.call(ThreadId(1), "l", call).unwrap();
        let first = h.expect(Purpose::Acquire);
        h.reply(first, Value::Int(5_000));
        let subscribe = h.expect_subscribe();
        h.fail(subscribe, TransportError::Timeout);
        h.until_return(ThreadId(1)).1
    }

    #[test]
    fn from_3_17_0_try_lock_returns_false_lock_still_throws() {
        let try_lock = || Call::TryLock {
            wait: Some(Millis(10_000)),
            lease: None,
        };
        let timeout = Err(LockError::Transport(TransportError::Timeout));
        assert_eq!(subscription_fails("3.16.8", try_lock()), timeout);
        assert_eq!(
            subscription_fails("3.17.0", try_lock()),
            Ok(CallOutcome::NotAcquired)
        );
        assert_eq!(subscription_fails("3.17.0", Call::Lock { lease: None }), timeout);
    }
}
