//! `fenced-lock` (Redisson 3.19.0, #4684, commit `cd0401b9c`).
//!
//! `RedissonFencedLock` appears: `RLock` whose acquire scripts `INCR` a
//! token key `redisson_lock_token:{K}` on every success, with
//! `lockAndGetToken` / `tryLockAndGetToken` returning it (read at tags
//! redisson-3.19.0 and redisson-4.7.0; the class's later commits change
//! no script text and no Java path but the move to `syncedEvalNoRetry`,
//! which `no-lock-resend` already carries for every acquire). Earlier
//! releases have no such class: locksim refuses the lock kind
//! `fenced-lock` under them. Not a fix: the token key never expires
//! (#6510, open upstream).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "fenced-lock",
    since: Some(Version::new(3, 19, 0)),
    upstream: "#4684",
    summary: "RFencedLock exists: fenced-lock acquires INCR redisson_lock_token:{K} (lockAndGetToken returns it)",
    fixes: false,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, LockKind, ThreadId};

    /// 3.18.1 refuses the kind, 3.19.0 sends its script.
    #[test]
    fn the_fenced_lock_exists_from_3_19_0() {
        let mut h = Harness::new(release("3.18.1"));
        let call = Call::Lock { lease: None };
        assert!(h.call_kind(ThreadId(1), "l", LockKind::Fenced, call.clone()).is_err());
        h.expect_quiet();
        let mut h = Harness::new(release("3.19.0"));
        h.call_kind(ThreadId(1), "l", LockKind::Fenced, call).unwrap();
        let (_, command) = h.expect_send();
        assert_eq!(command[3..5], ["l", "redisson_lock_token:{l}"]);
    }
}
