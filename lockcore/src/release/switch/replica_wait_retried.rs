//! `replica-wait-retried` (Redisson 3.45.1, PR #6488, commit 58947344d).
//!
//! During a Sentinel failover the old primary, demoted to a replica,
//! still holds the client's connections until the client learns the new
//! primary. A lock script's batch sent to it gets two errors: the script
//! is refused at its first write (`READONLY You can't write against a
//! read only replica. script: …`) and the `WAIT` after it with `ERR WAIT
//! cannot be used with replica instances. …`. `CommandDecoder` fails the
//! batch with the last failed command's error, the `WAIT`'s
//! (`decodeCommandBatch`, 3.45.0 line 331).
//!
//! Before: `CommandDecoder` made an error a retryable
//! `RedisWaitException` only when it began `WAIT` (3.19.3, #4822); Redis
//! answers `ERR WAIT …`, a plain `RedisException`, so `RedisExecutor`
//! did not retry the batch and the lock call failed at once with that
//! text, although its script never ran (an unlock reports an error while
//! the caller still holds the lock).
//! After: errors beginning `ERR WAIT` are `RedisWaitException` too
//! (`CommandDecoder` line 414 at redisson-3.45.1), a `RedisRetryException`
//! that `BatchCommandData` keeps as the batch's retry error, and
//! `RedisExecutor.checkAttemptPromise` sends the whole batch again after
//! `retryInterval`, up to `retryAttempts` times, to the entry's master of
//! the moment: the new primary once the client has learnt it.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "replica-wait-retried",
    since: Some(Version::new(3, 45, 1)),
    upstream: "commit 58947344d",
    summary: "a lock script's batch answered `ERR WAIT cannot be used with replica instances` (a demoted primary) is retried like other WAIT errors (3.45.0 and earlier: the call fails at once)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::Harness;
    use crate::{Call, LockError, Purpose, ThreadId, TransportError, Value};

    use crate::machine::harness::{READ_ONLY as RO, READ_ONLY_6_2 as RO_6_2, REPLICA_WAIT as WAIT_ERR};

    /// A holder's unlock meets a demoted primary: its script is refused
    /// (READONLY, in 7.0's words or 6.2's) and its `WAIT` too. 3.45.0 fails the unlock with the
    /// `WAIT`'s error (the batch's last); 3.45.1 sends the batch again
    /// after the retry interval (1 500 ms), and the retry's answer is
    /// the unlock's. A machine that failed on the script's READONLY, or
    /// retried in both releases, fails one of the assertions.
    #[test]
    fn from_3_45_1_a_replica_wait_error_is_retried() {
        let cases = [("3.45.0", false), ("3.45.1", true)];
        for ((release, retried), ro) in cases.into_iter().flat_map(|c| [(c, RO), (c, RO_6_2)]) {
            let mut h = Harness::synced_holder_unlocking(release);
            let t = ThreadId(1);
            let (unlock, purpose, _) = h.expect_send_purpose();
            assert_eq!(purpose, Purpose::Unlock);
            let (wait, _) = h.expect_send();
            h.reply(unlock, Value::Error(ro.into()));
            assert_eq!(h.returned(t), None, "{release}: the batch waits for its WAIT ({ro})");
            h.reply(wait, Value::Error(WAIT_ERR.into()));
            if retried {
                assert_eq!(h.returned(t), None, "{release}: waits to retry");
                h.advance(1_500);
                let (unlock, purpose, _) = h.expect_send_purpose();
                assert_eq!(purpose, Purpose::Unlock, "{release}: the retry");
                let (wait, _) = h.expect_send();
                h.reply(unlock, Value::Int(1));
                h.reply(wait, Value::Int(1));
                assert!(matches!(h.returned(t), Some(Ok(_))), "{release}");
            } else {
                assert_eq!(
                    h.returned(t),
                    Some(Err(LockError::Transport(TransportError::Redis(
                        WAIT_ERR.into()
                    )))),
                    "{release}"
                );
            }
        }
    }

    /// 3.46+ probes `WAIT 0 0` and `WAITAOF 0 0 0` before the first
    /// synced script; on a demoted primary both fail, the batch with the
    /// last error (`ERR WAITAOF cannot be used with replica instances…`),
    /// which the executor retries after the retry interval. Without the
    /// switch the call fails with the probe's error at once.
    #[test]
    fn the_probe_on_a_demoted_primary_is_retried() {
        const WAITAOF_ERR: &str = "ERR WAITAOF cannot be used with replica instances. Please also note that writes to replicas are just local and are not propagated.";
        for retried in [true, false] {
            let mut r = crate::machine::harness::release("3.46.0");
            if !retried {
                r = r.without(crate::Switch::ReplicaWaitRetried);
            }
            let config = crate::Config::builder().release(r).replicas(1).build().unwrap();
            let mut h = Harness::with_config(config);
            let t = ThreadId(1);
            h.call(t, "l", Call::TryLock { wait: None, lease: None }).unwrap();
            let refuse = |h: &mut Harness| {
                for text in [WAIT_ERR, WAITAOF_ERR] {
                    let (request, purpose, _) = h.expect_send_purpose();
                    assert_eq!(purpose, Purpose::Probe);
                    h.reply(request, Value::Error(text.into()));
                }
            };
            refuse(&mut h);
            if !retried {
                let returned = h.returned(t);
                assert!(matches!(returned, Some(Err(_))), "{returned:?}");
                continue;
            }
            assert_eq!(h.returned(t), None, "waits to retry the probe");
            h.advance(1_500);
            // The client has moved to the new primary: the probe passes
            // and the script goes out with its WAIT.
            h.probed();
            let (script, purpose, _) = h.expect_send_purpose();
            assert_eq!(purpose, Purpose::Acquire);
            let (wait, _) = h.expect_send();
            h.reply(script, Value::Nil);
            h.reply(wait, Value::Int(1));
            assert!(matches!(h.returned(t), Some(Ok(_))));
        }
    }

    /// The retries count against `retryAttempts` (3 by default): a
    /// demoted primary that never goes away fails the call with the
    /// `WAIT`'s error after the fourth batch.
    #[test]
    fn the_retries_run_out() {
        let mut h = Harness::with_replicas("3.45.1", 1);
        let t = ThreadId(1);
        h.call(t, "l", Call::TryLock { wait: None, lease: None }).unwrap();
        h.probed();
        let mut batches = 0;
        let result = loop {
            let (script, _) = h.expect_send();
            let (wait, _) = h.expect_send();
            batches += 1;
            h.reply(script, Value::Error(RO.into()));
            h.reply(wait, Value::Error(WAIT_ERR.into()));
            if let Some(result) = h.returned(t) {
                break result;
            }
            h.advance(1_500);
        };
        assert_eq!(batches, 4);
        assert!(matches!(result, Err(LockError::Transport(TransportError::Redis(ref e))) if e == WAIT_ERR), "{result:?}");
    }
}
