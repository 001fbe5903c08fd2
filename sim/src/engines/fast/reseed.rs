//! Carrying out a spec's reseeds ([`crate::model::reseed::Reseed`]): at
//! its instant, every stream the world draws from during the run is
//! replaced by the same stream of the reseed's seed.

use crate::SimTime;
use crate::engines::fast::world::World;
use crate::model::rng::{self, Stream};

impl World<'_> {
    /// Applies the reseeds due by `at` (the instant of the event about to
    /// run), once each, before that event draws anything.
    pub(crate) fn reseed_due(&mut self, at: SimTime) {
        while let Some(r) = self.spec.reseeds.get(self.reseeded) {
            if SimTime::from_ms(r.at_ms) > at {
                return;
            }
            let seed = r.seed;
            self.reseeded += 1;
            self.net.reseed(seed);
            for (i, fault) in self.fault_rngs.iter_mut().enumerate() {
                *fault = rng::stream(seed, Stream::Fault(i));
            }
            for redis in &mut self.redis {
                redis.replicas.reseed(seed);
            }
        }
    }
}
