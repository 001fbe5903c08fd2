//! The lock algorithm as a sans-IO state machine.
//!
//! [`LockClient`] is one Redisson client (one uuid). Its inputs are API calls
//! ([`LockClient::call`]), replies ([`LockClient::on_reply`]), timer firings
//! ([`LockClient::on_timer`]) and pub/sub messages
//! ([`LockClient::on_message`]); every input carries the driver's `now`. Its
//! outputs ([`LockClient::poll`]) are commands to send, timers to set or
//! cancel, call results and events. It never reads a clock, never spawns and
//! draws no randomness, and keeps all state in ordered collections, so the
//! same inputs give the same outputs byte for byte.

mod abandoned_retry;
mod acquire;
mod batch_script;
mod batched;
mod caller;
pub(crate) mod command;
mod fence;
#[cfg(test)]
pub(crate) mod harness;
mod instance;
mod interrupt;
mod legacy;
mod multi;
#[cfg(test)]
pub(crate) mod multi_harness;
mod no_sync;
mod output;
mod probe;
mod query;
mod read_task;
mod redirect;
mod replica_count;
mod replica_wait;
mod request;
mod scan;
mod slot_table;
mod slots_apart;
mod sometimes;
mod spin;
mod step;
mod subscription;
mod sync;
mod unlock;
mod waiting;
mod watchdog;
mod wire;

use std::collections::{BTreeMap, VecDeque};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::Value;

pub use output::{Command, Event, Output, Purpose};
pub use sometimes::{Reached, Sometimes};
pub(crate) use wire::LockWords;

use crate::release::SwitchReads;
use crate::{
    Call, CallOutcome, Config, FencingToken, LockError, LockKind, LockName, Millis, RequestId,
    StepId, SwitchSet, ThreadId, TimerId, TransportError, VecMap,
};
use acquire::{Acquiring, Wait};
use caller::Caller;
use fence::Fence;
use query::Query;
use request::{Owner, Pending};
use subscription::Subscription;
use watchdog::Watchdog;

/// What a timer is for; the machine keeps one per [`TimerId`] it handed out.
#[derive(Debug, Clone, PartialEq, Eq)]
enum TimerKind {
    /// The reply to this request is overdue.
    ResponseTimeout(RequestId),
    /// A timed-out request waits here to be sent again.
    Retry,
    /// A waiting thread's wait (for the subscription or on the latch) ends.
    Wait(ThreadId),
    /// `redisson` / `fenced`: renew this lock (`renewExpiration`'s task).
    Renewal(LockName),
    /// `redisson-legacy`: the task captured the lock and the thread.
    LegacyRenewal(LockName, ThreadId),
    /// `redisson-batched`: the client's single renewal chain.
    BatchRound,
    /// 3.44+: `ReadLockTask`'s chain.
    ReadRound,
    /// `slots-renewed-apart`: this slot's chain; on independent masters,
    /// this master's instance's chain.
    SlotRound(u16),
    /// A resubscription failed (Redis still down): try again.
    Resubscribe(String),
    /// `fenced`: the lease ends unless renewed before.
    LeaseDeadline(LockName),
    /// 3.20.1+: the call's acquire or unlock, failed for too few synced
    /// replicas, is tried again.
    NoSyncRetry(Caller),
    /// 3.45.1+: the probe's batch, answered by a demoted primary, goes
    /// again (`replica-wait-retried`).
    ProbeRetry(u64),
    /// 3.20.1+: an interrupted thread's acquire, rolled back for too few
    /// synced replicas, goes again (by its key in `abandoned`).
    AbandonedRetry(u64),
    /// A Sentinel client's pub/sub stopped for good before 3.46 (#6026):
    /// this subscription (its channel and generation) fails now.
    SubscriptionTimeout(String, u64),
    /// The topology scan (`CLUSTER NODES`) of a cluster client.
    Scan,
}

/// The call a thread has in flight.
#[derive(Debug)]
struct CallState {
    lock: LockName,
    kind: CallKind,
}

#[derive(Debug)]
enum CallKind {
    Acquire(Acquiring),
    /// With the latch key of this call, from 3.24 (`unlock-latch`).
    Unlock(Option<String>),
    ForceUnlock,
    /// A `tryLock(wait)` gave up and its `acquireFailed` is in flight;
    /// the acquire keeps its subscription until it answers (Redisson
    /// unsubscribes in `finally`, after `acquireFailed`).
    AcquireFailed(Acquiring),
    Query(Query),
}

