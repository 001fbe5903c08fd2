//! Requests in flight: response timeouts and retries.
//!
//! Every command gets a response-timeout timer. A reply after the timeout is
//! ignored (its request is gone); the timed-out command is sent again after
//! `retry_interval`, as a new request, up to `retry_attempts` times, and then
//! fails with [`TransportError::Timeout`]. A connection error or a Redis error
//! reply fails at once: retrying would not change it.

use crate::Value;
use bytes::Bytes;
use tracing::debug;

use super::batch_script::Batch;
use super::probe::SyncWith;
use super::redirect::Redirect;
use super::{Command, LockClient, Output, Purpose, TimerKind};
use crate::script::LockScript;
use crate::{LockName, Millis, RequestId, Switch, ThreadId, TimerId, TransportError};

/// What goes on the wire.
#[derive(Debug, Clone)]
pub(super) enum Kind {
    /// A command on the command connection.
    Command { purpose: Purpose, command: Command },
    /// A subscription on the pub/sub connection.
    Subscribe { channel: String },
}

/// Who waits for the reply.
#[derive(Debug, Clone)]
pub(super) enum Owner {
    /// A thread's call on a lock.
    Call(super::Caller),
    /// The client's subscription to this channel, in this generation (a
    /// confirmation for an earlier, since dropped, subscription must not
    /// count for a new one).
    Subscribe(String, u64),
    /// The watchdog, renewing this lock for this thread.
    Renew(LockName, ThreadId),
    /// The batched round (3.44+), renewing one chunk: each lock for its
    /// thread, in the order of the script's keys; and the round's number.
    RenewChunk(Vec<(LockName, ThreadId)>, u64),
    /// `ReadLockTask`'s round (3.44+), renewing one chunk: each read lock
    /// with the threads a 0 cancels; and the round's number.
    ReadRenewChunk(super::read_task::ReadChunk, u64),
    /// An acquire whose thread was interrupted: its callback still runs.
    Abandoned(super::interrupt::Abandoned),
    /// 3.20.0+: the unlock that rolls back this thread's acquire, which
    /// failed with this error for too few synced replicas.
    Rollback(ThreadId, TransportError),
    /// 3.20.0+: the unlock that rolls back an interrupted thread's
    /// acquire, which synced too few replicas (see `abandoned_retry`).
    AbandonedRollback(super::interrupt::Abandoned),
    /// Nobody: the reply is dropped (a latch's `DEL`).
    Nobody,
    /// The topology scan's `CLUSTER NODES`, to the scan's `n`-th master.
    Scan(usize),
    /// 3.46+ (`script-cache`): a `SCRIPT LOAD` after `NOSCRIPT`; the
    /// script's command goes again once it answered.
    ScriptLoad(Box<Reload>),
    /// 3.46+ (`script-cache`): the `SCRIPT LOAD` a synced script's batch
    /// sends first (by load and script); the script waits in
    /// `batch_script`'s table.
    BatchLoad(u64, LockScript),
    /// 3.46+ (`wait-probe`): one of the probe's two commands (by probe
    /// and part); the lock script waits in the probe's table.
    Probe(u64, usize),
    /// 3.18.1+ (`replica-count-from-info`): the `INFO` that gives a lock
    /// script its replica count; the script waits in `replica_count`'s
    /// table.
    Info(u64),
    /// A multi-lock's `expireAsync` of the thread's taken lock (by its
    /// place among the taken ones).
    MultiExpire(ThreadId, usize),
}

impl Owner {
    /// Whether `thread`'s call waits on it (through a script load too).
    pub(super) fn is_call_of(&self, thread: ThreadId) -> bool {
        match self {
            Owner::Call(caller) => caller.thread == thread,
            Owner::ScriptLoad(reload) => reload.owner.is_call_of(thread),
            _ => false,
        }
    }

    /// The owner the reply goes to: this one, or a script load's.
    pub(super) fn innermost(&mut self) -> &mut Owner {
        match self {
            Owner::ScriptLoad(reload) => reload.owner.innermost(),
            owner => owner,
        }
    }

