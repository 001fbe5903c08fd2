//! The transport the async wrapper drives: a command connection and a
//! pub/sub connection to one Redis.

use std::future::Future;

use crate::Value;
use bytes::Bytes;

use crate::TransportError;

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

/// Two connections to one Redis, as a Redisson client has: commands, and
/// pub/sub.
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
    /// Issues `command` (name first) on the command connection; the future
    /// resolves to its reply. Redis error replies are `Ok(Value::Error)`.
    fn send(
        &self,
        command: &[Bytes],
    ) -> impl Future<Output = Result<Value, TransportError>> + Send + 'static;

    /// Issues `SUBSCRIBE channel` on the pub/sub connection; the future
    /// resolves once Redis confirmed it.
    fn subscribe(
        &self,
        channel: String,
    ) -> impl Future<Output = Result<(), TransportError>> + Send + 'static;

    /// Issues `UNSUBSCRIBE channel`; nothing waits for the answer.
    fn unsubscribe(&self, channel: String);

    /// The next message on a subscribed channel, or news that the pub/sub
    /// connection was replaced; `None` once it is gone for good. Called by
    /// one task at a time.
    fn next_incoming(&self) -> impl Future<Output = Option<Incoming>> + Send + '_;
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
}
