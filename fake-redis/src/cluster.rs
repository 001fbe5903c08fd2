//! [`FakeCluster`]: several engines that form one Redis Cluster, sharing
//! one slot table ([`crate::Topology`]) and one injected clock.
//!
//! Each node is an ordinary [`Engine`] joined to the cluster
//! ([`Engine::join_cluster`]): it routes keyed commands (`MOVED`, `ASK`,
//! `CROSSSLOT`, `TRYAGAIN`, see `routing`) and answers `CLUSTER ...`. The
//! simulator drives the engines directly; the `fake-redis` binary
//! (`--cluster`) or a test serves each on its own address, so a client
//! is redirected between them as by a real cluster.

use std::net::SocketAddr;
use std::ops::RangeInclusive;
use std::sync::{Arc, Mutex};

use thiserror::Error;

use crate::routing::ClusterRole;
use crate::slot::{SLOTS, key_slot};
use crate::topology::{self, SharedTopology, Topology};
use crate::{Clock, Engine};

/// One shard: its master's address, its replicas', and its slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardSpec {
    /// Where its master listens (what `MOVED` names).
    pub master: SocketAddr,
    /// Where its replicas listen.
    pub replicas: Vec<SocketAddr>,
    /// The slots its master serves.
    pub slots: Vec<RangeInclusive<u16>>,
}

/// Why a cluster layout cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ClusterError {
    /// No shard at all.
    #[error("a cluster needs at least one shard")]
    NoShards,
    /// A slot range past the last slot, or backwards.
    #[error("slot range {0}-{1} is not within 0-16383")]
    BadRange(u16, u16),
    /// Two shards claim a slot.
    #[error("slot {0} is given to two shards")]
    Overlap(u16),
    /// Two nodes share an address.
    #[error("address {0} is used by two nodes")]
    DuplicateAddr(SocketAddr),
}

/// The nodes of one cluster: masters first (shard order), then each
/// shard's replicas; node `i` is [`Topology::nodes`]`[i]`.
#[derive(Debug)]
pub struct FakeCluster {
    topology: SharedTopology,
    nodes: Vec<Engine>,
}

impl FakeCluster {
    /// A cluster of `shards`, every node reading time from `clock`.
    pub fn new(clock: Arc<dyn Clock>, shards: &[ShardSpec]) -> Result<FakeCluster, ClusterError> {
        if shards.is_empty() {
            return Err(ClusterError::NoShards);
        }
        let mut t = Topology::new();
        let mut seen: Vec<SocketAddr> = Vec::new();
        let mut owned = vec![false; usize::from(SLOTS)];
        for (i, shard) in shards.iter().enumerate() {
            for addr in std::iter::once(&shard.master).chain(&shard.replicas) {
                if seen.contains(addr) {
                    return Err(ClusterError::DuplicateAddr(*addr));
                }
                seen.push(*addr);
            }
            let master = t.add_master(shard.master);
            debug_assert_eq!(master, i);
            for range in &shard.slots {
                let (first, last) = (*range.start(), *range.end());
                if first > last || last >= SLOTS {
                    return Err(ClusterError::BadRange(first, last));
                }
                for slot in range.clone() {
                    if std::mem::replace(&mut owned[usize::from(slot)], true) {
                        return Err(ClusterError::Overlap(slot));
                    }
                }
                t.assign(range.clone(), master);
            }
        }
        for (i, shard) in shards.iter().enumerate() {
            for addr in &shard.replicas {
                t.add_replica(*addr, i);
            }
        }
        let count = t.nodes().len();
        let masters: Vec<Option<usize>> = t.nodes().iter().map(|n| n.master).collect();
        let topology = Arc::new(Mutex::new(t));
        let mut nodes = Vec::with_capacity(count);
        for (i, master) in masters.iter().enumerate() {
            let mut engine = Engine::new(clock.clone());
            engine.join_cluster(topology.clone(), i);
            match master {
                Some(_) => engine.set_replica(),
                None => engine.set_replicas(shards[i].replicas.len()),
            }
            nodes.push(engine);
        }
        Ok(FakeCluster { topology, nodes })
    }

