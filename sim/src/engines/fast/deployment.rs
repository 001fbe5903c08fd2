//! Redis's deployment as the world owns it: the primary (fake-redis's
//! engine inside [`Server`]), its replicas, and the fault state that
//! stands between the clients and it (paused, down).

use fake_redis::ConnId;
use lockcore::{LockName, Purpose, RequestId};

use crate::SimSpec;
use crate::engines::fast::replication::Replicas;
use crate::engines::fast::server::Server;
use crate::engines::fast::world::Up;

/// A command whose reply Redis still owes: a `WAIT` that blocked, or a
/// command the client pipelined behind it.
#[derive(Debug, Clone)]
pub(crate) struct Owed {
    /// The client (index, life) it is owed to.
    pub(crate) client: (u32, u32),
    pub(crate) request: RequestId,
    pub(crate) purpose: Purpose,
    pub(crate) lock: LockName,
    /// The primary's keyspace version before the command ran: whatever
    /// changed the key since then is this command's doing, or a later
    /// one's on the connection, or an expiry.
    pub(crate) since: u64,
    /// The other locks a batched renewal round names: Redis changed their
    /// keys too (see `execution::run`).
    pub(crate) others: crate::engines::fast::renewal::Locks,
}

/// The primary, its replicas, and whether it serves now.
pub(crate) struct Deployment {
    pub(crate) server: Server,
    /// The primary's replicas (none unless the spec asks).
    pub(crate) replicas: Replicas,
    /// Open `redis-pause` windows.
    pub(crate) paused: u32,
    /// Open windows in which Redis is down (connections refused):
    /// `redis-down` and a failover's.
    pub(crate) down: u32,
    /// Commands that reached Redis while it was paused, in order: each
    /// client, life, connection generation and message.
    pub(crate) waiting: Vec<(u32, u32, u32, Up)>,
    /// The replies owed, each under its command connection (and the
    /// server's connection epoch, as a fresh engine numbers its connections
    /// anew), in the order the commands came. One list, not a queue per
    /// connection: a run owes a few replies at a time, and a map of queues
    /// made and dropped a node and a queue for each (1% of a seed).
    owed: Vec<((u32, ConnId), Owed)>,
    /// When Redis is next woken for a blocked client's timeout.
    pub(crate) tick_at: Option<crate::SimTime>,
    /// During a switchover, the promoted replica (its place among the
    /// replicas, its engine) that no client has reached yet.
    pub(crate) promoted: Option<(usize, fake_redis::Engine)>,
}

impl Deployment {
    /// `spec`'s Redis: an empty primary and its replicas; in a cluster
    /// (`[sim.redis] shards`), its masters in slot order, the slots split
    /// as `redis-cli --cluster create` splits them; independent masters
    /// (`masters`), each an empty Redis of its own.
    pub(crate) fn all(spec: &SimSpec) -> Vec<Deployment> {
        let shards = usize::from(spec.redis.shards);
        if shards == 0 {
            // Independent masters share nothing: each is a Redis alone.
            let masters = usize::from(spec.redis.master_count());
            return (0..masters)
                .map(|m| Deployment::new(spec, m as u16, Server::new(&spec.redis)))
                .collect();
        }
        let mut table = fake_redis::Topology::new();
        for (i, slots) in fake_redis::Topology::even_split(shards)
            .into_iter()
            .enumerate()
        {
            let master = table.add_master(crate::model::cluster::node_addr(i as u16));
            table.assign(slots, master);
        }
        let topology = std::sync::Arc::new(std::sync::Mutex::new(table));
        (0..shards)
            .map(|me| {
                let server = Server::in_cluster(&spec.redis, topology.clone(), me);
                Deployment::new(spec, me as u16, server)
            })
            .collect()
    }

    fn new(spec: &SimSpec, shard: u16, server: Server) -> Deployment {
        Deployment {
            replicas: Replicas::new(spec, shard, || server.new_engine()),
            server,
            paused: 0,
            down: 0,
            waiting: Vec::new(),
            owed: Vec::new(),
            tick_at: None,
            promoted: None,
        }
    }

    /// Redis owes `conn` the reply to `owed`, after those owed before.
    pub(crate) fn owe(&mut self, conn: ConnId, owed: Owed) {
        let epoch = self.server.connections;
        // Connections of an older epoch are gone, and their replies with them.
        self.owed.retain(|((e, _), _)| *e == epoch);
        self.owed.push(((epoch, conn), owed));
    }

    /// Every reply still owed, oldest connection first: the connections
    /// are closing, so they will never be given.
    pub(crate) fn forfeit(&mut self) -> Vec<Owed> {
        let mut owed = std::mem::take(&mut self.owed);
        // Stable: a connection's replies stay in the order they came.
        owed.sort_by_key(|(key, _)| *key);
        owed.into_iter().map(|(_, o)| o).collect()
    }

    /// The oldest reply owed to `conn`, now given.
    pub(crate) fn pay(&mut self, conn: ConnId) -> Option<Owed> {
        let key = (self.server.connections, conn);
        let i = self.owed.iter().position(|(k, _)| *k == key)?;
        Some(self.owed.remove(i).1)
    }
}
