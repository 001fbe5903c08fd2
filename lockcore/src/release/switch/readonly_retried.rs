//! `readonly-retried` (Redisson 3.27.1, #5396, commit 5076c3ab6).
//!
//! A write sent to a replica (a primary demoted by a switchover, until
//! the client learns the new one) is refused with `READONLY You can't
//! write against a read only replica.`.
//!
//! Before: `CommandDecoder` made it a plain `RedisException`, and
//! `RedisExecutor` failed the command at once.
//! After: an error beginning `READONLY` is a `RedisReadonlyException`
//! (`CommandDecoder`, line 409 at redisson-3.27.1), which
//! `RedisExecutor.checkAttemptPromise` sends again after `retryInterval`
//! while attempts remain, like a `RedisRetryException`.
//!
//! A lock script's batch meets it as its script's error. Until 3.46.0 a
//! batch fails with its last failed command's error, the `WAIT`'s, so
//! this retry acts on a lock script only from `batch-first-error` on (or
//! on a batch with no `WAIT`, a client that counted no replica). Redis
//! 6.2 wraps a script's refusal in `ERR Error running script`, which no
//! release retries. Not a fix of a defect locksim models: a call that
//! fails at once on a demoted primary fails under a fault.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "readonly-retried",
    since: Some(Version::new(3, 27, 1)),
    upstream: "#5396 (commit 5076c3ab6)",
    summary: "a command answered `READONLY` (a demoted primary) is sent again after the retry interval while attempts remain (before: the call fails at once)",
    fixes: false,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, Config, LockError, Purpose, ThreadId, TransportError, Value};

    use crate::machine::harness::{READ_ONLY as RO, READ_ONLY_6_2 as RO_6_2};

    /// A client that counted no replica sends its unlock in a batch
    /// without `WAIT`; a demoted primary refuses it. 3.27.0 fails the
    /// unlock with the refusal; 3.27.1 sends it again after the retry
    /// interval (1 500 ms), and the retry's answer is the unlock's. 6.2's
    /// wrapped refusal is a plain error in both.
    #[test]
    fn from_3_27_1_a_readonly_refusal_is_retried() {
        for (version, ro, retried) in [
            ("3.27.0", RO, false),
            ("3.27.1", RO, true),
            ("3.27.1", RO_6_2, false),
        ] {
            let config = Config::builder()
                .release(release(version))
                .replicas(1)
                .build()
                .unwrap();
            let mut h = Harness::with_config(config);
            h.connected_replicas = Some(0);
            let t = ThreadId(1);
            h.call(t, "l", Call::TryLock { wait: None, lease: None }).unwrap();
            h.probed();
            let acquire = h.expect(Purpose::Acquire);
            h.reply(acquire, Value::Nil);
            h.expect_return(t).unwrap();
            h.call(t, "l", Call::Unlock).unwrap();
            let unlock = h.expect(Purpose::Unlock);
            h.reply(unlock, Value::Error(ro.into()));
            if !retried {
                let failed = Err(LockError::Transport(TransportError::Redis(ro.into())));
                assert_eq!(h.returned(t), Some(failed), "{version}");
                continue;
            }
            assert_eq!(h.returned(t), None, "{version}: waits to retry");
            h.advance(1_500);
            let unlock = h.expect(Purpose::Unlock);
            h.reply(unlock, Value::Int(1));
            assert!(matches!(h.returned(t), Some(Ok(_))), "{version}");
        }
    }
}
