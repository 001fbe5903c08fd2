//! The servers of a run as the driver sees them: a control connection to
//! each, which one is the primary, which one the clients' proxies reach,
//! and whose `MONITOR` stream the shadow replays.
//!
//! With replicas, the replication faults are carried out on the real
//! processes, the way Sentinel does them (see `sentinel`):
//!
//! - `switchover`: at its start the chosen replica gets Sentinel's
//!   `SLAVEOF NO ONE` transaction, every other replica and the live
//!   primary its `SLAVEOF <new primary>` one. Each transaction kills the
//!   server's normal and pub/sub clients, so the clients' connections to
//!   the demoted primary close there and then; they reconnect to the
//!   address they know, the demoted primary, now a replica. At its end
//!   (Redisson handling `+switch-master`) the proxies move to the new
//!   primary and close every connection, so the clients reconnect to it.
//! - `failover`: at its start the primary's process is killed; at its
//!   end a replica is promoted as above, the other replicas follow it,
//!   the old primary's process is started again as its replica, and the
//!   proxies move to it.
//! - Every replica replicates through a relay of its own on loopback (a
//!   [`Proxy`] to the primary, as the clients' are to Redis): `REPLICAOF`
//!   points it at its relay, which a promotion points at the new primary.
//! - `replication-drop`: the relays of the replicas it stalls hold their
//!   bytes both ways for the window. The primary still counts each
//!   replica connected (in `INFO` and in `WAIT`'s numbers), none
//!   acknowledges, and none reads what the primary writes; when the
//!   window ends they catch up from what the relay held. A replica
//!   promoted inside the window never receives it.
//! - `replica-down`: the replica is pointed at [`NOWHERE`] for the window,
//!   which closes its link at once: the primary frees its client, so it
//!   leaves `connected_slaves` and `WAIT`'s count. At the end it follows
//!   its relay again, a partial resync from the backlog.
//! - A promotion drops from the shadow each lock key the promoted node
//!   lacks, recorded lost to the failover (the other engines read their
//!   promoted replica's data the same way).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use lockcore::{RespTransport, Shard, TcpConnect, Transport, Value};
use redis_protocol::codec::Resp2;
use redis_protocol::resp2::types::BytesFrame;
use tokio_util::codec::Framed;

use super::deployment::Deployment;
use super::relays::Relays;
use super::{Named, failed, within, words};
use crate::engines::hosted::monitor::{self, Shadow};
use crate::engines::hosted::proxy::{Outage, Upstream};
use crate::engines::hosted::recorder::{self, Shared};
use crate::{SimError, SimTime};

/// A loopback port where nothing listens (TCP port 1, `tcpmux`, is
/// unassigned in practice): a replica pointed at it keeps failing to
/// connect.
const NOWHERE: u16 = 1;

/// How long a replica may take to finish its first sync.
const SYNC_WITHIN: Duration = Duration::from_secs(10);

/// The run's servers.
pub(super) struct Nodes<'a> {
    /// Each server's `HOST:PORT`; node 0 starts as the primary.
    addrs: Vec<String>,
    /// locksim's own connection to each server.
    controls: Vec<Rc<RespTransport>>,
    /// The primary's process was killed and no replica promoted yet.
    pub(super) primary_down: Cell<bool>,
    /// The node of the primary (`roles[0]`) and of replica k (`roles[k +
    /// 1]`), as the fault plan numbers replicas.
    roles: RefCell<Vec<usize>>,
    /// Per node, the `replica-down` windows open on its link.
    links_down: RefCell<Vec<u32>>,
    /// Each node's replication link.
    relays: RefCell<Relays>,
    /// Where every client's proxy relays new connections.
    pub(super) upstream: Upstream,
    /// Closes every client's connections.
    pub(super) outage: Rc<Outage>,
    /// The node whose `MONITOR` lines the shadow replays: the primary.
    watched: Rc<Cell<usize>>,
    /// The spawned processes, when the engine started them.
    deployment: Option<&'a RefCell<Deployment>>,
    scale: u64,
    /// The shadow's node the primary's lines are replayed on: the
    /// master's number when there are several, else 0.
    shadow_node: usize,
}

