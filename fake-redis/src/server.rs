//! The RESP server: an [`Engine`] shared by connections, and listeners.
//!
//! Connections run the engine one command at a time behind a std `Mutex`
//! (never held across an `.await`, and a command never blocks), which gives
//! scripts their atomicity. Everything a connection must write — its own
//! replies and pub/sub messages from others — goes through its outbox in
//! the order the engine produced it, so a message never overtakes a reply
//! that came first.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::{Bytes, BytesMut};
use tokio::net::TcpListener;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;

use crate::frame::encode;
use crate::{ConnId, Engine, Value};

struct Hub {
    engine: Engine,
    outboxes: BTreeMap<ConnId, UnboundedSender<Bytes>>,
}

/// An [`Engine`] shared by every connection of a server. Cloning shares it.
#[derive(Clone)]
pub struct SharedEngine {
    hub: Arc<Mutex<Hub>>,
}

impl std::fmt::Debug for SharedEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedEngine").finish_non_exhaustive()
    }
}

impl SharedEngine {
    /// Shares `engine` for serving.
    pub fn new(engine: Engine) -> Self {
        Self {
            hub: Arc::new(Mutex::new(Hub {
                engine,
                outboxes: BTreeMap::new(),
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Hub> {
        // A panic elsewhere must not take the server down: the engine's
        // state is still consistent (commands mutate it only on success).
        self.hub.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the engine, for inspection (for example
    /// [`Engine::hash_snapshot`]) while the server runs. Commands run here
    /// reach no connection.
    pub fn with_engine<R>(&self, f: impl FnOnce(&mut Engine) -> R) -> R {
        f(&mut self.lock().engine)
    }

    /// A new connection and the receiving end of its outbox.
    pub(crate) fn register(&self) -> (ConnId, UnboundedReceiver<Bytes>) {
        let (tx, rx) = unbounded_channel();
        let mut hub = self.lock();
        let conn = hub.engine.connect();
        hub.outboxes.insert(conn, tx);
        (conn, rx)
    }

    /// Forgets a connection; its outbox closes once drained.
    pub(crate) fn unregister(&self, conn: ConnId) {
        let mut hub = self.lock();
        hub.engine.disconnect(conn);
        hub.outboxes.remove(&conn);
    }

    /// Runs one command and routes its output; whether the connection must
    /// close afterwards.
    pub(crate) fn execute(&self, conn: ConnId, args: Vec<Bytes>) -> bool {
        let mut hub = self.lock();
        let response = hub.engine.execute(conn, args);
        // Redis writes a message to each subscriber while PUBLISH runs,
        // before the publisher's own reply: same order here.
        for (to, message) in &response.deliveries {
            let protocol = hub.engine.protocol(*to);
            if let Some(outbox) = hub.outboxes.get(to) {
                let mut out = BytesMut::new();
                encode(message, protocol, &mut out);
                let _ = outbox.send(out.freeze());
            }
        }
        let protocol = hub.engine.protocol(conn);
        if let Some(outbox) = hub.outboxes.get(&conn) {
            let mut out = BytesMut::new();
            for reply in &response.replies {
                encode(reply, protocol, &mut out);
            }
            let _ = outbox.send(out.freeze());
        }
        response.close
    }

    /// Queues an error reply for `conn` (a protocol error before closing).
    pub(crate) fn send_error(&self, conn: ConnId, text: String) {
        let hub = self.lock();
        let protocol = hub.engine.protocol(conn);
        if let Some(outbox) = hub.outboxes.get(&conn) {
            let mut out = BytesMut::new();
            encode(&Value::Error(text), protocol, &mut out);
            let _ = outbox.send(out.freeze());
        }
    }
}

/// Accepts connections on `listener` forever, each served by its own task.
pub async fn serve(listener: TcpListener, shared: SharedEngine) {
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                tracing::debug!(%peer, "connection accepted");
                let _ = stream.set_nodelay(true);
                tokio::spawn(crate::serve_connection(shared.clone(), stream));
            }
            Err(e) => {
                // Out of descriptors and the like: wait instead of spinning.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
    }
}

/// Starts a server for `shared` on a free loopback port, as a task of the
/// current tokio runtime. Returns its address and the accept loop's task
/// (abort it to stop accepting).
pub async fn spawn_local_server(
    shared: SharedEngine,
) -> std::io::Result<(SocketAddr, JoinHandle<()>)> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
    let addr = listener.local_addr()?;
    Ok((addr, tokio::spawn(serve(listener, shared))))
}

/// A server on a free loopback port, running on its own thread and tokio
/// runtime, for tests without a runtime of their own. Dropping it stops
/// the server and closes every connection.
#[derive(Debug)]
pub struct BackgroundServer {
    addr: SocketAddr,
    shared: SharedEngine,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BackgroundServer {
    /// Starts serving `shared`.
    pub fn start(shared: SharedEngine) -> std::io::Result<BackgroundServer> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("fake-redis-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(async move {
                    match TcpListener::from_std(listener) {
                        Ok(listener) => {
                            tokio::select! {
                                () = serve(listener, serving) => {}
                                _ = stopped => {}
                            }
                        }
                        Err(e) => tracing::error!(error = %e, "listener unusable"),
                    }
                });
                // Dropping the runtime here cancels every connection task.
            })?;
        Ok(BackgroundServer {
            addr,
            shared,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The engine it serves.
    pub fn shared(&self) -> &SharedEngine {
        &self.shared
    }
}

impl Drop for BackgroundServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
