//! `redis-pause`: Redis executes no command for a while.

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Kind, Strike};

/// Redis stops executing commands (as `CLIENT PAUSE`); they wait, and run
/// in arrival order when it ends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedisPause {
    /// When.
    pub at_ms: u64,
    /// For how long.
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub duration_ms: u64,
}

impl Kind for RedisPause {
    redis_window!();

    fn text(&self) -> String {
        format!("redis pause {}ms", self.duration_ms)
    }

    fn free_delay_ms(&self) -> Option<u64> {
        Some(self.duration_ms)
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.pause_redis(s, true, self.duration_ms, None);
    }

    fn end(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.pause_redis(s, false, self.duration_ms, None);
    }
}

pub(crate) fn generate(r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::RedisPause(RedisPause {
        at_ms: d.at_ms,
        duration_ms: crate::model::rng::between(r, 10, 5_000),
    })
}
