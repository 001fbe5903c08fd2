//! What to simulate: clients, their threads' scripts, settings and faults.

use lockcore::{LockName, Release};
use serde::{Deserialize, Serialize};

use crate::FaultPlan;

/// The default lock name, as in the documents' experiments.
pub const DEFAULT_LOCK: &str = "redisson:lock";

/// A whole run: the input of [`crate::run`]. Serde data, so a run can be
/// printed, saved and replayed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimSpec {
    /// Every random choice of the run derives from this seed.
    pub seed: u64,
    /// The profile of clients that name none.
    #[serde(default)]
    #[schemars(with = "String")]
    pub profile: Release,
    /// `lockWatchdogTimeout` in ms for clients that name none.
    #[serde(default = "default_watchdog_ms")]
    #[schemars(range(min = 3, max = crate::MAX_LEASE_MS))]
    pub watchdog_timeout_ms: u64,
    /// One-way network latency between a client and Redis, drawn per message.
    #[serde(default)]
    pub latency: LatencyRange,
    /// The client processes.
    #[schemars(length(min = 1, max = crate::MAX_CLIENTS))]
    pub clients: Vec<ClientSpec>,
    /// The faults, at fixed virtual times.
    #[serde(default)]
    pub faults: FaultPlan,
    /// Virtual time at which the run stops, in ms. A watchdog that is never
    /// stopped renews for ever, so every run has an end.
    #[serde(default = "default_horizon_ms")]
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub horizon_ms: u64,
    /// Redis's deployment: a primary alone (the default) or with replicas.
    #[serde(default, skip_serializing_if = "RedisSpec::is_default")]
    pub redis: RedisSpec,
}

/// Redis's deployment (`[sim.redis]`): the primary the clients talk to and
/// its replicas, which receive its writes asynchronously, each write
/// after a lag drawn from `replication_lag`. A `failover` promotes one.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedisSpec {
    /// How many replicas the primary has.
    #[serde(default)]
    #[schemars(range(max = crate::model::validate::MAX_REPLICAS))]
    pub replicas: u32,
    /// How long a write takes to reach a replica, in ms (drawn per write
    /// and replica; writes arrive in order).
    #[serde(default)]
    pub replication_lag: LatencyRange,
}

impl RedisSpec {
    /// A primary alone, with the default lag: left out when a spec is
    /// written.
    pub fn is_default(&self) -> bool {
        *self == RedisSpec::default()
    }
}

fn default_watchdog_ms() -> u64 {
    30_000
}

fn default_horizon_ms() -> u64 {
    120_000
}

/// A range of one-way latencies in ms, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LatencyRange {
    /// The shortest latency.
    #[schemars(range(max = crate::MAX_DELAY_MS))]
    pub min_ms: u64,
    /// The longest latency.
    #[schemars(range(max = crate::MAX_DELAY_MS))]
    pub max_ms: u64,
}

impl Default for LatencyRange {
    fn default() -> Self {
        LatencyRange {
            min_ms: 1,
            max_ms: 5,
        }
    }
}

/// One client process: one lockcore client (one uuid) and its threads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientSpec {
    /// A short name used in timelines and faults (`A`, `B`).
    #[schemars(pattern(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$"))]
    pub name: String,
    /// Overrides the run's profile.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub profile: Option<Release>,
    /// Overrides the run's `lockWatchdogTimeout`, in ms.
    #[serde(default)]
    #[schemars(range(min = 3, max = crate::MAX_LEASE_MS))]
    pub watchdog_timeout_ms: Option<u64>,
    /// Overrides `lockWatchdogBatchSize` (3.44+: the locks one EVAL of
    /// the batched renewal round renews; Redisson's default, 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watchdog_batch_size: Option<u32>,
    /// The threads, each running its own script.
    #[schemars(length(min = 1, max = crate::MAX_THREADS))]
    pub threads: Vec<ThreadSpec>,
}

/// One thread: when it starts and the steps it runs in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThreadSpec {
    /// When the thread starts, in ms.
    #[serde(default)]
    pub start_ms: u64,
    /// The lock its lock steps use.
    #[serde(default = "default_lock")]
    #[schemars(with = "String", length(min = 1))]
    pub lock: LockName,
    /// Its script.
    #[schemars(length(min = 1, max = crate::MAX_STEPS))]
    pub steps: Vec<Step>,
}

