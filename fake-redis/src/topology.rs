//! A Redis Cluster's configuration as every node sees it: the nodes (id,
//! address, master or replica of which), and which master serves each of
//! the 16,384 slots.
//!
//! The nodes of a [`crate::FakeCluster`] share one [`Topology`] behind a
//! lock ([`SharedTopology`]): what a real cluster agrees on by gossip
//! (a slot's new owner after `CLUSTER SETSLOT ... NODE`, a failover) every
//! node sees at once. A node's own migration states (`MIGRATING`,
//! `IMPORTING`) are its own, as in Redis, and live in its engine.

use std::net::SocketAddr;
use std::ops::RangeInclusive;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::slot::SLOTS;

/// One node of the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterNode {
    /// Its 40-character hex id (`CLUSTER MYID`).
    pub id: String,
    /// Where clients reach it (`MOVED`, `ASK`, `CLUSTER NODES`).
    pub addr: SocketAddr,
    /// The master it replicates (an index into [`Topology::nodes`]), or
    /// `None` for a master.
    pub master: Option<usize>,
    /// Its config epoch (a replica reports its master's).
    pub epoch: u64,
    /// `<id> <ip:port@cport>`, the start of its `CLUSTER NODES` line,
    /// which every client's topology scan reads once a second.
    head: String,
}

impl ClusterNode {
    /// `<id> <ip:port@cport>`: how its `CLUSTER NODES` line begins.
    pub fn head(&self) -> &str {
        &self.head
    }

    /// Its cluster bus port (`port + 10000`, Redis's default offset).
    pub fn bus_port(&self) -> u32 {
        u32::from(self.addr.port()) + 10_000
    }
}

/// The cluster's nodes and slot owners.
#[derive(Debug, Clone)]
pub struct Topology {
    nodes: Vec<ClusterNode>,
    /// The master serving each slot (an index into `nodes`).
    slots: Vec<Option<usize>>,
    /// `slots` as runs, worked out once after each change: a cluster
    /// client reads them at every topology scan (`CLUSTER NODES`), once a
    /// second.
    runs: std::sync::OnceLock<Vec<(u16, u16, usize)>>,
}

/// Two topologies are equal by their nodes and slot owners (the runs are
/// a cache of the owners).
impl PartialEq for Topology {
    fn eq(&self, other: &Self) -> bool {
        self.nodes == other.nodes && self.slots == other.slots
    }
}

impl Eq for Topology {}

/// A [`Topology`] shared by the nodes of one cluster.
pub type SharedTopology = Arc<Mutex<Topology>>;

impl Default for Topology {
    fn default() -> Self {
        Topology {
            nodes: Vec::new(),
            slots: vec![None; usize::from(SLOTS)],
            runs: std::sync::OnceLock::new(),
        }
    }
}

impl Topology {
    /// An empty cluster: no nodes, no slot served.
    pub fn new() -> Topology {
        Topology::default()
    }

    /// Adds a master at `addr`; its index. Its id is derived from the
    /// address, so a layout gives the same ids every run.
    pub fn add_master(&mut self, addr: SocketAddr) -> usize {
        let epoch = self.nodes.iter().map(|n| n.epoch).max().unwrap_or(0) + 1;
        self.push(addr, None, epoch)
    }

    /// Adds a replica of `master` at `addr`; its index, or `None` when
    /// `master` is no master of this cluster.
    pub fn add_replica(&mut self, addr: SocketAddr, master: usize) -> Option<usize> {
        let node = self.nodes.get(master)?;
        if node.master.is_some() {
            return None;
        }
        let epoch = node.epoch;
        Some(self.push(addr, Some(master), epoch))
    }

    fn push(&mut self, addr: SocketAddr, master: Option<usize>, epoch: u64) -> usize {
        let id = crate::sha1_hex(format!("fake-redis cluster node {addr}").as_bytes());
        let head = format!(
            "{id} {}:{}@{}",
            addr.ip(),
            addr.port(),
            u32::from(addr.port()) + 10_000
        );
        self.nodes.push(ClusterNode {
            id,
            addr,
            master,
            epoch,
            head,
        });
        self.nodes.len() - 1
    }

    /// Makes master `node` serve `slots` (`CLUSTER ADDSLOTSRANGE`, or the
    /// end of a migration). Slots past the last are ignored.
    pub fn assign(&mut self, slots: RangeInclusive<u16>, node: usize) {
        for slot in slots {
            if let Some(owner) = self.slots.get_mut(usize::from(slot)) {
                *owner = Some(node);
            }
        }
        self.runs = std::sync::OnceLock::new();
    }

    /// The master serving `slot`, if any.
    pub fn owner(&self, slot: u16) -> Option<usize> {
        self.slots.get(usize::from(slot)).copied().flatten()
    }

    /// Every node, masters and replicas, in the order they were added.
    pub fn nodes(&self) -> &[ClusterNode] {
        &self.nodes
    }

    /// Node `index`.
    pub fn node(&self, index: usize) -> Option<&ClusterNode> {
        self.nodes.get(index)
    }

    /// The node whose id is `id`.
    pub fn find(&self, id: &[u8]) -> Option<usize> {
        self.nodes.iter().position(|n| n.id.as_bytes() == id)
    }