    /// The call's reply goes to `abandoned` instead (its thread was
    /// interrupted and the release lets the callback run).
    pub(super) fn abandon(&mut self, abandoned: super::interrupt::Abandoned) {
        match self {
            Owner::ScriptLoad(reload) => reload.owner.abandon(abandoned),
            owner => *owner = Owner::Abandoned(abandoned),
        }
    }
}

/// A script command whose `EVALSHA` met `NOSCRIPT`, waiting for its
/// `SCRIPT LOAD`: sent again as it was, as a new request.
#[derive(Debug, Clone)]
pub(super) struct Reload {
    kind: Kind,
    lock: LockName,
    owner: Owner,
    /// How often it was sent before.
    sent: u32,
    /// Whether it went bare after the probe.
    bare: bool,
    /// Where a redirect had sent it: its load and its resend go there.
    redirect: Option<Redirect>,
}

/// A lock script held back by a stage of its own (the probe, `INFO`):
/// it goes out, or its call fails, once the stage has answered.
#[derive(Debug, Clone)]
pub(super) struct Held {
    pub(super) kind: Kind,
    pub(super) lock: LockName,
    pub(super) owner: Owner,
    pub(super) tries: Tries,
}

impl Held {
    pub(super) fn into_parts(self) -> (Kind, LockName, Owner, Tries) {
        (self.kind, self.lock, self.owner, self.tries)
    }

    fn new(kind: Kind, lock: LockName, owner: Owner, tries: Tries) -> Held {
        Held {
            kind,
            lock,
            owner,
            tries,
        }
    }
}

/// A request the machine waits on (or one waiting to be retried).
#[derive(Debug, Clone)]
pub(super) struct Pending {
    pub(super) kind: Kind,
    pub(super) lock: LockName,
    pub(super) owner: Owner,
    /// How many times it was sent before this attempt, and how many of
    /// those were retries after a timeout.
    pub(super) tries: Tries,
    /// When this attempt was sent (the `fenced` deadline counts from it).
    pub(super) sent_at: Millis,
    pub(super) timeout: TimerId,
    /// The `WAIT` sent after it, for a lock script with replicas.
    pub(super) sync: Option<super::sync::Sync>,
}

/// How often a command went out before: `sent`, every earlier send of it
/// ([`Output::Send`]'s `attempt`); `retried`, the resends after a timeout
/// among them, which count against `retryAttempts`. A resend after
/// `NOSCRIPT` is a new command in Redisson, with its retries intact.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Tries {
    pub(super) sent: u32,
    pub(super) retried: u32,
    /// 3.46+: the probe (see `probe`) sent this lock script bare, without
    /// the sync it would otherwise get; its resends stay bare.
    pub(super) bare: bool,
    /// The replica count its batch's `WAIT` asks for, once known (see
    /// `replica_count`); its resends ask for the same.
    pub(super) replicas: Option<u32>,
    /// It waited for the probe or `INFO` before its first send
    /// ([`Output::Send`]'s `staged`).
    pub(super) staged: bool,
    /// 3.46+: its batch sent it as `EVALSHA` after the client's own
    /// `SCRIPT LOAD` (see `batch_script`).
    pub(super) batched: bool,
    /// The master a `MOVED` or `ASK` sent it to (see `redirect`); its
    /// resends go there too.
    pub(super) redirect: Option<Redirect>,
    /// The master it goes to whatever its lock's slot: the topology
    /// scan's command for one node (see `scan`).
    pub(super) to: Option<crate::Shard>,
}

impl LockClient {
    /// Sends a command for `owner`.
    pub(super) fn send(
        &mut self,
        now: Millis,
        lock: LockName,
        purpose: Purpose,
        command: Command,
        owner: Owner,
    ) -> RequestId {
        let kind = self.by_sha(Kind::Command { purpose, command });
        self.transmit(now, kind, lock, owner, Tries::default())
    }

    /// Subscribes to `channel`, one a waiter on `lock` waits on.
    pub(super) fn send_subscribe(
        &mut self,
        now: Millis,
        lock: LockName,
        channel: String,
        generation: u64,
    ) -> RequestId {
        let owner = Owner::Subscribe(channel.clone(), generation);
        self.transmit(
            now,
            Kind::Subscribe { channel },
            lock,
            owner,
            Tries::default(),
        )
    }

