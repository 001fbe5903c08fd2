//! The RESP transport: RESP2 over a byte stream to a real Redis (or to
//! fake-redis's RESP server): tokio TCP by default, any stream a
//! [`Connect`] opens otherwise (turmoil's simulated TCP, for one).
//!
//! Two connections, as a Redisson client keeps: one for commands, one for
//! pub/sub. Each is owned by one task; callers hand it frames through a
//! channel, so commands reach the socket in the order they were issued and
//! replies are matched to them first in, first out (RESP2 answers in order).
//!
//! It reaches one node: asked for a shard other than 0 it fails the
//! command with [`crate::TransportError::NoShard`], sending nothing (a
//! client of a Redis Cluster runs over a [`crate::ClusterTransport`] of
//! one `RespTransport` per master).
//!
//! A connection that drops is reopened, as Redisson's `ConnectionWatchdog`
//! does: commands in flight fail (their outcome is unknown), commands
//! issued while it waits to reconnect fail fast, and a new pub/sub
//! connection is announced ([`Incoming::Reconnected`]) so the client
//! subscribes again to what it still needs.
//! The tasks' `select!`s are `biased`, so under a seeded runtime (turmoil)
//! the same inputs give the same interleaving.

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use crate::Value;
use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use redis_protocol::codec::Resp2;
use redis_protocol::resp2::types::BytesFrame;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio_util::codec::Framed;
use tracing::debug;

use crate::transport::{Incoming, parse_message, single_node};
use crate::{Shard, Transport, TransportError};

type ReplyTx = oneshot::Sender<Result<Value, TransportError>>;

enum PubSubRequest {
    Subscribe(String, oneshot::Sender<Result<(), TransportError>>),
    Unsubscribe(String),
}

/// A client's two RESP2 connections to one Redis.
pub struct RespTransport {
    commands: mpsc::UnboundedSender<(BytesFrame, ReplyTx)>,
    pubsub: mpsc::UnboundedSender<PubSubRequest>,
    messages: tokio::sync::Mutex<mpsc::UnboundedReceiver<Incoming>>,
}

impl std::fmt::Debug for RespTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RespTransport").finish_non_exhaustive()
    }
}

/// `host:port` from `redis://host:port` (no credentials, no database).
fn address(url: &str) -> Result<String, TransportError> {
    let bad = |why: &str| {
        TransportError::Connection(format!(
            "bad Redis url '{url}': {why} (expected redis://host:port)"
        ))
    };
    let rest = url
        .strip_prefix("redis://")
        .ok_or_else(|| bad("it must start with redis://"))?;
    let rest = rest.trim_end_matches('/');
    if rest.contains('@') || rest.contains('/') {
        return Err(bad("credentials and database numbers are not supported"));
    }
    let (host, port) = rest.rsplit_once(':').ok_or_else(|| bad("no port"))?;
    if host.is_empty() {
        return Err(bad("no host"));
    }
    port.parse::<u16>()
        .map_err(|_| bad("the port is not a number"))?;
    Ok(rest.to_owned())
}

fn frame(parts: &[Bytes]) -> BytesFrame {
    BytesFrame::Array(parts.iter().cloned().map(BytesFrame::BulkString).collect())
}

fn value(frame: BytesFrame) -> Value {
    match frame {
        BytesFrame::SimpleString(s) => Value::Simple(String::from_utf8_lossy(&s).into_owned()),
        BytesFrame::Error(e) => Value::Error(e.to_string()),
        BytesFrame::Integer(i) => Value::Int(i),
        BytesFrame::BulkString(b) => Value::Bulk(b),
        BytesFrame::Array(items) => Value::Array(items.into_iter().map(value).collect()),
        BytesFrame::Null => Value::Nil,
    }
}

/// Opens one connection to Redis: how a [`RespTransport`] reaches it.
pub trait Connect: Send + Sync + 'static {
    /// The byte stream of one connection.
    type Stream: AsyncRead + AsyncWrite + Unpin + Send + 'static;

    /// Where it connects, for error messages (`127.0.0.1:6379`).
    fn target(&self) -> String;

    /// Opens a new connection.
    fn open(&self) -> impl Future<Output = io::Result<Self::Stream>> + Send;

    /// The name each connection gives itself with `CLIENT SETNAME` before
    /// anything else (Redisson's `clientName`); none by default.
    fn client_name(&self) -> Option<String> {
        None
    }

    /// How long reconnection attempt `attempt` (from 0) waits before it
    /// tries: Redisson's delays by default ([`reconnect_delay`]); a driver
    /// that runs time faster (the real-Redis engine's time scale) shortens
    /// them.
    fn reconnect_delay(&self, attempt: u32) -> Duration {
        reconnect_delay(attempt)
    }
}

