//! Redis's deployment as the world owns it: the primary (fake-redis's
//! engine inside [`Server`]), its replicas, and the fault state that
//! stands between the clients and it (paused, down).

use crate::SimSpec;
use crate::replication::Replicas;
use crate::server::Server;
use crate::world::Up;

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
}

impl Deployment {
    /// `spec`'s Redis: an empty primary and its replicas.
    pub(crate) fn new(spec: &SimSpec) -> Deployment {
        let server = Server::new(spec.redis.replicas as usize);
        Deployment {
            replicas: Replicas::new(spec, || server.new_engine()),
            server,
            paused: 0,
            down: 0,
            waiting: Vec::new(),
        }
    }
}
