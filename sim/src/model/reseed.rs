//! Reseeds: from an instant on, a run's in-run draws come from other
//! streams. This is how a branch of an explored run (`crate::branch`)
//! gives what follows its fork fresh randomness and keeps what came
//! before it.

use serde::{Deserialize, Serialize};

/// From `at_ms` on, each link's latencies and drops, each fault's draws
/// and the replication lags come from streams of `seed` instead of
/// those of the run's seed (or of the previous reseed). Draws made
/// before `at_ms` are the run's own, so the run up to then is the run
/// without the reseed, byte for byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reseed {
    /// The instant, in virtual ms: the first event at or after it draws
    /// from the new streams.
    pub at_ms: u64,
    /// The seed of the new streams.
    pub seed: u64,
}
