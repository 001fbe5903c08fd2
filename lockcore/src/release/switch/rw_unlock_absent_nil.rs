//! `rw-unlock-absent-nil` (Redisson 3.44.0, commit 1ce49b7a2, "unlock()
//! method doesn't respect the lock owner").
//!
//! Up to 3.43.x the read and the write lock's unlock scripts answered 1
//! when K had no `mode` (the lock expired or was deleted): `unlock()`
//! reported a release to a thread that no longer held anything. From
//! 3.44.0 they answer nil, and the caller gets `IllegalMonitorStateException`
//! as with `RLock` (read at tags redisson-3.43.0 and redisson-3.44.0).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "rw-unlock-absent-nil",
    since: Some(Version::new(3, 44, 0)),
    upstream: "1ce49b7a2",
    summary: "unlock of an expired read or write lock fails instead of reporting a release",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::Harness;
    use crate::script::LockScript;
    use crate::{Call, LockKind, Millis, ThreadId};

    fn unlock_script(release: &str, kind: LockKind) -> String {
        let mut h = Harness::new(crate::machine::harness::release(release));
        let lease = Call::Lock {
            lease: Some(Millis(1_000)),
        };
        h.acquire_call_kind(ThreadId(1), "l", kind, lease);
        h.call_kind(ThreadId(1), "l", kind, Call::Unlock).unwrap();
        h.expect_send().1[1].clone()
    }

    #[test]
    fn an_absent_lock_fails_the_unlock_from_3_44_0() {
        let read = LockKind::Read;
        let write = LockKind::Write;
        assert_eq!(
            unlock_script("3.43.0", read),
            LockScript::ReadUnlockLatchedOne.text()
        );
        assert_eq!(
            unlock_script("3.44.0", read),
            LockScript::ReadUnlockLatched.text()
        );
        assert_eq!(
            unlock_script("3.43.0", write),
            LockScript::WriteUnlockLatchedOne.text()
        );
        assert_eq!(
            unlock_script("3.44.0", write),
            LockScript::WriteUnlockLatched.text()
        );
    }
}