/// What the client believes about one thread's hold of one lock.
#[derive(Debug, Clone)]
struct Hold {
    /// Re-entrancy count as this client counted it.
    count: u64,
    /// The lease of the last acquisition (`None`: the watchdog's).
    lease: Option<Millis>,
    /// `fenced`: the token of this hold.
    token: Option<FencingToken>,
    /// 3.19.2 to 3.27.1 (`unlock-resets-lease` without
    /// `count-down-keeps-lease`): an unlock that only counted this hold
    /// down reset the RLock's `internalLockLeaseTime` to the watchdog
    /// timeout, so the next unlock re-arms the key with that, not `lease`.
    lease_reset: bool,
}

impl Hold {
    /// The lease an unlock that counts this hold down re-arms the key with
    /// (`internalLockLeaseTime`; `None`: the watchdog timeout).
    fn unlock_lease(&self) -> Option<Millis> {
        if self.lease_reset { None } else { self.lease }
    }
}

/// One Redisson client (one uuid): all of its threads and locks.
#[derive(Debug)]
pub struct LockClient {
    uuid: String,
    config: Config,
    /// The release's switches, resolved once; each one the machine asks
    /// is noted ([`LockClient::switches_read`]).
    switches: SwitchReads,
    /// Unlock calls made so far: each 3.24+ unlock gets its own latch id.
    unlocks: u64,
    outputs: VecDeque<Output>,
    next_request: u64,
    next_timer: u64,
    timers: VecMap<TimerId, TimerKind>,
    requests: VecMap<RequestId, Pending>,
    /// Each `WAIT` in flight, and the lock script it follows.
    syncs: VecMap<RequestId, RequestId>,
    /// How often each call was tried again for too few synced replicas
    /// (3.20.1+).
    no_sync_tries: BTreeMap<Caller, u32>,
    /// Interrupted threads' acquires waiting for their next try after a
    /// rollback (3.20.1+), by key.
    abandoned: VecMap<u64, interrupt::Abandoned>,
    next_abandoned: u64,
    retrying: VecMap<TimerId, Pending>,
    calls: VecMap<Caller, CallState>,
    holds: BTreeMap<(LockName, ThreadId), Hold>,
    subscriptions: BTreeMap<String, Subscription>,
    next_generation: u64,
    /// Before 3.46, in Sentinel mode: the connections closed while a
    /// subscription was in use, and no subscription works again for the
    /// client's lifetime (#6026; see `subscription.rs`).
    pubsub_wedged: bool,
    /// Draws jittered retry pauses (3.48+), seeded by the config.
    jitter: ChaCha8Rng,
    /// Draws the spin locks' exponential back-off, seeded by the config.
    spin_rng: ChaCha8Rng,
    watchdog: Watchdog,
    fences: VecMap<LockName, Fence>,
    /// Command words built once (keys, fields, leases).
    wire: wire::Wire,
    /// Callbacks paused for the driver ([`Output::Step`]).
    steps: VecMap<StepId, step::Continuation>,
    next_step: u64,
    /// Each lock's `RLock` instance: the lease of its last `lock(lease)`
    /// (`internalLockLeaseTime`; see [`instance`]).
    instance_leases: VecMap<LockName, Millis>,
    /// Whether callbacks pause where Redisson's can interleave.
    interleaving: bool,
    /// The places of the algorithm passed so far ([`LockClient::reached`]).
    reached: Reached,
    /// 3.46+: what the probe found the server supports (`None`: not
    /// probed yet).
    supported: Option<probe::Supported>,
    /// 3.46+: probes in flight, each with the lock script waiting on it.
    probes: VecMap<u64, probe::Probe>,
    /// 3.18.1+: lock scripts waiting for the `INFO` that gives their
    /// replica count (numbered with the probes).
    asking: VecMap<u64, request::Held>,
    next_probe: u64,
    /// 3.27.0+: the replica count last read from `INFO`, kept until a
    /// `WAIT` forgets it (`replica_count`).
    replica_count: Option<u32>,
    /// 3.18.1+: the count the last `INFO` read, cached or not (reported
    /// when a reading differs).
    replicas_read: Option<u32>,
    /// 3.46+: `aof_enabled` as the last `INFO ALL` read it (kept with
    /// the count, as `MasterSlaveEntry` keeps both).
    aof_read: bool,
    /// 3.46+: the lock scripts this client's batches loaded on the node
    /// it is connected to (`batch_script`).
    batch_scripts: std::collections::BTreeSet<(crate::Shard, crate::script::LockScript)>,
    /// 3.46+: lock scripts waiting for their batch's `SCRIPT LOAD`.
    loading: VecMap<u64, request::Held>,
    next_load: u64,
    /// Each thread's multi-lock call in flight.
    multis: BTreeMap<ThreadId, multi::MultiCall>,
    /// Answers of constituent calls, for their multi-lock calls once the
    /// input that made them is done ([`LockClient::settle`]).
    multi_results: VecDeque<(Caller, Result<CallOutcome, LockError>)>,
    /// Draws the wait of a multi-lock's `lock(lease)` rounds.
    multi_rng: ChaCha8Rng,
    /// The topology scan of a cluster client, and the routes it read.
    scan: scan::Scan,
}