fn default_lock() -> LockName {
    LockName::new(DEFAULT_LOCK).expect("the default lock name is not empty")
}

/// One step of a thread's script.
///
/// A `try-lock` that fails skips the rest of the enclosing block (the
/// script, or the current round of a `repeat`), as the documents' Java
/// does with `if (res) { ... }`. A `lock` or `try-lock` whose call fails
/// with an error (lockcore gave up on the network, an invalid lease) skips
/// the same way, as the exception would.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case", tag = "step", deny_unknown_fields)]
pub enum Step {
    /// `lock()` or `lock(lease)`: waits as long as it takes.
    Lock {
        /// The lease in ms; none starts the watchdog.
        #[serde(default)]
        #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
        lease_ms: Option<u64>,
    },
    /// `lockInterruptibly()` or `lockInterruptibly(lease)`: like `lock`,
    /// but an `interrupt` fault ends it wherever it waits.
    LockInterruptibly {
        /// The lease in ms; none starts the watchdog.
        #[serde(default)]
        #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
        lease_ms: Option<u64>,
    },
    /// `tryLock()`, `tryLock(wait)` or `tryLock(wait, lease)`.
    TryLock {
        /// How long to keep trying, in ms; none tries once.
        #[serde(default)]
        #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
        wait_ms: Option<u64>,
        /// The lease in ms; none starts the watchdog.
        #[serde(default)]
        #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
        lease_ms: Option<u64>,
    },
    /// `lockAsync()` or `lockAsync(lease)`: like `lock`, but the wait for
    /// a held lock is a listener on the lock's channel, not the latch, and
    /// an `interrupt` does not reach it.
    LockAsync {
        /// The lease in ms; none starts the watchdog.
        #[serde(default)]
        #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
        lease_ms: Option<u64>,
    },
    /// `tryLockAsync()`, `tryLockAsync(wait)` or `tryLockAsync(wait,
    /// lease)`: `try-lock` waiting by a listener, as `lock-async` does.
    TryLockAsync {
        /// How long to keep trying, in ms; none tries once.
        #[serde(default)]
        #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
        wait_ms: Option<u64>,
        /// The lease in ms; none starts the watchdog.
        #[serde(default)]
        #[schemars(range(min = 1, max = crate::MAX_LEASE_MS))]
        lease_ms: Option<u64>,
    },
    /// Work: the thread is busy for this long in virtual time. As in the
    /// documents' experiments (where `Thread.sleep` stands for the work), a
    /// pause does not add to it: work due to end during a stop-the-world
    /// pause or starvation ends when the process runs again.
    Work {
        /// How long, in ms.
        #[schemars(range(max = crate::MAX_HORIZON_MS))]
        ms: u64,
    },
    /// A write to the protected resource, with the thread's fencing token
    /// when it has one.
    Write,
    /// `unlock()`.
    Unlock,
    /// `forceUnlock()`.
    ForceUnlock,
    /// `Thread.sleep`.
    Sleep {
        /// How long, in ms.
        #[schemars(range(max = crate::MAX_HORIZON_MS))]
        ms: u64,
    },
    /// Runs `steps` `times` times.
    Repeat {
        /// How many rounds.
        #[schemars(range(min = 1))]
        times: u32,
        /// The round's steps.
        #[schemars(length(min = 1))]
        steps: Vec<Step>,
    },
}

impl Step {
    /// Whether it takes the lock (`lock`, `lock-interruptibly`, `try-lock`,
    /// `lock-async`, `try-lock-async`).
    pub fn is_acquire(&self) -> bool {
        matches!(
            self,
            Step::Lock { .. }
                | Step::LockInterruptibly { .. }
                | Step::TryLock { .. }
                | Step::LockAsync { .. }
                | Step::TryLockAsync { .. }
        )
    }

    /// The explicit lease of an acquiring step.
    pub fn lease_ms(&self) -> Option<u64> {
        match self {
            Step::Lock { lease_ms }
            | Step::LockInterruptibly { lease_ms }
            | Step::TryLock { lease_ms, .. }
            | Step::LockAsync { lease_ms }
            | Step::TryLockAsync { lease_ms, .. } => *lease_ms,
            _ => None,
        }
    }
}
