//! `read-renew-own-names` (Redisson 4.4.0, PR #7098, commit bfbf73d0b,
//! with 1b921e30f; ref #1458).
//!
//! "prevent ReadLockTask cross-instance zombie key renewal": before, the
//! chunk sent one lockName per K (the entry's first thread), and when that
//! field existed the script extended the timeout keys of every numeric
//! field of K, every reader of every client: a reader whose client died
//! kept its hold for as long as another client's reader was renewed, and
//! so K too after that reader left (its unlock sets K's TTL to the
//! longest timeout key left). From 4.4.0 each K carries a count and all of
//! this client's lockNames (one snapshot of `threadId2lockName`); only
//! their own timeout keys are extended, K only if one of them is alive,
//! and a 0 cancels every thread sent.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "read-renew-own-names",
    since: Some(Version::new(4, 4, 0)),
    upstream: "PR #7098 (commit bfbf73d0b)",
    summary: "ReadLockTask renews only this client's readers' timeout keys, and K only if one is alive: a dead client's reader is no longer kept by another's renewal",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use super::super::read_lock_task::tests::{T1, T2, names, next_round, read};
    use crate::machine::harness::{Harness, release};
    use crate::script::LockScript;
    use crate::{Event, LockKind, Value};

    /// Two readers of one K on one client: 4.4.0 sends both lockNames with
    /// their count, and a 0 cancels both; 4.3.0 sends the first only.
    #[test]
    fn from_4_4_0_every_own_lock_name_is_sent() {
        let mut h = Harness::short(release("4.4.0"));
        h.acquire_kind(T2, "a", LockKind::Read);
        h.acquire_kind(T1, "a", LockKind::Read);
        let (round, command) = next_round(&mut h);
        assert!(names(&command[1], LockScript::ReadRenewBatchOwn));
        assert_eq!(
            &command[2..],
            ["2", "a", "{a}", "3000", "2", "uuid-a:1", "uuid-a:2"]
        );
        h.reply(round, Value::Array(vec![Value::Int(0)]));
        assert_eq!(
            h.expect_event(),
            Event::RenewalStopped {
                lock: read("a"),
                reason: "not-held".into()
            }
        );
        assert!(!h.has_timers(), "the chain stopped");
        let mut old = Harness::short(release("4.3.0"));
        old.acquire_kind(T2, "a", LockKind::Read);
        old.acquire_kind(T1, "a", LockKind::Read);
        let (_, command) = next_round(&mut old);
        assert_eq!(&command[2..], ["2", "a", "{a}", "3000", "uuid-a:2"]);
    }
}
