//! `acquire-retry-wrapper` (Redisson 3.20.1, #4822, commit 65320f76f).
//!
//! To retry an acquire that no replica acknowledged, 3.20.1 runs
//! `tryAcquireAsync` inside `tryAcquireAsync0` / `ServiceManager.execute`,
//! whose result is a new future completed from the acquire's. The thread
//! waits on (and, when interrupted, cancels) that new future; the
//! acquire's own `thenApply` still runs on its late reply and arms the
//! watchdog of a thread that gave up, as before 3.16.3. Reported as #5358
//! ("thread interrupted after the lock was acquired ... renewed"); with an
//! `unlock()` after the interrupt, whose cancel runs before that arm, it is
//! #7272 (open in 4.7.0; PR #7277 unmerged, modelled by
//! `interrupted-acquire-unlocks`).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "acquire-retry-wrapper",
    since: Some(Version::new(3, 20, 1)),
    upstream: "#4822, #5358",
    summary: "the acquire runs inside a retry wrapper, so an interrupt cancels only the wrapper and the late reply arms the watchdog again",
    // Not a fix: it brought #5358: the late reply of an interrupted acquire arms the watchdog again.
    fixes: false,
};

#[cfg(test)]
mod tests {
    use crate::Call;
    use crate::machine::harness::Harness;

    /// `lockInterruptibly()` interrupted, its acquire then succeeds: is the
    /// lock renewed?
    fn renewed(version: &str) -> bool {
        Harness::renewed_after_interrupted(version, Call::LockInterruptibly { lease: None })
    }

    #[test]
    fn from_3_20_1_the_late_reply_arms_the_watchdog_again() {
        assert!(!renewed("3.20.0"));
        assert!(renewed("3.20.1"));
        assert!(!renewed("3.20.1 -acquire-retry-wrapper"));
    }
}
