//! A transport to a Redis Cluster: one transport per master, each
//! command and subscription routed to the master its [`Shard`] names.
//!
//! Redisson's cluster client keeps a command and a pub/sub connection
//! to every master entry and sends each keyed command to the entry of
//! its slot; the machine has already worked out the slot's master (the
//! `shard` of each output, from [`crate::shard_of`]), so routing is an
//! index: master `i` serves `Shard(i)`. Each master's transport is a
//! one-node transport, asked for `Shard(0)`: its own connections keep
//! their order and reconnect on their own.
//!
//! What arrives on the pub/sub side is merged: a message from any
//! master, and each master's reconnect notice as it comes. A notice
//! makes the client subscribe again to every channel it still needs,
//! on their masters, as the machine has one connection-loss input: on a
//! master that kept its subscriptions a repeated `SUBSCRIBE` is
//! confirmed again and changes nothing.

use std::future::Future;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;

use crate::transport::Incoming;
use crate::{Shard, Transport, TransportError, Value};

/// A client's connections to every master of a Redis Cluster, master
/// `i` (in slot order, as [`crate::shard_of`] numbers them) serving
/// `Shard(i)`. A shard past the last master fails with
/// [`TransportError::NoShard`], sending nothing.
pub struct ClusterTransport<T> {
    masters: Vec<T>,
    /// The masters whose pub/sub side has ended for good.
    gone: Mutex<Vec<bool>>,
    /// The master whose pub/sub side is read first next time: the one
    /// after the last to deliver, so a busy master cannot hold back the
    /// others' messages.
    first: AtomicUsize,
}

impl<T> std::fmt::Debug for ClusterTransport<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterTransport")
            .field("masters", &self.masters.len())
            .finish_non_exhaustive()
    }
}

impl<T: Transport> ClusterTransport<T> {
    /// Routes `Shard(i)` to `masters[i]`. With one master it is a
    /// one-node transport; with none, every command fails.
    pub fn new(masters: Vec<T>) -> Self {
        let gone = Mutex::new(vec![false; masters.len()]);
        ClusterTransport {
            masters,
            gone,
            first: AtomicUsize::new(0),
        }
    }

    /// How many masters it reaches.
    pub fn masters(&self) -> usize {
        self.masters.len()
    }

    /// Master `i`'s own transport (for a driver's direct commands).
    pub fn master(&self, i: usize) -> Option<&T> {
        self.masters.get(i)
    }

    /// The transport serving `shard`, or why there is none.
    fn route(&self, shard: Shard) -> Result<&T, TransportError> {
        self.masters
            .get(usize::from(shard.0))
            .ok_or(TransportError::NoShard {
                shard: shard.0,
                masters: u16::try_from(self.masters.len()).unwrap_or(u16::MAX),
            })
    }

    fn gone(&self) -> std::sync::MutexGuard<'_, Vec<bool>> {
        self.gone.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T: Transport> Transport for ClusterTransport<T> {
    fn send(
        &self,
        shard: Shard,
        command: &[Bytes],
    ) -> impl Future<Output = Result<Value, TransportError>> + Send + 'static {
        // Issued now, as the trait asks; only the wait is deferred.
        let sent = self.route(shard).map(|t| t.send(Shard(0), command));
        async move { sent?.await }
    }

