//! The RESP server: an [`Engine`] shared by connections, and listeners.
//!
//! Redis runs one command at a time, so every cross-connection order is
//! well defined: a `PUBLISH` that runs after an `UNSUBSCRIBE` was answered
//! never reaches that subscriber. Here one std `Mutex` (never held across an
//! `.await`, and a command never blocks) covers the engine *and* every
//! connection's output buffer, and a command's replies and the messages it
//! fans out are appended to those buffers before the lock is released. So
//! whatever thread a connection's task runs on, commands take effect in one
//! global order and each connection's bytes leave in that order.
//!
//! Output is written in batches: a connection's task runs the whole
//! pipeline it read, then writes everything pending in one chunk, so
//! `-P 16` costs one write, not 16.
//! Buffers obey Redis's `client-output-buffer-limit` ([`crate::Outbox`]
//! docs): a client over its limit is closed and its output dropped.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use rustc_hash::FxHashMap;
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::frame::encode;
use crate::outbox::{Now, Outbox, Take};
use crate::{ConnId, Engine, Value};

/// Wake-ups for one connection's task.
#[derive(Debug, Default)]
pub(crate) struct Signals {
    /// Output is pending (another connection's command sent it a message,
    /// a blocked command was answered), or the connection is closing.
    pub(crate) output: Notify,
    /// The connection was closed (its output limit, a failed write, a
    /// Redis that stops): drop what is pending and close the socket.
    pub(crate) killed: Notify,
}

struct Slot {
    outbox: Outbox,
    signals: Arc<Signals>,
}

/// Sees every command right after it ran, with the engine (to read what
/// it changed) and the connection that sent it: how an observer (the
/// simulator's recorder) watches Redis without polling it.
pub type CommandHook = Box<dyn FnMut(&mut Engine, ConnId, &[Bytes]) + Send>;

struct Hub {
    engine: Engine,
    /// Hashed: every command looks its connection up (see `State::clients`).
    slots: FxHashMap<ConnId, Slot>,
    hook: Option<CommandHook>,
}

