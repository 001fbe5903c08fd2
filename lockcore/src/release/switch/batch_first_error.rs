//! `batch-first-error` (Redisson 3.46.0, commit 31e255d0f).
//!
//! A lock script with replicas goes in a batch with its `WAIT`; on a
//! demoted primary both fail: the script is refused at its first write
//! (`READONLY …`) and the `WAIT` with `ERR WAIT cannot be used with
//! replica instances. …`.
//!
//! Before: `CommandDecoder.decodeCommandBatch` failed the batch with the
//! last failed command's error, the `WAIT`'s (3.45.0 line 331), which is
//! retried from 3.45.1 (`replica-wait-retried`).
//! After: with the first failed command's error, the later ones added
//! as suppressed ("RBatch exception object doesn't contain suppressed
//! exceptions"): the script's. Its `READONLY` is retried as a
//! `RedisReadonlyException` (`readonly-retried`), so on Redis 7.0+ the
//! batch is still sent again, and when the attempts run out the call
//! fails with the script's refusal. On Redis 6.2 the refusal reads `ERR
//! Error running script … -READONLY …`, a plain error: the call fails at
//! once, where 3.45.1 to 3.45.x retried it for the `WAIT`'s error. The
//! probe's batch (`WAIT 0 0`, `WAITAOF 0 0 0`) has no script, and its
//! first error is a `WAIT`'s. Not a fix of a defect locksim models.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "batch-first-error",
    since: Some(Version::new(3, 46, 0)),
    upstream: "commit 31e255d0f",
    summary: "a lock script's batch fails with its first failed command's error (a demoted primary's `READONLY`), not its last (the `WAIT`'s)",
    fixes: false,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::Harness;
    use crate::{LockError, Purpose, ThreadId, TransportError, Value};

    use crate::machine::harness::{READ_ONLY as RO, READ_ONLY_6_2 as RO_6_2, REPLICA_WAIT as WAIT_ERR};

    /// A holder's unlock meets a demoted primary under 3.45.1 and 3.46.0,
    /// in 7.0's words and 6.2's. The retries run out (3 by default): the
    /// call fails with the batch's error, the `WAIT`'s in 3.45.1 and the
    /// script's from 3.46.0; 6.2's refusal is not retried at all from
    /// 3.46.0 (its first error is a plain one).
    #[test]
    fn from_3_46_0_a_batch_fails_with_its_scripts_refusal() {
        for (version, ro, sends, error) in [
            ("3.45.1", RO, 4, WAIT_ERR),
            ("3.45.1", RO_6_2, 4, WAIT_ERR),
            ("3.46.0", RO, 4, RO),
            ("3.46.0", RO_6_2, 1, RO_6_2),
        ] {
            let mut h = Harness::synced_holder_unlocking(version);
            let t = ThreadId(1);
            for sent in 1..=sends {
                let (unlock, purpose, _) = h.expect_send_purpose();
                assert_eq!(purpose, Purpose::Unlock, "{version}: send {sent}");
                let (wait, _) = h.expect_send();
                h.reply(unlock, Value::Error(ro.into()));
                h.reply(wait, Value::Error(WAIT_ERR.into()));
                if sent < sends {
                    assert_eq!(h.returned(t), None, "{version}: send {sent} is retried");
                    h.advance(1_500);
                }
            }
            let failed = Err(LockError::Transport(TransportError::Redis(error.into())));
            assert_eq!(h.returned(t), Some(failed), "{version} ({ro})");
        }
    }
}
