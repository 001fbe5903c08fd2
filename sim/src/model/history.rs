//! The history: everything an all-seeing observer saw, in virtual-time order.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use lockcore::{Call, LockName, Purpose};
use serde::{Deserialize, Serialize};
use sha1::{Digest, Sha1};

use crate::model::name::{cmp_name, same_name};
use crate::{Fault, SimTime};

/// What the observer recorded. `Display` renders the timeline, one line per
/// event, virtual time first.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct History {
    /// Facts about the run the checkers need (bounds, names).
    pub meta: Meta,
    /// The events, in the order they happened (virtual time, then cause).
    pub records: Vec<Record>,
}

/// Facts about the run, fixed before it starts.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Meta {
    /// The run's seed.
    pub seed: u64,
    /// When the run stopped.
    pub horizon: SimTime,
    /// The longest one-way message delay any link can draw, in ms
    /// (including latency faults).
    pub max_latency_ms: u64,
    /// The longest timer tick of the clients, in ms: how late a client's
    /// timer (a waiter's wake-up, a renewal) can fire.
    #[serde(default)]
    pub max_timer_tick_ms: u64,
    /// The client names, in spec order.
    pub clients: Vec<String>,
    /// The longest a command of any client may take before it fails, and
    /// the most retries, when a client's release changed Redisson 3.x's
    /// defaults (3.48+: four jittered retries); none for 3.x's 16.5 s and
    /// three (left out of the file, so histories of older releases read
    /// and hash as before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<Retries>,
    /// When no client sends a timed-out acquire again (Redisson 3.37+,
    /// `no-lock-resend`) and Redis has no replicas (whose `WAIT` failures
    /// an acquire retries from 3.20.1): the longest one response timeout
    /// of the clients, plus the link's own latency for an `EVALSHA`'s
    /// `NOSCRIPT` and `SCRIPT LOAD` before the script's send: the most an
    /// acquire's one attempt takes when no fault holds it. Not written to the file, so a history's JSON and hash stay
    /// as they were; a history read back has none, and is judged as if
    /// acquires were sent again (the looser bound).
    #[serde(skip)]
    pub acquire_once_ms: Option<u64>,
    /// When a client asks the server which of `WAIT` and `WAITAOF` it
    /// has before its first synced script (Redisson 3.46+, `wait-probe`,
    /// with replicas): how long that probe holds the scripts behind it.
    /// Not written to the file, like [`Meta::acquire_once_ms`]; a history
    /// read back has none, and is judged as if no call waited for a probe.
    #[serde(skip)]
    pub probe: Option<ProbeBound>,
    /// The clients that send their scripts by SHA (Redisson 3.46+ on a
    /// single server, `script-cache`), each with how much longer than
    /// one command's retries a script's first attempt may take, in ms: an
    /// `EVALSHA` answered `NOSCRIPT` (a restarted Redis) up to one
    /// response timeout in, then a `SCRIPT LOAD` retried like any
    /// command, then the `EVALSHA` again: two response timeouts and
    /// their timers' ticks around the load (try-lock-answers allows it
    /// when the run shows the caller's load held or lost). Not written to the file, like
    /// [`Meta::acquire_once_ms`]; a history read back has none.
    #[serde(skip)]
    pub script_load_ms: Vec<(String, u64)>,
}

/// How long a client's server probe may hold its first synced scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProbeBound {
    /// One round trip on the links' own latency (no fault's delay), in ms.
    pub round_trip_ms: u64,
    /// The longest command budget of the probing clients (the probe is a
    /// batch retried like any command), in ms.
    pub budget_ms: u64,
}

/// The checkers' bound on one command's retries (see [`Meta::retries`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retries {
    /// Every attempt's timeout plus the longest pauses between them, in ms.
    pub budget_ms: u64,
    /// How often a command is sent again at most.
    pub attempts: u32,
}

impl Retries {
    /// Redisson 3.x's defaults: 16.5 s, three retries.
    pub fn redisson_3() -> Retries {
        let c = lockcore::Config::default();
        Retries {
            budget_ms: c.command_budget().0,
            attempts: c.retry_attempts,
        }
    }
}

impl Meta {
    /// The bound on one command's retries of this run's clients.
    pub fn retries(&self) -> Retries {
        self.retries.unwrap_or_else(Retries::redisson_3)
    }
}

/// One event and when it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The virtual time.
    pub at: SimTime,
    /// What happened.
    pub kind: RecordKind,
}

