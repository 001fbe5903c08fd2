//! `interrupt-cancels-acquire` (Redisson 3.16.3, #2714, PR #3826).
//!
//! Before 3.16.3, `CommandAsyncService.get` rethrew an interrupt without
//! cancelling the future it waited on, so the acquire's reply, arriving
//! after the thread gave up, still ran `scheduleExpirationRenewal`: the
//! lock was renewed for ever with no holder. 3.16.3 (tag `redisson-3.16.3`,
//! `CommandAsyncService.get`: `future.cancel(true)` in the `catch`) cancels
//! it; since that future is the acquire's own (`tryAcquireAsync` returned
//! `ttlRemainingFuture`, and from 3.17 the `thenApply` stage), the
//! callback never runs and the key expires with its first lease. The
//! `isInterrupted()` check PR #3826 also added to
//! `scheduleExpirationRenewal` reads the Netty thread's flag and does
//! nothing (#4368). `acquire-retry-wrapper` (3.20.1) undoes the fix.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "interrupt-cancels-acquire",
    since: Some(Version::new(3, 16, 3)),
    upstream: "#2714",
    summary: "an interrupted acquire cancels its future, so its late reply no longer arms the watchdog of a thread that gave up",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::Harness;
    use crate::{Call, Millis};

    /// `tryLock(5 s)` interrupted before its acquire's reply, which then
    /// says acquired: is the lock renewed afterwards?
    fn renewed(version: &str) -> bool {
        let wait = Call::TryLock {
            wait: Some(Millis(5_000)),
            lease: None,
        };
        Harness::renewed_after_interrupted(version, wait)
    }

    #[test]
    fn from_3_16_3_the_late_reply_arms_nothing() {
        assert!(renewed("3.16.2"));
        assert!(!renewed("3.16.3"));
        assert!(renewed("3.16.3 -interrupt-cancels-acquire"));
    }
}
