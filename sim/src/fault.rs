//! Faults: timed events that break the world on purpose. They are data, so a
//! plan can be printed, saved, shrunk and replayed.

use serde::{Deserialize, Serialize};

/// A list of timed faults. Order does not matter; times do.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct FaultPlan(pub Vec<Fault>);

/// One fault. Clients are named as in their [`crate::ClientSpec`]; times
/// and durations are in virtual ms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "fault", deny_unknown_fields)]
pub enum Fault {
    /// The process dies: its threads, timers and connections are gone.
    /// With `restart_after_ms` it comes back as a new client (new uuid,
    /// nothing remembered) and runs its scripts again from the start.
    Crash {
        /// The client.
        client: String,
        /// When.
        at_ms: u64,
        /// Restart after this long, if set.
        #[serde(default)]
        restart_after_ms: Option<u64>,
    },
    /// A stop-the-world pause: none of the client's code runs; its timers
    /// fire late and replies wait until it resumes.
    Pause {
        /// The client.
        client: String,
        /// When.
        at_ms: u64,
        /// For how long.
        duration_ms: u64,
    },
    /// CPU starvation: during the window each of the client's timers and
    /// task wake-ups runs late by a delay drawn from the range.
    Starve {
        /// The client.
        client: String,
        /// When the window opens.
        at_ms: u64,
        /// How long it lasts.
        duration_ms: u64,
        /// The shortest extra delay.
        min_delay_ms: u64,
        /// The longest extra delay.
        max_delay_ms: u64,
    },
    /// Every message between the client and Redis is dropped.
    Partition {
        /// The client.
        client: String,
        /// When.
        at_ms: u64,
        /// For how long.
        duration_ms: u64,
    },
    /// Each message between the client and Redis is dropped with this
    /// probability.
    DropRate {
        /// The client.
        client: String,
        /// When.
        at_ms: u64,
        /// For how long.
        duration_ms: u64,
        /// Between 0 and 1.
        probability: f64,
    },
    /// The client's link gets another latency range.
    Latency {
        /// The client.
        client: String,
        /// When.
        at_ms: u64,
        /// For how long.
        duration_ms: u64,
        /// The shortest one-way latency.
        min_ms: u64,
        /// The longest one-way latency.
        max_ms: u64,
    },
    /// Redis restarts without persistence: every key and connection is lost.
    RedisRestart {
        /// When.
        at_ms: u64,
    },
    /// Redis stops executing commands (as `CLIENT PAUSE`); they wait.
    RedisPause {
        /// When.
        at_ms: u64,
        /// For how long.
        duration_ms: u64,
    },
}

impl Fault {
    /// The client it hits, if it hits one client.
    pub fn client(&self) -> Option<&str> {
        match self {
            Fault::Crash { client, .. }
            | Fault::Pause { client, .. }
            | Fault::Starve { client, .. }
            | Fault::Partition { client, .. }
            | Fault::DropRate { client, .. }
            | Fault::Latency { client, .. } => Some(client),
            Fault::RedisRestart { .. } | Fault::RedisPause { .. } => None,
        }
    }

    /// When it strikes, in virtual ms.
    pub fn at_ms(&self) -> u64 {
        match self {
            Fault::Crash { at_ms, .. }
            | Fault::Pause { at_ms, .. }
            | Fault::Starve { at_ms, .. }
            | Fault::Partition { at_ms, .. }
            | Fault::DropRate { at_ms, .. }
            | Fault::Latency { at_ms, .. }
            | Fault::RedisRestart { at_ms }
            | Fault::RedisPause { at_ms, .. } => *at_ms,
        }
    }

    /// When a windowed fault ends (a crash ends at its restart, if any);
    /// `None` for a fault that is an instant.
    pub fn end_ms(&self) -> Option<u64> {
        match self {
            Fault::Crash {
                at_ms,
                restart_after_ms,
                ..
            } => restart_after_ms.map(|r| at_ms.saturating_add(r)),
            Fault::Pause {
                at_ms, duration_ms, ..
            }
            | Fault::Starve {
                at_ms, duration_ms, ..
            }
            | Fault::Partition {
                at_ms, duration_ms, ..
            }
            | Fault::DropRate {
                at_ms, duration_ms, ..
            }
            | Fault::Latency {
                at_ms, duration_ms, ..
            }
            | Fault::RedisPause {
                at_ms, duration_ms, ..
            } => Some(at_ms.saturating_add(*duration_ms)),
            Fault::RedisRestart { .. } => None,
        }
    }

    /// Whether the window `[at, end)` covers `ms` (instants cover nothing).
    pub fn covers_ms(&self, ms: u64) -> bool {
        match self.end_ms() {
            Some(end) => self.at_ms() <= ms && ms < end,
            None => false,
        }
    }
}
