//! A cluster node's answer to "is this command mine?": Redis 7.0's
//! `getNodeByQuery` and `clusterRedirectClient` (`src/cluster.c` at tag
//! 7.0.15), with their texts and precedence.
//!
//! In order: the keys of every command (all queued ones for `EXEC`) must
//! hash to one slot, else `CROSSSLOT` (the first key's slot unserved is
//! `CLUSTERDOWN Hash slot not served` before that); a cluster whose slots
//! are not all served is `CLUSTERDOWN The cluster is down`; a slot this
//! node is migrating answers `ASK` when every key is missing here and
//! `TRYAGAIN` when only some are; a slot it is importing is served to an
//! `ASKING` client (`TRYAGAIN` for several keys not all here); a replica
//! serves reads of its master's slots to a `READONLY` client; otherwise a
//! slot served elsewhere is `MOVED <slot> <ip>:<port>`.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use bytes::Bytes;

use crate::db::Db;
use crate::slot::key_slot;
use crate::topology::{self, SharedTopology};

/// This node's place in a cluster: the shared slot table, which node it
/// is, and the slots it is migrating or importing (its own, as in Redis).
#[derive(Debug)]
pub(crate) struct ClusterRole {
    pub(crate) topology: SharedTopology,
    pub(crate) me: usize,
    /// Slot -> the node it is migrating to (`SETSLOT ... MIGRATING`).
    pub(crate) migrating: BTreeMap<u16, usize>,
    /// Slot -> the node it is importing from (`SETSLOT ... IMPORTING`).
    pub(crate) importing: BTreeMap<u16, usize>,
}

/// Why a node will not run a command, and Redis's reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Redirect {
    Moved(u16, SocketAddr),
    Ask(u16, SocketAddr),
    CrossSlot,
    TryAgain,
    Down,
    Unbound,
}

impl Redirect {
    /// `clusterRedirectClient`'s text.
    pub(crate) fn text(&self) -> String {
        match self {
            Redirect::Moved(slot, addr) => format!("MOVED {slot} {}:{}", addr.ip(), addr.port()),
            Redirect::Ask(slot, addr) => format!("ASK {slot} {}:{}", addr.ip(), addr.port()),
            Redirect::CrossSlot => "CROSSSLOT Keys in request don't hash to the same slot".into(),
            Redirect::TryAgain => "TRYAGAIN Multiple keys request during rehashing of slot".into(),
            Redirect::Down => "CLUSTERDOWN The cluster is down".into(),
            Redirect::Unbound => "CLUSTERDOWN Hash slot not served".into(),
        }
    }
}

/// What routing needs to know of the client and its request.
pub(crate) struct Query<'a> {
    /// The keys of every command, in order (all queued ones for `EXEC`).
    pub(crate) keys: Vec<&'a Bytes>,
    /// Some command writes (a replica never serves it).
    pub(crate) write: bool,
    /// The client sent `ASKING` (for this command, or in its `MULTI`).
    pub(crate) asking: bool,
    /// The client sent `READONLY`.
    pub(crate) readonly: bool,
}

impl ClusterRole {
    /// `Ok` when this node serves the query, else the redirect.
    pub(crate) fn route(&self, q: &Query<'_>, db0: &Db, now: i64) -> Result<(), Redirect> {
        let Some((&first, rest)) = q.keys.split_first() else {
            return Ok(());
        };
        let slot = key_slot(first);
        let topology = topology::lock(&self.topology);
        let Some(owner) = topology.owner(slot) else {
            return Err(Redirect::Unbound);
        };
        let migrating = owner == self.me && self.migrating.contains_key(&slot);
        let importing = !migrating && self.importing.contains_key(&slot);
        let mut multiple = false;
        for key in rest {
            if *key != first {
                if key_slot(key) != slot {
                    return Err(Redirect::CrossSlot);
                }
                multiple = true;
            }
        }
        let (mut missing, mut present) = (0, 0);
        if migrating || importing {
            for key in &q.keys {
                if db0.peek(key, now).is_some() {
                    present += 1;
                } else {
                    missing += 1;
                }
            }
        }
        if topology.slots_assigned() < usize::from(crate::slot::SLOTS) {
            return Err(Redirect::Down);
        }
        let addr_of = |node: usize| topology.node(node).map(|n| n.addr);
        if migrating && missing > 0 {
            if present > 0 {
                return Err(Redirect::TryAgain);
            }
            let to = self.migrating.get(&slot).and_then(|&n| addr_of(n));
            return to.map_or(Err(Redirect::Unbound), |a| Err(Redirect::Ask(slot, a)));
        }
        if importing && q.asking {
            return if multiple && missing > 0 {
                Err(Redirect::TryAgain)
            } else {
                Ok(())
            };
        }
        let my_master = topology.node(self.me).and_then(|n| n.master);
        if q.readonly && !q.write && my_master == Some(owner) {
            return Ok(());
        }
        if owner == self.me {
            return Ok(());
        }
        addr_of(owner).map_or(Err(Redirect::Unbound), |a| Err(Redirect::Moved(slot, a)))
    }
}