/// Tokio TCP to `host:port`, with `TCP_NODELAY`.
#[derive(Debug, Clone)]
pub struct TcpConnect {
    address: String,
}

impl TcpConnect {
    /// Checks `url` (`redis://host:port`) without connecting.
    pub fn new(url: &str) -> Result<Self, TransportError> {
        Ok(TcpConnect {
            address: address(url)?,
        })
    }
}

impl Connect for TcpConnect {
    type Stream = TcpStream;

    fn target(&self) -> String {
        self.address.clone()
    }

    async fn open(&self) -> io::Result<TcpStream> {
        let stream = TcpStream::connect(&self.address).await?;
        let _ = stream.set_nodelay(true);
        Ok(stream)
    }
}

async fn open<C: Connect>(connect: &C) -> Result<Framed<C::Stream, Resp2>, TransportError> {
    let stream = connect
        .open()
        .await
        .map_err(|e| TransportError::Connection(format!("connect to {}: {e}", connect.target())))?;
    let mut framed = Framed::new(stream, Resp2::default());
    if let Some(name) = connect.client_name() {
        let words = ["CLIENT", "SETNAME", name.as_str()].map(|w| Bytes::from(w.to_owned()));
        let failed = |why: String| {
            TransportError::Connection(format!("CLIENT SETNAME on {}: {why}", connect.target()))
        };
        framed
            .send(frame(&words))
            .await
            .map_err(|e| failed(e.to_string()))?;
        match framed.next().await {
            Some(Ok(BytesFrame::SimpleString(_))) => {}
            Some(Ok(other)) => return Err(failed(format!("{:?}", value(other)))),
            Some(Err(e)) => return Err(failed(e.to_string())),
            None => return Err(failed("connection closed".to_owned())),
        }
    }
    Ok(framed)
}

impl RespTransport {
    /// Connects both connections to `url` (`redis://host:port`) over tokio
    /// TCP. Must be called inside a tokio runtime: it spawns one task per
    /// connection.
    pub async fn connect(url: &str) -> Result<Self, TransportError> {
        Self::connect_with(TcpConnect::new(url)?).await
    }

    /// Connects both connections with `connect` (any byte stream), which
    /// also reopens them when they drop. Must be called inside a tokio
    /// runtime.
    pub async fn connect_with<C: Connect>(connect: C) -> Result<Self, TransportError> {
        let connect = Arc::new(connect);
        let commands = open(&*connect).await?;
        let pubsub = open(&*connect).await?;
        let (command_tx, command_rx) = mpsc::unbounded_channel();
        let (pubsub_tx, pubsub_rx) = mpsc::unbounded_channel();
        let (message_tx, message_rx) = mpsc::unbounded_channel();
        tokio::spawn(run_commands(connect.clone(), commands, command_rx));
        tokio::spawn(run_pubsub(connect, pubsub, pubsub_rx, message_tx));
        Ok(RespTransport {
            commands: command_tx,
            pubsub: pubsub_tx,
            messages: tokio::sync::Mutex::new(message_rx),
        })
    }
}

fn closed() -> TransportError {
    TransportError::Connection("connection closed".to_owned())
}

fn reconnecting<C: Connect>(connect: &C) -> TransportError {
    TransportError::Connection(format!(
        "not connected to {}: reconnecting",
        connect.target()
    ))
}

/// How long reconnection attempt `attempt` (from 0) waits first.
/// Redisson's `ConnectionWatchdog` waits `EqualJitterDelay(100 ms, 10 s)`
/// (`RedisClientConfig.reconnectionDelay`): between half and all of
/// `min(100 ms × 2^attempt, 10 s)`. Here the mean, three quarters of it,
/// without the jitter, so a seeded run replays.
pub fn reconnect_delay(attempt: u32) -> Duration {
    let full = 100u64.saturating_mul(1 << attempt.min(16)).min(10_000);
    Duration::from_millis(full * 3 / 4)
}

