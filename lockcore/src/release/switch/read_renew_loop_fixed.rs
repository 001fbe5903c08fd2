//! `read-renew-loop-fixed` (Redisson 4.0.0, PR #6883, commit 725d181c8).
//!
//! "fix LockTask, ReadLockTask": the inner loop of `ReadLockTask`'s
//! script is renamed `c`, so every reader's timeout keys are extended
//! under their own lock's prefix whatever their count; and an entry whose
//! first thread has no key prefix or lockName left (a stale queue place,
//! PR #7251) is skipped instead of sent with null arguments.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "read-renew-loop-fixed",
    since: Some(Version::new(4, 0, 0)),
    upstream: "PR #6883 (commit 725d181c8)",
    summary: "ReadLockTask's script no longer reuses the outer loop variable, so a re-entrant reader's timeout keys are renewed; an entry whose first thread is gone is skipped",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use super::super::read_lock_task::tests::{T1, names, next_round, read};
    use crate::machine::harness::{Harness, release};
    use crate::script::LockScript;
    use crate::{Event, LockKind, Value};

    /// A re-entrant reader: 3.52.0 sends the shadowed script, 4.0.0 the
    /// fixed one, with the same words.
    #[test]
    fn from_4_0_0_the_loop_variable_is_renamed() {
        let script = |version| {
            let mut h = Harness::short(release(version));
            h.acquire_kind(T1, "a", LockKind::Read);
            h.acquire_kind(T1, "a", LockKind::Read);
            let (round, command) = next_round(&mut h);
            h.reply(round, Value::Array(vec![Value::Int(1)]));
            assert_eq!(h.expect_event(), Event::Renewed { lock: read("a") });
            assert_eq!(&command[2..], ["2", "a", "{a}", "3000", "uuid-a:1"]);
            command[1].clone()
        };
        assert!(names(&script("3.52.0"), LockScript::ReadRenewBatchShadowed));
        assert!(names(&script("4.0.0"), LockScript::ReadRenewBatch));
    }
}
