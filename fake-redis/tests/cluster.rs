//! Cluster mode against a real Redis Cluster: three `redis-server`
//! masters with `cluster-enabled yes` on loopback
//! ([`fake_redis::testing::RealCluster`], slots split as `redis-cli
//! --cluster create` splits them, config epochs 1-3) and a
//! [`FakeCluster`] of the same layout served on loopback. Both get the
//! same commands, each at the same node (by index), and the replies must
//! be byte-identical.
//!
//! Masked, because they must differ: each node's port (and bus port,
//! `port + 10000`) and node id are replaced by `<port i>`, `<bus i>`,
//! `<id i>`; in `CLUSTER NODES` the ping/pong times and config epochs
//! (the real nodes learn a peer's new epoch by gossip, a moment later)
//! are masked and lines sorted (Redis lists nodes in its dict order);
//! `CLUSTER INFO` is compared up to `cluster_my_epoch` (the real bus's
//! message counters follow).
//!
//! Covered: `CLUSTER KEYSLOT` with hash tags; single-key, multi-key
//! same-slot and cross-slot commands; a slot served elsewhere (`MOVED`);
//! `EVAL` with keys on one node, on several, and none; transactions
//! (a queued `MOVED`, an `EXEC` spanning slots); keyless commands on any
//! node; `ASKING`, `READONLY` and `READWRITE` on masters; `SELECT`; `CLUSTER
//! SLOTS`, `SHARDS`, `NODES`, `INFO`, `MYID`; `CLUSTER SETSLOT`'s errors; a slot
//! migration (`MIGRATING`/`IMPORTING`, `ASK`, `TRYAGAIN`, `ASKING`,
//! `SETSLOT ... NODE`), and a client following `MOVED` to another node.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::sync::Arc;

use fake_redis::testing::RealCluster;
use fake_redis::{BackgroundServer, FakeCluster, SharedEngine, SystemClock, Topology, key_slot};

#[path = "differential/wire.rs"]
#[allow(dead_code)]
mod wire;

use wire::{Client, show};

/// The fake cluster, each node served on its own loopback address.
struct Fake {
    servers: Vec<BackgroundServer>,
    ids: Vec<String>,
}

fn start_fake(masters: usize) -> Fake {
    let listeners: Vec<TcpListener> = (0..masters)
        .map(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind"))
        .collect();
    let addrs: Vec<SocketAddr> = listeners
        .iter()
        .map(|l| l.local_addr().expect("addr"))
        .collect();
    let cluster = FakeCluster::even(Arc::new(SystemClock), &addrs).expect("layout");
    let ids = cluster
        .topology()
        .lock()
        .map(|t| t.nodes().iter().map(|n| n.id.clone()).collect())
        .expect("topology");
    let servers = listeners
        .into_iter()
        .zip(cluster.into_engines())
        .map(|(l, e)| BackgroundServer::start_on(l, SharedEngine::new(e)).expect("serve"))
        .collect();
    Fake { servers, ids }
}

/// One side of the comparison: its connections per node, and how its
/// ports and ids are masked.
struct Side {
    conns: Vec<Client>,
    masks: Vec<(String, String)>,
    ids: Vec<String>,
}

impl Side {
    fn new(addrs: &[SocketAddr], ids: &[String]) -> Side {
        let mut masks = Vec::new();
        for (i, (addr, id)) in addrs.iter().zip(ids).enumerate() {
            masks.push((id.clone(), format!("<id-{i}>")));
            masks.push((
                (addr.port() as u32 + 10_000).to_string(),
                format!("<bus-{i}>"),
            ));
            masks.push((addr.port().to_string(), format!("<port-{i}>")));
        }
        Side {
            conns: addrs.iter().map(|a| Client::connect(*a)).collect(),
            masks,
            ids: ids.to_vec(),
        }
    }

    /// `words` with `$id<i>` standing for node `i`'s id on this side.
    fn send(&mut self, node: usize, words: &[&str]) -> String {
        let args: Vec<Vec<u8>> = words
            .iter()
            .map(|w| match w.strip_prefix("$id") {
                Some(i) => self.ids[i.parse::<usize>().expect("node")]
                    .clone()
                    .into_bytes(),
                None => w.as_bytes().to_vec(),
            })
            .collect();
        let frames = self.conns[node].roundtrip(&args).expect("reply");
        let reply = show(&frames[..frames.len() - 1].concat());
        self.mask(&reply)
    }

    fn mask(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for (from, to) in &self.masks {
            out = out.replace(from, to);
        }
        out
    }
}

/// `CLUSTER NODES` without times and epochs, lines sorted.
fn nodes_view(reply: &str) -> String {
    let body = reply.split_once("\r\n").map_or(reply, |(_, b)| b);
    let mut lines: Vec<String> = body
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let mut f: Vec<&str> = l.split(' ').collect();
            for i in [4, 5, 6] {
                if let Some(x) = f.get_mut(i) {
                    *x = "_";
                }
            }
            f.join(" ")
        })
        .collect();
    lines.sort();
    lines.join("\n")
}

