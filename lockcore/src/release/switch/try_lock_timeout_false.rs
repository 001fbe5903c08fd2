//! `trylock-timeout-false` (Redisson 4.7.0, #5019).
//!
//! Commit a5077398e: `tryLock(waitTime, ...)` catches
//! `RedisResponseTimeoutException` around the attempts of its wait loop
//! (after the first attempt and the subscription) and returns false. The
//! first attempt still throws.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "trylock-timeout-false",
    since: Some(Version::new(4, 7, 0)),
    upstream: "#5019",
    summary: "a response timeout of an attempt inside tryLock's wait loop makes tryLock return false (before: it threw)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, CallOutcome, LockError, Millis, ThreadId, TransportError};

    /// The second attempt (inside the wait loop) times out.
    fn loop_attempt_times_out(version: &str) -> Result<CallOutcome, LockError> {
        let mut h = Harness::short(release(version));
        let wait = Call::TryLock {
            wait: Some(Millis(10_000)),
            lease: None,
        };
        h.call(ThreadId(1), "l", wait).unwrap();
        let _second = h.held_then_subscribed(5_000);
        h.advance(100);
        h.until_return(ThreadId(1)).1
    }

    #[test]
    fn from_4_7_0_a_timeout_in_the_wait_loop_returns_false() {
        assert_eq!(
            loop_attempt_times_out("4.6.0"),
            Err(LockError::Transport(TransportError::Timeout))
        );
        assert_eq!(loop_attempt_times_out("4.7.0"), Ok(CallOutcome::NotAcquired));
    }
}
