//! `fair-enqueue-checks-score` (Redisson 3.45.0, PR #6434, commit
//! 2fe06b7a3, "Fair Lock attempt to compare nil with number").
//!
//! A new fair-lock waiter's deadline is built from the last queued
//! thread's. Up to 3.44.x the acquire script read that thread's score
//! without checking it had one, so a queue whose tail had no entry in the
//! timeout set failed every acquire with a Lua error; from 3.45.0 it
//! falls back to K's PTTL (read at tags redisson-3.44.0 and
//! redisson-3.45.0).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "fair-enqueue-checks-score",
    since: Some(Version::new(3, 45, 0)),
    upstream: "#6434",
    summary: "a fair-lock waiter queued behind a thread with no deadline takes the holder's PTTL instead of failing the script",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::script::LockScript;
    use crate::{Call, LockKind, Millis, ThreadId};

    fn acquire_script(version: &str) -> String {
        let mut h = Harness::new(release(version));
        let wait = Call::TryLock {
            wait: Some(Millis(1_000)),
            lease: None,
        };
        h.call_kind(ThreadId(1), "l", LockKind::Fair, wait).unwrap();
        h.expect_send().1[1].clone()
    }

    #[test]
    fn from_3_45_0_the_enqueue_checks_the_last_score() {
        assert_eq!(acquire_script("3.44.0"), LockScript::FairAcquireUnscoredLast.text());
        assert_eq!(acquire_script("3.45.0"), LockScript::FairAcquire.text());
    }
}
