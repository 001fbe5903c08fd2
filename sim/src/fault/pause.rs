//! `pause`: a stop-the-world pause of one client process.

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Fault, Kind};
use crate::world::World;

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

    fn begin(&self, world: &mut World<'_>, _i: usize) {
        if let Some(c) = world.client_index(&self.client) {
            world.procs[c].paused += 1;
        }
    }

    fn end(&self, world: &mut World<'_>, _i: usize) {
        let Some(c) = world.client_index(&self.client) else {
            return;
        };
        let p = &mut world.procs[c];
        p.paused = p.paused.saturating_sub(1);
        if p.paused == 0 {
            // Everything that fell due during the pause runs now, in its
            // original order.
            let deferred = std::mem::take(&mut p.deferred);
            for ev in deferred {
                world.handle(ev);
            }
        }
    }
}

pub(crate) fn generate(_r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::Pause(Pause {
        client: d.client,
        at_ms: d.at_ms,
        duration_ms: d.duration_ms,
    })
}