impl<'a> Nodes<'a> {
    /// Connects to every server at `addrs` (a primary and its replicas),
    /// master `shadow_node` of several (else 0).
    pub(super) async fn connect(
        addrs: Vec<String>,
        deployment: Option<&'a RefCell<Deployment>>,
        scale: u64,
        shadow_node: usize,
    ) -> Result<Nodes<'a>, SimError> {
        let mut controls = Vec::new();
        for addr in &addrs {
            let tcp =
                TcpConnect::new(&format!("redis://{addr}")).map_err(|e| failed(e.to_string()))?;
            let control = within("cannot connect to", addr, async {
                let named = Named {
                    tcp,
                    name: "locksim-control".to_owned(),
                    scale,
                };
                RespTransport::connect_with(named)
                    .await
                    .map_err(|e| e.to_string())
            })
            .await?;
            controls.push(Rc::new(control));
        }
        let relays = RefCell::new(Relays::start(&addrs[0], addrs.len(), scale).await?);
        Ok(Nodes {
            upstream: Rc::new(RefCell::new(addrs[0].clone())),
            roles: RefCell::new((0..addrs.len()).collect()),
            links_down: RefCell::new(vec![0; addrs.len()]),
            relays,
            addrs,
            controls,
            primary_down: Cell::new(false),
            outage: Rc::new(Outage::default()),
            watched: Rc::new(Cell::new(0)),
            deployment,
            scale,
            shadow_node,
        })
    }

    /// The primary's `HOST:PORT`.
    pub(super) fn primary_addr(&self) -> &str {
        &self.addrs[self.roles.borrow()[0]]
    }

    /// The primary's node.
    pub(super) fn primary_node(&self) -> usize {
        self.roles.borrow()[0]
    }

    /// locksim's connection to the primary.
    pub(super) fn control(&self) -> &RespTransport {
        &self.controls[self.roles.borrow()[0]]
    }

    /// Points every replica at its relay, then waits until each
    /// acknowledges a write: a replica counts in a lock's `WAIT` only once
    /// its first sync through the relay is over. The write is
    /// a `PUBLISH` nobody hears (replicated, it moves the offset), and the
    /// run's `MONITOR` is not open yet.
    pub(super) async fn wait_synced(&self) -> Result<(), SimError> {
        let replicas = self.addrs.len() - 1;
        if replicas == 0 {
            return Ok(());
        }
        for node in 1..self.addrs.len() {
            let port = self.relays.borrow().port(node).to_string();
            let replicaof = words(&["REPLICAOF", "127.0.0.1", &port]);
            within("cannot point at its relay", &self.addrs[node], async {
                self.controls[node]
                    .send(Shard(0), &replicaof)
                    .await
                    .map_err(|e| e.to_string())
            })
            .await?;
        }
        let started = tokio::time::Instant::now();
        let addr = self.primary_addr().to_owned();
        let wait = words(&["WAIT", &replicas.to_string(), "50"]);
        loop {
            let publish = words(&["PUBLISH", "locksim:sync", "1"]);
            let acked = within("cannot WAIT on", &addr, async {
                let control = self.control();
                control
                    .send(Shard(0), &publish)
                    .await
                    .map_err(|e| e.to_string())?;
                control
                    .send(Shard(0), &wait)
                    .await
                    .map_err(|e| e.to_string())
            })
            .await?;
            if acked == Value::Int(replicas as i64) {
                return Ok(());
            }
            if started.elapsed() > SYNC_WITHIN {
                return Err(failed(format!(
                    "the replicas of {addr} did not sync within {}s (WAIT answered {acked:?})",
                    SYNC_WITHIN.as_secs()
                )));
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Starts replaying node `node`'s `MONITOR` lines on `shadow` while it
    /// is the watched node.
    async fn monitor(
        &self,
        node: usize,
        recorder: &Shared,
        shadow: &Rc<RefCell<Shadow>>,
    ) -> Result<(), SimError> {
        let addr = &self.addrs[node];
        let mut framed = within("cannot monitor", addr, async {
            let stream = tokio::net::TcpStream::connect(addr)
                .await
                .map_err(|e| e.to_string())?;
            let mut framed = Framed::new(stream, Resp2::default());
            let command = BytesFrame::Array(vec![BytesFrame::BulkString("MONITOR".into())]);
            framed.send(command).await.map_err(|e| e.to_string())?;
            match framed.next().await {
                Some(Ok(BytesFrame::SimpleString(_))) => Ok(framed),
                other => Err(format!("MONITOR answered {other:?}")),
            }
        })
        .await?;
        self.watched.set(node);
        let into = self.shadow_node;
        let watched = (recorder.clone(), shadow.clone(), self.watched.clone());
        tokio::task::spawn_local(async move {
            while let Some(Ok(BytesFrame::SimpleString(text))) = framed.next().await {
                if watched.2.get() != node {
                    // Another node is the primary now.
                    return;
                }
                if let Some(line) = monitor::parse(&String::from_utf8_lossy(&text)) {
                    watched
                        .1
                        .borrow_mut()
                        .line(&mut recorder::lock(&watched.0), into, line);
                }
            }
        });
        Ok(())
    }

    /// Watches the primary's `MONITOR` stream.
    pub(super) async fn monitor_primary(
        &self,
        recorder: &Shared,
        shadow: &Rc<RefCell<Shadow>>,
    ) -> Result<(), SimError> {
        let primary = self.roles.borrow()[0];
        self.monitor(primary, recorder, shadow).await
    }

    /// Sends `commands` to node `node`, ignoring the replies as Sentinel
    /// does (their effects are what counts).
    /// Pipelined, as Sentinel's hiredis link sends them: the transaction
    /// takes one round trip.
    async fn send_all(&self, node: usize, commands: Vec<Vec<Bytes>>) {
        let control = &self.controls[node];
        let sent = commands.iter().map(|c| control.send(Shard(0), c));
        let _ = futures::future::join_all(sent).await;
    }

    /// The replica (from 0) to promote: `asked`, or the one with the
    /// largest replication offset, as Sentinel picks (the first of equals).
    async fn pick(&self, asked: Option<u32>) -> usize {
        let roles = self.roles.borrow().clone();
        if let Some(k) = asked {
            return k as usize;
        }
        if roles.len() == 2 {
            return 0;
        }
        let mut best = (0, 0u64);
        for (k, node) in roles.iter().skip(1).enumerate() {
            let info = self.controls[*node]
                .send(Shard(0), &words(&["INFO", "replication"]))
                .await;
            let offset = info.ok().and_then(|i| offset(&text(&i))).unwrap_or(0);
            if k == 0 || offset > best.1 {
                best = (k, offset);
            }
        }
        best.0
    }

    /// Promotes replica `asked` (or Sentinel's pick) with Sentinel's
    /// transaction, makes every other live node its replica the same way,
    /// and watches its `MONITOR`. The old primary (`roles[0]` before) is
    /// demoted if `demote`, and otherwise left alone (it is down). Returns
    /// the promoted node.
    pub(super) async fn promote(
        &self,
        asked: Option<u32>,
        demote: bool,
        at: SimTime,
        recorder: &Shared,
        shadow: &Rc<RefCell<Shadow>>,
    ) -> usize {
        self.primary_down.set(false);
        let k = self.pick(asked).await;
        let (old, new) = {
            let mut roles = self.roles.borrow_mut();
            roles.swap(0, k + 1);
            (roles[k + 1], roles[0])
        };
        self.send_all(new, super::sentinel::slave_of(None)).await;
        self.forget_lost(new, at, recorder, shadow).await;
        let replicas: Vec<usize> = self.roles.borrow()[1..].to_vec();
        let (nodes, scale) = (self.addrs.len(), self.scale);
        match Relays::start(&self.addrs[new], nodes, scale).await {
            Ok(fresh) => self.relays.borrow_mut().renew(fresh, &replicas),
            Err(e) => tracing::warn!(error = %e, "the replicas cannot follow the promoted replica"),
        }
        // The old primary first, so its clients lose their connections at
        // the switchover's instant, as on the other engines it is demoted
        // then (Sentinel demotes it later: see `sentinel`).
        let mut others = replicas;
        others.sort_by_key(|&n| n != old);
        for node in others {
            if node == old && !demote {
                continue;
            }
            let relay = self.relays.borrow().port(node);
            let slave_of = super::sentinel::slave_of(Some(("127.0.0.1", relay)));
            self.send_all(node, slave_of).await;
        }
        // Its MONITOR opens after the transaction, which kills it.
        if let Err(e) = self.monitor(new, recorder, shadow).await {
            tracing::warn!(error = %e, "cannot monitor the promoted replica");
        }
        new
    }

    /// The clients' proxies move to the primary and close every
    /// connection: the clients reconnect to it (Redisson's sentinel
    /// manager on `+switch-master`). Nothing when they are there already.
    pub(super) fn follow_primary(&self) {
        let primary = self.primary_addr().to_owned();
        if *self.upstream.borrow() != primary {
            *self.upstream.borrow_mut() = primary;
            self.outage.cut();
        }
    }

    /// Kills the primary's process: its connections close, its
    /// replication links with what they held, and the proxies find
    /// nothing to connect to until a promotion.
    pub(super) fn kill_primary(&self) {
        self.primary_down.set(true);
        self.relays.borrow().cut();
        let primary = self.roles.borrow()[0];
        if let Some(deployment) = self.deployment {
            deployment.borrow_mut().kill(primary);
        }
    }

    /// Starts the killed old primary (`node`) again as a replica of the
    /// primary, through its relay, as it rejoins after a failover.
    pub(super) fn rejoin(&self, node: usize) {
        let relay = self.relays.borrow().port(node);
        if let Some(deployment) = self.deployment
            && let Err(e) = deployment.borrow_mut().spawn(node, Some(relay))
        {
            tracing::warn!(error = %e, "the old primary cannot rejoin");
        }
    }

    /// Replication to every replica (`None`) or to replica `k` stalls
    /// (`on`) for stall `i` (its place in the plan), or flows again: their
    /// relays hold their bytes.
    pub(super) fn stall(&self, i: usize, on: bool, k: Option<usize>) {
        let mut relays = self.relays.borrow_mut();
        if !on {
            relays.release(i);
            return;
        }
        let roles = self.roles.borrow();
        let nodes: Vec<usize> = match k {
            Some(k) => roles.get(k + 1).copied().into_iter().collect(),
            None => roles[1..].to_vec(),
        };
        relays.hold(i, k, &nodes);
    }

    /// Replica `k`'s link to the primary goes down (pointed at
    /// [`NOWHERE`]), or comes back (`up`, the last open window closing):
    /// it follows its relay again, unless the primary is down.
    pub(super) fn replica_link(&self, k: usize, up: bool) {
        let Some(&node) = self.roles.borrow().get(k + 1) else {
            return;
        };
        let mut down = self.links_down.borrow_mut();
        if up {
            down[node] = down[node].saturating_sub(1);
            if down[node] > 0 || self.primary_down.get() {
                return;
            }
            let port = self.relays.borrow().port(node).to_string();
            self.to_node(node, words(&["REPLICAOF", "127.0.0.1", &port]));
        } else {
            down[node] += 1;
            let nowhere = NOWHERE.to_string();
            self.to_node(node, words(&["REPLICAOF", "127.0.0.1", &nowhere]));
        }
    }

    /// Sends `command` to node `node` in the background, ignoring the
    /// reply.
    fn to_node(&self, node: usize, command: Vec<Bytes>) {
        let control = self.controls[node].clone();
        tokio::task::spawn_local(async move {
            let _ = control.send(Shard(0), &command).await;
        });
    }

    /// The lock keys `node`, just promoted, lacks while the shadow has
    /// them (their writes never reached it): the shadow forgets each, and
    /// it is recorded lost to the failover at `at`, as the other engines
    /// record what their promoted replica lacked.
    async fn forget_lost(
        &self,
        node: usize,
        at: SimTime,
        recorder: &Shared,
        shadow: &Rc<RefCell<Shadow>>,
    ) {
        let locks = recorder::lock(recorder).seen_locks();
        for lock in locks {
            let exists = self.controls[node]
                .send(Shard(0), &words(&["EXISTS", lock.as_str()]))
                .await;
            if matches!(exists, Ok(Value::Int(0))) {
                let mut rec = recorder::lock(recorder);
                shadow.borrow_mut().lose(&mut rec, &lock, at);
            }
        }
    }
}

/// A bulk reply's text.
fn text(value: &Value) -> String {
    match value {
        Value::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        _ => String::new(),
    }
}

/// `slave_repl_offset` from a replica's `INFO replication`.
fn offset(info: &str) -> Option<u64> {
    info.lines()
        .find_map(|l| l.strip_prefix("slave_repl_offset:"))
        .and_then(|v| v.trim().parse().ok())
}
