//! A Sentinel node, as Redisson's sentinel connection manager sees it.
//!
//! Redisson (3.x and 4.x alike) never subscribes to a sentinel: its
//! `SentinelConnectionManager` polls one sentinel every `scanInterval`
//! with `SENTINEL GET-MASTER-ADDR-BY-NAME`, `SENTINEL SLAVES` and
//! `SENTINEL SENTINELS`, and checks a sentinel it adds with `PING`. A
//! [`Sentinel`] answers those (and `ROLE`) as redis-server 7.0.15 in
//! sentinel mode does, field for field, and on a failover gives the
//! messages a sentinel publishes (`+switch-master`, then `+slave` for each
//! replica of the new primary) for hosts that deliver them.
//!
//! What it does not model: the election itself (the host decides who is
//! promoted and when), `SENTINEL` subcommands Redisson never sends, and
//! the connection commands (`HELLO`, `CLIENT`, `AUTH`), which get the
//! unknown-command error here. The figures that change with the wall
//! clock or a random run id (`last-ok-ping-reply`, `info-refresh`,
//! `runid`, ...) are fixed values; `tests/differential/sentinel.rs`
//! masks them and proves every other field against real sentinels.

use bytes::Bytes;

use crate::error::printable;
use crate::{RedisVersion, Value};

/// A server's address as sentinels report it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Node {
    /// Its IP, as announced (`127.0.0.1`).
    pub ip: String,
    /// Its port.
    pub port: u16,
}

impl Node {
    /// The node at `ip:port`.
    pub fn new(ip: impl Into<String>, port: u16) -> Node {
        Node {
            ip: ip.into(),
            port,
        }
    }

    /// `ip:port`, the instance name sentinels give a replica.
    pub fn name(&self) -> String {
        format!("{}:{}", self.ip, self.port)
    }

    /// `ip port`, as announcements write an address.
    fn spaced(&self) -> String {
        format!("{} {}", self.ip, self.port)
    }
}

/// A message a sentinel publishes on one of its event channels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announcement {
    /// The channel (`+switch-master`, `+slave`).
    pub channel: &'static str,
    /// The payload, as redis-server words it.
    pub payload: String,
}

/// One sentinel's view of one monitored primary, its replicas and its
/// fellow sentinels.
#[derive(Debug, Clone)]
pub struct Sentinel {
    master_name: String,
    master: Node,
    replicas: Vec<Node>,
    /// Other sentinels: address and run id.
    peers: Vec<(Node, String)>,
    down_after_ms: u64,
}

impl Sentinel {
    /// A sentinel monitoring `master` as `master_name`, with
    /// `down-after-milliseconds` of `down_after_ms` (Redis's default is
    /// 30000).
    pub fn new(master_name: impl Into<String>, master: Node, down_after_ms: u64) -> Sentinel {
        Sentinel {
            master_name: master_name.into(),
            master,
            replicas: Vec::new(),
            peers: Vec::new(),
            down_after_ms,
        }
    }

    /// Adds a replica of the primary (a sentinel learns them from the
    /// primary's `INFO`).
    pub fn add_replica(&mut self, node: Node) {
        if !self.replicas.contains(&node) && node != self.master {
            self.replicas.push(node);
        }
    }

    /// Adds a fellow sentinel (learnt from its hello messages).
    pub fn add_peer(&mut self, node: Node, runid: impl Into<String>) {
        self.peers.push((node, runid.into()));
    }

    /// The primary it reports now.
    pub fn master(&self) -> &Node {
        &self.master
    }

    /// The replicas it reports now, in the order it learnt them.
    pub fn replicas(&self) -> &[Node] {
        &self.replicas
    }

