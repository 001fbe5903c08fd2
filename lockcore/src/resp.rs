//! The RESP transport: RESP2 over a byte stream to a real Redis (or to
//! fake-redis's RESP server): tokio TCP by default, any stream a
//! [`Connect`] opens otherwise (turmoil's simulated TCP, for one).
//!
//! Two connections, as a Redisson client keeps: one for commands, one for
//! pub/sub. Each is owned by one task; callers hand it frames through a
//! channel, so commands reach the socket in the order they were issued and
//! replies are matched to them first in, first out (RESP2 answers in order).
//! The tasks' `select!`s are `biased`, so under a seeded runtime (turmoil)
//! the same inputs give the same interleaving.

use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::io;

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

use crate::transport::{Message, parse_message};
use crate::{Transport, TransportError};

type ReplyTx = oneshot::Sender<Result<Value, TransportError>>;

enum PubSubRequest {
    Subscribe(String, oneshot::Sender<Result<(), TransportError>>),
    Unsubscribe(String),
}

/// A client's two RESP2 connections to one Redis.
pub struct RespTransport {
    commands: mpsc::UnboundedSender<(BytesFrame, ReplyTx)>,
    pubsub: mpsc::UnboundedSender<PubSubRequest>,
    messages: tokio::sync::Mutex<mpsc::UnboundedReceiver<Message>>,
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

fn frame(parts: Vec<Bytes>) -> BytesFrame {
    BytesFrame::Array(parts.into_iter().map(BytesFrame::BulkString).collect())
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
            .send(frame(words.to_vec()))
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
        Self::connect_with(&TcpConnect::new(url)?).await
    }

    /// Connects both connections with `connect` (any byte stream). Must be
    /// called inside a tokio runtime.
    pub async fn connect_with<C: Connect>(connect: &C) -> Result<Self, TransportError> {
        let commands = open(connect).await?;
        let pubsub = open(connect).await?;
        let (command_tx, command_rx) = mpsc::unbounded_channel();
        let (pubsub_tx, pubsub_rx) = mpsc::unbounded_channel();
        let (message_tx, message_rx) = mpsc::unbounded_channel();
        tokio::spawn(run_commands(commands, command_rx));
        tokio::spawn(run_pubsub(pubsub, pubsub_rx, message_tx));
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

async fn run_commands<S: AsyncRead + AsyncWrite + Unpin>(
    framed: Framed<S, Resp2>,
    mut requests: mpsc::UnboundedReceiver<(BytesFrame, ReplyTx)>,
) {
    let (mut sink, mut stream) = framed.split();
    let mut pending: VecDeque<ReplyTx> = VecDeque::new();
    loop {
        tokio::select! {
            biased;
            request = requests.recv() => {
                let Some((frame, reply)) = request else { break };
                pending.push_back(reply);
                if let Err(e) = sink.send(frame).await {
                    debug!(error = %e, "command connection: write failed");
                    break;
                }
            }
            frame = stream.next() => {
                let Some(Ok(frame)) = frame else { break };
                if let Some(reply) = pending.pop_front() {
                    let _ = reply.send(Ok(value(frame)));
                }
            }
        }
    }
    for reply in pending {
        let _ = reply.send(Err(closed()));
    }
}

async fn run_pubsub<S: AsyncRead + AsyncWrite + Unpin>(
    framed: Framed<S, Resp2>,
    mut requests: mpsc::UnboundedReceiver<PubSubRequest>,
    messages: mpsc::UnboundedSender<Message>,
) {
    let (mut sink, mut stream) = framed.split();
    let mut confirming: BTreeMap<String, VecDeque<oneshot::Sender<Result<(), TransportError>>>> =
        BTreeMap::new();
    loop {
        tokio::select! {
            biased;
            request = requests.recv() => {
                let (verb, channel) = match request {
                    None => break,
                    Some(PubSubRequest::Subscribe(channel, done)) => {
                        confirming.entry(channel.clone()).or_default().push_back(done);
                        ("SUBSCRIBE", channel)
                    }
                    Some(PubSubRequest::Unsubscribe(channel)) => ("UNSUBSCRIBE", channel),
                };
                let command = frame(vec![Bytes::from_static(verb.as_bytes()), Bytes::from(channel)]);
                if let Err(e) = sink.send(command).await {
                    debug!(error = %e, "pub/sub connection: write failed");
                    break;
                }
            }
            frame = stream.next() => {
                let Some(Ok(frame)) = frame else { break };
                let value = value(frame);
                if let Some(message) = parse_message(&value) {
                    let _ = messages.send(message);
                } else if let Some(done) = confirmation(&value)
                    .and_then(|channel| confirming.get_mut(&channel))
                    .and_then(VecDeque::pop_front)
                {
                    let _ = done.send(Ok(()));
                }

            }
        }
    }
    for done in confirming.into_values().flatten() {
        let _ = done.send(Err(closed()));
    }
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
        command: Vec<Bytes>,
    ) -> impl Future<Output = Result<Value, TransportError>> + Send + 'static {
        let (tx, rx) = oneshot::channel();
        let queued = self.commands.send((frame(command), tx)).is_ok();
        async move {
            if !queued {
                return Err(closed());
            }
            rx.await.unwrap_or_else(|_| Err(closed()))
        }
    }

    fn subscribe(
        &self,
        channel: String,
    ) -> impl Future<Output = Result<(), TransportError>> + Send + 'static {
        let (tx, rx) = oneshot::channel();
        let queued = self
            .pubsub
            .send(PubSubRequest::Subscribe(channel, tx))
            .is_ok();
        async move {
            if !queued {
                return Err(closed());
            }
            rx.await.unwrap_or_else(|_| Err(closed()))
        }
    }

    fn unsubscribe(&self, channel: String) {
        let _ = self.pubsub.send(PubSubRequest::Unsubscribe(channel));
    }

    async fn next_message(&self) -> Option<Message> {
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
