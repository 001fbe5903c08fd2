//! `redis-restart`: Redis restarts without persistence.

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Fault, Kind};
use crate::world::World;

/// Redis restarts without persistence: every key and connection is lost;
/// commands in flight get no reply and subscriptions are gone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedisRestart {
    /// When.
    pub at_ms: u64,
}

impl Kind for RedisRestart {
    fn at_ms(&self) -> u64 {
        self.at_ms
    }

    fn end_ms(&self) -> Option<u64> {
        None
    }

    fn text(&self) -> String {
        "redis restart".to_owned()
    }

    fn begin(&self, world: &mut World<'_>, _i: usize) {
        world.close_connections();
        world.restart_redis();
    }
}

pub(crate) fn generate(_r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::RedisRestart(RedisRestart { at_ms: d.at_ms })
}
