//! `pause`: a stop-the-world pause of one client process.

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Kind, Strike};

/// A stop-the-world pause: none of the client's code runs; its timers
/// fire late and replies wait until it resumes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Pause {
    /// The client.
    pub client: String,
    /// When.
    pub at_ms: u64,
    /// For how long.
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub duration_ms: u64,
}

impl Kind for Pause {
    client_window!();

    fn text(&self) -> String {
        format!("pause {} {}ms", self.client, self.duration_ms)
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.pause_client(s, true);
    }

    fn end(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.pause_client(s, false);
    }
}

pub(crate) fn generate(_r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::Pause(Pause {
        client: d.client,
        at_ms: d.at_ms,
        duration_ms: d.duration_ms,
    })
}