    fn subscribe(
        &self,
        shard: Shard,
        channel: String,
    ) -> impl Future<Output = Result<(), TransportError>> + Send + 'static {
        let confirmed = self.route(shard).map(|t| t.subscribe(Shard(0), channel));
        async move { confirmed?.await }
    }

    fn unsubscribe(&self, shard: Shard, channel: String) {
        if let Ok(t) = self.route(shard) {
            t.unsubscribe(Shard(0), channel);
        }
    }

    async fn next_incoming(&self) -> Option<Incoming> {
        // One master reads as its own transport does, poll for poll (a
        // seeded runtime's interleaving stays the one-node client's).
        if let [only] = self.masters.as_slice() {
            return only.next_incoming().await;
        }
        loop {
            let n = self.masters.len();
            let start = self.first.load(Ordering::Relaxed);
            let live: Vec<usize> = {
                let gone = self.gone();
                (0..n)
                    .map(|k| (start + k) % n)
                    .filter(|&i| !gone[i])
                    .collect()
            };
            if live.is_empty() {
                return None;
            }
            // Each master's read is cancel-safe (a channel's `recv`): the
            // reads that lose the race lose nothing.
            let reads = live
                .into_iter()
                .map(|i| Box::pin(async move { (i, self.masters[i].next_incoming().await) }));
            let ((i, incoming), _, _) = futures::future::select_all(reads).await;
            match incoming {
                Some(incoming) => {
                    self.first.store((i + 1) % n, Ordering::Relaxed);
                    return Some(incoming);
                }
                None => self.gone()[i] = true,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::ready;
    use tokio::sync::mpsc;

    /// A node that answers every command with its own number, and
    /// delivers what the test pushes on its pub/sub side.
    struct Node {
        id: i64,
        sent: Mutex<Vec<(Shard, String)>>,
        incoming: tokio::sync::Mutex<mpsc::UnboundedReceiver<Incoming>>,
    }

    fn node(id: i64) -> (Node, mpsc::UnboundedSender<Incoming>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let node = Node {
            id,
            sent: Mutex::new(Vec::new()),
            incoming: tokio::sync::Mutex::new(rx),
        };
        (node, tx)
    }

    impl Transport for Node {
        fn send(
            &self,
            shard: Shard,
            command: &[Bytes],
        ) -> impl Future<Output = Result<Value, TransportError>> + Send + 'static {
            let word = String::from_utf8_lossy(&command[0]).into_owned();
            self.sent.lock().unwrap().push((shard, word));
            ready(Ok(Value::Int(self.id)))
        }

        fn subscribe(
            &self,
            shard: Shard,
            channel: String,
        ) -> impl Future<Output = Result<(), TransportError>> + Send + 'static {
            self.sent.lock().unwrap().push((shard, channel));
            ready(Ok(()))
        }

        fn unsubscribe(&self, shard: Shard, channel: String) {
            self.sent.lock().unwrap().push((shard, channel));
        }

        async fn next_incoming(&self) -> Option<Incoming> {
            self.incoming.lock().await.recv().await
        }
    }

    fn message(channel: &str) -> Incoming {
        Incoming::Message((channel.to_owned(), Bytes::from_static(b"0")))
    }

    /// Each shard reaches its own master (asked for shard 0 there); a
    /// shard past the last fails by name and sends nothing anywhere.
    #[tokio::test]
    async fn shards_route_to_their_masters() {
        let (a, _ta) = node(10);
        let (b, _tb) = node(11);
        let cluster = ClusterTransport::new(vec![a, b]);
        let ping = [Bytes::from_static(b"PING")];
        assert_eq!(cluster.send(Shard(1), &ping).await, Ok(Value::Int(11)));
        assert_eq!(cluster.send(Shard(0), &ping).await, Ok(Value::Int(10)));
        assert_eq!(cluster.subscribe(Shard(1), "ch".into()).await, Ok(()));
        cluster.unsubscribe(Shard(1), "ch".into());
        assert_eq!(
            cluster.send(Shard(2), &ping).await,
            Err(TransportError::NoShard {
                shard: 2,
                masters: 2
            })
        );
        assert!(cluster.subscribe(Shard(5), "x".into()).await.is_err());
        cluster.unsubscribe(Shard(5), "x".into());
        let sent = |i: usize| cluster.master(i).unwrap().sent.lock().unwrap().clone();
        assert_eq!(sent(0), vec![(Shard(0), "PING".to_owned())]);
        assert_eq!(
            sent(1),
            vec![
                (Shard(0), "PING".to_owned()),
                (Shard(0), "ch".to_owned()),
                (Shard(0), "ch".to_owned())
            ]
        );
    }

    /// Messages and reconnect notices of every master come out of one
    /// stream, none lost; it ends once every master's has ended. One
    /// master's is its own.
    #[tokio::test]
    async fn incoming_is_merged_until_every_master_is_gone() {
        let (a, ta) = node(0);
        let (b, tb) = node(1);
        let cluster = ClusterTransport::new(vec![a, b]);
        tb.send(message("on-b")).unwrap();
        ta.send(message("on-a")).unwrap();
        ta.send(Incoming::Reconnected).unwrap();
        let mut seen = Vec::new();
        for _ in 0..3 {
            seen.push(cluster.next_incoming().await.unwrap());
        }
        assert!(seen.contains(&message("on-a")), "{seen:?}");
        assert!(seen.contains(&message("on-b")), "{seen:?}");
        assert!(seen.contains(&Incoming::Reconnected), "{seen:?}");
        drop(ta);
        tb.send(message("late")).unwrap();
        assert_eq!(cluster.next_incoming().await, Some(message("late")));
        drop(tb);
        assert_eq!(cluster.next_incoming().await, None);
        let (c, tc) = node(2);
        let one = ClusterTransport::new(vec![c]);
        tc.send(message("on-c")).unwrap();
        assert_eq!(one.next_incoming().await, Some(message("on-c")));
        drop(tc);
        assert_eq!(one.next_incoming().await, None);
    }
}
