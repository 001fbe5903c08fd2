//! `write-unlock-wakes-all` (Redisson 3.8.2, #1542, commit f3e3b56ea).
//!
//! Up to 3.8.1 a write lock's full release (and its `forceUnlock`)
//! published `unlockMessage` (0) on `redisson_rwlock:{K}`, which releases
//! one waiter: of several readers waiting for the writer, one woke and
//! the others slept until their own timer (the writer's PTTL) ran out.
//! 3.8.2 publishes `readUnlockMessage` (1), on which `LockPubSub` releases
//! every waiter of the channel (read at tags redisson-3.8.1 and
//! redisson-3.8.2, `RedissonWriteLock` and `pubsub/LockPubSub`).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "write-unlock-wakes-all",
    since: Some(Version::new(3, 8, 2)),
    upstream: "#1542",
    summary: "a write lock's release publishes 1, waking every waiter instead of one",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::Harness;
    use crate::{Call, LockKind, ThreadId};

    fn unlock_message(release: &str) -> String {
        let mut h = Harness::new(crate::machine::harness::release(release));
        h.acquire_kind(ThreadId(1), "l", LockKind::Write);
        h.call_kind(ThreadId(1), "l", LockKind::Write, Call::Unlock)
            .unwrap();
        let (_, command) = h.expect_send();
        command[5].clone()
    }

    #[test]
    fn a_write_release_publishes_one_from_3_8_2() {
        assert_eq!(unlock_message("3.8.1"), "0");
        assert_eq!(unlock_message("3.8.2"), "1");
    }
}