    /// The replicas of `master`, in the order they were added.
    pub fn replicas_of(&self, master: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.nodes.len()).filter(move |&i| self.nodes[i].master == Some(master))
    }

    /// Runs of consecutive slots with one owner: `(first, last, owner)`,
    /// in slot order (`CLUSTER SLOTS`' ranges).
    pub fn ranges(&self) -> Vec<(u16, u16, usize)> {
        self.runs.get_or_init(|| self.compute_runs()).clone()
    }

    fn compute_runs(&self) -> Vec<(u16, u16, usize)> {
        let mut out: Vec<(u16, u16, usize)> = Vec::new();
        for (slot, owner) in (0..SLOTS).zip(&self.slots) {
            let Some(owner) = *owner else { continue };
            match out.last_mut() {
                Some(run) if run.2 == owner && run.1 + 1 == slot => run.1 = slot,
                _ => out.push((slot, slot, owner)),
            }
        }
        out
    }

    /// How many slots are served.
    pub fn slots_assigned(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// Makes replica `replica` the master of its shard (a failover): it
    /// takes its master's slots with a new epoch, and the old master and
    /// the other replicas replicate it. Does nothing for a master.
    pub fn promote(&mut self, replica: usize) {
        let Some(old) = self.nodes.get(replica).and_then(|n| n.master) else {
            return;
        };
        let epoch = self.nodes.iter().map(|n| n.epoch).max().unwrap_or(0) + 1;
        for owner in self.slots.iter_mut().filter(|s| **s == Some(old)) {
            *owner = Some(replica);
        }
        self.runs = std::sync::OnceLock::new();
        for node in &mut self.nodes {
            if node.master == Some(old) {
                node.master = Some(replica);
            }
        }
        self.nodes[old].master = Some(replica);
        self.nodes[replica].master = None;
        self.nodes[replica].epoch = epoch;
    }

    /// Gives `node` a config epoch newer than any (Redis's
    /// `clusterBumpConfigEpochWithoutConsensus`, after an import).
    pub fn bump_epoch(&mut self, node: usize) {
        let epoch = self.nodes.iter().map(|n| n.epoch).max().unwrap_or(0) + 1;
        if let Some(n) = self.nodes.get_mut(node) {
            n.epoch = epoch;
        }
    }

    /// Redis-cli's split of the slots among `masters` masters
    /// (`redis-cli --cluster create`): `16384 / n` each, rounded, the
    /// last taking the rest. For 3: 0-5460, 5461-10922, 10923-16383.
    pub fn even_split(masters: usize) -> Vec<RangeInclusive<u16>> {
        let per = f64::from(SLOTS) / masters.max(1) as f64;
        let mut out = Vec::new();
        let mut first: u16 = 0;
        let mut cursor = 0.0;
        for i in 0..masters {
            let mut last = (cursor + per - 1.0).round() as i64;
            if i + 1 == masters || last >= i64::from(SLOTS) {
                last = i64::from(SLOTS) - 1;
            }
            let last = u16::try_from(last.max(i64::from(first))).unwrap_or(SLOTS - 1);
            out.push(first..=last);
            first = last.saturating_add(1);
            cursor += per;
        }
        out
    }
}

/// Locks `topology`; a lock poisoned by a panic elsewhere still holds a
/// consistent table (every change is one assignment loop), so it is used.
pub(crate) fn lock(topology: &SharedTopology) -> MutexGuard<'_, Topology> {
    topology
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    /// The split redis-cli makes for 3 masters, and the runs `CLUSTER
    /// SLOTS` lists.
    #[test]
    fn even_split_is_redis_clis() {
        assert_eq!(
            Topology::even_split(3),
            vec![0..=5460, 5461..=10922, 10923..=16383]
        );
        assert_eq!(Topology::even_split(1), vec![0..=16383]);
        let mut t = Topology::new();
        let a = t.add_master(addr(1));
        let b = t.add_master(addr(2));
        t.assign(0..=99, a);
        t.assign(100..=16383, b);
        t.assign(50..=50, b);
        assert_eq!(
            t.ranges(),
            vec![(0, 49, a), (50, 50, b), (51, 99, a), (100, 16383, b)]
        );
        assert_eq!(t.slots_assigned(), 16384);
        assert_eq!(t.nodes()[a].id.len(), 40);
        assert_ne!(t.nodes()[a].id, t.nodes()[b].id);
    }

    /// A failover moves the master's slots to the replica, with a newer
    /// epoch, and the old master follows it.
    #[test]
    fn promote_moves_slots_and_roles() {
        let mut t = Topology::new();
        let m = t.add_master(addr(1));
        let r = t.add_replica(addr(2), m).unwrap_or(usize::MAX);
        assert_eq!(t.add_replica(addr(3), r), None);
        t.assign(0..=16383, m);
        t.promote(r);
        assert_eq!(t.owner(7), Some(r));
        assert_eq!(t.nodes()[m].master, Some(r));
        assert_eq!(t.nodes()[r].master, None);
        assert!(t.nodes()[r].epoch > t.nodes()[m].epoch);
        assert_eq!(t.replicas_of(r).collect::<Vec<_>>(), vec![m]);
    }
}
