//! A Sentinel switchover on the fast engine: the primary is demoted to a
//! replica of a promoted one, which closes the clients' connections (they
//! reconnect to it, the address they know), and later the clients move to
//! the new primary.

use crate::engines::fast::world::World;
use crate::model::history::ServerCause;

impl World<'_> {
    /// Replica `k` (by default the most up to date) is promoted with what
    /// it had received; the primary becomes its replica and resyncs from
    /// it. Sentinel demotes it with one transaction that ends `CLIENT KILL
    /// TYPE normal` and `CLIENT KILL TYPE pubsub` (Redis 7.0.15's
    /// `sentinelSendSlaveOf`): every client connection closes, a command
    /// in flight fails, and the clients reconnect to the address they
    /// know, now a replica, where their writes meet `READONLY` and their
    /// `WAIT`s the replica's error. The new primary waits aside: no client
    /// reaches it until [`World::follow_new_primary`].
    pub(crate) fn demote_primary(&mut self, k: Option<usize>) {
        // Down or failing over: no live primary to demote.
        if self.redis[0].down > 0 {
            return;
        }
        // What the primary sent before the switch still counts; what was
        // on its way is lost, as in a failover (the replica's full resync
        // replaces it).
        self.replicate();
        self.redis[0].replicas.primary_failed();
        let fresh = self.redis[0].server.new_engine();
        let Some((k, promoted)) = self.redis[0].replicas.promote(k, fresh) else {
            return;
        };
        self.redis[0].server.set_time(self.now);
        let sync = promoted.full_sync();
        let demoted = self.redis[0].server.primary_mut();
        demoted.set_replica();
        for w in &sync {
            demoted.apply(w);
        }
        self.redis[0].promoted = Some((k, promoted));
        self.close_connections();
        self.redis[0].server.drop_connections();
        self.redis[0].waiting.clear();
        self.observe_all(ServerCause::Failover);
    }

    /// The clients learn the new primary (Redisson's `+switch-master`):
    /// their connections to the demoted one close, and they reconnect to
    /// the new primary; the demoted one stays its replica, with the
    /// others, each resynced.
    pub(crate) fn follow_new_primary(&mut self) {
        let Some((k, promoted)) = self.redis[0].promoted.take() else {
            return;
        };
        self.close_connections();
        self.redis[0].server.drop_connections();
        let old = self.redis[0].server.replace(promoted);
        let sync = self.redis[0].server.full_sync(self.now);
        self.redis[0].replicas.rejoin(k, old, &sync);
        self.redis[0].waiting.clear();
        self.observe_all(ServerCause::Failover);
    }
}
