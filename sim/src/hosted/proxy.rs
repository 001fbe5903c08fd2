//! A loopback proxy between one client and a real Redis, through which the
//! real-Redis engine injects network faults: it holds what each direction
//! carries during a partition (TCP delivers it once the link heals), and
//! delays it during a latency or one-way delay window. Order is kept:
//! each direction forwards its bytes in the order they came.

use std::cell::RefCell;
use std::net::{Ipv4Addr, SocketAddr};
use std::rc::Rc;
use std::time::Duration;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
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
}

/// A listening proxy; its connections run on the current `LocalSet`.
#[derive(Debug)]
pub(crate) struct Proxy {
    pub(crate) addr: SocketAddr,
}

impl Proxy {
    /// Listens on a free loopback port and relays each connection to
    /// `upstream` under `link`'s rules; delays are drawn from `rng`.
    pub(crate) async fn start(
        upstream: String,
        link: Rc<Link>,
        rng: ChaCha8Rng,
    ) -> std::io::Result<Proxy> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let rng = Rc::new(RefCell::new(rng));
        tokio::task::spawn_local(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(&upstream).await else {
                    continue;
                };
                let _ = (client.set_nodelay(true), server.set_nodelay(true));
                let (client_rd, client_wr) = client.into_split();
                let (server_rd, server_wr) = server.into_split();
                let (l, r) = (link.clone(), rng.clone());
                tokio::task::spawn_local(forward(client_rd, server_wr, Side::Up, l, r));
                let (l, r) = (link.clone(), rng.clone());
                tokio::task::spawn_local(forward(server_rd, client_wr, Side::Down, l, r));
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

/// Relays `from` to `to` chunk by chunk, each held while the direction is
/// partitioned and delayed from its arrival by the direction's delay.
async fn forward(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    side: Side,
    link: Rc<Link>,
    rng: Rc<RefCell<ChaCha8Rng>>,
) {
    let rules = match side {
        Side::Up => &link.up,
        Side::Down => &link.down,
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
            let ms = rng.borrow_mut().random_range(min..=max.max(min));
            tokio::time::sleep_until(arrived + Duration::from_millis(ms)).await;
        }
        rules.held.opened().await;
        if to.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}
