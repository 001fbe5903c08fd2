//! A loopback proxy between one client and a real Redis, through which the
//! real-Redis engine injects network faults: it holds what each direction
//! carries during a partition and forwards it at TCP's first
//! retransmission after the heal (`crate::model::retransmission`), and
//! delays it during a latency or one-way delay window. Order is kept:
//! each direction forwards its bytes in the order they came. The same
//! proxy relays a replica's link to its primary (`real::nodes`), held
//! while replication to it stalls.

use std::cell::{Cell, RefCell};
use std::net::{Ipv4Addr, SocketAddr};
use std::rc::Rc;
use std::time::Duration;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::time::Instant;

use super::gate::Gate;

/// What one direction of a link does to its bytes now.
#[derive(Debug, Default)]
pub(crate) struct Rules {
    /// Closed during a partition.
    pub(crate) held: Gate,
    /// Extra delay, in real ms: a range drawn per chunk (latency), or a
    /// fixed delay (one-way delay windows).
    pub(crate) delay: RefCell<Option<(u64, u64)>>,
}

/// Both directions of one client's link.
#[derive(Debug, Default)]
pub(crate) struct Link {
    /// Client to Redis.
    pub(crate) up: Rules,
    /// Redis to client.
    pub(crate) down: Rules,
    /// The run's time scale: TCP's retransmission schedule is in spec
    /// time.
    pub(crate) scale: u64,
    /// Held bytes go on as soon as the link opens, not at TCP's next
    /// retransmission: a replication link, whose stall the other engines
    /// end by sending what it held at once.
    pub(crate) resumes_at_open: bool,
}

/// Redis as every client's proxy shows it: up, or stopped for a while.
#[derive(Debug)]
pub(crate) struct Outage {
    /// Redis-down windows open now: a new connection is closed at once,
    /// as against a server that is not there.
    pub(crate) down: Cell<u32>,
    /// Bumped to close every relayed connection.
    cuts: watch::Sender<u64>,
}

impl Default for Outage {
    fn default() -> Self {
        Outage {
            down: Cell::new(0),
            cuts: watch::Sender::new(0),
        }
    }
}

impl Outage {
    /// Closes every connection relayed so far, both ways, as when Redis's
    /// process ends: each client reads end-of-stream, and Redis forgets
    /// each client and its subscriptions.
    pub(crate) fn cut(&self) {
        self.cuts.send_modify(|n| *n += 1);
    }
}

/// Where a proxy relays new connections: Redis's address, which a
/// failover or switchover moves to the promoted replica (as Redisson's
/// sentinel manager moves its connections on `+switch-master`).
pub(crate) type Upstream = Rc<RefCell<String>>;

/// A listening proxy; its connections run on the current `LocalSet`.
#[derive(Debug)]
pub(crate) struct Proxy {
    pub(crate) addr: SocketAddr,
}

impl Proxy {
    /// Listens on a free loopback port and relays each connection to
    /// `upstream` (as it is when the connection comes) under `link`'s
    /// rules; delays are drawn from `rng`.
    pub(crate) async fn start(
        upstream: Upstream,
        link: Rc<Link>,
        outage: Rc<Outage>,
        rng: ChaCha8Rng,
    ) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let rng = Rc::new(RefCell::new(rng));
        tokio::task::spawn_local(async move {
            while let Ok((client, _)) = listener.accept().await {
                if outage.down.get() > 0 {
                    continue;
                }
                let target = upstream.borrow().clone();
                let Ok(server) = TcpStream::connect(&target).await else {
                    continue;
                };
                let _ = (client.set_nodelay(true), server.set_nodelay(true));
                let (client_rd, client_wr) = client.into_split();
                let (server_rd, server_wr) = server.into_split();
                let relay = |side| Relay {
                    side,
                    link: link.clone(),
                    rng: rng.clone(),
                    cut: outage.cuts.subscribe(),
                };
                tokio::task::spawn_local(relay(Side::Up).forward(client_rd, server_wr));
                tokio::task::spawn_local(relay(Side::Down).forward(server_rd, client_wr));
            }
        });
        Ok(Proxy { addr })
    }
}

#[derive(Debug, Clone, Copy)]
enum Side {
    Up,
    Down,
}

/// One direction of one relayed connection.
struct Relay {
    side: Side,
    link: Rc<Link>,
    rng: Rc<RefCell<ChaCha8Rng>>,
    cut: watch::Receiver<u64>,
}

impl Relay {
    /// Relays `from` to `to` until either end closes or the connection is
    /// cut, then closes `to`.
    async fn forward(self, mut from: impl AsyncRead + Unpin, mut to: impl AsyncWrite + Unpin) {
        let mut cut = self.cut.clone();
        tokio::select! {
            biased;
            _ = cut.changed() => {}
            () = self.relay(&mut from, &mut to) => {}
        }
        // A partitioned client learns of the close with TCP's
        // retransmission after the heal, as of anything else.
        if let Side::Down = self.side
            && !self.through(&self.link.down, Instant::now()).await
        {
            return;
        }
        let _ = to.shutdown().await;
    }

    /// Waits while `rules` hold what arrived at `arrived` (the first lost
    /// segment's send, give or take the loopback): through a partition it
    /// goes at TCP's first retransmission after the heal, on the spec's
    /// clock. False when the kernel would give up first (the connection
    /// is reset).
    async fn through(&self, rules: &Rules, arrived: Instant) -> bool {
        if !rules.held.is_closed() {
            return true;
        }
        rules.held.opened().await;
        if self.link.resumes_at_open {
            return true;
        }
        let scale = u32::try_from(self.link.scale.max(1)).unwrap_or(u32::MAX);
        let heal_after = (Instant::now() - arrived).saturating_mul(scale);
        match crate::model::retransmission::delivered_after(heal_after) {
            Some(after) => {
                tokio::time::sleep_until(arrived + after / scale).await;
                true
            }
            None => false,
        }
    }

    /// Chunk by chunk, each held while the direction is partitioned and
    /// delayed from its arrival by the direction's delay.
    async fn relay(&self, from: &mut (impl AsyncRead + Unpin), to: &mut (impl AsyncWrite + Unpin)) {
        let rules = match self.side {
            Side::Up => &self.link.up,
            Side::Down => &self.link.down,
        };
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            let n = match from.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let arrived = Instant::now();
            let delay = *rules.delay.borrow();
            if let Some((min, max)) = delay {
                let ms = self.rng.borrow_mut().random_range(min..=max.max(min));
                tokio::time::sleep_until(arrived + Duration::from_millis(ms)).await;
            }
            // What comes next waits in the socket behind it.
            if !self.through(rules, arrived).await || to.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    }
}
