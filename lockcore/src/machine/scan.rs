//! The topology scan of a cluster client: `CLUSTER NODES` every
//! `scanInterval`, whose masters' slots become the client's routes.
//!
//! Redisson's `ClusterConnectionManager.scheduleClusterChangeCheck` (read
//! at tags redisson-3.10.5, 3.25.0 and 4.7.0) waits `scanInterval` (1 s),
//! then asks one node after another for `CLUSTER NODES` until one
//! answers, and moves each slot whose master changed to that master's
//! entry (`checkSlotsChange`, `checkSlotsMigration`); the next scan is
//! scheduled once this one is done, answered or not. It is the only way
//! its slot table changes: a `MOVED` sends one command on (see
//! `redirect`) and teaches the table nothing. So a client goes on sending
//! a moved slot's commands to its old master, to be redirected each
//! time, until its next scan; and a client that reaches no node keeps its
//! table.
//!
//! locksim's client asks its masters (the config's `cluster_nodes`, one
//! after another from a master that moves on each scan, where Redisson
//! shuffles its masters, then its replicas) on its command connection to
//! each, where Redisson uses a connection of the scan's own; a command's
//! response timeout bounds each, with no resend. It keeps the slots of
//! masters whose address it knows: a master it does not know (a
//! promoted replica) leaves the slot where it was, as the driver routes a
//! shard to whichever node is its primary. The first scan is one
//! interval after the client starts ([`LockClient::start`]), or after its
//! first command where its driver does not say when it started.

use bytes::Bytes;

use super::request::{Kind, Owner, Tries};
use super::{LockClient, Purpose, TimerKind};
use crate::{LockName, Millis, Shard, TransportError, Value};

/// The scan's state in one client.
#[derive(Debug, Default)]
pub(super) struct Scan {
    /// Whether a scan is scheduled or under way.
    armed: bool,
    /// Scans begun: where the next begins among the masters.
    begun: usize,
    /// The masters' slots the last answered scan reported,
    /// `(first, last, master)`, for masters whose address the client
    /// knows.
    ranges: Vec<(u16, u16, Shard)>,
}

impl Scan {
    /// The master the last scan named for `name`'s slot, if it named a
    /// known one.
    pub(super) fn route(&self, name: &str) -> Option<Shard> {
        if self.ranges.is_empty() {
            return None;
        }
        let slot = crate::calc_slot(name);
        self.ranges
            .iter()
            .find(|(first, last, _)| (*first..=*last).contains(&slot))
            .map(|r| r.2)
    }
}

impl LockClient {
    /// A cluster client starts its scan: at its start
    /// ([`LockClient::start`]), or else at its first command.
    pub(super) fn arm_scan(&mut self, now: Millis) {
        if self.scan.armed
            || self.config.cluster_shards == 0
            || self.config.cluster_nodes.is_empty()
        {
            return;
        }
        self.scan.armed = true;
        self.schedule_scan(now);
    }

    fn schedule_scan(&mut self, now: Millis) {
        let at = now.plus(self.config.scan_interval);
        self.set_timer(at, TimerKind::Scan);
    }

    /// The scan's timer fired: the first master is asked.
    pub(super) fn on_scan(&mut self, now: Millis) {
        self.scan.begun = self.scan.begun.wrapping_add(1);
        self.ask_topology(now, 0);
    }

    /// Asks the `tried`-th master of this scan; with every master tried,
    /// the next scan is scheduled.
    fn ask_topology(&mut self, now: Millis, tried: usize) {
        let masters = self.config.cluster_nodes.len();
        // It concerns no lock: its outputs carry the command's name.
        let Ok(lock) = LockName::new("cluster-nodes") else {
            return;
        };
        if tried >= masters {
            return self.schedule_scan(now);
        }
        let node = (self.scan.begun + tried) % masters;
        let command = [Bytes::from_static(b"CLUSTER"), Bytes::from_static(b"NODES")].into();
        let kind = Kind::Command {
            purpose: Purpose::Scan,
            command,
        };
        let tries = Tries {
            to: u16::try_from(node).ok().map(Shard),
            ..Tries::default()
        };
        self.transmit(now, kind, lock, Owner::Scan(tried), tries);
    }

    /// `CLUSTER NODES` answered (or failed): its masters' slots become
    /// the routes and the next scan is scheduled; a failure or an empty
    /// answer asks the next master.
    pub(super) fn on_scan_reply(
        &mut self,
        now: Millis,
        tried: usize,
        reply: Result<Value, TransportError>,
    ) {
        let ranges = match reply {
            Ok(Value::Bulk(text)) => self.masters_slots(&text),
            _ => None,
        };
        let Some(ranges) = ranges else {
            return self.ask_topology(now, tried + 1);
        };
        self.scan.ranges = ranges;
        self.schedule_scan(now);
    }

