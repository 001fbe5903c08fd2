//! `lock-script-batch` (Redisson 3.12.5, #2669, commit 60b261f93).
//!
//! "RLock reliability during failover" sent each of the lock's scripts
//! (acquire, unlock, renewal, forceUnlock) as a one-command `RBatch`
//! (`RedissonLock.evalWriteAsync` through `CommandBatchService`), with a
//! `WAIT` for the replicas when there are any. On the wire nothing else
//! changes; what it brought is a defect: when the batch itself failed (a
//! connection error, or its timeout after every retry) only the batch's
//! future failed, never the script's, so the lock's call or renewal
//! waited for ever (#2790, fixed by `batch-failure-fails-commands`).
//! locksim models that loss; the `WAIT` is not modelled.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "lock-script-batch",
    since: Some(Version::new(3, 12, 5)),
    upstream: "#2669",
    summary: "the lock's scripts go out as one-command batches; a batch that fails (connection error, timeout after its retries) fails only itself, so the call or renewal waits for ever (until 3.13.0)",
    fixes: false,
};

// Its behaviour is tested with its fix: `batch_failure_fails_commands`.
