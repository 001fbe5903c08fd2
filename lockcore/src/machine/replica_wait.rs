//! A lock script's batch sent to a demoted primary, and 3.45.1's retry
//! of it (`replica-wait-retried`, commit 58947344d).
//!
//! A replica refuses the script at its first write (`READONLY …`) and the
//! `WAIT` after it (`ERR WAIT cannot be used with replica instances …`).
//! Redisson answers the batch's caller once every reply of the batch has
//! been read, with the last failed command's error
//! (`CommandDecoder.decodeCommandBatch`): the `WAIT`'s. Whether that
//! error is retried is the switch.

use super::LockClient;
use super::request::Pending;
use crate::{Switch, TransportError, Value};

impl LockClient {
    /// Whether the script's error `e` leaves the batch's answer to its
    /// `WAIT`: a `READONLY` refusal, which only a replica gives (Redis
    /// 6.2 wraps it in `ERR Error running script`, with `-READONLY` after
    /// the script's position; fake-redis's `RedisVersion`). Every
    /// script error does so in Redisson, but with a primary's `WAIT`
    /// after it the answer is the script's error either way, a moment
    /// later; only a replica's `WAIT` fails too and changes it, so the
    /// timing of every other error is left as it was.
    pub(super) fn script_error_awaits_wait(e: &TransportError) -> bool {
        matches!(e, TransportError::Redis(text) if crate::error::is_read_only(text))
    }

    /// Whether `pending` failed with a `READONLY` refusal that the
    /// release retries: from 3.27.1 (`readonly-retried`, #5396)
    /// `CommandDecoder` makes it a `RedisReadonlyException`, which
    /// `RedisExecutor.checkAttemptPromise` sends again after the retry
    /// delay while attempts remain. A lock script's batch (with its
    /// `WAIT`, or without one when the client counted no replica) has
    /// the client's `retryAttempts`; a command sent alone has its own
    /// (none for 3.37+'s acquire and unlock). A batch reaches here with
    /// its script's refusal only once the batch fails with its first
    /// error (`batch-first-error`, 3.46.0); before, its `WAIT`'s error
    /// replaces it. Redis 6.2 words a script's refusal otherwise (`ERR
    /// Error running script`), which is a plain error to Redisson.
    pub(super) fn retries_read_only(
        &self,
        pending: &Pending,
        reply: &Result<Value, TransportError>,
    ) -> bool {
        // The switches are read only for a refusal: a read is what makes
        // a switch count as asked about (`locksim mutants`).
        let refused =
            matches!(reply, Err(TransportError::Redis(text)) if text.starts_with("READONLY"));
        if !refused || !self.switches.has(Switch::ReadonlyRetried) {
            return false;
        }
        pending.tries.retried < self.attempts_of(pending)
    }

    /// Whether `pending`'s batch failed with a `WAIT` error that the
    /// release retries: from 3.45.1 one beginning `ERR WAIT` (so
    /// `WAITAOF`'s errors too, as Redisson's `startsWith` has it), while
    /// retries remain (`retryAttempts`, counted with the resends after a
    /// timeout, as `RedisExecutor`'s one `attempt` counter does). Errors
    /// beginning `WAIT` were retried from 3.19.3, but no Redis answers
    /// so.
    pub(super) fn retries_replica_wait(
        &self,
        pending: &Pending,
        reply: &Result<Value, TransportError>,
    ) -> bool {
        self.switches.has(Switch::ReplicaWaitRetried)
            && pending.sync.is_some()
            && matches!(reply, Err(TransportError::Redis(text)) if text.starts_with("ERR WAIT"))
            && pending.tries.retried < self.config.retry_attempts
    }
}
