//! Read-only queries: `isLocked`, `isHeldByThread`, `getHoldCount`,
//! `remainTimeToLive`.

use crate::Value;

use super::request::Owner;
use bytes::Bytes;

use super::{CallKind, CallState, Caller, Command, LockClient, Purpose, command};
use crate::{LockError, LockName, Millis, ThreadId, TransportError};

/// Which query a thread asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Query {
    /// `EXISTS key`.
    IsLocked,
    /// `HEXISTS key field`.
    IsHeldByThread,
    /// `HGET key field`; nil is 0.
    HoldCount,
    /// `PTTL key`.
    RemainTtl,
    /// `RFencedLock.getToken()`: `GET` of the token key.
    Token,
}

impl Query {
    /// The Redis command it sends.
    pub(super) fn command_name(self) -> &'static str {
        match self {
            Query::IsLocked => "EXISTS",
            Query::IsHeldByThread => "HEXISTS",
            Query::HoldCount => "HGET",
            Query::RemainTtl => "PTTL",
            Query::Token => "GET",
        }
    }
}

impl LockClient {
    pub(super) fn start_query(
        &mut self,
        now: Millis,
        thread: ThreadId,
        lock: LockName,
        query: Query,
    ) {
        let field = lock.kind().field(&self.wire.field(&self.uuid, thread));
        let words = self.wire.lock(&lock);
        let command = match (query, lock.kind().token_key(&words)) {
            (Query::Token, Some(key)) => Command::from([Bytes::from_static(b"GET"), key]),
            _ => command::query(query, &words, field),
        };
        let caller = Caller::new(thread, lock.clone());
        self.calls.insert(
            caller.clone(),
            CallState {
                lock: lock.clone(),
                kind: CallKind::Query(query),
            },
        );
        self.send(now, lock, Purpose::Query, command, Owner::Call(caller));
    }

    pub(super) fn on_query_reply(
        &mut self,
        thread: ThreadId,
        query: Query,
        reply: Result<Value, TransportError>,
    ) {
        let result = reply
            .map_err(LockError::from)
            .and_then(|value| command::parse_query(query, &value));
        self.finish(thread, result);
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::Harness;
    use crate::Value;
    use crate::{Call, CallOutcome, Era, ThreadId};

    /// Each query sends its Redis command on the calling thread's field and
    /// maps the reply as Redisson does (HGET nil is a hold count of 0).
    #[test]
    fn queries_map_replies() {
        let mut h = Harness::new(Era::Redisson);
        let t = ThreadId(4);
        let cases = [
            (
                Call::IsLocked,
                vec!["EXISTS", "q"],
                Value::Int(1),
                CallOutcome::Bool(true),
            ),
            (
                Call::IsLocked,
                vec!["EXISTS", "q"],
                Value::Int(0),
                CallOutcome::Bool(false),
            ),
            (
                Call::IsHeldByThread,
                vec!["HEXISTS", "q", "uuid-a:4"],
                Value::Int(1),
                CallOutcome::Bool(true),
            ),
            (
                Call::HoldCount,
                vec!["HGET", "q", "uuid-a:4"],
                Value::bulk("2"),
                CallOutcome::Count(2),
            ),
            (
                Call::HoldCount,
                vec!["HGET", "q", "uuid-a:4"],
                Value::Nil,
                CallOutcome::Count(0),
            ),
            (
                Call::RemainTtl,
                vec!["PTTL", "q"],
                Value::Int(-2),
                CallOutcome::Ttl(-2),
            ),
        ];
        for (call, expected, reply, outcome) in cases {
            h.call(t, "q", call).unwrap();
            let (req, command) = h.expect_send();
            assert_eq!(command, expected);
            h.reply(req, reply);
            assert_eq!(h.expect_return(t), Ok(outcome));
        }
    }
}