impl LockClient {
    /// A client with identity `uuid` (Redisson's connection-manager id).
    pub fn new(uuid: impl Into<String>, config: Config) -> Self {
        let jitter = ChaCha8Rng::seed_from_u64(config.jitter_seed);
        let config_seed = config.jitter_seed;
        let spin_rng = spin::spin_rng(config.spin_seed);
        Self {
            uuid: uuid.into(),
            switches: SwitchReads::new(config.release.switches()),
            unlocks: 0,
            config,
            outputs: VecDeque::new(),
            next_request: 0,
            next_timer: 0,
            timers: VecMap::new(),
            requests: VecMap::new(),
            syncs: VecMap::new(),
            no_sync_tries: BTreeMap::new(),
            abandoned: VecMap::new(),
            next_abandoned: 0,
            retrying: VecMap::new(),
            calls: VecMap::new(),
            holds: BTreeMap::new(),
            subscriptions: BTreeMap::new(),
            next_generation: 0,
            pubsub_wedged: false,
            jitter,
            spin_rng,
            watchdog: Watchdog::default(),
            fences: VecMap::new(),
            wire: wire::Wire::default(),
            steps: VecMap::new(),
            next_step: 0,
            instance_leases: VecMap::new(),
            interleaving: false,
            reached: Reached::EMPTY,
            supported: None,
            probes: VecMap::new(),
            asking: VecMap::new(),
            next_probe: 0,
            replica_count: None,
            replicas_read: None,
            aof_read: false,
            batch_scripts: std::collections::BTreeSet::new(),
            loading: VecMap::new(),
            next_load: 0,
            multis: BTreeMap::new(),
            multi_results: VecDeque::new(),
            multi_rng: multi::multi_rng(config_seed),
            scan: scan::Scan::default(),
        }
    }

    /// The client has started at `now` (`Redisson.create()`): a cluster
    /// client's topology scan runs from now on, every
    /// [`Config::scan_interval`]. A driver that does not call it has the
    /// scan start at the client's first command.
    pub fn start(&mut self, now: Millis) {
        self.arm_scan(now);
    }