impl Record {
    /// Whether a timeline shows it: every record but the bookkeeping the
    /// checkers alone read (an acquire's or unlock's send, a wait loop's start, a
    /// renewal's wait for its stage).
    pub fn shown(&self) -> bool {
        !matches!(
            self.kind,
            RecordKind::AcquireSent { .. }
                | RecordKind::UnlockSent { .. }
                | RecordKind::Lock {
                    event: lockcore::Event::WaitBegan { .. }
                        | lockcore::Event::RenewalStaged { .. },
                    ..
                }
        )
    }
}

/// A thread of one life of a client process: `A/t1` (life 0) or `A~1/t1`
/// after one restart. Ordered by client name, life, then thread.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Who {
    /// The client's name (shared: a run's records name their threads
    /// thousands of times).
    pub client: Arc<str>,
    /// How many times the client restarted before this life.
    pub life: u32,
    /// The thread (lockcore's thread id, from 1).
    pub thread: u64,
}

impl Who {
    /// The process part (`A`, `A~1`).
    pub fn process(&self) -> Proc {
        Proc {
            client: self.client.clone(),
            life: self.life,
        }
    }
}

impl fmt::Display for Who {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.life == 0 {
            write!(f, "{}/t{}", self.client, self.thread)
        } else {
            write!(f, "{}~{}/t{}", self.client, self.life, self.thread)
        }
    }
}

/// One life of a client process: `A`, or `A~1` after one restart.
/// Ordered by client name, then life.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Proc {
    /// The client's name.
    pub client: Arc<str>,
    /// How many times it restarted before this life.
    pub life: u32,
}

impl fmt::Display for Proc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.life == 0 {
            f.write_str(&self.client)
        } else {
            write!(f, "{}~{}", self.client, self.life)
        }
    }
}

// The checkers key their maps by threads and processes: their names are
// compared by `cmp_name` (the shared text by address), the order a
// derived one would give.
impl PartialEq for Who {
    fn eq(&self, other: &Self) -> bool {
        self.thread == other.thread
            && self.life == other.life
            && same_name(&self.client, &other.client)
    }
}

impl Eq for Who {}

impl PartialOrd for Who {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Who {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_name(&self.client, &other.client)
            .then(self.life.cmp(&other.life))
            .then(self.thread.cmp(&other.thread))
    }
}

impl Hash for Who {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.client.hash(state);
        self.life.hash(state);
        self.thread.hash(state);
    }
}

impl PartialEq for Proc {
    fn eq(&self, other: &Self) -> bool {
        self.life == other.life && same_name(&self.client, &other.client)
    }
}

impl Eq for Proc {}

impl PartialOrd for Proc {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Proc {
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_name(&self.client, &other.client).then(self.life.cmp(&other.life))
    }
}

impl Hash for Proc {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.client.hash(state);
        self.life.hash(state);
    }
}

/// What a call returned, as the thread saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "outcome")]
pub enum Outcome {
    /// Acquired (or re-entered), with the fencing token under `fenced`.
    Acquired {
        /// The token.
        token: Option<u64>,
    },
    /// `tryLock` gave up.
    NotAcquired,
    /// `unlock` succeeded; `released` when the key was deleted.
    Unlocked {
        /// Whether the hold count reached zero.
        released: bool,
    },
    /// Any other successful answer (queries, `forceUnlock`), as text.
    Value {
        /// The answer.
        value: String,
    },
    /// The call failed.
    Error {
        /// The error text (Redisson's, exactly, for an unlock not held).
        message: String,
        /// Redis failed the lock's script itself: a Lua runtime error, or
        /// a command the script called refusing its arguments (the reply
        /// names the script, [`lockcore::LockError::is_script_error`]).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        script: bool,
    },
}

/// Why a thread stopped believing it holds a lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReleaseCause {
    /// It called `unlock` (or `forceUnlock`) with its last hold.
    Unlock,
    /// Its process crashed.
    Crash,
    /// `fenced`: the client learned the lease was lost.
    LeaseLost,
}

/// Whether a fault window opens or closes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// The fault starts.
    Begin,
    /// The fault ends.
    End,
}

/// Which way a message travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// Client to Redis.
    Up,
    /// Redis to client.
    Down,
}

/// What changed Redis's view of a lock.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "cause")]
pub enum ServerCause {
    /// A client's command (an acquire, an unlock, a force-unlock, ...).
    Command {
        /// The sender.
        by: Proc,
        /// Why lockcore sent it.
        purpose: Purpose,
    },
    /// The key's lease ran out.
    Expiry,
    /// Redis restarted without persistence.
    Restart,
    /// Someone other than the lock deleted or evicted the key.
    Deleted,
    /// A replica was promoted: the key is as the replica had it.
    Failover,
}