/// Redisson's `connectTimeout` (10 s): a connection attempt that hangs
/// (a partitioned host drops the SYN) fails after it.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens a new connection after a loss, as Redisson's `ConnectionWatchdog`
/// does: wait, try, wait longer, until it opens. Requests that arrive
/// while it waits are handed to `refuse` (they fail fast, as commands do
/// against a server that is not there); those that arrive during an
/// attempt wait for its outcome. `None` once the client is gone.
async fn reconnect<C: Connect, R>(
    connect: &C,
    requests: &mut mpsc::UnboundedReceiver<R>,
    refuse: impl Fn(R),
) -> Option<Framed<C::Stream, Resp2>> {
    let mut attempt = 0;
    loop {
        let delay = tokio::time::sleep(connect.reconnect_delay(attempt));
        tokio::pin!(delay);
        loop {
            tokio::select! {
                biased;
                request = requests.recv() => refuse(request?),
                () = &mut delay => break,
            }
        }
        match tokio::time::timeout(CONNECT_TIMEOUT, open(connect)).await {
            Ok(Ok(framed)) => return Some(framed),
            Ok(Err(e)) => debug!(error = %e, attempt, "reconnection failed"),
            Err(_) => debug!(attempt, "reconnection timed out"),
        }
        attempt = attempt.saturating_add(1);
    }
}

async fn run_commands<C: Connect>(
    connect: Arc<C>,
    mut framed: Framed<C::Stream, Resp2>,
    mut requests: mpsc::UnboundedReceiver<(BytesFrame, ReplyTx)>,
) {
    while serve_commands(framed, &mut requests).await {
        let refuse = |(_, reply): (BytesFrame, ReplyTx)| {
            let _ = reply.send(Err(reconnecting(&*connect)));
        };
        match reconnect(&*connect, &mut requests, refuse).await {
            Some(next) => framed = next,
            None => return,
        }
    }
}

/// Serves one command connection until it drops (true: reconnect) or the
/// client is gone (false). Commands in flight when it drops fail: whether
/// they ran is unknown.
async fn serve_commands<S: AsyncRead + AsyncWrite + Unpin>(
    framed: Framed<S, Resp2>,
    requests: &mut mpsc::UnboundedReceiver<(BytesFrame, ReplyTx)>,
) -> bool {
    let (mut sink, mut stream) = framed.split();
    let mut pending: VecDeque<ReplyTx> = VecDeque::new();
    let lost = loop {
        tokio::select! {
            biased;
            request = requests.recv() => {
                let Some((frame, reply)) = request else { break false };
                pending.push_back(reply);
                if let Err(e) = sink.send(frame).await {
                    debug!(error = %e, "command connection: write failed");
                    break true;
                }
            }
            frame = stream.next() => {
                let Some(Ok(frame)) = frame else { break true };
                if let Some(reply) = pending.pop_front() {
                    let _ = reply.send(Ok(value(frame)));
                }
            }
        }
    };
    for reply in pending {
        let _ = reply.send(Err(closed()));
    }
    lost
}

async fn run_pubsub<C: Connect>(
    connect: Arc<C>,
    mut framed: Framed<C::Stream, Resp2>,
    mut requests: mpsc::UnboundedReceiver<PubSubRequest>,
    messages: mpsc::UnboundedSender<Incoming>,
) {
    while serve_pubsub(framed, &mut requests, &messages).await {
        let refuse = |request| {
            if let PubSubRequest::Subscribe(_, done) = request {
                let _ = done.send(Err(reconnecting(&*connect)));
            }
        };
        match reconnect(&*connect, &mut requests, refuse).await {
            Some(next) => framed = next,
            None => return,
        }
        if messages.send(Incoming::Reconnected).is_err() {
            return;
        }
    }
}