    /// Masters at `masters`, no replicas, the slots split as
    /// `redis-cli --cluster create` splits them ([`Topology::even_split`]).
    pub fn even(
        clock: Arc<dyn Clock>,
        masters: &[SocketAddr],
    ) -> Result<FakeCluster, ClusterError> {
        let shards: Vec<ShardSpec> = masters
            .iter()
            .zip(Topology::even_split(masters.len()))
            .map(|(&master, range)| ShardSpec {
                master,
                replicas: Vec::new(),
                slots: vec![range],
            })
            .collect();
        FakeCluster::new(clock, &shards)
    }

    /// The slot table all nodes share.
    pub fn topology(&self) -> &SharedTopology {
        &self.topology
    }

    /// How many nodes (masters and replicas).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether there are no nodes (never, once built).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Node `i`.
    pub fn node(&mut self, i: usize) -> Option<&mut Engine> {
        self.nodes.get_mut(i)
    }

    /// The master serving `key`'s slot now.
    pub fn master_for(&self, key: &[u8]) -> Option<usize> {
        topology::lock(&self.topology).owner(key_slot(key))
    }

    /// Sends every master's writes since the last call to its replicas,
    /// which acknowledge them (`WAIT` counts them at the next tick).
    pub fn replicate(&mut self) {
        let shards: Vec<(usize, Vec<usize>)> = {
            let t = topology::lock(&self.topology);
            (0..t.nodes().len())
                .filter(|&i| t.nodes()[i].master.is_none())
                .map(|m| (m, t.replicas_of(m).collect()))
                .collect()
        };
        for (master, replicas) in shards {
            let writes = self.nodes[master].take_writes();
            for (k, &r) in replicas.iter().enumerate() {
                for w in &writes {
                    self.nodes[r].apply(w);
                }
                let offset = self.nodes[r].repl_offset();
                self.nodes[master].ack(k, offset);
            }
        }
    }

    /// The engines, node `i` at `i`, to be served each on its address.
    pub fn into_engines(self) -> Vec<Engine> {
        self.nodes
    }
}

impl Engine {
    /// Makes this server node `me` of the cluster `topology` describes
    /// (`cluster-enabled yes`): keyed commands for slots it does not
    /// serve are redirected, and `CLUSTER ...` answers.
    pub fn join_cluster(&mut self, topology: SharedTopology, me: usize) {
        self.state.cluster = Some(ClusterRole {
            topology,
            me,
            migrating: Default::default(),
            importing: Default::default(),
        });
    }

    /// Makes this server the one master of a cluster that serves every
    /// slot, listening at `addr`: what a client sees of a Redis Cluster
    /// through a proxy on one address (Envoy, Twemproxy, a managed
    /// endpoint). A command whose keys hash to different slots is refused
    /// with `CROSSSLOT`, a command of one slot runs, and nothing is ever
    /// `MOVED`. It is also exactly a real `cluster-enabled yes` server
    /// holding slots 0-16383, which the real-Redis engine runs for it.
    pub fn serve_every_slot(&mut self, addr: SocketAddr) {
        let mut t = Topology::new();
        let me = t.add_master(addr);
        t.assign(0..=SLOTS - 1, me);
        self.join_cluster(Arc::new(Mutex::new(t)), me);
    }

    /// This server's node index in its cluster, if it is a cluster node.
    pub fn cluster_node(&self) -> Option<usize> {
        self.state.cluster.as_ref().map(|c| c.me)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ManualClock, Value};
    use bytes::Bytes;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    /// Three masters (7000-7002, redis-cli's split) and a replica of the
    /// first at 7100.
    fn cluster() -> FakeCluster {
        let split = Topology::even_split(3);
        let shards: Vec<ShardSpec> = (0..3)
            .map(|i| ShardSpec {
                master: addr(7000 + i as u16),
                replicas: if i == 0 { vec![addr(7100)] } else { vec![] },
                slots: vec![split[i].clone()],
            })
            .collect();
        let clock = ManualClock::new(1_000);
        FakeCluster::new(Arc::new(clock), &shards).unwrap_or_else(|e| panic!("{e}"))
    }