    /// A renewal about to wait for a stage of its own (the probe, `INFO`,
    /// its batch's `SCRIPT LOAD`) went out now as far as its chain is
    /// concerned: reported once, on its first send's first stage.
    fn report_staged(&mut self, kind: &Kind, lock: &LockName, tries: Tries) {
        let renewal = matches!(
            kind,
            Kind::Command {
                purpose: Purpose::Renew,
                ..
            }
        );
        if renewal && tries.sent == 0 && !tries.staged {
            self.event(super::Event::RenewalStaged { lock: lock.clone() });
        }
    }

    pub(super) fn transmit(
        &mut self,
        now: Millis,
        kind: Kind,
        lock: LockName,
        owner: Owner,
        tries: Tries,
    ) -> RequestId {
        self.arm_scan(now);
        let wants_sync = !tries.bare && self.waits_for_replicas(&kind);
        if wants_sync && self.needs_probe() {
            self.report_staged(&kind, &lock, tries);
            return self.send_probe(now, Held::new(kind, lock, owner, tries));
        }
        let mut with = if wants_sync {
            self.sync_with()
        } else {
            SyncWith::Bare
        };
        let (mut kind, mut lock, mut owner, mut tries) = (kind, lock, owner, tries);
        if with != SyncWith::Bare {
            match tries.replicas.or_else(|| self.known_replicas()) {
                None => {
                    self.report_staged(&kind, &lock, tries);
                    return self.send_info(now, Held::new(kind, lock, owner, tries));
                }
                Some(n) => {
                    tries.replicas = Some(n);
                    if n == 0 {
                        // With no replica to wait for the batch has no
                        // `WAIT` (`getSyncSlaves() > 0`), but is a batch.
                        with = SyncWith::Bare;
                    }
                }
            }
            if self.loads_first(&kind, self.route_of(&lock, tries)) {
                self.report_staged(&kind, &lock, tries);
            }
            match self.batch_form(now, Held::new(kind, lock, owner, tries)) {
                Batch::Ready(held) => (kind, lock, owner, tries) = held.into_parts(),
                Batch::Loading(request) => return request,
            }
        }
        let synced = with != SyncWith::Bare;
        let shard = self.route_of(&lock, tries);
        if let Some(Redirect::Ask(_)) = tries.redirect {
            self.send_asking(&lock, shard);
        }
        let request = RequestId(self.next_request);
        self.next_request += 1;
        let output = match &kind {
            Kind::Command { purpose, command } => Output::Send {
                request,
                purpose: *purpose,
                lock: lock.clone(),
                shard,
                command: command.clone(),
                attempt: tries.sent,
                staged: tries.staged || tries.redirect.is_some(),
            },
            Kind::Subscribe { channel } => Output::Subscribe {
                request,
                channel: channel.clone(),
                shard: self.shard_of(channel),
            },
        };
        self.push(output);
        let mut wait = self.config.response_timeout;
        if synced {
            // Redisson gives a batch that syncs slaves its sync timeout on
            // top of the response timeout.
            wait = wait.plus(self.config.slaves_sync_timeout);
        }
        let timeout = self.set_timer(now.plus(wait), TimerKind::ResponseTimeout(request));
        let replicas = tries.replicas.unwrap_or(self.config.replicas);
        let sync = synced.then(|| self.send_wait(request, (lock.clone(), shard), with, replicas));
        self.requests.insert(
            request,
            Pending {
                kind,
                lock,
                owner,
                tries,
                sent_at: now,
                timeout,
                sync,
            },
        );
        request
    }

    /// 3.46+ (`script-cache`): a lock script goes as `EVALSHA` of its
    /// text's SHA1, unless it waits for replicas (Redisson then runs it in
    /// a batch, which never uses the cache). Done once, at the first send:
    /// a resend, and the resend after `NOSCRIPT`, send the same words.
    fn by_sha(&self, kind: Kind) -> Kind {
        let synced = self.waits_for_replicas(&kind) && self.sync_with() != SyncWith::Bare;
        if synced {
            return kind;
        }
        self.sha_form(kind)
    }

