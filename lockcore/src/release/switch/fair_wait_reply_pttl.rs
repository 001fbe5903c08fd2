//! `fair-wait-reply-pttl` (Redisson 3.32.0, #4705, commit f08dfd894).
//!
//! A fair lock's waiter already in the queue used to be answered its own
//! deadline minus the wait time and the caller's clock, which could be
//! far longer than the holder's TTL, or negative (and a negative reply
//! makes `lock()` wait on its latch with no timer, #5503). From 3.32.0 it
//! is answered `max(0, PTTL K)` (read at tags redisson-parent-3.31.0 and
//! redisson-3.32.0).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "fair-wait-reply-pttl",
    since: Some(Version::new(3, 32, 0)),
    upstream: "#4705",
    summary: "a queued fair-lock waiter is told the holder's PTTL, not its own deadline minus the wait and now",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::script::LockScript;
    use crate::{Call, LockKind, ThreadId};

    fn acquire_script(version: &str) -> String {
        let mut h = Harness::new(release(version));
        h.call_kind(ThreadId(1), "l", LockKind::Fair, Call::Lock { lease: None })
            .unwrap();
        h.expect_send().1[1].clone()
    }

    /// 3.31.0's acquire answers a queued waiter its own deadline; 3.32.0's
    /// answers K's PTTL.
    #[test]
    fn from_3_32_0_a_queued_waiter_is_told_the_pttl() {
        assert_eq!(acquire_script("3.31.0"), LockScript::FairAcquireOwnDeadline.text());
        assert_eq!(acquire_script("3.32.0"), LockScript::FairAcquireUnscoredLast.text());
    }
}
