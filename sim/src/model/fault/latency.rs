//! `latency`: a client's link gets another latency range.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Fault, Invalid, Kind, LinkRule, range};
use crate::LatencyRange;

/// The client's link draws each message's one-way latency from this range
/// while the window lasts (the last covering window in plan order wins).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Latency {
    /// The client.
    pub client: String,
    /// When.
    pub at_ms: u64,
    /// For how long.
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub duration_ms: u64,
    /// The shortest one-way latency.
    #[schemars(range(max = crate::MAX_DELAY_MS))]
    pub min_ms: u64,
    /// The longest one-way latency.
    #[schemars(range(max = crate::MAX_DELAY_MS))]
    pub max_ms: u64,
}

impl Kind for Latency {
    client_window!();

    fn check(&self, _horizon_ms: u64) -> Result<(), Invalid> {
        range("min_ms", self.min_ms, self.max_ms)
    }

    /// A message sent just before the window ends arrives up to the
    /// longest latency after it.
    fn effect_end_ms(&self) -> Option<u64> {
        self.end_ms().map(|e| e.saturating_add(self.max_ms))
    }

    fn text(&self) -> String {
        format!(
            "latency {} {}ms ({}..{}ms)",
            self.client, self.duration_ms, self.min_ms, self.max_ms
        )
    }

    fn link(&self) -> LinkRule {
        LinkRule::Latency(LatencyRange {
            min_ms: self.min_ms,
            max_ms: self.max_ms,
        })
    }
}

pub(crate) fn generate(r: &mut ChaCha8Rng, d: Draw) -> Fault {
    let min_ms = r.random_range(0..=200);
    Fault::Latency(Latency {
        client: d.client,
        at_ms: d.at_ms,
        duration_ms: d.duration_ms,
        min_ms,
        max_ms: min_ms + r.random_range(0..=2_000),
    })
}
