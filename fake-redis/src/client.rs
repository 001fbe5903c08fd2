//! One connection's own state, as Redis keeps it in its `client` struct.

use bytes::Bytes;

use crate::{ConnId, Protocol};

/// A transaction being queued between `MULTI` and `EXEC`.
#[derive(Debug, Default)]
pub(crate) struct Multi {
    /// The queued commands, in order.
    pub(crate) queue: Vec<Vec<Bytes>>,
    /// A command was refused while queueing: `EXEC` aborts (`EXECABORT`).
    pub(crate) refused: bool,
}

/// A key `WATCH`ed by a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Watched {
    pub(crate) db: usize,
    pub(crate) key: Bytes,
    /// The key's expiry when it was watched, if it was live then: its
    /// expiring by `EXEC` time counts as a change (Redis 7's
    /// `isWatchedKeyExpired`).
    pub(crate) expires_at: Option<i64>,
}

/// A connection's state.
#[derive(Debug)]
pub(crate) struct Client {
    pub(crate) id: ConnId,
    pub(crate) protocol: Protocol,
    /// The selected database.
    pub(crate) db: usize,
    /// `CLIENT SETNAME`'s name.
    pub(crate) name: Option<Bytes>,
    /// `CLIENT SETINFO LIB-NAME` / `LIB-VER`.
    pub(crate) lib_name: Option<Bytes>,
    pub(crate) lib_ver: Option<Bytes>,
    /// Passed `AUTH` (or no password is required).
    pub(crate) authenticated: bool,
    pub(crate) multi: Option<Multi>,
    pub(crate) watched: Vec<Watched>,
    /// A watched key changed: the next `EXEC` fails.
    pub(crate) dirty_cas: bool,
    /// When it connected (engine clock, ms), for `CLIENT LIST`'s age.
    pub(crate) since_ms: i64,
    /// The last command's name, for `CLIENT LIST`'s `cmd=`.
    pub(crate) last_cmd: String,
}

impl Client {
    pub(crate) fn new(id: ConnId, now: i64) -> Client {
        Client {
            id,
            protocol: Protocol::Resp2,
            db: 0,
            name: None,
            lib_name: None,
            lib_ver: None,
            authenticated: false,
            multi: None,
            watched: Vec::new(),
            dirty_cas: false,
            since_ms: now,
            last_cmd: "NULL".to_owned(),
        }
    }
}
