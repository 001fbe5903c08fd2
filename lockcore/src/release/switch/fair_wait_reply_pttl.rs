//! `fair-wait-reply-pttl` (Redisson 3.32.0, #4705, commit f08dfd894).
//!
//! A fair lock's waiter already in the queue used to be answered its own
//! deadline minus the wait time and the caller's clock, which could be
//! far longer than the holder's TTL, or negative (and a negative reply
//! makes `lock()` wait on its latch with no timer, #5503). From 3.32.0 it
//! is answered `max(0, PTTL K)` (read at tags redisson-3.31.0 and
//! redisson-3.32.0). locksim models the fair lock from this release on:
//! the scripts before it are refused, not simulated.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "fair-wait-reply-pttl",
    since: Some(Version::new(3, 32, 0)),
    upstream: "#4705",
    summary: "a queued fair-lock waiter is told the holder's PTTL, not its own deadline (the fair lock is modelled from here)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, LockError, LockKind, ThreadId};

    /// Before 3.32.0 the fair lock is refused with the reason, nothing
    /// sent; from 3.32.0 its acquire goes out.
    #[test]
    fn the_fair_lock_is_modelled_from_3_32_0() {
        let mut h = Harness::new(release("3.31.0"));
        let refused = h.call_kind(ThreadId(1), "l", LockKind::Fair, Call::Lock { lease: None });
        assert!(
            matches!(&refused, Err(LockError::Unmodelled(text)) if text.contains("3.32.0")),
            "{refused:?}"
        );
        h.expect_quiet();
        let mut h = Harness::new(release("3.32.0"));
        h.call_kind(ThreadId(1), "l", LockKind::Fair, Call::Lock { lease: None })
            .unwrap();
        let (_, command) = h.expect_send();
        assert_eq!(command[2], "3");
    }
}