    /// `kind` as `EVALSHA` when the release caches scripts (3.46+): a
    /// script the probe sent bare goes through the cache too.
    pub(super) fn sha_form(&self, kind: Kind) -> Kind {
        if !self.switches.has(Switch::ScriptCache) {
            return kind;
        }
        let Kind::Command { purpose, command } = kind else {
            return kind;
        };
        let command = match &*command {
            [name, text, rest @ ..] if name.as_ref() == b"EVAL" => {
                match LockScript::from_text(text) {
                    Some(script) => [
                        Bytes::from_static(b"EVALSHA"),
                        Bytes::from_static(script.sha1().as_bytes()),
                    ]
                    .into_iter()
                    .chain(rest.iter().cloned())
                    .collect(),
                    None => command,
                }
            }
            _ => command,
        };
        Kind::Command { purpose, command }
    }

    /// The lock script to load when `reply` is `NOSCRIPT` for an
    /// `EVALSHA` of one.
    pub(super) fn noscript(
        pending: &Pending,
        reply: &Result<Value, TransportError>,
    ) -> Option<LockScript> {
        let Err(TransportError::Redis(text)) = reply else {
            return None;
        };
        let Kind::Command { command, .. } = &pending.kind else {
            return None;
        };
        match &**command {
            [name, sha, ..] if text.starts_with("NOSCRIPT") && name.as_ref() == b"EVALSHA" => {
                LockScript::from_sha1(sha)
            }
            _ => None,
        }
    }

    /// `NOSCRIPT`: `SCRIPT LOAD` the script, then send `pending` again
    /// (`CommandAsyncService.evalAsync`, 3.46.0 to 4.7.0).
    pub(super) fn load_script(&mut self, now: Millis, pending: Pending, script: LockScript) {
        let kind = pending.kind.clone();
        self.reload(now, pending, kind, script);
    }

    /// `SCRIPT LOAD` of `script` for `pending`, which then goes again as
    /// `kind`.
    pub(super) fn reload(&mut self, now: Millis, pending: Pending, kind: Kind, script: LockScript) {
        let load = Kind::Command {
            purpose: Purpose::ScriptLoad,
            command: super::batch_script::load_command(script),
        };
        let lock = pending.lock.clone();
        let reload = Reload {
            kind,
            lock: pending.lock,
            owner: pending.owner,
            sent: pending.tries.sent,
            bare: pending.tries.bare,
            redirect: pending.tries.redirect,
        };
        let tries = Tries {
            redirect: pending.tries.redirect,
            ..Tries::default()
        };
        let owner = Owner::ScriptLoad(Box::new(reload));
        self.transmit(now, load, lock, owner, tries);
    }

    /// The `SCRIPT LOAD` answered: the script's command goes again, or
    /// its call fails with the load's error.
    pub(super) fn on_script_loaded(
        &mut self,
        now: Millis,
        reload: Reload,
        reply: Result<Value, TransportError>,
        sent_at: Millis,
    ) {
        match reply {
            Ok(_) => {
                // The same command again: a resend to an observer (a
                // renewal sent before an unlock may go out after it, as a
                // timed-out one's resend does), a fresh one to its retries.
                let tries = Tries {
                    sent: reload.sent + 1,
                    retried: 0,
                    bare: reload.bare,
                    replicas: None,
                    staged: false,
                    batched: false,
                    redirect: reload.redirect,
                    to: None,
                };
                self.transmit(now, reload.kind, reload.lock, reload.owner, tries);
            }
            Err(e) => self.deliver(now, reload.owner, Err(e), sent_at),
        }
    }

    pub(super) fn handle_reply(
        &mut self,
        now: Millis,
        request: RequestId,
        reply: Result<Value, TransportError>,
    ) {
        let reply = match reply {
            Ok(Value::Error(text)) => Err(TransportError::Redis(text)),
            other => other,
        };
        // A lock script with replicas answers once its WAIT has too.
        let (script, reply) = if let Some(script) = self.syncs.remove(&request) {
            match self.wait_answered(script, reply) {
                Some(reply) => (script, reply),
                None => return,
            }
        } else if self
            .requests
            .get(&request)
            .is_some_and(|p| p.sync.is_some())
        {
            match self.script_answered(request, reply) {
                Some(reply) => (request, reply),
                None => return,
            }
        } else {
            (request, reply)
        };
        let Some(pending) = self.requests.remove(&script) else {
            debug!(
                request = request.0,
                "reply to a request no longer awaited: ignored"
            );
            return;
        };
        self.cancel_timer(pending.timeout);
        self.complete(now, pending, reply);
    }

