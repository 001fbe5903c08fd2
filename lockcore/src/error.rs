//! lockcore's errors.

use thiserror::Error;

use crate::ThreadId;

/// Why a command could not complete on the wire. The algorithm treats every
/// variant alike: the command's outcome is unknown.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TransportError {
    /// No reply within the response timeout (after retries).
    #[error("timed out waiting for a reply")]
    Timeout,
    /// The connection failed or closed.
    #[error("connection lost: {0}")]
    Connection(String),
    /// Redis answered with an error reply.
    #[error("{0}")]
    Redis(String),
    /// The lock script ran, but the `WAIT` after it counted too few
    /// replicas (Redisson's `IllegalStateException` /
    /// `NoSyncedSlavesException`, with its text).
    #[error("{0}")]
    NoSyncedReplicas(String),
    /// The subscription to a lock's channel was not made within
    /// `subscriptionTimeout` (ms): Redisson's `RedisTimeoutException` from
    /// `PublishSubscribeService.subscribe`, with its text.
    #[error(
        "Unable to acquire subscription lock after {0}ms. Try to increase 'subscriptionTimeout', 'subscriptionsPerConnection', 'subscriptionConnectionPoolSize' parameters."
    )]
    SubscriptionTimeout(u64),
    /// The transport has no connection to this master of a Redis
    /// Cluster: a client in cluster mode over a transport that reaches
    /// fewer masters (a one-node transport reaches shard 0 alone). A
    /// driver's mistake, not a network failure; nothing was sent.
    #[error(
        "no connection to shard {shard}: the transport reaches {masters} master(s); a client in cluster mode needs a connection to every master"
    )]
    NoShard {
        /// The shard asked for.
        shard: u16,
        /// How many masters the transport reaches.
        masters: u16,
    },
}

/// Why a lock call failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LockError {
    /// `unlock()` by a thread that does not hold the lock: Redisson's
    /// `IllegalMonitorStateException` text, exactly.
    #[error(
        "attempt to unlock lock, not locked by current thread by node id: {uuid} thread-id: {thread}"
    )]
    NotLockedByCurrentThread {
        /// The client's uuid.
        uuid: String,
        /// The calling thread.
        thread: ThreadId,
    },
    /// A lock name must not be empty.
    #[error("lock name must not be empty")]
    EmptyLockName,
    /// A lease must be positive.
    #[error("lease time must be positive, got {0} ms")]
    InvalidLease(i64),
    /// A wait time must be positive.
    #[error("wait time must be positive, got {0} ms")]
    InvalidWait(i64),
    /// A configuration that contradicts itself.
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),
    /// The thread already has a call in flight (a thread is sequential).
    #[error("thread {0} already has a call in progress")]
    ThreadBusy(ThreadId),
    /// The command's outcome is unknown: the transport failed.
    #[error("transport error: {0}")]
    Transport(#[from] TransportError),
    /// Redis answered with something the script cannot return.
    #[error("unexpected reply from Redis: {0}")]
    UnexpectedReply(String),
    /// The thread was interrupted while its call waited (Java's
    /// `InterruptedException`, or the `RedisException` wrapping it that a
    /// synchronous round trip throws). The call's command may still run on
    /// Redis; what its late reply does depends on the release.
    #[error("interrupted")]
    Interrupted,
    /// A lock kind's name that no registered kind has.
    #[error("unknown lock kind '{0}' (known: rlock, read, write, fair, fenced-lock)")]
    UnknownLockKind(String),
    /// `lockAndGetToken` / `tryLockAndGetToken` / `getToken` on a lock
    /// object other than Redisson's `RFencedLock`, which alone has them.
    #[error(
        "{0} has no token methods: lockAndGetToken, tryLockAndGetToken and getToken are RFencedLock's (lock kind fenced-lock)"
    )]
    NoTokenMethods(&'static str),
    /// A call on a lock kind that the release's model does not cover
    /// yet: refused before anything is sent, with what is missing.
    #[error("not modelled: {0}")]
    Unmodelled(&'static str),
    /// The client was shut down.
    #[error("client is shut down")]
    Shutdown,
    /// A multi-lock of no lock: Redisson's `IllegalArgumentException`.
    #[error("Lock objects are not defined")]
    NoLockObjects,
    /// A multi-lock that names one lock twice.
    #[error("lock '{0}' is named twice in one multi-lock (Redisson re-enters it; not modelled)")]
    LockNamedTwice(String),
}

impl LockError {
    /// Whether Redis failed the lock's script itself: a Lua runtime error
    /// (`attempt to compare nil with number`) or a command the script
    /// called refusing its arguments. Redis 7 ends every error raised
    /// while a script runs with `script: <sha1>, on @user_script:<line>.`;
    /// Redis 6 opened a runtime error with `ERR Error running script`.
    /// Errors Redis answers before running a script (`NOSCRIPT`,
    /// `LOADING`) are not, nor a replica's `READONLY`: Redis 7 runs a
    /// script without flags on a replica and refuses its first write with
    /// the script's suffix, but the refusal is the server's role (a
    /// demoted primary's, under `switchover`), not the script's code.
    pub fn is_script_error(&self) -> bool {
        let LockError::Transport(TransportError::Redis(text)) = self else {
            return false;
        };
        !is_read_only(text)
            && (text.contains(", on @user_script:") || text.starts_with("ERR Error running script"))
    }
}

/// Whether Redis's error `text` is a replica's refusal of a write:
/// `READONLY …`, or from a script on Redis 6.2 `ERR Error running script
/// (call to f_<sha>): @user_script:1: @user_script: 1: -READONLY …`.
pub(crate) fn is_read_only(text: &str) -> bool {
    text.starts_with("READONLY")
        || (text.starts_with("ERR Error running script") && text.contains(": -READONLY "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redis(text: &str) -> LockError {
        LockError::Transport(TransportError::Redis(text.to_owned()))
    }

    /// #4153's error as Redis 7 and Redis 6 word it is the script's; a
    /// refusal before the script runs, or a timeout, is not.
    #[test]
    fn a_script_error_is_told_by_redis_words() {
        let seven = "ERR user_script:1: attempt to compare nil with number script: 762bfafa6be221431a0b668685dd15c926483619, on @user_script:1.";
        assert!(redis(seven).is_script_error());
        let six = "ERR Error running script (call to f_762bfafa6be221431a0b668685dd15c926483619): @user_script:1: user_script:1: attempt to compare nil with number";
        assert!(redis(six).is_script_error());
        assert!(!redis("NOSCRIPT No matching script. Please use EVAL.").is_script_error());
        assert!(!redis("LOADING Redis is loading the dataset in memory").is_script_error());
        // redis-server 7.0.15 as a replica (fake-redis's `replication.rs`).
        let replica = "READONLY You can't write against a read only replica. script: d223ed8c7345b684e8ed044ed472601f536fa58b, on @user_script:1.";
        assert!(!redis(replica).is_script_error());
        let replica_6_2 = "ERR Error running script (call to f_d223ed8c7345b684e8ed044ed472601f536fa58b): @user_script:1: @user_script: 1: -READONLY You can't write against a read only replica.";
        assert!(!redis(replica_6_2).is_script_error());
        assert!(!LockError::from(TransportError::Timeout).is_script_error());
    }
}
