//! The in-process transport: fake-redis's [`Engine`] in the same process.
//!
//! An [`InProcessServer`] shares one engine between any number of clients
//! and routes pub/sub deliveries to each client's pub/sub connection. Every
//! command executes synchronously when it is issued, so order is kept
//! trivially.

use std::collections::BTreeMap;
use std::future::{Future, ready};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use fake_redis::{ConnId, Engine};

use lockcore::{
    Incoming, Message, Shard, Transport, TransportError, Value, parse_message, single_node,
};
use tokio::sync::mpsc;

struct Server {
    engine: Engine,
    /// Each client's pub/sub connection and where its messages go.
    routes: BTreeMap<ConnId, mpsc::UnboundedSender<Message>>,
}

/// One fake Redis shared by in-process clients. Cloning shares it.
#[derive(Clone)]
pub struct InProcessServer {
    inner: Arc<Mutex<Server>>,
}

impl std::fmt::Debug for InProcessServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcessServer").finish_non_exhaustive()
    }
}

impl InProcessServer {
    /// Serves `engine`.
    pub fn new(engine: Engine) -> Self {
        InProcessServer {
            inner: Arc::new(Mutex::new(Server {
                engine,
                routes: BTreeMap::new(),
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Server> {
        // A panic elsewhere must not wedge every client: the engine's state
        // is still consistent between commands.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the engine (for tests: inspect keys, advance a clock).
    pub fn with_engine<R>(&self, f: impl FnOnce(&mut Engine) -> R) -> R {
        f(&mut self.lock().engine)
    }

    /// Runs one command as a separate connection would (for tests).
    pub fn execute(&self, command: impl AsRef<[Bytes]>) -> Value {
        let mut server = self.lock();
        let conn = server.engine.connect();
        let reply = server.run(conn, command.as_ref());
        server.engine.disconnect(conn);
        reply
    }

    /// A new client's transport: two connections to this server.
    pub fn connect(&self) -> InProcessTransport {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut server = self.lock();
        let commands = server.engine.connect();
        let pubsub = server.engine.connect();
        server.routes.insert(pubsub, tx);
        InProcessTransport {
            server: self.clone(),
            commands,
            pubsub,
            messages: tokio::sync::Mutex::new(rx),
        }
    }
}

impl Server {
    /// Executes on `conn`, routes deliveries, returns the first reply.
    fn run(&mut self, conn: ConnId, command: &[Bytes]) -> Value {
        let response = self.engine.execute(conn, command);
        for (to, value) in response.deliveries {
            let value = lock_value(value);
            if let (Some(route), Some(message)) = (self.routes.get(&to), parse_message(&value)) {
                let _ = route.send(message);
            }
        }
        response
            .replies
            .into_iter()
            .next()
            .map_or_else(|| Value::error("ERR no reply"), lock_value)
    }
}

/// One client's two connections to an [`InProcessServer`].
pub struct InProcessTransport {
    server: InProcessServer,
    commands: ConnId,
    pubsub: ConnId,
    messages: tokio::sync::Mutex<mpsc::UnboundedReceiver<Message>>,
}

impl std::fmt::Debug for InProcessTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcessTransport")
            .field("commands", &self.commands)
            .field("pubsub", &self.pubsub)
            .finish_non_exhaustive()
    }
}

impl Drop for InProcessTransport {
    fn drop(&mut self) {
        let mut server = self.server.lock();
        server.routes.remove(&self.pubsub);
        server.engine.disconnect(self.commands);
        server.engine.disconnect(self.pubsub);
    }
}

fn subscribe_command(verb: &'static str, channel: String) -> Vec<Bytes> {
    vec![Bytes::from_static(verb.as_bytes()), Bytes::from(channel)]
}

impl Transport for InProcessTransport {
    // One engine: a shard other than 0 is refused, as by any one-node
    // transport, and runs nothing.
    fn send(
        &self,
        shard: Shard,
        command: &[Bytes],
    ) -> impl Future<Output = Result<Value, TransportError>> + Send + 'static {
        let reply = single_node(shard).map(|()| self.server.lock().run(self.commands, command));
        ready(reply)
    }

    fn subscribe(
        &self,
        shard: Shard,
        channel: String,
    ) -> impl Future<Output = Result<(), TransportError>> + Send + 'static {
        if let Err(e) = single_node(shard) {
            return ready(Err(e));
        }
        let reply = self
            .server
            .lock()
            .run(self.pubsub, &subscribe_command("SUBSCRIBE", channel));
        ready(match reply {
            Value::Error(text) => Err(TransportError::Redis(text)),
            _ => Ok(()),
        })
    }

    fn unsubscribe(&self, shard: Shard, channel: String) {
        if single_node(shard).is_err() {
            return;
        }
        self.server
            .lock()
            .run(self.pubsub, &subscribe_command("UNSUBSCRIBE", channel));
    }

    async fn next_incoming(&self) -> Option<Incoming> {
        // One engine in this process: its connections never drop.
        self.messages
            .lock()
            .await
            .recv()
            .await
            .map(Incoming::Message)
    }
}
/// fake-redis's reply as the lock reads it (the same shapes).
pub fn lock_value(v: fake_redis::Value) -> Value {
    use fake_redis::Value as F;
    match v {
        F::Simple(s) => Value::Simple(s),
        F::Error(e) => Value::Error(e),
        F::Int(n) => Value::Int(n),
        F::Bulk(b) => Value::Bulk(b),
        // lockcore reads RESP2 shapes: a score is its text, pairs are flat.
        F::Double(d) => Value::Bulk(d.text().into()),
        F::Nil | F::NilArray => Value::Nil,
        F::Array(items) => Value::Array(items.into_iter().map(lock_value).collect()),
        F::Map(pairs) => Value::Map(
            pairs
                .into_iter()
                .map(|(k, v)| (lock_value(k), lock_value(v)))
                .collect(),
        ),
        F::Pairs(pairs) => Value::Array(
            pairs
                .into_iter()
                .flat_map(|(k, v)| [lock_value(k), lock_value(v)])
                .collect(),
        ),
        F::Push(items) => Value::Push(items.into_iter().map(lock_value).collect()),
        // The shape is the same whatever protocol wrote it.
        F::Written(_, inner) => lock_value(*inner),
    }
}