/// One kind of event. Client-side records name the thread ([`Who`]) or
/// the process ([`Proc`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum RecordKind {
    /// A client process started (at time 0 or on a restart).
    Start {
        /// The process.
        process: Proc,
        /// Its lockcore uuid.
        uuid: String,
    },
    /// A thread called the lock.
    Call {
        /// The caller.
        who: Who,
        /// The lock.
        lock: LockName,
        /// The call.
        call: Call,
    },
    /// A call returned.
    Return {
        /// The caller.
        who: Who,
        /// The lock.
        lock: LockName,
        /// The call it answers.
        call: Call,
        /// The result.
        outcome: Outcome,
    },
    /// A thread called its multi-lock; the multi-lock's calls on its
    /// locks follow as the thread's [`RecordKind::Call`]s.
    MultiCall {
        /// The caller.
        who: Who,
        /// The multi-lock.
        multi: lockcore::MultiLock,
        /// The call.
        call: Call,
    },
    /// A multi-lock call returned.
    MultiReturn {
        /// The caller.
        who: Who,
        /// The multi-lock.
        multi: lockcore::MultiLock,
        /// The call it answers.
        call: Call,
        /// The result.
        outcome: Outcome,
    },
    /// The thread now believes it holds the lock (a first acquire returned).
    Hold {
        /// The holder.
        who: Who,
        /// The lock.
        lock: LockName,
        /// The fencing token, if any.
        token: Option<u64>,
        /// The lease in ms (the watchdog timeout when `watchdog`).
        lease_ms: u64,
        /// Whether the watchdog keeps it alive.
        watchdog: bool,
    },
    /// The thread no longer believes it holds the lock.
    Release {
        /// The former holder.
        who: Who,
        /// The lock.
        lock: LockName,
        /// Why.
        cause: ReleaseCause,
    },
    /// Redis's view of a lock (holder or count) changed, after a command,
    /// at the key's expiry instant or on a Redis restart.
    Server {
        /// The lock.
        lock: LockName,
        /// The holding thread, if the key exists; `None` when free.
        holder: Option<Who>,
        /// The hold count (0 when free).
        count: i64,
        /// Whether it is a read-write lock held in `read` mode, which a
        /// waiting reader may share (absent for every other key).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        shared: bool,
        /// The key's PTTL in ms (-2 when absent).
        ttl_ms: i64,
        /// What changed it.
        cause: ServerCause,
    },
    /// The watchdog sent a renewal.
    RenewSent {
        /// The process.
        process: Proc,
        /// The lock.
        lock: LockName,
        /// lockcore's request id.
        request: u64,
        /// A resend of an earlier renewal of this lock that timed out
        /// unanswered (lockcore's command retry, `Output::Send`'s
        /// `attempt` > 0), not a new renewal.
        retry: bool,
        /// It went out after the `INFO` that gave its replica count
        /// (3.18.1+ with replicas, `Output::Send`'s `staged`): the
        /// watchdog sent it when it sent that `INFO`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        staged: bool,
    },
    /// A thread's acquire script went out (its first send, not a resend):
    /// when a waiter's first attempt left, after whatever its client had
    /// to ask first (3.26+'s probe, 3.18.1+'s `INFO`, 3.46+'s batch
    /// `SCRIPT LOAD`). Not shown in timelines.
    AcquireSent {
        /// The process.
        process: Proc,
        /// The lock.
        lock: LockName,
        /// lockcore's request id.
        request: u64,
    },
    /// An unlock script went out, its first send or a resend (a response
    /// timeout's, or the retry after too few replicas synced): an
    /// unlock that timed out may still have one on its way, which runs
    /// after a later call of its thread began. Not shown in timelines.
    UnlockSent {
        /// The process.
        process: Proc,
        /// The lock.
        lock: LockName,
        /// lockcore's request id.
        request: u64,
        /// 0 for the first send, `n` for the `n`-th resend.
        attempt: u32,
    },
    /// A renewal's reply reached the client. A late reply to an attempt
    /// that timed out is recorded too: lockcore ignores it, but Redis did
    /// run the renewal.
    RenewReply {
        /// The process.
        process: Proc,
        /// The lock.
        lock: LockName,
        /// lockcore's request id.
        request: u64,
        /// The reply: `1`, `0` or an error.
        reply: String,
    },
    /// An event lockcore reported (renewal stopped, lease lost, ...).
    Lock {
        /// The process.
        process: Proc,
        /// The event.
        event: lockcore::Event,
    },
    /// A write to the resource the lock protects.
    Write {
        /// The writer.
        who: Who,
        /// The lock (one resource per lock).
        lock: LockName,
        /// The writer's fencing token, if any.
        token: Option<u64>,
        /// Whether the resource took it.
        accepted: bool,
    },
    /// A pub/sub message reached a client.
    Deliver {
        /// The process.
        process: Proc,
        /// The channel.
        channel: String,
        /// The payload, as text.
        payload: String,
    },
    /// The network dropped a message.
    Drop {
        /// The client whose link dropped it.
        process: Proc,
        /// Which way it went.
        direction: Direction,
        /// What it was (command name, `reply`, `message`).
        what: String,
        /// Why it was lost.
        why: crate::model::drop_cause::DropCause,
    },
    /// A partition held a message: the connection keeps it, and it
    /// arrives with TCP's first retransmission after the heal.
    Held {
        /// The client whose link held it.
        process: Proc,
        /// Which way it went.
        direction: Direction,
        /// What it was (command name, `reply`, `message`).
        what: String,
        /// When it arrives.
        until: SimTime,
    },
    /// A fault window opened or closed (crashes are [`RecordKind::Crash`]).
    Fault {
        /// The fault, as planned.
        fault: Fault,
        /// Begin or end.
        phase: Phase,
    },
    /// A client process crashed.
    Crash {
        /// The process that died.
        process: Proc,
    },
    /// A key of the lock's family (beside its hash) that Redis still had,
    /// without a TTL, when the run reached its horizon (see
    /// `model/leftover.rs`); recorded just before [`RecordKind::End`].
    Leftover {
        /// The lock.
        lock: LockName,
        /// Which key it is.
        what: crate::model::leftover::LeftoverKind,
        /// The key.
        key: String,
        /// Its entries, by thread (a list's or a sorted set's members).
        entries: Vec<Who>,
    },
    /// A thread finished its script.
    Done {
        /// The thread.
        who: Who,
    },
    /// The run reached its horizon.
    End,
}

