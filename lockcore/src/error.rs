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
}