    /// The pause before retry `attempt` (from 0) of a command or a call:
    /// drawn from the config's seed when the release's delay is jittered
    /// (3.48+, `jittered-retry-delay`).
    pub(super) fn retry_pause(&mut self, attempt: u32) -> Millis {
        let (lo, hi) = self.config.retry_delay_range(attempt);
        if lo == hi {
            lo
        } else {
            Millis(self.jitter.random_range(lo.0..=hi.0))
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

    /// The switches of its release the client's behaviour has depended on
    /// so far (each one it asked, on or off). The same inputs under a
    /// release differing only in switches outside this set make the same
    /// behaviour.
    pub fn switches_read(&self) -> SwitchSet {
        self.switches.read()
    }

    /// The hash field a thread uses: `<uuid>:<thread-id>`.
    pub fn field(&self, thread: ThreadId) -> String {
        format!("{}:{}", self.uuid, thread.0)
    }

    /// Starts `call` for `thread` on `lock`. Its result arrives later as
    /// [`Output::Return`]; an invalid call is refused at once and nothing is
    /// sent: a zero lease ([`LockError::InvalidLease`]), a zero wait
    /// ([`LockError::InvalidWait`]), or a thread that already has a call in
    /// flight ([`LockError::ThreadBusy`]).
    pub fn call(
        &mut self,
        now: Millis,
        thread: ThreadId,
        lock: LockName,
        call: Call,
    ) -> Result<(), LockError> {
        if self.is_busy(thread) {
            return Err(LockError::ThreadBusy(thread));
        }
        self.start_call(now, thread, lock, call)?;
        self.settle(now);
        Ok(())
    }

    /// [`Self::call`] of a thread known to be free (or a multi-lock's
    /// constituent).
    fn start_call(
        &mut self,
        now: Millis,
        thread: ThreadId,
        lock: LockName,
        call: Call,
    ) -> Result<(), LockError> {
        let watchdog = call.is_acquire() && call.lease().is_none();
        let kind = lock.kind();
        let refused = kind.too_old(self.config.release);
        if let Some(why) = refused.or_else(|| kind.unmodelled(&self.switches, watchdog)) {
            return Err(LockError::Unmodelled(why));
        }
        if matches!(lock.kind(), LockKind::Read | LockKind::Write) && call == Call::IsLocked {
            // The read and the write lock override `isLocked` with scripts
            // of their own (the mode field); not modelled yet.
            return Err(LockError::Unmodelled("isLocked() of a read or write lock"));
        }
        let listens = call.is_async();
        match call {
            Call::Lock { lease } | Call::LockAsync { lease } => {
                check_lease(lease)?;
                self.start_acquire(now, thread, lock, lease, Wait::Forever, listens);
            }
            Call::LockInterruptibly { lease } => {
                check_lease(lease)?;
                self.start_acquire(now, thread, lock, lease, Wait::Interruptibly, false);
            }
            Call::TryLock { wait, lease } | Call::TryLockAsync { wait, lease } => {
                check_lease(lease)?;
                let wait = match wait {
                    None => Wait::Once,
                    Some(Millis(0)) => return Err(LockError::InvalidWait(0)),
                    Some(w) => Wait::For(w),
                };
                self.start_acquire(now, thread, lock, lease, wait, listens);
            }
            Call::TryLockAndGetToken { wait, lease } => {
                check_lease(lease)?;
                if lock.kind().token_key(&self.wire.lock(&lock)).is_none() {
                    return Err(LockError::NoTokenMethods(lock.kind().info().class));
                }
                let wait = match wait {
                    None => Wait::Forever,
                    // Java's wait 0: one attempt, its time spent at once.
                    Some(Millis(0)) => Wait::Once,
                    Some(w) => Wait::For(w),
                };
                self.start_acquiring(now, thread, lock, lease, wait, (true, true));
            }
            Call::GetToken => {
                if lock.kind().token_key(&self.wire.lock(&lock)).is_none() {
                    return Err(LockError::NoTokenMethods(lock.kind().info().class));
                }
                self.start_query(now, thread, lock, Query::Token);
            }
            Call::Unlock => self.start_unlock(now, thread, lock),
            Call::ForceUnlock => self.start_force_unlock(now, thread, lock),
            Call::IsLocked => self.start_query(now, thread, lock, Query::IsLocked),
            Call::IsHeldByThread => self.start_query(now, thread, lock, Query::IsHeldByThread),
            Call::HoldCount => self.start_query(now, thread, lock, Query::HoldCount),
            Call::RemainTtl => self.start_query(now, thread, lock, Query::RemainTtl),
        }
        Ok(())
    }

    /// The reply (or transport failure) for `request`. Replies to requests
    /// the machine no longer waits for (late, after their timeout) are
    /// ignored. A `Value::Error` reply counts as
    /// [`TransportError::Redis`].
    pub fn on_reply(
        &mut self,
        now: Millis,
        request: RequestId,
        reply: Result<Value, TransportError>,
    ) {
        self.handle_reply(now, request, reply);
        self.settle(now);
    }

    /// A timer set with [`Output::SetTimer`] fired. Unknown or cancelled
    /// timers are ignored.
    pub fn on_timer(&mut self, now: Millis, timer: TimerId) {
        let Some(kind) = self.timers.remove(&timer) else {
            return;
        };
        match kind {
            TimerKind::ResponseTimeout(request) => self.on_response_timeout(now, request),
            TimerKind::Retry => self.on_retry(now, timer),
            TimerKind::Wait(thread) => self.on_wait_timer(now, thread),
            TimerKind::Renewal(lock) => self.on_renewal_timer(now, lock),
            TimerKind::LegacyRenewal(lock, thread) => self.on_legacy_timer(now, lock, thread),
            TimerKind::BatchRound => self.on_batch_timer(now),
            TimerKind::ReadRound => self.on_read_round_timer(now),
            TimerKind::SlotRound(slot) => self.on_slot_round_timer(now, slot),
            TimerKind::Resubscribe(channel) => self.on_resubscribe_timer(now, &channel),
            TimerKind::SubscriptionTimeout(channel, generation) => {
                self.on_subscription_timeout(now, &channel, generation)
            }
            TimerKind::LeaseDeadline(lock) => self.on_lease_deadline(now, lock),
            TimerKind::NoSyncRetry(caller) => self.on_no_sync_retry(now, caller),
            TimerKind::ProbeRetry(id) => self.on_probe_retry(now, id),
            TimerKind::AbandonedRetry(id) => self.on_abandoned_retry(now, id),
            TimerKind::Scan => self.on_scan(now),
        }
        self.settle(now);
    }

    /// `Thread.interrupt()` of `thread`. An acquiring call ends with
    /// [`LockError::Interrupted`] unless it is `lock()` waiting on the
    /// latch (Redisson's `lock()` waits again); its acquire script, if in
    /// flight, still runs on Redis, and its late reply does what the
    /// release's callback does (see the `interrupt-cancels-acquire` switch).
    /// Returns whether a call ended. Other calls, and a thread with no
    /// call, are not affected.
    pub fn interrupt(&mut self, now: Millis, thread: ThreadId) -> bool {
        let ended = self.handle_interrupt(now, thread);
        self.settle(now);
        ended
    }

    /// Turns interleaving on or off: while on, callbacks pause with
    /// [`Output::Step`] where two of Redisson's can interleave; while off
    /// (the default) they run through. Steps paused before it is turned
    /// off still wait for [`LockClient::resume`].
    pub fn interleave(&mut self, on: bool) {
        self.interleaving = on;
    }

    /// Goes on with a callback paused by [`Output::Step`]. Unknown or
    /// finished steps are ignored.
    pub fn resume(&mut self, now: Millis, step: StepId) {
        self.run_step(now, step);
        self.settle(now);
    }

    /// A pub/sub message arrived on a subscribed channel.
    pub fn on_message(&mut self, now: Millis, channel: &str, payload: &[u8]) {
        self.handle_message(now, channel, payload);
        self.settle(now);
    }

    /// The next output, in the order the machine produced them.
    pub fn poll(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// How often this client counts `thread` holding `lock`.
    #[cfg(test)]
    pub(crate) fn hold_count(&self, thread: ThreadId, lock: &LockName) -> u64 {
        self.holds
            .get(&(lock.clone(), thread))
            .map_or(0, |hold| hold.count)
    }

    /// The fencing token `thread` holds `lock` with, if any (`fenced`; `None`
    /// once the lease is lost or the lock released).
    pub fn token(&self, thread: ThreadId, lock: &LockName) -> Option<FencingToken> {
        self.holds
            .get(&(lock.clone(), thread))
            .and_then(|hold| hold.token)
    }

    /// Whether `thread` has a call in flight.
    pub fn is_busy(&self, thread: ThreadId) -> bool {
        self.multis.contains_key(&thread) || self.caller_of(thread).is_some()
    }

    /// The master a command on key (or channel) `name` goes to.
    fn shard_of(&self, name: &str) -> crate::Shard {
        if let Some(shard) = self.scan.route(name) {
            return shard;
        }
        crate::route(self.config.cluster_shards, &self.config.placement, name)
    }

    fn push(&mut self, output: Output) {
        self.outputs.push_back(output);
    }

    fn event(&mut self, event: Event) {
        self.push(Output::Event(event));
    }

    fn set_timer(&mut self, at: Millis, kind: TimerKind) -> TimerId {
        // Redisson's timer fires at the end of the tick `at` falls in.
        let at = crate::release::on_wheel(at, self.config.timer_tick);
        self.set_exact_timer(at, kind)
    }

    /// A timer that fires at `at` itself: a blocked thread's own timed
    /// wait (`Semaphore.tryAcquire(ms)`, `Future.get(ms)`), which the JDK
    /// times, not Redisson's wheel.
    fn set_exact_timer(&mut self, at: Millis, kind: TimerKind) -> TimerId {
        let timer = TimerId(self.next_timer);
        self.next_timer += 1;
        self.timers.insert(timer, kind);
        self.push(Output::SetTimer { timer, at });
        timer
    }

    /// Cancels `timer` if it is still pending (a fired timer needs nothing).
    fn cancel_timer(&mut self, timer: TimerId) {
        if self.timers.remove(&timer).is_some() {
            self.push(Output::CancelTimer { timer });
        }
    }

    /// Dispatches a completed request to whoever sent it.
    fn complete(&mut self, now: Millis, pending: Pending, reply: Result<Value, TransportError>) {
        if self.batch_loses(&pending, &reply) {
            tracing::debug!("the lock script's batch failed; the script is never answered (#2790)");
            return;
        }
        if let Some(script) = batch_script::batch_noscript_of(&pending, &reply) {
            self.batch_noscript(now, pending, reply, script);
            return;
        }
        if let Some(script) = Self::noscript(&pending, &reply) {
            self.load_script(now, pending, script);
            return;
        }
        let Some(pending) = self.redirected(now, pending, &reply) else {
            return;
        };
        if self.retries_replica_wait(&pending, &reply) || self.retries_read_only(&pending, &reply) {
            self.retry_later(now, pending);
            return;
        }
        let sent_at = pending.sent_at;
        self.deliver(now, pending.owner, reply, sent_at);
    }

    /// Hands a reply to whoever waits for it.
    fn deliver(
        &mut self,
        now: Millis,
        owner: Owner,
        reply: Result<Value, TransportError>,
        sent_at: Millis,
    ) {
        match owner {
            Owner::Call(caller) => {
                let Some(state) = self.calls.get(&caller) else {
                    return;
                };
                let thread = caller.thread;
                match &state.kind {
                    CallKind::Acquire(_) => self.on_acquire_reply(now, thread, reply, sent_at),
                    CallKind::Unlock(_) => self.on_unlock_reply(now, &caller, reply, sent_at),
                    CallKind::ForceUnlock => self.on_force_unlock_reply(thread, reply),
                    CallKind::AcquireFailed(_) => {
                        let result = reply.map(|_| CallOutcome::NotAcquired);
                        self.finish(thread, result.map_err(LockError::from));
                    }
                    CallKind::Query(query) => {
                        let query = *query;
                        self.on_query_reply(thread, query, reply);
                    }
                }
            }
            Owner::Subscribe(channel, generation) => {
                self.on_subscribe_reply(now, &channel, generation, reply)
            }
            Owner::Renew(lock, thread) => self.on_renew_reply(now, lock, thread, reply, sent_at),
            Owner::RenewChunk(chunk, round) => self.chunk_renewed(now, (chunk, round), reply),
            Owner::ReadRenewChunk(chunk, round) => {
                self.read_chunk_renewed(now, (chunk, round), reply)
            }
            Owner::Abandoned(abandoned) => self.on_abandoned_reply(now, abandoned, reply),
            Owner::Rollback(thread, error) => self.on_rollback_reply(now, thread, error),
            Owner::AbandonedRollback(abandoned) => self.on_abandoned_rollback_reply(now, abandoned),
            Owner::ScriptLoad(reload) => self.on_script_loaded(now, *reload, reply, sent_at),
            Owner::BatchLoad(id, script) => self.on_batch_loaded(now, (id, script), reply, sent_at),
            Owner::Probe(id, part) => self.on_probe_reply(now, id, part, reply, sent_at),
            Owner::Info(id) => self.on_info_reply(now, id, reply, sent_at),
            Owner::MultiExpire(thread, i) => self.on_multi_expired(thread, i, reply),
            Owner::Nobody => {}
            Owner::Scan(tried) => self.on_scan_reply(now, tried, reply),
        }
    }
}

fn check_lease(lease: Option<Millis>) -> Result<(), LockError> {
    match lease {
        Some(Millis(0)) => Err(LockError::InvalidLease(0)),
        _ => Ok(()),
    }
}
