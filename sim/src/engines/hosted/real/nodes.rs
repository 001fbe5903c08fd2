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
//! - `replication-drop`: every replica runs `DEBUG SLEEP` for the window:
//!   it reads nothing from the primary and acknowledges nothing (so a
//!   `WAIT` counts none), then catches up from what its socket held. When
//!   a promotion falls inside the window, a sleeping replica could
//!   neither answer clients as the new primary nor keep from reading the
//!   window's writes, so instead it is pointed at a port where nothing
//!   listens for the window (`REPLICAOF`), then at the primary again.
//! - A promotion drops from the shadow each lock key the promoted node
//!   lacks, recorded lost to the failover (the other engines read their
//!   promoted replica's data the same way).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use lockcore::{RespTransport, TcpConnect, Transport, Value};
use redis_protocol::codec::Resp2;
use redis_protocol::resp2::types::BytesFrame;
use tokio_util::codec::Framed;

use super::deployment::Deployment;
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
    /// Where every client's proxy relays new connections.
    pub(super) upstream: Upstream,
    /// Closes every client's connections.
    pub(super) outage: Rc<Outage>,
    /// The node whose `MONITOR` lines the shadow replays: the primary.
    watched: Rc<Cell<usize>>,
    /// The spawned processes, when the engine started them.
    deployment: Option<&'a RefCell<Deployment>>,
    scale: u64,
}

impl<'a> Nodes<'a> {
    /// Connects to every server at `addrs`.
    pub(super) async fn connect(
        addrs: Vec<String>,
        deployment: Option<&'a RefCell<Deployment>>,
        scale: u64,
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
        Ok(Nodes {
            upstream: Rc::new(RefCell::new(addrs[0].clone())),
            roles: RefCell::new((0..addrs.len()).collect()),
            addrs,
            controls,
            primary_down: Cell::new(false),
            outage: Rc::new(Outage::default()),
            watched: Rc::new(Cell::new(0)),
            deployment,
            scale,
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

    /// Every node's control connection, the primary's first.
    pub(super) fn all(&self) -> impl Iterator<Item = (&str, &RespTransport)> {
        let controls = self.controls.iter().map(|c| &**c);
        self.addrs.iter().map(String::as_str).zip(controls)
    }

    /// Waits until every replica acknowledges a write: a replica counts
    /// in a lock's `WAIT` only once its first sync is over. The write is
    /// a `PUBLISH` nobody hears (replicated, it moves the offset), and the
    /// run's `MONITOR` is not open yet.
    pub(super) async fn wait_synced(&self) -> Result<(), SimError> {
        let replicas = self.addrs.len() - 1;
        if replicas == 0 {
            return Ok(());
        }
        let started = tokio::time::Instant::now();
        let addr = self.primary_addr().to_owned();
        let wait = words(&["WAIT", &replicas.to_string(), "50"]);
        loop {
            let publish = words(&["PUBLISH", "locksim:sync", "1"]);
            let acked = within("cannot WAIT on", &addr, async {
                let control = self.control();
                control.send(&publish).await.map_err(|e| e.to_string())?;
                control.send(&wait).await.map_err(|e| e.to_string())
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
                        .line(&mut recorder::lock(&watched.0), line);
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
        let sent = commands.iter().map(|c| control.send(c));
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
                .send(&words(&["INFO", "replication"]))
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
        // The old primary first, so its clients lose their connections at
        // the switchover's instant, as on the other engines it is demoted
        // then (Sentinel demotes it later: see `sentinel`).
        let port = self.port(new);
        let mut others: Vec<usize> = self.roles.borrow()[1..].to_vec();
        others.sort_by_key(|&n| n != old);
        for node in others {
            if node == old && !demote {
                continue;
            }
            let slave_of = super::sentinel::slave_of(Some(("127.0.0.1", port)));
            self.send_all(node, slave_of).await;
        }
        // Its MONITOR opens after the transaction, which kills it.
        if let Err(e) = self.monitor(new, recorder, shadow).await {
            tracing::warn!(error = %e, "cannot monitor the promoted replica");
        }
        new
    }

    /// The port of node `node`.
    fn port(&self, node: usize) -> u16 {
        self.addrs[node]
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse().ok())
            .unwrap_or(0)
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

    /// Kills the primary's process: its connections close, and the
    /// proxies find nothing to connect to until a promotion.
    pub(super) fn kill_primary(&self) {
        self.primary_down.set(true);
        let primary = self.roles.borrow()[0];
        if let Some(deployment) = self.deployment {
            deployment.borrow_mut().kill(primary);
        }
    }

    /// Starts the killed old primary (`node`) again as a replica of the
    /// primary, as it rejoins after a failover.
    pub(super) fn rejoin(&self, node: usize) {
        let primary = self.port(self.roles.borrow()[0]);
        if let Some(deployment) = self.deployment
            && let Err(e) = deployment.borrow_mut().spawn(node, Some(primary))
        {
            tracing::warn!(error = %e, "the old primary cannot rejoin");
        }
    }

    /// Every replica sleeps `ms` (spec time): replication stalls. The
    /// sleeps run in the background (each replica's control connection
    /// waits for its own).
    pub(super) fn stall(&self, ms: u64) {
        let secs = format!("{:.3}", (ms as f64 / self.scale.max(1) as f64) / 1_000.0);
        self.to_replicas(|| words(&["DEBUG", "SLEEP", &secs]));
    }

    /// Replication stalls through a promotion: every replica is pointed
    /// at a port where nothing listens ([`NOWHERE`]). It keeps its data
    /// and answers clients, as a promoted replica must, but what the
    /// primary writes from now on never reaches it (asleep, it would read
    /// it from its socket on waking) and a `WAIT` counts none.
    pub(super) fn detach_replicas(&self) {
        let nowhere = NOWHERE.to_string();
        self.to_replicas(|| words(&["REPLICAOF", "127.0.0.1", &nowhere]));
    }

    /// The end of [`Nodes::detach_replicas`]: every replica follows the
    /// primary again and resyncs from it. Nothing while the primary is
    /// down: its promotion points them at the new one.
    pub(super) fn reattach_replicas(&self) {
        if self.primary_down.get() {
            return;
        }
        let port = self.port(self.primary_node()).to_string();
        self.to_replicas(|| words(&["REPLICAOF", "127.0.0.1", &port]));
    }

    /// Sends `command()` to every replica in the background, ignoring the
    /// replies.
    fn to_replicas(&self, command: impl Fn() -> Vec<Bytes>) {
        for node in self.roles.borrow().iter().skip(1) {
            let control = self.controls[*node].clone();
            let command = command();
            tokio::task::spawn_local(async move {
                let _ = control.send(&command).await;
            });
        }
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
                .send(&words(&["EXISTS", lock.as_str()]))
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
