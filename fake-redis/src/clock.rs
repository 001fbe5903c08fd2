//! The injected clock: the only source of time the keyspace reads.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Where the keyspace reads the current time, in Unix milliseconds.
///
/// The library never reads the wall clock itself, so a simulator can drive
/// expiry with virtual time. The binary uses [`SystemClock`]; tests and the
/// simulator use [`ManualClock`].
pub trait Clock: Send + Sync {
    /// The current time in milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;
}

/// The wall clock, for the `fake-redis` binary only.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        // The one wall-clock reading in the crate: the binary serves real clients.
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0)
    }
}

/// A clock that moves only when told to. Cloning shares the same time.
#[derive(Debug, Default, Clone)]
pub struct ManualClock {
    now: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock that reads `start_ms`.
    pub fn new(start_ms: u64) -> Self {
        Self {
            now: Arc::new(AtomicU64::new(start_ms)),
        }
    }

    /// Sets the time to `ms` (it may move backwards: a Redis clock jump).
    pub fn set(&self, ms: u64) {
        self.now.store(ms, Ordering::SeqCst);
    }

    /// Moves the time forward by `ms`.
    pub fn advance(&self, ms: u64) {
        self.now.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }
}