    /// `new` (one of the replicas) replaced the primary: the old primary
    /// is listed as a replica of it (it stays reachable, demoted), and the
    /// sentinel announces the switch, then each replica of the new
    /// primary, as redis-server's `sentinelFailoverSwitchToPromotedSlave`
    /// does. A node that is no replica changes nothing.
    pub fn switch_master(&mut self, new: &Node) -> Vec<Announcement> {
        let Some(at) = self.replicas.iter().position(|r| r == new) else {
            return Vec::new();
        };
        let old = std::mem::replace(&mut self.master, self.replicas.remove(at));
        self.replicas.push(old.clone());
        let mut out = vec![Announcement {
            channel: "+switch-master",
            payload: format!("{} {} {}", self.master_name, old.spaced(), new.spaced()),
        }];
        out.extend(self.replicas.iter().map(|r| Announcement {
            channel: "+slave",
            payload: format!(
                "slave {} {} @ {} {}",
                r.name(),
                r.spaced(),
                self.master_name,
                new.spaced()
            ),
        }));
        out
    }

    /// The reply to one command.
    pub fn execute(&self, args: &[Bytes]) -> Value {
        let Some(name) = args.first() else {
            return Value::NilArray;
        };
        let lower = name.to_ascii_lowercase();
        match lower.as_slice() {
            b"ping" => match args.len() {
                1 => Value::Simple("PONG".into()),
                2 => Value::Bulk(args[1].clone()),
                _ => wrong_arity("ping"),
            },
            b"role" if args.len() == 1 => Value::Array(vec![
                bulk("sentinel"),
                Value::Array(vec![bulk(&self.master_name)]),
            ]),
            b"role" => wrong_arity("role"),
            b"sentinel" if args.len() < 2 => wrong_arity("sentinel"),
            b"sentinel" => self.sentinel(args),
            _ => {
                let shown: Vec<String> = args[1..].iter().map(|a| printable(a)).collect();
                Value::Error(RedisVersion::V7_0.unknown_command(&printable(name), &shown))
            }
        }
    }

    fn sentinel(&self, args: &[Bytes]) -> Value {
        let sub = args[1].to_ascii_lowercase();
        let sub = match sub.as_slice() {
            b"get-master-addr-by-name" => "get-master-addr-by-name",
            b"replicas" => "replicas",
            b"slaves" => "slaves",
            b"sentinels" => "sentinels",
            _ => {
                return Value::Error(format!(
                    "ERR unknown subcommand '{}'. Try SENTINEL HELP.",
                    printable(&args[1]).chars().take(128).collect::<String>()
                ));
            }
        };
        if args.len() != 3 {
            return wrong_arity(&format!("sentinel|{sub}"));
        }
        let known = args[2].as_ref() == self.master_name.as_bytes();
        match sub {
            // An unknown name is a nil array here, an error elsewhere.
            "get-master-addr-by-name" if !known => Value::NilArray,
            "get-master-addr-by-name" => Value::Array(vec![
                bulk(&self.master.ip),
                bulk(&self.master.port.to_string()),
            ]),
            _ if !known => Value::error("ERR No such master with that name"),
            "sentinels" => Value::Array(self.peers.iter().map(|p| self.peer(p)).collect()),
            _ => Value::Array(self.replicas.iter().map(|r| self.replica(r)).collect()),
        }
    }

    /// A replica's fields, in sentinel.c's `addReplySentinelRedisInstance`
    /// order, as a connected replica in sync reports them.
    fn replica(&self, node: &Node) -> Value {
        let master_port = self.master.port.to_string();
        self.instance(
            (&node.name(), node, RUNID, "slave"),
            &[
                ("info-refresh", "0"),
                ("role-reported", "slave"),
                ("role-reported-time", "0"),
                ("master-link-down-time", "0"),
                ("master-link-status", "ok"),
                ("master-host", &self.master.ip),
                ("master-port", &master_port),
                ("slave-priority", "100"),
                ("slave-repl-offset", "0"),
                ("replica-announced", "1"),
            ],
        )
    }

    /// A fellow sentinel's fields (its name is its run id).
    fn peer(&self, (node, runid): &(Node, String)) -> Value {
        self.instance(
            (runid, node, runid, "sentinel"),
            &[
                ("last-hello-message", "0"),
                ("voted-leader", "?"),
                ("voted-leader-epoch", "0"),
            ],
        )
    }