    fn run(c: &mut FakeCluster, node: usize, conn: crate::ConnId, words: &[&str]) -> Value {
        let args: Vec<Bytes> = words
            .iter()
            .map(|w| Bytes::copy_from_slice(w.as_bytes()))
            .collect();
        let engine = c.node(node).unwrap_or_else(|| panic!("node {node}"));
        let r = engine.execute(conn, args);
        r.replies.into_iter().next().unwrap_or(Value::Nil)
    }

    fn err(text: &str) -> Value {
        Value::error(text)
    }

    /// A `PUBLISH` on one node goes over the bus to every other: node 0
    /// counts only its own subscribers and hands the message on; node 1's
    /// subscriber gets it once node 1 receives it (as on redis-server
    /// 7.0.15: `a_lock_survives_its_slot_migrating_to_another_master`).
    #[test]
    fn a_publish_goes_to_every_node() {
        let mut c = cluster();
        let sub = c.node(1).map(|e| e.connect()).unwrap_or(crate::ConnId(0));
        run(&mut c, 1, sub, &["SUBSCRIBE", "ch"]);
        let publisher = c.node(0).map(|e| e.connect()).unwrap_or(crate::ConnId(0));
        let words = [
            Bytes::from_static(b"PUBLISH"),
            Bytes::from_static(b"ch"),
            Bytes::from_static(b"m"),
        ];
        let r = c
            .node(0)
            .map(|e| e.execute(publisher, words))
            .unwrap_or_default();
        assert_eq!(r.replies, [Value::Int(0)]);
        let (channel, message) = r.published[0].clone();
        let got = c
            .node(1)
            .map(|e| e.receive_published(&channel, &message))
            .unwrap_or_default();
        assert_eq!(got.deliveries.len(), 1);
        assert_eq!(got.deliveries[0].0, sub);
        assert!(got.published.is_empty(), "not sent on again");
    }

    /// `foo` is slot 12182 (node 2), `bar` 5061 (node 0): each node
    /// serves its own and redirects the rest; keys of several slots are
    /// CROSSSLOT before any MOVED; keyless commands run anywhere.
    #[test]
    fn moved_and_crossslot() {
        let mut c = cluster();
        let conn = c.node(0).map(|e| e.connect()).unwrap_or(crate::ConnId(0));
        assert_eq!(run(&mut c, 0, conn, &["SET", "bar", "1"]), Value::ok());
        assert_eq!(
            run(&mut c, 0, conn, &["GET", "foo"]),
            err("MOVED 12182 127.0.0.1:7002")
        );
        assert_eq!(
            run(&mut c, 0, conn, &["MGET", "foo", "bar"]),
            err("CROSSSLOT Keys in request don't hash to the same slot")
        );
        assert_eq!(
            run(&mut c, 0, conn, &["MSET", "{bar}a", "1", "{bar}b", "2"]),
            Value::ok()
        );
        assert_eq!(
            run(&mut c, 0, conn, &["EVAL", "return 1", "2", "foo", "{foo}x"]),
            err("MOVED 12182 127.0.0.1:7002")
        );
        assert_eq!(
            run(&mut c, 0, conn, &["EVAL", "return 1", "2", "foo", "bar"]),
            err("CROSSSLOT Keys in request don't hash to the same slot")
        );
        assert_eq!(
            run(&mut c, 0, conn, &["EVAL", "return 1", "0"]),
            Value::Int(1)
        );
        assert_eq!(
            run(&mut c, 0, conn, &["CLUSTER", "KEYSLOT", "foo"]),
            Value::Int(12182)
        );
        assert_eq!(c.master_for(b"foo"), Some(2));
    }

    /// One node serving every slot (a proxy's view): cross-slot keys are
    /// refused, a script on one slot runs, nothing is redirected.
    #[test]
    fn one_node_serving_every_slot_refuses_only_cross_slot() {
        let mut e = Engine::new(Arc::new(ManualClock::new(1_000)));
        e.serve_every_slot(addr(6379));
        let conn = e.connect();
        let mut run = |words: &[&str]| {
            let args = words.iter().map(|w| Bytes::copy_from_slice(w.as_bytes()));
            let r = e.execute(conn, args.collect::<Vec<Bytes>>());
            r.replies.into_iter().next().unwrap_or(Value::Nil)
        };
        assert_eq!(run(&["SET", "foo", "1"]), Value::ok());
        assert_eq!(run(&["SET", "bar", "1"]), Value::ok());
        assert_eq!(
            run(&["EVAL", "return 1", "2", "foo", "bar"]),
            err("CROSSSLOT Keys in request don't hash to the same slot")
        );
        assert_eq!(
            run(&[
                "EVAL",
                "return 1",
                "2",
                "foo",
                "redisson_lock__channel:{foo}"
            ]),
            Value::Int(1)
        );
        assert_eq!(run(&["CLUSTER", "KEYSLOT", "bar"]), Value::Int(5061));
    }