impl RecordKind {
    /// The `Hold` a thread's first acquire by `call` makes, with the
    /// client's `lockWatchdogTimeout` as the lease when it names none.
    pub(crate) fn hold(
        who: Who,
        lock: LockName,
        call: &Call,
        token: Option<lockcore::FencingToken>,
        watchdog_ms: u64,
    ) -> RecordKind {
        let lease = call.lease();
        RecordKind::Hold {
            who,
            lock,
            token: token.map(|t| t.0),
            lease_ms: lease.map_or(watchdog_ms, |l| l.0),
            watchdog: lease.is_none(),
        }
    }
}

/// An unlock that failed, as the calling thread saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnlockError {
    /// When the error was returned.
    pub at: SimTime,
    /// The client, by name.
    pub client: String,
    /// The thread.
    pub thread: u64,
    /// The error text (Redisson's, exactly, for a lock not held).
    pub message: String,
}

impl History {
    /// A stable hash of the whole history (hex SHA1 of its canonical JSON):
    /// the same seed and spec give the same hash.
    pub fn hash(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        let digest = Sha1::digest(&json);
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// What `read` finds in the last of `process`'s lock events before
    /// record `before` that it reads anything in (the client's last
    /// reading of its server, say).
    pub fn last_event_before<T>(
        &self,
        process: &Proc,
        before: usize,
        read: impl Fn(&lockcore::Event) -> Option<T>,
    ) -> Option<T> {
        self.records[..before.min(self.records.len())]
            .iter()
            .rev()
            .find_map(|r| match &r.kind {
                RecordKind::Lock { process: p, event } if p == process => read(event),
                _ => None,
            })
    }

    /// Every failed unlock, in order.
    pub fn unlock_errors(&self) -> Vec<UnlockError> {
        self.records
            .iter()
            .filter_map(|r| match &r.kind {
                RecordKind::Return {
                    who,
                    call: Call::Unlock,
                    outcome: Outcome::Error { message, .. },
                    ..
                } => Some(UnlockError {
                    at: r.at,
                    client: who.client.to_string(),
                    thread: who.thread,
                    message: message.clone(),
                }),
                _ => None,
            })
            .collect()
    }

    /// The records with their indexes (the indexes violations cite).
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Record)> {
        self.records.iter().enumerate()
    }

    /// How many records there are.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The timeline line of record `index` (without the trailing newline).
    pub fn line(&self, index: usize) -> Option<String> {
        self.records.get(index).map(|r| r.to_string())
    }
}

impl fmt::Display for History {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for r in self.records.iter().filter(|r| r.shown()) {
            writeln!(f, "{r}")?;
        }
        Ok(())
    }
}