/// `CLUSTER SHARDS`' shards sorted (Redis lists them in its dict order).
/// Split where each shard's map starts (masking changed bulk lengths, so
/// the reply no longer frames).
fn shards_view(reply: &str) -> String {
    const SHARD: &str = "*4\r\n$5\r\nslots\r\n";
    let mut parts: Vec<&str> = reply.split(SHARD).collect();
    let header = parts.remove(0);
    parts.sort_unstable();
    format!("{header}{SHARD}{}", parts.join(SHARD))
}

/// `CLUSTER INFO` up to `cluster_my_epoch`.
fn info_view(reply: &str) -> String {
    reply
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("cluster_stats"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The master of `key`'s slot in the 3-master split.
fn owner(key: &str) -> usize {
    let slot = key_slot(key.as_bytes());
    Topology::even_split(3)
        .iter()
        .position(|r| r.contains(&slot))
        .expect("slot")
}

struct Compare {
    real: Side,
    fake: Side,
    failures: Vec<String>,
    compared: usize,
}

impl Compare {
    fn with(&mut self, node: usize, words: &[&str], view: fn(&str) -> String) -> String {
        let r = view(&self.real.send(node, words));
        let f = view(&self.fake.send(node, words));
        self.compared += 1;
        if r != f {
            self.failures.push(format!(
                "node {node} {words:?}\n  real: {r:?}\n  fake: {f:?}"
            ));
        }
        r
    }

    fn same(&mut self, node: usize, words: &[&str]) -> String {
        self.with(node, words, str::to_owned)
    }

    /// `ASKING` then `words`, with no sentinel `PING` between them (it
    /// would end the `ASKING`): the reply compared is `+OK` and the
    /// command's.
    fn asking(&mut self, node: usize, words: &[&str]) -> String {
        for side in [&mut self.real, &mut self.fake] {
            side.conns[node].send(&[b"ASKING".to_vec()]);
        }
        let reply = self.same(node, words);
        assert!(reply.starts_with("+OK\r\n"), "{reply:?}");
        reply
    }
}

#[test]
fn fake_cluster_answers_as_a_real_cluster() {
    let real = RealCluster::start_for_test(3);
    let fake = start_fake(3);
    let real_ids: Vec<String> = (0..3).map(|i| real.id(i).to_owned()).collect();
    let fake_addrs: Vec<SocketAddr> = fake.servers.iter().map(BackgroundServer::addr).collect();
    let mut c = Compare {
        real: Side::new(&real.addrs(), &real_ids),
        fake: Side::new(&fake_addrs, &fake.ids),
        failures: Vec::new(),
        compared: 0,
    };
    let (foo, bar) = (owner("foo"), owner("bar"));
    assert_eq!((foo, bar), (2, 0), "the split changed");

    for key in [
        "foo",
        "bar",
        "{user1000}.following",
        "foo{}{bar}",
        "foo{bar",
        "a{b}c{d}",
        "",
    ] {
        c.same(0, &["CLUSTER", "KEYSLOT", key]);
    }
    // Single keys at their node and elsewhere.
    c.same(bar, &["SET", "bar", "1"]);
    c.same(bar, &["GET", "bar"]);
    c.same(bar, &["GET", "foo"]);
    c.same(1, &["SET", "foo", "x"]);
    c.same(foo, &["SET", "foo", "x"]);
    c.same(0, &["HSET", "{foo}h", "f", "1"]);
    c.same(1, &["PTTL", "hello"]);
    // Several keys: one slot, a tag, several slots.
    c.same(bar, &["MGET", "foo", "bar"]);
    c.same(foo, &["MGET", "foo", "bar"]);
    c.same(bar, &["MSET", "{bar}a", "1", "{bar}b", "2"]);
    c.same(bar, &["MGET", "{bar}a", "{bar}b", "bar"]);
    c.same(bar, &["DEL", "{bar}a", "{bar}b", "bar", "bar"]);
    c.same(1, &["DEL", "{bar}a", "{bar}b"]);
    c.same(bar, &["EXISTS", "bar", "hello"]);
    c.same(bar, &["RENAME", "bar", "{bar}x"]);
    c.same(bar, &["BLPOP", "bar", "foo", "0"]);
    // Scripts: keys on one node, on several, none; a bad key count.
    let get = "return redis.call('get', KEYS[1])";
    c.same(bar, &["EVAL", get, "1", "bar"]);
    c.same(bar, &["EVAL", get, "1", "foo"]);
    c.same(foo, &["EVAL", get, "1", "foo"]);
    c.same(foo, &["EVAL", get, "2", "foo", "bar"]);
    c.same(foo, &["EVAL", get, "2", "foo", "{foo}2"]);
    c.same(1, &["EVAL", "return 7", "0"]);
    c.same(1, &["EVAL", get, "3", "foo"]);
    c.same(
        1,
        &[
            "EVALSHA",
            "0000000000000000000000000000000000000000",
            "1",
            "foo",
        ],
    );
    // Transactions.
    c.same(bar, &["MULTI"]);
    c.same(bar, &["SET", "bar", "1"]);
    c.same(bar, &["GET", "foo"]);
    c.same(bar, &["EXEC"]);
    c.same(bar, &["MULTI"]);
    c.same(bar, &["SET", "bar", "1"]);
    c.same(bar, &["SET", "hello", "2"]);
    c.same(bar, &["EXEC"]);
    c.same(bar, &["MULTI"]);
    c.same(bar, &["SET", "bar", "1"]);
    c.same(bar, &["GET", "{bar}x"]);
    c.same(bar, &["EXEC"]);
    // Keyless commands anywhere.
    for node in 0..3 {
        c.same(node, &["PING"]);
        c.same(node, &["DBSIZE"]);
        c.same(node, &["PUBLISH", "ch", "m"]);
    }
    // ASKING on a node importing nothing, READONLY on a master.
    c.same(0, &["ASKING"]);
    c.same(0, &["GET", "foo"]);
    c.same(0, &["READONLY"]);
    c.same(0, &["GET", "foo"]);
    c.same(0, &["READWRITE"]);
    c.same(1, &["SELECT", "1"]);
    c.same(1, &["SELECT", "0"]);
    // Topology.
    c.same(0, &["CLUSTER", "MYID"]);
    c.same(2, &["CLUSTER", "SLOTS"]);
    c.with(0, &["CLUSTER", "SHARDS"], shards_view);
    c.with(1, &["CLUSTER", "NODES"], nodes_view);
    for node in 0..3 {
        c.with(node, &["CLUSTER", "INFO"], info_view);
    }
    c.same(0, &["CLUSTER", "KEYSLOT"]);
    c.same(0, &["CLUSTER", "NOPE"]);
    // SETSLOT's refusals.
    c.same(0, &["CLUSTER", "SETSLOT", "16384", "STABLE"]);
    c.same(0, &["CLUSTER", "SETSLOT", "x", "STABLE"]);
    c.same(1, &["CLUSTER", "SETSLOT", "1", "MIGRATING", "$id0"]);
    c.same(0, &["CLUSTER", "SETSLOT", "1", "IMPORTING", "$id1"]);
    c.same(0, &["CLUSTER", "SETSLOT", "1", "MIGRATING", "nobody"]);
    c.same(0, &["CLUSTER", "SETSLOT", "1", "NODE", "nobody"]);
    c.same(0, &["CLUSTER", "SETSLOT", "1", "FOO"]);
    c.same(0, &["CLUSTER", "SETSLOT", "1", "STABLE", "x"]);
    migrate(&mut c);
    follow_moved(&mut c);

    assert!(
        c.failures.is_empty(),
        "{} of {} replies differ:\n{}",
        c.failures.len(),
        c.compared,
        c.failures.join("\n")
    );
    assert!(c.compared > 90, "compared only {}", c.compared);
    drop(real);
}

/// Slot 5061 (`bar`, `{bar}...`) moves from node 0 to node 1.
fn migrate(c: &mut Compare) {
    c.same(0, &["SET", "{bar}1", "x"]);
    c.same(1, &["CLUSTER", "SETSLOT", "5061", "IMPORTING", "$id0"]);
    c.same(0, &["CLUSTER", "SETSLOT", "5061", "MIGRATING", "$id1"]);
    c.with(0, &["CLUSTER", "NODES"], nodes_view);
    c.with(1, &["CLUSTER", "NODES"], nodes_view);
    c.same(0, &["GET", "{bar}1"]);
    c.same(0, &["GET", "{bar}2"]);
    c.same(0, &["SET", "{bar}2", "y"]);
    c.same(0, &["MGET", "{bar}1", "{bar}2"]);
    c.same(0, &["MGET", "{bar}2", "{bar}3"]);
    c.same(0, &["EVAL", "return 1", "2", "{bar}1", "{bar}2"]);
    c.same(1, &["GET", "{bar}2"]);
    c.same(1, &["ASKING"]);
    let served = c.asking(1, &["SET", "{bar}2", "y"]);
    assert_eq!(served, "+OK\r\n+OK\r\n", "ASKING did not let node 1 serve");
    c.same(1, &["GET", "{bar}2"]);
    c.asking(1, &["GET", "{bar}2"]);
    c.asking(1, &["MGET", "{bar}2", "{bar}3"]);
    c.asking(1, &["MGET", "{bar}2", "{bar}2"]);
    c.asking(
        1,
        &["EVAL", "return redis.call('get', KEYS[1])", "1", "{bar}2"],
    );
    c.asking(1, &["EVAL", "return 1", "2", "{bar}2", "{bar}1"]);
    c.asking(2, &["GET", "{bar}2"]);
    c.same(0, &["GET", "{bar}2"]);
    c.same(0, &["CLUSTER", "SETSLOT", "5061", "NODE", "$id1"]);
    // Node 0 must hold no key of the slot (the real node would otherwise
    // keep it until node 1's new epoch reached it by gossip).
    c.same(0, &["DEL", "{bar}1", "bar"]);
    c.same(0, &["CLUSTER", "SETSLOT", "5061", "NODE", "$id1"]);
    c.same(1, &["CLUSTER", "SETSLOT", "5061", "NODE", "$id1"]);
    c.same(2, &["CLUSTER", "SETSLOT", "5061", "NODE", "$id1"]);
    c.same(0, &["GET", "{bar}2"]);
    c.same(1, &["GET", "{bar}2"]);
    c.same(2, &["CLUSTER", "SLOTS"]);
    c.with(1, &["CLUSTER", "NODES"], nodes_view);
    c.same(1, &["CLUSTER", "SETSLOT", "5061", "STABLE"]);
}

/// A client sent to the wrong node follows `MOVED` to the address it
/// names, on each side, and gets the same answer there.
fn follow_moved(c: &mut Compare) {
    for (side, name) in [(&mut c.real, "real"), (&mut c.fake, "fake")] {
        let reply = side.send(0, &["GET", "foo"]);
        let port = reply
            .trim_end()
            .strip_prefix("-MOVED 12182 127.0.0.1:<port-")
            .and_then(|p| p.strip_suffix('>'))
            .and_then(|p| p.parse::<usize>().ok());
        assert_eq!(port, Some(2), "{name}: {reply:?}");
        assert_eq!(side.send(2, &["GET", "foo"]), "$1\r\nx\r\n", "{name}");
    }
}