    /// A queued command for another slot is MOVED and dooms the
    /// transaction; an EXEC whose queue spans slots is CROSSSLOT.
    #[test]
    fn transactions_are_routed_whole() {
        let mut c = cluster();
        let conn = c.node(0).map(|e| e.connect()).unwrap_or(crate::ConnId(0));
        run(&mut c, 0, conn, &["MULTI"]);
        assert_eq!(
            run(&mut c, 0, conn, &["GET", "foo"]),
            err("MOVED 12182 127.0.0.1:7002")
        );
        assert_eq!(
            run(&mut c, 0, conn, &["EXEC"]),
            err("EXECABORT Transaction discarded because of previous errors.")
        );
        run(&mut c, 0, conn, &["MULTI"]);
        run(&mut c, 0, conn, &["SET", "bar", "1"]);
        run(&mut c, 0, conn, &["SET", "hello", "1"]);
        assert_eq!(
            run(&mut c, 0, conn, &["EXEC"]),
            err("CROSSSLOT Keys in request don't hash to the same slot")
        );
        assert_eq!(run(&mut c, 0, conn, &["GET", "bar"]), Value::Nil);
    }

    /// Slot 5061 (`bar`) moving from node 0 to node 1: ASK for a missing
    /// key, TRYAGAIN for some missing, ASKING lets node 1 serve once,
    /// SETSLOT NODE ends it for every node.
    #[test]
    fn migration_asks_and_ends() {
        let mut c = cluster();
        let ids: Vec<String> = topology::lock(c.topology())
            .nodes()
            .iter()
            .map(|n| n.id.clone())
            .collect();
        let a = c.node(0).map(|e| e.connect()).unwrap_or(crate::ConnId(0));
        let b = c.node(1).map(|e| e.connect()).unwrap_or(crate::ConnId(0));
        run(&mut c, 0, a, &["SET", "{bar}1", "x"]);
        assert_eq!(
            run(
                &mut c,
                1,
                b,
                &["CLUSTER", "SETSLOT", "5061", "IMPORTING", &ids[0]]
            ),
            Value::ok()
        );
        assert_eq!(
            run(
                &mut c,
                0,
                a,
                &["CLUSTER", "SETSLOT", "5061", "MIGRATING", &ids[1]]
            ),
            Value::ok()
        );
        assert_eq!(
            run(&mut c, 0, a, &["GET", "{bar}1"]),
            Value::Bulk("x".into())
        );
        assert_eq!(
            run(&mut c, 0, a, &["GET", "{bar}2"]),
            err("ASK 5061 127.0.0.1:7001")
        );
        assert_eq!(
            run(&mut c, 0, a, &["MGET", "{bar}1", "{bar}2"]),
            err("TRYAGAIN Multiple keys request during rehashing of slot")
        );
        assert_eq!(
            run(&mut c, 1, b, &["GET", "{bar}2"]),
            err("MOVED 5061 127.0.0.1:7000")
        );
        assert_eq!(run(&mut c, 1, b, &["ASKING"]), Value::ok());
        assert_eq!(run(&mut c, 1, b, &["SET", "{bar}2", "y"]), Value::ok());
        assert_eq!(
            run(&mut c, 1, b, &["GET", "{bar}2"]),
            err("MOVED 5061 127.0.0.1:7000")
        );
        assert_eq!(
            run(
                &mut c,
                0,
                a,
                &["CLUSTER", "SETSLOT", "5061", "NODE", &ids[1]]
            ),
            err(
                "ERR Can't assign hashslot 5061 to a different node while I still hold keys for this hash slot."
            )
        );
        run(&mut c, 0, a, &["DEL", "{bar}1"]);
        assert_eq!(
            run(
                &mut c,
                0,
                a,
                &["CLUSTER", "SETSLOT", "5061", "NODE", &ids[1]]
            ),
            Value::ok()
        );
        assert_eq!(
            run(
                &mut c,
                1,
                b,
                &["CLUSTER", "SETSLOT", "5061", "NODE", &ids[1]]
            ),
            Value::ok()
        );
        assert_eq!(
            run(&mut c, 1, b, &["GET", "{bar}2"]),
            Value::Bulk("y".into())
        );
        assert_eq!(
            run(&mut c, 2, a, &["GET", "{bar}2"]),
            err("MOVED 5061 127.0.0.1:7001")
        );
    }

