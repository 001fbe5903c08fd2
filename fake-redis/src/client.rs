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
    /// Bytes of arguments queued, bounded by [`Multi::MAX_BYTES`].
    pub(crate) bytes: usize,
}

impl Multi {
    /// Most bytes a transaction may queue (as much as Redis's default
    /// `client-query-buffer-limit`); past it the client is closed, so a
    /// client cannot grow the server without end.
    pub(crate) const MAX_BYTES: usize = 1024 * 1024 * 1024;
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

/// A client waiting in `BLPOP`/`BRPOP` or `WAIT`.
#[derive(Debug, Clone)]
pub(crate) struct Blocked {
    /// What it waits for.
    pub(crate) on: BlockedOn,
    /// When it gives up (engine clock, ms); `None` waits forever.
    pub(crate) deadline: Option<i64>,
}

/// What a blocked client waits for.
#[derive(Debug, Clone)]
pub(crate) enum BlockedOn {
    /// An element in one of `keys` (of database `db`), popped from the
    /// head (`BLPOP`, `left`) or the tail (`BRPOP`).
    List {
        db: usize,
        keys: Vec<Bytes>,
        left: bool,
    },
    /// `numreplicas` replicas acknowledging the replication offset
    /// `target` (`WAIT`), or fsyncing it to their AOF (`WAITAOF`, `aof`).
    Replicas {
        target: u64,
        numreplicas: u64,
        aof: bool,
    },
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
    /// Waiting in `BLPOP`/`BRPOP` or `WAIT`.
    pub(crate) blocked: Option<Blocked>,
    /// Commands that arrived while blocked, run once it is served (Redis
    /// leaves them in the query buffer), and their size in bytes.
    pub(crate) pending: std::collections::VecDeque<Vec<Bytes>>,
    pub(crate) pending_bytes: usize,
    /// Running the queue of `EXEC` (a blocking pop does not block there).
    pub(crate) in_exec: bool,
    /// Sent `ASKING`: the next command (or the transaction it opens) may
    /// use a slot this cluster node is importing.
    pub(crate) asking: bool,
    /// Sent `READONLY`: a replica serves it reads of its master's slots.
    pub(crate) readonly: bool,
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
            blocked: None,
            pending: std::collections::VecDeque::new(),
            pending_bytes: 0,
            in_exec: false,
            asking: false,
            readonly: false,
        }
    }
}
