//! The transport the async wrapper drives: a command connection and a
//! pub/sub connection to each master the client reaches (one outside a
//! Redis Cluster).

use std::future::Future;

use crate::Value;
use bytes::Bytes;

use crate::{Shard, TransportError};

/// A pub/sub message: `(channel, payload)`.
pub type Message = (String, Bytes);

/// What arrives on the pub/sub side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incoming {
    /// A message on a subscribed channel.
    Message(Message),
    /// The pub/sub connection was lost and a new one is open: Redis has
    /// forgotten every subscription (messages published meanwhile are
    /// gone). The client subscribes again to what it still needs, as
    /// Redisson's `ConnectionWatchdog` re-attaches its pub/sub channels
    /// once it has reconnected.
    Reconnected,
}

/// Two connections to each master a Redisson client reaches: commands,
/// and pub/sub.
///
/// Every command and subscription names its [`Shard`], the master it goes
/// to ([`crate::Output::Send`] carries it): always `Shard(0)` outside a
/// Redis Cluster. A transport to one node ([`crate::RespTransport`])
/// serves shard 0 alone and answers any other with
/// [`TransportError::NoShard`] (see [`single_node`]), so a client in
/// cluster mode over it fails loudly instead of sending a command to a
/// master that does not serve its slot; [`crate::ClusterTransport`]
/// routes each shard to a transport of its own.
///
/// Order matters to the lock (a renewal sent before an unlock must reach
/// Redis first), so [`Transport::send`] and [`Transport::subscribe`] issue
/// their command when they are *called*, not when the returned future is
/// first polled; the future only waits for the answer.
///
/// Errors mean, to the algorithm, that the command's outcome is unknown:
/// [`TransportError::Connection`] fails the command at once, and a missing
/// reply is turned into a timeout by the state machine's own timer, so a
/// transport need not time out itself.
pub trait Transport: Send + Sync + 'static {
    /// Issues `command` (name first) on the command connection to
    /// `shard`; the future resolves to its reply. Redis error replies are
    /// `Ok(Value::Error)`.
    fn send(
        &self,
        shard: Shard,
        command: &[Bytes],
    ) -> impl Future<Output = Result<Value, TransportError>> + Send + 'static;

    /// Issues `SUBSCRIBE channel` on the pub/sub connection to `shard`;
    /// the future resolves once Redis confirmed it.
    fn subscribe(
        &self,
        shard: Shard,
        channel: String,
    ) -> impl Future<Output = Result<(), TransportError>> + Send + 'static;

    /// Issues `UNSUBSCRIBE channel` on the pub/sub connection to `shard`;
    /// nothing waits for the answer (nor reports a shard it lacks).
    fn unsubscribe(&self, shard: Shard, channel: String);

    /// The next message on a subscribed channel, or news that a pub/sub
    /// connection was replaced, from whichever master it came; `None`
    /// once every one is gone for good. Called by one task at a time.
    fn next_incoming(&self) -> impl Future<Output = Option<Incoming>> + Send + '_;
}

/// Whether a transport that reaches one node serves `shard`: only
/// `Shard(0)` (the node); any other is [`TransportError::NoShard`].
pub fn single_node(shard: Shard) -> Result<(), TransportError> {
    match shard {
        Shard(0) => Ok(()),
        Shard(other) => Err(TransportError::NoShard {
            shard: other,
            masters: 1,
        }),
    }
}

/// Reads a pub/sub delivery (`["message", channel, payload]`, a RESP2
/// array or a RESP3 push); anything else (subscribe confirmations, other
/// replies) is `None`. Public so that other drivers (the simulator) read
/// deliveries the same way.
pub fn parse_message(value: &Value) -> Option<Message> {
    let items = match value {
        Value::Array(items) | Value::Push(items) => items,
        _ => return None,
    };
    match items.as_slice() {
        [
            Value::Bulk(kind),
            Value::Bulk(channel),
            Value::Bulk(payload),
        ] if kind.as_ref() == b"message" => Some((
            crate::value::lossy_text(channel).into_owned(),
            payload.clone(),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deliveries are read from RESP2 arrays and RESP3 pushes alike;
    /// confirmations are not messages.
    #[test]
    fn messages_and_confirmations() {
        let message = vec![Value::bulk("message"), Value::bulk("ch"), Value::bulk("0")];
        let expected = Some(("ch".to_owned(), Bytes::from_static(b"0")));
        assert_eq!(parse_message(&Value::Array(message.clone())), expected);
        assert_eq!(parse_message(&Value::Push(message)), expected);
        let confirmation = vec![Value::bulk("subscribe"), Value::bulk("ch"), Value::Int(1)];
        assert_eq!(parse_message(&Value::Array(confirmation)), None);
        assert_eq!(parse_message(&Value::Int(1)), None);
    }

    /// A one-node transport serves shard 0 and names any other it is
    /// asked for, with how many masters it has.
    #[test]
    fn one_node_serves_shard_0_alone() {
        assert_eq!(single_node(Shard(0)), Ok(()));
        let error = single_node(Shard(2)).unwrap_err();
        assert_eq!(
            error,
            TransportError::NoShard {
                shard: 2,
                masters: 1
            }
        );
        assert_eq!(
            error.to_string(),
            "no connection to shard 2: the transport reaches 1 master(s); a client in cluster mode needs a connection to every master"
        );
    }
}