    /// The slots of each master `text` (a `CLUSTER NODES` reply) lists
    /// whose address the client knows; `None` for a reply with no node.
    fn masters_slots(&self, text: &[u8]) -> Option<Vec<(u16, u16, Shard)>> {
        let text = std::str::from_utf8(text).ok()?;
        let mut nodes = 0;
        let mut ranges = Vec::new();
        for line in text.lines() {
            // `<id> <ip:port@cport> <flags> <master> <ping> <pong> <epoch>
            // <link> <slot>...`, one space apart.
            let mut words = line.split(' ');
            let (Some(_), Some(addr), Some(flags)) = (words.next(), words.next(), words.next())
            else {
                continue;
            };
            nodes += 1;
            let mut flags = flags.split(',');
            if !flags.clone().any(|f| f == "master") || flags.any(|f| f == "fail") {
                continue;
            }
            let addr = addr.split('@').next().unwrap_or(addr);
            let Some(shard) = self.node_at(addr) else {
                continue;
            };
            // `[slot->-id]` marks a move under way, which changes no owner.
            for word in words.skip(5).filter(|w| !w.starts_with('[')) {
                let (first, last) = word.split_once('-').unwrap_or((word, word));
                if let (Ok(first), Ok(last)) = (first.parse(), last.parse()) {
                    ranges.push((first, last, shard));
                }
            }
        }
        (nodes > 0).then_some(ranges)
    }
}

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, Config, Output, Purpose, Shard, ThreadId, Value};

    /// A 4.7.0 client of a three-master cluster at 127.0.0.1:7000-7002.
    fn cluster() -> Harness {
        let config = Config::builder()
            .release(release("4.7.0"))
            .cluster_shards(3)
            .cluster_nodes((0..3).map(|i| format!("127.0.0.1:{}", 7000 + i)).collect())
            .build()
            .unwrap();
        let mut h = Harness::with_config(config);
        h.show_scans = true;
        h
    }

    /// `CLUSTER NODES` of the three masters, with slot 105 ("orders")
    /// served by master `orders_on`.
    fn nodes(h: &Harness, orders_on: usize) -> Value {
        let addrs = h.m.config().cluster_nodes.clone();
        crate::machine::harness::nodes_reply(&addrs, Some((105, orders_on)))
    }

    /// The acquire of "orders" by thread 1, after the probe.
    fn acquire(h: &mut Harness) {
        h.call(
            ThreadId(1),
            "orders",
            Call::TryLock {
                wait: None,
                lease: None,
            },
        )
        .unwrap();
        h.probed();
        let (acquire, purpose, shard) = sent(h);
        assert_eq!((purpose, shard), (Purpose::Acquire, Shard(0)));
        h.reply(acquire, Value::Nil);
        h.expect_acquired(ThreadId(1));
    }

    /// The next send's request, purpose and master.
    fn sent(h: &mut Harness) -> (crate::RequestId, Purpose, Shard) {
        match h.next() {
            Some(Output::Send {
                request,
                purpose,
                shard,
                ..
            }) => (request, purpose, shard),
            other => panic!("expected a send, got {other:?}"),
        }
    }

    /// The client goes on sending "orders" to master 0 until its scan
    /// reads that master 1 serves it; a master that does not answer is
    /// passed over for the next.
    #[test]
    fn a_scan_moves_a_slot_to_the_master_it_reads() {
        let mut h = cluster();
        acquire(&mut h);
        h.advance(1_000);
        // The first scan asks master 1 first; it fails, master 2 answers.
        let (ask, purpose, shard) = sent(&mut h);
        assert_eq!((purpose, shard), (Purpose::Scan, Shard(1)));
        h.reply(ask, Value::Error("ERR nope".into()));
        let (ask, purpose, shard) = sent(&mut h);
        assert_eq!((purpose, shard), (Purpose::Scan, Shard(2)));
        let reply = nodes(&h, 1);
        h.reply(ask, reply);
        h.call(ThreadId(1), "orders", Call::Unlock).unwrap();
        let (_, purpose, shard) = sent(&mut h);
        assert_eq!((purpose, shard), (Purpose::Unlock, Shard(1)));
    }

    /// A reply naming a master the client does not know (a promoted
    /// replica) leaves the slot where it was.
    #[test]
    fn an_unknown_master_leaves_its_slots_alone() {
        let mut h = cluster();
        acquire(&mut h);
        h.advance(1_000);
        let (ask, purpose, _) = sent(&mut h);
        assert_eq!(purpose, Purpose::Scan);
        let text = "id7 10.0.0.9:6379@16379 master - 0 0 9 connected 0-5460\n";
        h.reply(ask, Value::Bulk(text.as_bytes().to_vec().into()));
        h.call(ThreadId(1), "orders", Call::Unlock).unwrap();
        let (_, purpose, shard) = sent(&mut h);
        assert_eq!((purpose, shard), (Purpose::Unlock, Shard(0)));
    }
}
