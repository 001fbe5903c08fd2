//! `drop-rate`: a client's link loses messages at random.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Fault, Invalid, Kind, LinkRule};

/// Each message between the client and Redis is dropped with this
/// probability (drawn from the fault's own random stream).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DropRate {
    /// The client.
    pub client: String,
    /// When.
    pub at_ms: u64,
    /// For how long.
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub duration_ms: u64,
    /// Between 0 and 1.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub probability: f64,
}

impl Kind for DropRate {
    client_window!();

    fn check(&self, _horizon_ms: u64) -> Result<(), Invalid> {
        if (0.0..=1.0).contains(&self.probability) {
            Ok(())
        } else {
            Err((
                "probability",
                format!("must be between 0 and 1, got {}", self.probability),
            ))
        }
    }

    fn text(&self) -> String {
        format!(
            "drop {} {}ms (p={})",
            self.client, self.duration_ms, self.probability
        )
    }

    fn link(&self) -> LinkRule {
        LinkRule::DropChance(self.probability)
    }
}

pub(crate) fn generate(r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::DropRate(DropRate {
        client: d.client,
        at_ms: d.at_ms,
        duration_ms: d.duration_ms,
        probability: f64::from(r.random_range(1..=9u8)) / 10.0,
    })
}
