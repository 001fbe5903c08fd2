//! `partition`: a client's link to Redis drops everything.

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Fault, Kind, LinkRule};

/// Every message between the client and Redis, both ways, is dropped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Partition {
    /// The client.
    pub client: String,
    /// When.
    pub at_ms: u64,
    /// For how long.
    pub duration_ms: u64,
}

impl Kind for Partition {
    client_window!();

    fn text(&self) -> String {
        format!("partition {} {}ms", self.client, self.duration_ms)
    }

    fn link(&self) -> LinkRule {
        LinkRule::Drop("partition")
    }
}

pub(crate) fn generate(_r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::Partition(Partition {
        client: d.client,
        at_ms: d.at_ms,
        duration_ms: d.duration_ms,
    })
}