    pub(super) fn on_response_timeout(&mut self, now: Millis, request: RequestId) {
        let Some(pending) = self.requests.remove(&request) else {
            return;
        };
        self.forget_sync(&pending);
        let retried = pending.tries.retried;
        if matches!(
            pending.kind,
            Kind::Command {
                purpose: Purpose::Acquire | Purpose::Unlock,
                ..
            }
        ) {
            self.reach(super::Sometimes::LockCommandTimedOut);
        }
        if retried < self.retries_for(&pending.kind) {
            debug!(request = request.0, retried, "timed out: will retry");
            self.retry_later(now, pending);
        } else {
            debug!(request = request.0, "timed out: retries exhausted");
            self.complete(now, pending, Err(TransportError::Timeout));
        }
    }

    /// 3.12.5 to 3.12.x (`lock-script-batch` without
    /// `batch-failure-fails-commands`, #2790): a lock script whose batch
    /// failed (a connection error, a timeout after every retry) is never
    /// answered. A Redis error reply still fails the script itself.
    pub(super) fn batch_loses(
        &self,
        pending: &Pending,
        reply: &Result<Value, TransportError>,
    ) -> bool {
        matches!(
            reply,
            Err(TransportError::Timeout | TransportError::Connection(_))
        ) && matches!(
            pending.kind,
            Kind::Command {
                purpose: Purpose::Acquire | Purpose::Unlock | Purpose::Renew | Purpose::ForceUnlock,
                ..
            }
        ) && self.switches.has(Switch::LockScriptBatch)
            && !self.switches.has(Switch::BatchFailureFailsCommands)
    }

    /// How often a timed-out request of this kind is sent again: since
    /// 3.37.0 (`no-lock-resend`, #6144) acquire and unlock never are.
    pub(super) fn retries_for(&self, kind: &Kind) -> u32 {
        match kind {
            Kind::Command {
                purpose: Purpose::Acquire | Purpose::Unlock,
                ..
            } if self.switches.has(Switch::NoLockResend) => 0,
            // The fair lock's `acquireFailed`: sent without retry from
            // 3.37.0 (85be4d67a), with it again from 4.7.0 (a5077398e).
            Kind::Command {
                purpose: Purpose::AcquireFailed,
                ..
            } if self.switches.has(Switch::NoLockResend)
                && !self.switches.has(Switch::TryLockTimeoutFalse) =>
            {
                0
            }
            // The scan's `CLUSTER NODES` goes on a connection of its
            // own, not through Redisson's executor: no resend.
            Kind::Command {
                purpose: Purpose::Scan,
                ..
            } => 0,
            _ => self.config.retry_attempts,
        }
    }

    /// `pending` goes again after the retry delay of its next retry.
    pub(super) fn retry_later(&mut self, now: Millis, pending: Pending) {
        let pause = self.retry_pause(pending.tries.retried);
        let timer = self.set_timer(now.plus(pause), TimerKind::Retry);
        self.retrying.insert(timer, pending);
    }

