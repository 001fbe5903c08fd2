//! `starve`: CPU starvation of one client.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Fault, Invalid, Kind, range};

/// CPU starvation: during the window each of the client's timers and task
/// wake-ups runs late by a delay drawn from the range (from the fault's
/// own random stream).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Starve {
    /// The client.
    pub client: String,
    /// When the window opens.
    pub at_ms: u64,
    /// How long it lasts.
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub duration_ms: u64,
    /// The shortest extra delay.
    #[schemars(range(max = crate::MAX_DELAY_MS))]
    pub min_delay_ms: u64,
    /// The longest extra delay.
    #[schemars(range(max = crate::MAX_DELAY_MS))]
    pub max_delay_ms: u64,
}

impl Kind for Starve {
    client_window!();

    fn check(&self, _horizon_ms: u64) -> Result<(), Invalid> {
        range("min_delay_ms", self.min_delay_ms, self.max_delay_ms)
    }

    /// A timer due just before the window ends fires up to the longest
    /// delay after it.
    fn effect_end_ms(&self) -> Option<u64> {
        self.end_ms().map(|e| e.saturating_add(self.max_delay_ms))
    }

    fn text(&self) -> String {
        format!(
            "starve {} {}ms (late {}..{}ms)",
            self.client, self.duration_ms, self.min_delay_ms, self.max_delay_ms
        )
    }

    fn timer_delay(&self) -> Option<(u64, u64)> {
        Some((self.min_delay_ms, self.max_delay_ms))
    }
}

pub(crate) fn generate(r: &mut ChaCha8Rng, d: Draw) -> Fault {
    let min_delay_ms = r.random_range(0..=1_000);
    Fault::Starve(Starve {
        client: d.client,
        at_ms: d.at_ms,
        duration_ms: d.duration_ms,
        min_delay_ms,
        max_delay_ms: min_delay_ms + r.random_range(0..=5_000),
    })
}
