//! The lock algorithm as a sans-IO state machine.

use bytes::Bytes;
use fake_redis::Value;
use serde::{Deserialize, Serialize};

use crate::{
    Call, CallOutcome, Config, FencingToken, LockError, LockName, Millis, RequestId, ThreadId,
    TimerId, TransportError,
};

/// Why a command was sent: lets an observer tell renewals from acquires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Purpose {
    /// The acquire script (any version).
    Acquire,
    /// The renewal script, sent by the watchdog.
    Renew,
    /// The unlock script.
    Unlock,
    /// The force-unlock script.
    ForceUnlock,
    /// A read-only query (`EXISTS`, `HEXISTS`, `HGET`, `PTTL`).
    Query,
}

/// Something the lock reports about itself, for logs and observers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "event")]
pub enum Event {
    /// A renewal replied 1: the key's TTL is back to the watchdog timeout.
    Renewed {
        /// The lock.
        lock: LockName,
    },
    /// The watchdog stopped renewing this lock, and why.
    RenewalStopped {
        /// The lock.
        lock: LockName,
        /// A short, stable reason (`unlocked`, `not-held`, `error: ...`).
        reason: String,
    },
    /// `fenced` only: the holder learns it no longer holds the lock.
    LeaseLost {
        /// The lock.
        lock: LockName,
        /// The threads that believed they held it.
        threads: Vec<ThreadId>,
    },
}

/// What the state machine asks its driver to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Send `command` (name first) on the command connection; answer with
    /// [`LockClient::on_reply`] and the same `request`.
    Send {
        /// The request's id.
        request: RequestId,
        /// Why it is sent.
        purpose: Purpose,
        /// The lock it concerns.
        lock: LockName,
        /// The command's arguments, name first (`EVAL <script> ...`).
        command: Vec<Bytes>,
    },
    /// Subscribe to `channel` on the pub/sub connection; answer with
    /// [`LockClient::on_reply`] once subscribed (or with an error).
    Subscribe {
        /// The request's id.
        request: RequestId,
        /// The channel.
        channel: String,
    },
    /// Unsubscribe from `channel`; no answer is expected.
    Unsubscribe {
        /// The channel.
        channel: String,
    },
    /// Call [`LockClient::on_timer`] with `timer` at `at` (driver time).
    SetTimer {
        /// The timer's id.
        timer: TimerId,
        /// When it fires.
        at: Millis,
    },
    /// Forget `timer`; it must not fire.
    CancelTimer {
        /// The timer's id.
        timer: TimerId,
    },
    /// A call of `thread` finished.
    Return {
        /// The thread that called.
        thread: ThreadId,
        /// The lock it called on.
        lock: LockName,
        /// What it gets.
        result: Result<CallOutcome, LockError>,
    },
    /// A notable event, for observers.
    Event(Event),
}

/// One Redisson client (one uuid): all of its threads and locks.
#[derive(Debug)]
pub struct LockClient {
    uuid: String,
    config: Config,
}

impl LockClient {
    /// A client with identity `uuid` (Redisson's connection-manager id).
    pub fn new(uuid: impl Into<String>, config: Config) -> Self {
        Self {
            uuid: uuid.into(),
            config,
        }
    }

    /// The client's uuid.
    pub fn uuid(&self) -> &str {
        &self.uuid
    }

    /// The client's configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The hash field a thread uses: `<uuid>:<thread-id>`.
    pub fn field(&self, thread: ThreadId) -> String {
        format!("{}:{}", self.uuid, thread.0)
    }

    /// Starts `call` for `thread` on `lock`. Its result arrives later as
    /// [`Output::Return`]; an invalid call is refused at once.
    pub fn call(
        &mut self,
        now: Millis,
        thread: ThreadId,
        lock: LockName,
        call: Call,
    ) -> Result<(), LockError> {
        let _ = (now, thread, lock, call);
        todo!("lockcore issue")
    }

    /// The reply (or transport failure) for `request`. Replies to requests
    /// the machine no longer waits for are ignored.
    pub fn on_reply(
        &mut self,
        now: Millis,
        request: RequestId,
        reply: Result<Value, TransportError>,
    ) {
        let _ = (now, request, reply);
        todo!("lockcore issue")
    }

    /// A timer set with [`Output::SetTimer`] fired.
    pub fn on_timer(&mut self, now: Millis, timer: TimerId) {
        let _ = (now, timer);
        todo!("lockcore issue")
    }

    /// A pub/sub message arrived on a subscribed channel.
    pub fn on_message(&mut self, now: Millis, channel: &str, payload: &[u8]) {
        let _ = (now, channel, payload);
        todo!("lockcore issue")
    }

    /// The next output, in the order the machine produced them.
    pub fn poll(&mut self) -> Option<Output> {
        todo!("lockcore issue")
    }

    /// The fencing token `thread` holds `lock` with, if any (`fenced`).
    pub fn token(&self, thread: ThreadId, lock: &LockName) -> Option<FencingToken> {
        let _ = (thread, lock);
        todo!("lockcore issue")
    }
}