    pub(super) fn on_retry(&mut self, now: Millis, timer: TimerId) {
        if let Some(pending) = self.retrying.remove(&timer) {
            let tries = Tries {
                sent: pending.tries.sent + 1,
                retried: pending.tries.retried + 1,
                ..pending.tries
            };
            self.transmit(now, pending.kind, pending.lock, pending.owner, tries);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::Harness;
    use crate::Value;
    use crate::{
        Call, CallOutcome, Config, Era, LockError, Millis, Purpose, ThreadId, TransportError,
    };

    /// A `redisson` client with a 3 000 ms watchdog whose commands time out
    /// after 100 ms and are resent twice, 50 ms after each timeout.
    fn retrying() -> Harness {
        let config = Config::builder()
            .era(Era::Redisson)
            .watchdog_timeout(3_000)
            .response_timeout(100)
            .retry_attempts(2)
            .retry_interval(50)
            .build()
            .unwrap();
        Harness::with_config(config)
    }

    /// A command whose reply never comes is sent again after the response
    /// timeout plus the retry interval, as a new request, `retry_attempts`
    /// times, and then fails with Timeout (Redisson's `timeout`,
    /// `retryAttempts`, `retryInterval`). A machine that never retried, or
    /// retried for ever, would show a different number of sends.
    #[test]
    fn timeouts_retry_then_fail() {
        let mut h = retrying();
        let t = ThreadId(1);
        h.call(t, "l", Call::IsLocked).unwrap();
        let (first, _) = h.expect_send();
        h.advance(150);
        let (second, _) = h.expect_send();
        assert_ne!(first, second);
        assert_eq!(h.now.0, 150);
        h.advance(150);
        let (third, _) = h.expect_send();
        assert_eq!(h.now.0, 300);
        // The first request's late reply is ignored.
        h.reply(first, Value::Int(1));
        h.expect_quiet();
        h.advance(100);
        assert_eq!(
            h.expect_return(t),
            Err(LockError::Transport(TransportError::Timeout))
        );
        // A reply for the last attempt after it failed changes nothing.
        h.reply(third, Value::Int(1));
        h.expect_quiet();
    }

    /// Each send says which attempt it is: a renewal that times out is
    /// resent with attempt 1, then 2, with the same command, while the
    /// first send and the next round's renewal (a new command, after the
    /// resend answered) say 0. This is what lets an observer tell a
    /// transport resend, sent after an unlock, from the watchdog renewing
    /// an unlocked lock; a machine that numbered every send 0, or counted
    /// sends rather than attempts of one command, fails the assertions.
    #[test]
    fn resends_carry_their_attempt() {
        let mut h = retrying();
        h.acquire(ThreadId(1), "l");
        h.advance_to(Millis(1_000));
        let (first, purpose, attempt) = h.expect_attempt();
        assert_eq!((purpose, attempt), (Purpose::Renew, 0));
        h.advance(150);
        let (second, purpose, attempt) = h.expect_attempt();
        assert_eq!((purpose, attempt), (Purpose::Renew, 1));
        assert_ne!(first, second);
        h.advance(150);
        let (third, _, attempt) = h.expect_attempt();
        assert_eq!(attempt, 2);
        h.reply(third, Value::Int(1));
        let _renewed = h.expect_event();
        h.advance(1_000);
        let (_, purpose, attempt) = h.expect_attempt();
        assert_eq!((purpose, attempt), (Purpose::Renew, 0));
    }

    /// A reply inside the timeout cancels the timeout timer and ends the call.
    #[test]
    fn reply_in_time_cancels_the_timeout() {
        let mut h = Harness::new(Era::Redisson);
        let t = ThreadId(1);
        h.call(t, "l", Call::IsLocked).unwrap();
        let (req, _) = h.expect_send();
        h.reply(req, Value::Int(1));
        assert_eq!(h.expect_return(t), Ok(CallOutcome::Bool(true)));
        assert!(h.timers.is_empty(), "timers left: {:?}", h.timers);
    }

    /// A connection error fails at once, without retry.
    #[test]
    fn connection_error_fails_at_once() {
        let mut h = Harness::new(Era::Redisson);
        let t = ThreadId(1);
        h.call(t, "l", Call::RemainTtl).unwrap();
        let (req, _) = h.expect_send();
        h.fail(req, TransportError::Connection("reset".into()));
        assert_eq!(
            h.expect_return(t),
            Err(LockError::Transport(TransportError::Connection(
                "reset".into()
            )))
        );
        assert!(h.timers.is_empty());
    }

    /// A Redis error reply becomes TransportError::Redis with its text.
    #[test]
    fn redis_error_reply_is_a_transport_error() {
        let mut h = Harness::new(Era::Redisson);
        let t = ThreadId(1);
        h.call(t, "l", Call::IsLocked).unwrap();
        let (req, _) = h.expect_send();
        h.reply(req, Value::Error("WRONGTYPE Operation".into()));
        assert_eq!(
            h.expect_return(t),
            Err(LockError::Transport(TransportError::Redis(
                "WRONGTYPE Operation".into()
            )))
        );
    }
}
