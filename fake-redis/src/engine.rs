//! The command engine: one Redis server's state, driven one command at a time.

use std::sync::Arc;

use bytes::Bytes;

use crate::{Clock, Value};

/// Identifies one client connection to an [`Engine`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConnId(pub u64);

/// Which RESP version a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocol {
    /// RESP2, every connection's start.
    #[default]
    Resp2,
    /// RESP3, after `HELLO 3`.
    Resp3,
}

/// What one command produced.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Response {
    /// The replies to the calling connection, in order. Most commands give
    /// one; `SUBSCRIBE a b` gives one confirmation per channel.
    pub replies: Vec<Value>,
    /// Pub/sub messages for connections (possibly the caller), in the order
    /// Redis would write them.
    pub deliveries: Vec<(ConnId, Value)>,
    /// The connection must be closed once the replies are written (`QUIT`).
    pub close: bool,
}

/// One Redis server: keyspace, scripts, pub/sub and per-connection state.
///
/// The engine is sans-IO: it never reads the wall clock (time comes from
/// the injected [`Clock`]), spawns nothing and does no I/O, so the same code
/// runs behind the RESP server and inside the simulator.
pub struct Engine {
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").finish_non_exhaustive()
    }
}

impl Engine {
    /// An empty server reading time from `clock`.
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Self { clock }
    }

    /// Registers a new connection (RESP2, no subscriptions).
    pub fn connect(&mut self) -> ConnId {
        let _ = &self.clock;
        todo!("fake-redis issue")
    }

    /// Forgets a connection and its subscriptions.
    pub fn disconnect(&mut self, conn: ConnId) {
        let _ = conn;
        todo!("fake-redis issue")
    }

    /// The protocol `conn` speaks now.
    pub fn protocol(&self, conn: ConnId) -> Protocol {
        let _ = conn;
        todo!("fake-redis issue")
    }

    /// Runs one command (`args[0]` is its name, any case) for `conn`.
    pub fn execute(&mut self, conn: ConnId, args: Vec<Bytes>) -> Response {
        let _ = (conn, args);
        todo!("fake-redis issue")
    }
}