    /// A replica redirects to its master unless the client sent
    /// READONLY, and then only reads; replicated writes reach it.
    #[test]
    fn replicas_serve_reads_after_readonly() {
        let mut c = cluster();
        let m = c.node(0).map(|e| e.connect()).unwrap_or(crate::ConnId(0));
        let r = c.node(3).map(|e| e.connect()).unwrap_or(crate::ConnId(0));
        run(&mut c, 0, m, &["SET", "bar", "1"]);
        c.replicate();
        assert_eq!(
            run(&mut c, 3, r, &["GET", "bar"]),
            err("MOVED 5061 127.0.0.1:7000")
        );
        assert_eq!(run(&mut c, 3, r, &["READONLY"]), Value::ok());
        assert_eq!(run(&mut c, 3, r, &["GET", "bar"]), Value::Bulk("1".into()));
        assert_eq!(
            run(&mut c, 3, r, &["SET", "bar", "2"]),
            err("MOVED 5061 127.0.0.1:7000")
        );
        assert_eq!(
            run(&mut c, 3, r, &["GET", "foo"]),
            err("MOVED 12182 127.0.0.1:7002")
        );
        assert_eq!(run(&mut c, 3, r, &["READWRITE"]), Value::ok());
        assert_eq!(
            run(&mut c, 3, r, &["GET", "bar"]),
            err("MOVED 5061 127.0.0.1:7000")
        );
    }

    /// `CLUSTER NODES` as Redisson's `ClusterNodesDecoder` splits it.
    #[test]
    fn cluster_nodes_lines() {
        let mut c = cluster();
        let conn = c.node(3).map(|e| e.connect()).unwrap_or(crate::ConnId(0));
        let Value::Bulk(text) = run(&mut c, 3, conn, &["CLUSTER", "NODES"]) else {
            panic!("not a bulk");
        };
        let text = String::from_utf8_lossy(&text).into_owned();
        let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split(' ').collect()).collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0][1], "127.0.0.1:7000@17000");
        assert_eq!(lines[0][2], "master");
        assert_eq!(lines[0][8], "0-5460");
        assert_eq!(lines[3][2], "myself,slave");
        assert_eq!(lines[3][3], lines[0][0]);
        assert_eq!(lines[3].len(), 8);
        assert!(text.ends_with('\n'));
    }

    /// Bad layouts are errors, not panics.
    #[test]
    fn bad_layouts_are_refused() {
        let clock: Arc<dyn Clock> = Arc::new(ManualClock::new(0));
        assert_eq!(
            FakeCluster::new(clock.clone(), &[]).err(),
            Some(ClusterError::NoShards)
        );
        let shard = |port, slots: RangeInclusive<u16>| ShardSpec {
            master: addr(port),
            replicas: vec![],
            slots: vec![slots],
        };
        let overlap = [shard(1, 0..=10), shard(2, 10..=20)];
        assert_eq!(
            FakeCluster::new(clock.clone(), &overlap).err(),
            Some(ClusterError::Overlap(10))
        );
        let twice = [shard(1, 0..=10), shard(1, 11..=20)];
        assert_eq!(
            FakeCluster::new(clock.clone(), &twice).err(),
            Some(ClusterError::DuplicateAddr(addr(1)))
        );
        let past = [shard(1, 0..=16384)];
        assert_eq!(
            FakeCluster::new(clock, &past).err(),
            Some(ClusterError::BadRange(0, 16384))
        );
    }
}
