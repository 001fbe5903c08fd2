//! `partition`: a client's link to Redis carries nothing until it heals.

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Fault, Kind, LinkRule};

/// Every packet between the client and Redis, both ways, is dropped while
/// the window lasts; the connections stay open, so what was sent arrives
/// at TCP's first retransmission after the heal (`crate::model::retransmission`),
/// or is lost with the connection if the kernel gives up first (~924.6 s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Partition {
    /// The client.
    pub client: String,
    /// When.
    pub at_ms: u64,
    /// For how long.
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub duration_ms: u64,
}

impl Kind for Partition {
    client_window!();

    /// What is sent at `t` in the window arrives at `t` plus the
    /// retransmission after the heal, which for the window's length `d`
    /// is at most the end plus `delivered_after(d)`; a stall the kernel
    /// gives up on ends at that bound too.
    fn effect_end_ms(&self) -> Option<u64> {
        let d = std::time::Duration::from_millis(self.duration_ms);
        let after = crate::model::retransmission::delivered_after(d).unwrap_or(d);
        let after = u64::try_from(after.as_millis()).unwrap_or(u64::MAX);
        self.end_ms().map(|e| e.saturating_add(after))
    }

    fn text(&self) -> String {
        format!("partition {} {}ms", self.client, self.duration_ms)
    }

    fn link(&self) -> LinkRule {
        LinkRule::Retransmit
    }
}

pub(crate) fn generate(_r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::Partition(Partition {
        client: d.client,
        at_ms: d.at_ms,
        duration_ms: d.duration_ms,
    })
}
