//! `fair-purge-checks-score` (Redisson 3.31.0, #4153, commit 703f6f57b,
//! "FairLock methods throw 'attempt to compare nil with number' error").
//!
//! Every fair-lock script opens by purging queue heads whose deadline
//! passed. Up to 3.30.x it compared `tonumber(ZSCORE)` with now without
//! checking the head had a score, so while the queue's head had none (its
//! timeout-set entry removed, the list entry left) the acquire, the
//! unlock and the force unlock all failed with Lua's "attempt to compare
//! nil with number"; from 3.31.0 such a head stops the purge (read at
//! tags redisson-3.30.0 and redisson-parent-3.31.0).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "fair-purge-checks-score",
    since: Some(Version::new(3, 31, 0)),
    upstream: "#4153",
    summary: "the fair lock's purge stops at a queue head without a deadline instead of failing every script",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::script::LockScript;
    use crate::{Call, LockKind, Purpose, ThreadId};

    fn scripts(version: &str) -> (String, String) {
        let mut h = Harness::new(release(version));
        h.call_kind(ThreadId(1), "l", LockKind::Fair, Call::Lock { lease: None })
            .unwrap();
        let acquire = h.expect_send().1[1].clone();
        let mut h = Harness::new(release(version));
        h.acquire_kind(ThreadId(1), "l", LockKind::Fair);
        h.call_kind(ThreadId(1), "l", LockKind::Fair, Call::Unlock)
            .unwrap();
        let unlock = h.expect_send_of(Purpose::Unlock).1[1].clone();
        (acquire, unlock)
    }

    #[test]
    fn from_3_31_0_the_purge_checks_the_score() {
        assert_eq!(
            scripts("3.30.0"),
            (
                LockScript::FairAcquireUncheckedPurge.text().to_owned(),
                LockScript::FairUnlockLatchedUncheckedPurge.text().to_owned()
            )
        );
        assert_eq!(
            scripts("3.31.0"),
            (
                LockScript::FairAcquireOwnDeadline.text().to_owned(),
                LockScript::FairUnlock.text().to_owned()
            )
        );
    }
}
