//! What the machine asks of its driver, and what it reports to observers.

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use crate::{Call, CallOutcome, LockError, LockName, Millis, RequestId, StepId, ThreadId, TimerId};

/// A command's words, name first (`EVAL <script> ...`). Shared: the
/// machine keeps it to send again after a timeout and hands the same words
/// to its driver, so a send counts a reference where it copied every word.
pub type Command = std::sync::Arc<[Bytes]>;

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
    /// `acquireFailedAsync` of a `tryLock(wait)` that gave up (the fair
    /// lock's removes the thread from its queue and timeout set).
    AcquireFailed,
    /// A read-only query (`EXISTS`, `HEXISTS`, `HGET`, `PTTL`).
    Query,
    /// Housekeeping whose reply nobody waits for (3.24+: `DEL` of an
    /// unlock latch once its unlock has answered).
    Cleanup,
    /// The `WAIT` for replicas sent right after a lock script (3.16.7+,
    /// with replicas); the script's call answers once it does.
    Sync,
    /// 3.46+ (`wait-probe`): `WAIT 0 0` or `WAITAOF 0 0 0`, sent once per
    /// client before its first lock script with replicas, to learn which
    /// the server supports.
    Probe,
    /// 3.18.1+ (`replica-count-from-info`): `INFO REPLICATION` (`INFO
    /// ALL` from 3.46.0) before a synced lock script, whose
    /// `connected_slaves` is the count its `WAIT` asks for; from 3.27.0
    /// only while the client has no count cached.
    Info,
    /// `SCRIPT LOAD` of a script Redis answered `NOSCRIPT` for (3.46+,
    /// `script-cache`); the script's `EVALSHA` is sent again once it
    /// answers.
    ScriptLoad,
    /// 3.46+ (`script-cache`): `SCRIPT LOAD` of a synced lock script the
    /// client has not loaded on this node, sent before the script's batch
    /// (`CommandBatchService.loadScripts`), which then sends `EVALSHA`.
    BatchLoad,
    /// `expireAsync(lease)` of a lock a multi-lock's leased `tryLock`
    /// took (`PEXPIRE`; from 3.17.0 `RedissonExpirable`'s script).
    Expire,
    /// `ASKING`, sent before a command an `ASK` redirected, on the node
    /// it names (its `OK` is read by nobody).
    Asking,
    /// `CLUSTER NODES`, the topology scan of a cluster client every
    /// `scanInterval`: the masters' slots it reads become the slots'
    /// routes (see [`Config::scan_interval`](crate::Config::scan_interval)).
    Scan,
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
    /// The connections to Redis closed; the subscription to this channel,
    /// still in use, is sent again (Redisson resubscribes on reconnect).
    Resubscribing {
        /// The channel.
        channel: String,
    },
    /// Before 3.46, a Sentinel client's connections closed while these
    /// channels were subscribed: its pub/sub stops for good (#6026), and no
    /// subscription is made again for the client's lifetime.
    PubSubStopped {
        /// The channels in use, none of which is subscribed again.
        channels: Vec<String>,
    },
    /// 3.26.1+ (`jvm-wait-probe`, `wait-probe`): what the client made of
    /// its probe, `WAIT 0 0` (and from 3.46.0 `WAITAOF 0 0 0`). It keeps
    /// this for its lifetime, and every later lock script is synced by it
    /// (`wait: false`: sent bare, with no `WAIT`). It is the client's
    /// reading, which the release's matching rule can get wrong (#6775).
    SyncProbed {
        /// Whether the client believes the server has `WAIT`.
        wait: bool,
        /// Whether it believes the server has `WAITAOF`; `None` before
        /// 3.46.0, whose probe does not ask.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        waitaof: Option<bool>,
        /// Whether the script that waited for the probe goes out bare.
        /// With `wait` true that is 3.46.0-3.51.x's rule on a server that
        /// lacks only `WAITAOF`: the probing script runs unsynced although
        /// the server has `WAIT` (from 3.52.0, `probe-reads-causes`, only
        /// when it lacks both).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        bare: bool,
    },
    /// 3.18.1+ (`replica-count-from-info`): the `connected_slaves` the
    /// client read from `INFO`, which its synced lock scripts' `WAIT`
    /// asks for (none with 0) until it reads another. Reported when it
    /// differs from the client's last reading: before 3.27.0 every synced
    /// script reads it again, from 3.27.0 the client keeps it until a
    /// `WAIT` counts differently.
    ReplicasCounted {
        /// The replicas the primary counted connected.
        connected: u32,
    },
    /// 3.20.0+ (`no-sync-rollback`): an acquire's `WAIT` synced too few
    /// replicas, so the thread's hold is rolled back (its unlock script)
    /// and, where the release retries it, the acquire runs again after a
    /// retry pause, all inside the same attempt (`handleNoSync` and
    /// `ServiceManager.execute`): the caller sees neither.
    AcquireRolledBack {
        /// The lock.
        lock: LockName,
        /// The thread whose acquire it was.
        thread: ThreadId,
    },
    /// A `tryLock(wait)`'s first attempt found the lock held with wait
    /// left: the thread subscribes and enters the wait loop, whose
    /// timed-out attempts 4.7.0 answers with `false` (#5019) while a
    /// first attempt's timeout throws in every release. Bookkeeping that
    /// the checkers read; timelines do not show it.
    WaitBegan {
        /// The lock.
        lock: LockName,
        /// The waiting thread.
        thread: ThreadId,
    },
    /// The watchdog's renewal of `lock` (from 3.44 a round's chunk, named
    /// by the lock it is routed by) waits for a stage of its own before
    /// its script goes: 3.26.1+'s probe, 3.18.1+'s `INFO`, 3.46+'s batch
    /// `SCRIPT LOAD`. The chain's round went out now, though the renewal
    /// is sent (and recorded) only once the stage answers; a stage held
    /// by a fault holds the round. Bookkeeping that the oracle reads;
    /// timelines do not show it.
    RenewalStaged {
        /// The lock.
        lock: LockName,
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
    /// [`LockClient::on_reply`](crate::LockClient::on_reply) and the same `request`.
    Send {
        /// The request's id.
        request: RequestId,
        /// Why it is sent.
        purpose: Purpose,
        /// The lock it concerns.
        lock: LockName,
        /// The master it goes to: the shard of `lock`'s slot in cluster
        /// mode ([`crate::shard_of`]), 0 otherwise.
        shard: crate::Shard,
        /// The command's arguments, name first (`EVAL <script> ...`).
        command: Command,
        /// 0 for a command's first send; `n` for its `n`-th resend after the
        /// previous attempt timed out unanswered (Redisson's `retryAttempts`,
        /// at most [`Config::retry_attempts`](crate::Config::retry_attempts)).
        /// A resend has a new `request`; the machine ignores replies to the
        /// earlier attempts. It is the same command, sent for the same
        /// reason: a renewal resent after its lock was unlocked was first
        /// sent while it was held.
        attempt: u32,
        /// Whether it waited for a stage of its own first (the probe of
        /// 3.26.1+, the `INFO` of 3.18.1+), or goes on where a `MOVED`
        /// or `ASK` sent its earlier send: it was decided when that stage
        /// or send went out, as a resend was decided at its first send.
        staged: bool,
    },
    /// Subscribe to `channel` on the pub/sub connection; answer with
    /// [`LockClient::on_reply`](crate::LockClient::on_reply) once subscribed (or with an error).
    Subscribe {
        /// The request's id.
        request: RequestId,
        /// The channel.
        channel: String,
        /// The master it subscribes on: the shard of the channel's own
        /// slot in cluster mode (Redisson's `calcSlot(channelName)`), 0
        /// otherwise. A cluster carries a `PUBLISH` to every node.
        shard: crate::Shard,
    },
    /// Unsubscribe from `channel`; no answer is expected.
    Unsubscribe {
        /// The channel.
        channel: String,
        /// The master it was subscribed on (see `Subscribe`).
        shard: crate::Shard,
    },
    /// Call [`LockClient::on_timer`](crate::LockClient::on_timer) with `timer` at `at` (driver time).
    /// `at` may already be past (a `fenced` deadline learned late): fire it
    /// as soon as possible. Timers due at the same instant fire in the
    /// order they were set (by [`TimerId`]).
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
    /// A multi-lock call of `thread` made this call of its own on one of
    /// its locks (a constituent's `tryLock` or `unlock`); an observer
    /// keeps the thread's beliefs by these, as for the thread's calls.
    Constituent {
        /// The thread whose multi-lock call made it.
        thread: ThreadId,
        /// The constituent lock.
        lock: LockName,
        /// The call made on it.
        call: Call,
    },
    /// A [`Output::Constituent`] call finished; its answer goes on to the
    /// multi-lock call, which returns later with [`Output::Return`].
    ConstituentReturn {
        /// The thread whose multi-lock call made it.
        thread: ThreadId,
        /// The constituent lock.
        lock: LockName,
        /// What it got.
        result: Result<CallOutcome, LockError>,
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
    /// A callback stopped where, in Redisson, another Netty thread's
    /// callback of the same client can run before it goes on (the renewal
    /// map's races before 4.4.0, #6844; the arm that follows an
    /// interrupted acquire, #7272). Call
    /// [`LockClient::resume`](crate::LockClient::resume) with `step`: at
    /// once for Redisson's usual order, or after other inputs to
    /// interleave them.
    Step {
        /// The rest of the callback.
        step: StepId,
    },
    /// A notable event, for observers.
    Event(Event),
}