    /// The fields every instance reports, then its kind's own (`tail`).
    fn instance(
        &self,
        (name, node, runid, flags): (&str, &Node, &str, &str),
        tail: &[(&str, &str)],
    ) -> Value {
        let down_after = self.down_after_ms.to_string();
        let port = node.port.to_string();
        let head = [
            ("name", name),
            ("ip", &node.ip),
            ("port", &port),
            ("runid", runid),
            ("flags", flags),
            ("link-pending-commands", "0"),
            ("link-refcount", "1"),
            ("last-ping-sent", "0"),
            ("last-ok-ping-reply", "0"),
            ("last-ping-reply", "0"),
            ("down-after-milliseconds", &down_after),
        ];
        let fields = head.iter().chain(tail);
        Value::Map(fields.map(|(k, v)| (bulk(k), bulk(v))).collect())
    }
}

/// The run id a replica reports (a real one is random).
const RUNID: &str = "0000000000000000000000000000000000000000";

fn bulk(s: &str) -> Value {
    Value::Bulk(Bytes::copy_from_slice(s.as_bytes()))
}

fn wrong_arity(name: &str) -> Value {
    Value::Error(format!(
        "ERR wrong number of arguments for '{name}' command"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Bytes> {
        words.iter().map(|w| Bytes::from(w.to_string())).collect()
    }

    fn sentinel() -> Sentinel {
        let mut s = Sentinel::new("mymaster", Node::new("127.0.0.1", 7001), 1000);
        s.add_replica(Node::new("127.0.0.1", 7002));
        s.add_replica(Node::new("127.0.0.1", 7003));
        s
    }

    /// A switch makes the chosen replica the primary, lists the old
    /// primary among the replicas, and announces the switch then every
    /// replica of the new primary; GET-MASTER-ADDR-BY-NAME follows it.
    #[test]
    fn a_switch_promotes_the_replica_and_demotes_the_primary() {
        let mut s = sentinel();
        let said = s.switch_master(&Node::new("127.0.0.1", 7002));
        let lines: Vec<String> = said
            .iter()
            .map(|a| format!("{} {}", a.channel, a.payload))
            .collect();
        assert_eq!(
            lines,
            [
                "+switch-master mymaster 127.0.0.1 7001 127.0.0.1 7002",
                "+slave slave 127.0.0.1:7003 127.0.0.1 7003 @ mymaster 127.0.0.1 7002",
                "+slave slave 127.0.0.1:7001 127.0.0.1 7001 @ mymaster 127.0.0.1 7002",
            ]
        );
        assert_eq!(
            s.execute(&args(&["SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster"])),
            Value::Array(vec![bulk("127.0.0.1"), bulk("7002")])
        );
        assert_eq!(s.replicas().len(), 2);
        // Not a replica: nothing happens.
        assert!(s.switch_master(&Node::new("127.0.0.1", 9)).is_empty());
        assert_eq!(s.master(), &Node::new("127.0.0.1", 7002));
    }

    /// Redis's errors: an unknown master name (nil for the address, an
    /// error for the lists), an unknown subcommand, a wrong arity, a
    /// command a sentinel lacks.
    #[test]
    fn errors_read_as_redis_words_them() {
        let s = sentinel();
        let run = |w: &[&str]| s.execute(&args(w));
        assert_eq!(
            run(&["sentinel", "get-master-addr-by-name", "nope"]),
            Value::NilArray
        );
        assert_eq!(
            run(&["SENTINEL", "SLAVES", "nope"]),
            Value::error("ERR No such master with that name")
        );
        assert_eq!(
            run(&["SENTINEL", "nope1"]),
            Value::error("ERR unknown subcommand 'nope1'. Try SENTINEL HELP.")
        );
        assert_eq!(
            run(&["SENTINEL", "slaves"]),
            Value::error("ERR wrong number of arguments for 'sentinel|slaves' command")
        );
        assert_eq!(
            run(&["SELECT", "0"]),
            Value::error("ERR unknown command 'SELECT', with args beginning with: '0' ")
        );
        assert_eq!(run(&["PING"]), Value::Simple("PONG".into()));
    }
}
