//! Why the network lost a message: the oracle tells a loss the client
//! hears of at once from one it learns of only at its response timeout.

use serde::{Deserialize, Serialize};

/// Why a message was lost on its way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DropCause {
    /// A `drop` fault lost it.
    Fault,
    /// The client has no link (a process the network does not know).
    NoLink,
    /// A partition outlasted TCP's retransmissions: the connection gave up.
    Partition,
    /// It went out on a connection Redis had closed since (a restart, a
    /// failover, a switchover): nothing answers it.
    ConnectionLost,
    /// Redis was down: the connection was refused, and the client hears
    /// of it a one-way delay later, as a failed reply.
    Refused,
}

impl DropCause {
    /// Whether the sender hears of the loss from Redis (a refused
    /// connection fails the request); otherwise only its response
    /// timeout tells it, and the command layer resends after that.
    pub fn answered(self) -> bool {
        self == DropCause::Refused
    }
}

impl std::fmt::Display for DropCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DropCause::Fault => "drop",
            DropCause::NoLink => "no link",
            DropCause::Partition => "partition outlasting TCP's retries",
            DropCause::ConnectionLost => "connection lost",
            DropCause::Refused => "redis down: refused",
        })
    }
}