/// Serves one pub/sub connection until it drops (true: reconnect) or the
/// client is gone (false). Subscriptions waiting for Redis's confirmation
/// when it drops fail.
async fn serve_pubsub<S: AsyncRead + AsyncWrite + Unpin>(
    framed: Framed<S, Resp2>,
    requests: &mut mpsc::UnboundedReceiver<PubSubRequest>,
    messages: &mpsc::UnboundedSender<Incoming>,
) -> bool {
    let (mut sink, mut stream) = framed.split();
    let mut confirming: BTreeMap<String, VecDeque<oneshot::Sender<Result<(), TransportError>>>> =
        BTreeMap::new();
    let lost = loop {
        tokio::select! {
            biased;
            request = requests.recv() => {
                let (verb, channel) = match request {
                    None => break false,
                    Some(PubSubRequest::Subscribe(channel, done)) => {
                        confirming.entry(channel.clone()).or_default().push_back(done);
                        ("SUBSCRIBE", channel)
                    }
                    Some(PubSubRequest::Unsubscribe(channel)) => ("UNSUBSCRIBE", channel),
                };
                let command = frame(&[Bytes::from_static(verb.as_bytes()), Bytes::from(channel)]);
                if let Err(e) = sink.send(command).await {
                    debug!(error = %e, "pub/sub connection: write failed");
                    break true;
                }
            }
            frame = stream.next() => {
                let Some(Ok(frame)) = frame else { break true };
                let value = value(frame);
                if let Some(message) = parse_message(&value) {
                    let _ = messages.send(Incoming::Message(message));
                } else if let Some(done) = confirmation(&value)
                    .and_then(|channel| confirming.get_mut(&channel))
                    .and_then(VecDeque::pop_front)
                {
                    let _ = done.send(Ok(()));
                }
            }
        }
    };
    for done in confirming.into_values().flatten() {
        let _ = done.send(Err(closed()));
    }
    lost
}

/// The channel of a `subscribe` confirmation.
fn confirmation(value: &Value) -> Option<String> {
    match value {
        Value::Array(items) => match items.as_slice() {
            [Value::Bulk(kind), Value::Bulk(channel), Value::Int(_)]
                if kind.as_ref() == b"subscribe" =>
            {
                Some(String::from_utf8_lossy(channel).into_owned())
            }
            _ => None,
        },
        _ => None,
    }
}

impl Transport for RespTransport {
    fn send(
        &self,
        shard: Shard,
        command: &[Bytes],
    ) -> impl Future<Output = Result<Value, TransportError>> + Send + 'static {
        let (tx, rx) = oneshot::channel();
        let served = single_node(shard);
        let queued = served.is_ok() && self.commands.send((frame(command), tx)).is_ok();
        async move {
            served?;
            if !queued {
                return Err(closed());
            }
            rx.await.unwrap_or_else(|_| Err(closed()))
        }
    }

    fn subscribe(
        &self,
        shard: Shard,
        channel: String,
    ) -> impl Future<Output = Result<(), TransportError>> + Send + 'static {
        let (tx, rx) = oneshot::channel();
        let served = single_node(shard);
        let queued = served.is_ok()
            && self
                .pubsub
                .send(PubSubRequest::Subscribe(channel, tx))
                .is_ok();
        async move {
            served?;
            if !queued {
                return Err(closed());
            }
            rx.await.unwrap_or_else(|_| Err(closed()))
        }
    }

    fn unsubscribe(&self, shard: Shard, channel: String) {
        if single_node(shard).is_ok() {
            let _ = self.pubsub.send(PubSubRequest::Unsubscribe(channel));
        }
    }

    async fn next_incoming(&self) -> Option<Incoming> {
        self.messages.lock().await.recv().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Urls are checked before any connection: a clear error, no panic.
    #[test]
    fn urls() {
        assert_eq!(
            address("redis://127.0.0.1:6379"),
            Ok("127.0.0.1:6379".into())
        );
        assert_eq!(address("redis://localhost:1/"), Ok("localhost:1".into()));
        for bad in [
            "127.0.0.1:6379",
            "redis://host",
            "redis://:1",
            "redis://a:b",
            "redis://u@h:1",
        ] {
            let error = address(bad).unwrap_err().to_string();
            assert!(
                error.contains("expected redis://host:port"),
                "{bad}: {error}"
            );
        }
    }

    /// RESP2 frames map onto fake-redis values one to one.
    #[test]
    fn frames_to_values() {
        let frame = BytesFrame::Array(vec![
            BytesFrame::Integer(1),
            BytesFrame::Null,
            BytesFrame::BulkString(Bytes::from_static(b"x")),
            BytesFrame::Error("ERR no".into()),
            BytesFrame::SimpleString(Bytes::from_static(b"OK")),
        ]);
        assert_eq!(
            value(frame),
            Value::Array(vec![
                Value::Int(1),
                Value::Nil,
                Value::bulk("x"),
                Value::Error("ERR no".into()),
                Value::ok(),
            ])
        );
    }
}
