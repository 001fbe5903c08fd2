//! A Sentinel switchover on the turmoil engine, as on the fast engine
//! (`engines::fast::switchover`): the served engine becomes a replica of
//! a promoted one and the Redis host bounces (Sentinel's `CLIENT KILL`
//! closes every connection; the clients reconnect to it); at the end it
//! bounces again and the promoted engine serves.

use fake_redis::Engine;

use super::{Loop, REDIS, observe_all};
use crate::model::history::ServerCause;

impl Loop<'_, '_> {
    /// Replica `k` (by default the most up to date) is promoted with what
    /// it had received; the served engine becomes its replica and
    /// resyncs from it, and its connections close.
    pub(super) fn demote_primary(&mut self, k: Option<u32>) {
        // Down or failing over: no live primary to demote.
        if self.redis_down > 0 {
            return;
        }
        self.replicate();
        self.replicas.primary_failed();
        let mut fresh = Engine::new(self.clock.clone());
        self.spec.redis.configure(&mut fresh, true);
        let Some((k, promoted)) = self.replicas.promote(k.map(|r| r as usize), fresh) else {
            return;
        };
        let sync = promoted.full_sync();
        self.shared.with_engine(|e| {
            e.set_replica();
            for w in &sync {
                e.apply(w);
            }
            observe_all(self.recorder, e, ServerCause::Failover);
        });
        self.promoted = Some((k, promoted));
        self.sim.bounce(REDIS);
    }

    /// The clients learn the new primary: it serves in the demoted one's
    /// place, which rejoins as its replica with the others, each
    /// resynced, and the clients reconnect.
    pub(super) fn follow_new_primary(&mut self) {
        let Some((k, promoted)) = self.promoted.take() else {
            return;
        };
        self.install_primary(k, promoted);
        if self.redis_down == 0 {
            self.sim.bounce(REDIS);
        }
    }
}