impl Hub {
    /// Appends `values` to `conn`'s output and applies its output limit;
    /// a client over it is closed (as Redis's `freeClientAsync`: its
    /// subscriptions go now, its socket once its tasks see the signal).
    fn append(&mut self, conn: ConnId, values: &[Value], now: &mut Now, wake: bool) {
        let protocol = self.engine.protocol(conn);
        let class = if self.engine.is_pubsub_client(conn) {
            self.engine.output_limits().pubsub
        } else {
            self.engine.output_limits().normal
        };
        let Some(slot) = self.slots.get_mut(&conn) else {
            return;
        };
        let Some(buf) = slot.outbox.buf() else {
            return;
        };
        for value in values {
            encode(value, protocol, buf);
        }
        if slot.outbox.over_limit(class, now) {
            tracing::info!(
                ?conn,
                pending = slot.outbox.pending(),
                "output buffer limit reached; closing client"
            );
            slot.outbox.kill();
            slot.signals.killed.notify_one();
            slot.signals.output.notify_one();
            self.engine.disconnect(conn);
        } else if wake {
            slot.signals.output.notify_one();
        }
    }
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
        Self::build(engine, None)
    }

    /// Shares `engine`, with `hook` called after every command it runs.
    pub fn with_hook(engine: Engine, hook: CommandHook) -> Self {
        Self::build(engine, Some(hook))
    }

    fn build(engine: Engine, hook: Option<CommandHook>) -> Self {
        Self {
            hub: Arc::new(Mutex::new(Hub {
                engine,
                slots: FxHashMap::default(),
                hook,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Hub> {
        // A panic elsewhere must not take the server down: the engine's
        // state is still consistent (commands mutate it only on success).
        // (A release build aborts on a panic, for speed: see Cargo.toml.)
        self.hub.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the engine, for inspection (for example
    /// [`Engine::hash_snapshot`]) while the server runs. Commands run here
    /// reach no connection.
    pub fn with_engine<R>(&self, f: impl FnOnce(&mut Engine) -> R) -> R {
        f(&mut self.lock().engine)
    }

    /// Closes every connection at once, dropping their output, as a Redis
    /// that stops does (its clients see their sockets close; their
    /// subscriptions are gone). The keys stay: replace the engine through
    /// [`SharedEngine::with_engine`] for a restart without persistence.
    pub fn drop_connections(&self) {
        let mut hub = self.lock();
        let Hub { engine, slots, .. } = &mut *hub;
        // In connection order, as Redis frees its clients list: the order
        // reaches the engine (subscriptions go one connection at a time).
        let mut open: Vec<(&ConnId, &mut Slot)> = slots.iter_mut().collect();
        open.sort_by_key(|(conn, _)| **conn);
        for (conn, slot) in open {
            engine.disconnect(*conn);
            slot.outbox.kill();
            slot.signals.killed.notify_one();
            slot.signals.output.notify_one();
        }
        // Their tasks find no slot and end (or were cancelled with the
        // host that ran them).
        slots.clear();
    }

    /// A new connection and its wake-ups.
    pub(crate) fn register(&self) -> (ConnId, Arc<Signals>) {
        let signals = Arc::new(Signals::default());
        let mut hub = self.lock();
        let conn = hub.engine.connect();
        hub.slots.insert(
            conn,
            Slot {
                outbox: Outbox::default(),
                signals: signals.clone(),
            },
        );
        (conn, signals)
    }

    /// The connection stops reading: forget the client in the engine; its
    /// task closes the socket once its output is written.
    pub(crate) fn unregister(&self, conn: ConnId) {
        let mut hub = self.lock();
        hub.engine.disconnect(conn);
        if let Some(slot) = hub.slots.get_mut(&conn) {
            slot.outbox.drain();
            slot.signals.output.notify_one();
        }
    }

    /// The connection's task is done: drop its buffer.
    pub(crate) fn remove(&self, conn: ConnId) {
        let mut hub = self.lock();
        hub.engine.disconnect(conn);
        hub.slots.remove(&conn);
    }

    /// Closes `conn` at once, dropping its output (its socket failed).
    pub(crate) fn kill(&self, conn: ConnId) {
        let mut hub = self.lock();
        hub.engine.disconnect(conn);
        if let Some(slot) = hub.slots.get_mut(&conn) {
            slot.outbox.kill();
            slot.signals.killed.notify_one();
        }
    }

    /// Runs one read's pipeline of commands, in order, and appends their
    /// output; whether the connection must close afterwards. One lock for
    /// the batch: each command still runs whole and in the global order
    /// (no other connection's command can run inside one), and a
    /// pipeline of 16 costs one lock, not 16. The caller's own task is not
    /// woken (it writes next); subscribers' tasks are.
    pub(crate) fn execute(&self, conn: ConnId, batch: Vec<Vec<Bytes>>) -> bool {
        let mut hub = self.lock();
        let mut now = Now::default();
        for args in batch {
            if hub.slots.get(&conn).is_none_or(|s| s.outbox.killed()) {
                return true;
            }
            let traced = hub.hook.is_some().then(|| args.clone());
            let response = hub.engine.execute(conn, args);
            if let Some(args) = traced {
                let Hub { engine, hook, .. } = &mut *hub;
                if let Some(hook) = hook {
                    hook(engine, conn, &args);
                }
            }
            // Redis writes a message to each subscriber while PUBLISH runs,
            // before the publisher's own reply: same order here.
            for (to, message) in &response.deliveries {
                hub.append(*to, std::slice::from_ref(message), &mut now, *to != conn);
            }
            hub.append(conn, &response.replies, &mut now, false);
            if response.close {
                return true;
            }
        }
        false
    }

    /// Times out blocked clients whose deadline has passed, answers those
    /// that can be answered now (a `WAIT` whose acknowledgements arrived
    /// through [`SharedEngine::with_engine`]), and writes what that
    /// produced (see [`Engine::tick`]).
    pub fn tick(&self) {
        let mut hub = self.lock();
        if hub.engine.blocked_clients() == 0 {
            return;
        }
        let response = hub.engine.tick();
        let mut now = Now::default();
        for (to, message) in &response.deliveries {
            hub.append(*to, std::slice::from_ref(message), &mut now, true);
        }
    }

    /// Queues an error reply for `conn` (a protocol error before closing).
    pub(crate) fn send_error(&self, conn: ConnId, text: String) {
        let mut hub = self.lock();
        hub.append(conn, &[Value::Error(text)], &mut Now::default(), true);
    }

    /// What `conn`'s task writes next; the chunk it took before, if any,
    /// has been written.
    pub(crate) fn take(&self, conn: ConnId) -> Take {
        match self.lock().slots.get_mut(&conn) {
            Some(slot) => slot.outbox.take(),
            None => Take::Done,
        }
    }
}

/// How often the server checks blocked clients' deadlines (Redis's cron
/// runs at 10 Hz; this is finer, so a `BLPOP` timeout is late by at most
/// this much).
const TICK: std::time::Duration = std::time::Duration::from_millis(10);

/// Accepts connections on `listener` forever, each served by its own task,
/// and times out blocked clients.
pub async fn serve(listener: TcpListener, shared: SharedEngine) {
    tokio::select! {
        biased;
        () = accept(listener, shared.clone()) => {}
        () = time_out_blocked(shared) => {}
    }
}

/// Times out `shared`'s blocked clients (`BLPOP`, `WAIT`) every 10 ms,
/// forever, on tokio's clock (so under turmoil, in simulated time). A host
/// that serves connections with [`crate::serve_connection`] runs it beside
/// them.
pub async fn time_out_blocked(shared: SharedEngine) {
    let mut interval = tokio::time::interval(TICK);
    loop {
        interval.tick().await;
        shared.tick();
    }
}

async fn accept(listener: TcpListener, shared: SharedEngine) {
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
        let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        BackgroundServer::start_on(listener, shared)
    }

    /// Starts serving `shared` on `listener`, bound beforehand: a cluster
    /// node must know its address before the cluster's slot table names it.
    pub fn start_on(
        listener: std::net::TcpListener,
        shared: SharedEngine,
    ) -> std::io::Result<BackgroundServer> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio::io::{AsyncReadExt, AsyncWriteExt, duplex};

    use super::SharedEngine;
    use crate::{Engine, ManualClock};

    /// A Redis that stops closes every socket and forgets its subscribers,
    /// and keeps its keys: a subscriber reads end-of-stream, and a later
    /// PUBLISH reaches nobody.
    #[tokio::test]
    async fn dropped_connections_close_and_forget_subscriptions() {
        let shared = SharedEngine::new(Engine::new(Arc::new(ManualClock::new(0))));
        let (mut sub, server) = duplex(4096);
        tokio::spawn(crate::serve_connection(shared.clone(), server));
        sub.write_all(b"*2\r\n$9\r\nSUBSCRIBE\r\n$2\r\nch\r\n")
            .await
            .unwrap();
        let mut confirmation = [0u8; 31];
        sub.read_exact(&mut confirmation).await.unwrap();
        shared.with_engine(|e| {
            let conn = e.connect();
            let set = ["SET", "k", "v"].map(|w| bytes::Bytes::from(w.to_owned()));
            e.execute(conn, set);
            e.disconnect(conn);
        });

        shared.drop_connections();
        let mut rest = Vec::new();
        let read = sub.read_to_end(&mut rest).await;
        assert!(read.is_ok() && rest.is_empty(), "{read:?} {rest:?}");
        let (published, kept) = shared.with_engine(|e| {
            let conn = e.connect();
            let run = |e: &mut Engine, words: &[&str]| {
                let words = words.iter().map(|w| bytes::Bytes::from(w.to_string()));
                e.execute(conn, words.collect::<Vec<_>>()).replies
            };
            (run(e, &["PUBLISH", "ch", "0"]), run(e, &["GET", "k"]))
        });
        assert_eq!(published, vec![crate::Value::Int(0)]);
        assert_eq!(kept, vec![crate::Value::bulk("v")]);
    }
}
