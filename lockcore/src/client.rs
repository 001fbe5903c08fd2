//! The async wrapper: a [`LockClient`] driven by tokio over a [`Transport`].
//!
//! The wrapper holds no lock logic. It feeds the machine its inputs (calls,
//! replies, timer firings, messages, with `now` read from tokio's clock) and
//! carries out its outputs (sends, subscriptions, timers, returns). The
//! machine sits behind a std mutex that is never held across an `.await`:
//! every input takes the mutex, applies itself and performs the resulting
//! outputs before releasing it, so outputs reach the transport in the order
//! the machine produced them.
//!
//! Two hooks serve fault injection and observation, and change nothing
//! of the algorithm: a [`Tracer`] sees every output, reply and message as
//! the machine handles it (the simulator's recorder builds its history
//! from them), and [`RedissonClient::freeze`] holds every input back
//! until [`RedissonClient::thaw`], as a stop-the-world pause of the JVM
//! would: timers that fall due meanwhile fire, late, on thaw, in order.
//! A third, [`RedissonClient::set_lag`], makes timers run late, as in a
//! process starved of CPU, or lets callbacks interleave; a fourth,
//! [`RedissonClient::set_clock`], gives the client a wall clock and timer
//! oscillator of its own ([`LocalTime`]: set wrong, or running fast).

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::{broadcast, oneshot};
use tokio::task::{AbortHandle, JoinHandle};
use tokio::time::Instant;
use tracing::debug;

use crate::local_time::{LocalTime, SinceStart};
use crate::{
    Call, CallOutcome, Config, Event, FencingToken, Incoming, LockClient, LockError, LockName,
    Millis, Output, RequestId, ThreadId, TimerId, Transport, TransportError, Value,
};

mod freeze;
mod multi;

use freeze::Deferred;
pub use multi::RMultiLock;

type Reply = oneshot::Sender<Result<CallOutcome, LockError>>;

/// One thing the wrapper handled, as a [`Tracer`] sees it.
#[derive(Debug)]
pub enum Trace<'a> {
    /// An output of the machine, before the wrapper carries it out.
    Output(&'a Output),
    /// A command's reply (or its failure), before the machine reads it.
    Reply {
        /// The command it answers.
        request: RequestId,
        /// What came back.
        reply: &'a Result<Value, TransportError>,
    },
    /// A pub/sub message, before the machine reads it.
    Message {
        /// The channel.
        channel: &'a str,
        /// The payload.
        payload: &'a [u8],
    },
    /// The pub/sub connection was replaced after a loss, before the
    /// machine resubscribes.
    Reconnected,
}

/// Sees everything the wrapper handles, with the machine's `now`; called
/// with the client's state locked, so it must not call back into it.
pub type Tracer = Box<dyn FnMut(Millis, Trace<'_>) + Send>;

/// What runs late under a [`Lag`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lagged {
    /// A timer that fell due (a process starved of CPU runs it late).
    Timer,
    /// A callback at a point where Redisson's callbacks can interleave
    /// (the machine's `Output::Step`): delaying it lets replies and timers
    /// due meanwhile run their callbacks first, as on several Netty
    /// threads.
    Callback,
}

/// How much later than due a timer or callback runs, asked as each falls
/// due. For fault injection; none by default.
pub type Lag = Box<dyn FnMut(Lagged) -> std::time::Duration + Send>;

/// What the mutex guards: the machine and the driver's bookkeeping.
struct State {
    machine: LockClient,
    returns: BTreeMap<ThreadId, Reply>,
    /// Each pending timer: the oscillator deadline it counts to (see
    /// [`LocalTime::timer`]) and its task.
    timers: BTreeMap<TimerId, (Millis, AbortHandle)>,
    /// The client was dropped: calls are refused, timers no longer set.
    closed: bool,
    tracer: Option<Tracer>,
    /// Inputs (and callers' turns) that came while frozen, in arrival
    /// order; `None` when the client runs.
    frozen: Option<VecDeque<Deferred>>,
    lag: Option<Lag>,
}

impl State {
    fn trace(&mut self, now: Millis, trace: Trace<'_>) {
        if let Some(tracer) = &mut self.tracer {
            tracer(now, trace);
        }
    }
}

struct Shared<T> {
    state: Mutex<State>,
    transport: T,
    /// The client's clock; only ever locked on its own, never while
    /// waiting for `state`.
    clock: Mutex<Arc<dyn LocalTime>>,
    events: broadcast::Sender<Event>,
}

impl<T: Transport> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn clock(&self) -> Arc<dyn LocalTime> {
        Arc::clone(&self.clock.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn now(&self) -> Millis {
        self.clock().read(Instant::now())
    }

    /// Arms `timer` to fire when the oscillator reaches `count_to`, late
    /// by the lag if one is set.
    fn arm(self: &Arc<Self>, state: &mut State, timer: TimerId, count_to: Millis) {
        let deadline = self.clock().due(Instant::now(), count_to);
        let shared = Arc::clone(self);
        let task = tokio::spawn(async move {
            tokio::time::sleep_until(deadline).await;
            let late = shared.lock().lag.as_mut().map(|lag| lag(Lagged::Timer));
            if let Some(late) = late.filter(|d| !d.is_zero()) {
                tokio::time::sleep(late).await;
            }
            shared.input(move |s, now| s.machine.on_timer(now, timer));
        });
        if let Some((_, old)) = state.timers.insert(timer, (count_to, task.abort_handle())) {
            old.abort();
        }
    }

    /// Applies one input to the machine and carries out what it asks; a
    /// frozen client keeps it for [`RedissonClient::thaw`].
    fn input(self: &Arc<Self>, apply: impl FnOnce(&mut State, Millis) + Send + 'static) {
        let mut state = self.lock();
        if state.closed {
            return;
        }
        if let Some(deferred) = &mut state.frozen {
            deferred.push_back(Deferred::Input(Box::new(apply)));
            return;
        }
        apply(&mut state, self.now());
        self.drive(&mut state);
    }

    fn reply(self: &Arc<Self>, request: RequestId, reply: Result<Value, TransportError>) {
        self.input(move |state, now| {
            state.trace(
                now,
                Trace::Reply {
                    request,
                    reply: &reply,
                },
            );
            state.machine.on_reply(now, request, reply);
        });
    }

    fn drive(self: &Arc<Self>, state: &mut State) {
        while let Some(output) = state.machine.poll() {
            let now = self.now();
            state.trace(now, Trace::Output(&output));
            match output {
                Output::Send {
                    request,
                    command,
                    shard,
                    ..
                } => {
                    let reply = self.transport.send(shard, &command);
                    let shared = Arc::clone(self);
                    tokio::spawn(async move {
                        let reply = reply.await;
                        shared.reply(request, reply);
                    });
                }
                Output::Subscribe {
                    request,
                    channel,
                    shard,
                    ..
                } => {
                    let confirmed = self.transport.subscribe(shard, channel);
                    let shared = Arc::clone(self);
                    tokio::spawn(async move {
                        let reply = confirmed.await.map(|()| Value::Int(1));
                        shared.reply(request, reply);
                    });
                }
                Output::Unsubscribe { channel, shard } => {
                    self.transport.unsubscribe(shard, channel)
                }
                Output::SetTimer { timer, at } => {
                    let count_to = self.clock().timer(at);
                    self.arm(state, timer, count_to);
                }
                Output::CancelTimer { timer } => {
                    if let Some((_, task)) = state.timers.remove(&timer) {
                        task.abort();
                    }
                }
                Output::Return { thread, result, .. } => {
                    if let Some(reply) = state.returns.remove(&thread) {
                        // The caller may have given up waiting; nothing to do.
                        let _ = reply.send(result);
                    }
                }
                // Callbacks run one at a time here, in Redisson's usual
                // order, unless a lag interleaves them.
                Output::Step { step } => {
                    let late = state.lag.as_mut().map(|lag| lag(Lagged::Callback));
                    match late.filter(|d| !d.is_zero()) {
                        Some(late) => {
                            let shared = Arc::clone(self);
                            tokio::spawn(async move {
                                tokio::time::sleep(late).await;
                                shared.input(move |s, now| s.machine.resume(now, step));
                            });
                        }
                        None => {
                            let now = self.now();
                            state.machine.resume(now, step);
                        }
                    }
                }
                // A tracer saw them; the multi-lock's call returns later.
                Output::Constituent { .. } | Output::ConstituentReturn { .. } => {}
                Output::Event(event) => {
                    debug!(?event, "lock event");
                    let _ = self.events.send(event);
                }
            }
        }
        // Fired timers are done; forget their handles.
        state.timers.retain(|_, (_, task)| !task.is_finished());
    }

    /// `Thread.interrupt()` of `thread`, applied as any input (held back
    /// while frozen).
    fn interrupt(self: &Arc<Self>, thread: ThreadId) {
        self.input(move |s, now| {
            s.machine.interrupt(now, thread);
        });
    }

    async fn call(
        self: &Arc<Self>,
        thread: ThreadId,
        lock: &LockName,
        call: Call,
    ) -> Result<CallOutcome, LockError> {
        self.run(thread, |machine, now| {
            machine.call(now, thread, lock.clone(), call)
        })
        .await
    }

    /// Starts a call of `thread` with `start` and waits for its return.
    async fn run(
        self: &Arc<Self>,
        thread: ThreadId,
        start: impl FnOnce(&mut LockClient, Millis) -> Result<(), LockError>,
    ) -> Result<CallOutcome, LockError> {
        let (tx, rx) = oneshot::channel();
        {
            let mut state = self.lock();
            if state.closed {
                return Err(LockError::Shutdown);
            }
            let now = self.now();
            start(&mut state.machine, now)?;
            state.returns.insert(thread, tx);
            self.drive(&mut state);
        }
        rx.await.unwrap_or(Err(LockError::Shutdown))
    }
}

/// A Redisson client over a transport: one uuid, many threads, many locks.
///
/// Must be created inside a tokio runtime. Dropping it shuts it down: the
/// watchdog stops, calls in flight and later calls through surviving
/// [`RLock`] handles fail with [`LockError::Shutdown`], and locks still
/// held expire on their own, as when a Redisson client is shut down.
pub struct RedissonClient<T: Transport> {
    shared: Arc<Shared<T>>,
    pump: JoinHandle<()>,
}

impl<T: Transport> std::fmt::Debug for RedissonClient<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedissonClient")
            .field("uuid", &self.uuid())
            .finish_non_exhaustive()
    }
}

impl<T: Transport> RedissonClient<T> {
    /// A client with identity `uuid` (use a fresh v4 uuid per process, as
    /// Redisson does) talking over `transport`.
    pub fn new(uuid: impl Into<String>, config: Config, transport: T) -> Self {
        Self::build(uuid.into(), config, transport, None)
    }

    /// [`RedissonClient::new`], with `tracer` seeing everything the client
    /// handles from its first output on.
    pub fn with_tracer(
        uuid: impl Into<String>,
        config: Config,
        transport: T,
        tracer: Tracer,
    ) -> Self {
        Self::build(uuid.into(), config, transport, Some(tracer))
    }

    fn build(uuid: String, config: Config, transport: T, tracer: Option<Tracer>) -> Self {
        let (events, _) = broadcast::channel(1024);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                machine: LockClient::new(uuid, config),
                returns: BTreeMap::new(),
                timers: BTreeMap::new(),
                closed: false,
                tracer,
                frozen: None,
                lag: None,
            }),
            transport,
            clock: Mutex::new(Arc::new(SinceStart {
                epoch: Instant::now(),
            })),
            events,
        });
        // A cluster client's topology scan runs from its start.
        shared.input(|state, now| state.machine.start(now));
        let pumped = Arc::clone(&shared);
        let pump = tokio::spawn(async move {
            while let Some(incoming) = pumped.transport.next_incoming().await {
                pumped.input(move |state, now| match incoming {
                    Incoming::Message((channel, payload)) => {
                        let (channel, payload) = (channel.as_str(), payload.as_ref());
                        state.trace(now, Trace::Message { channel, payload });
                        state.machine.on_message(now, channel, payload);
                    }
                    Incoming::Reconnected => {
                        state.trace(now, Trace::Reconnected);
                        state.machine.on_connection_lost(now);
                    }
                });
            }
            debug!("pub/sub connection closed: no more unlock messages");
        });
        RedissonClient { shared, pump }
    }

    /// The client's uuid.
    pub fn uuid(&self) -> String {
        self.shared.lock().machine.uuid().to_owned()
    }

    /// The hash field `thread` uses: `<uuid>:<thread-id>`.
    pub fn field(&self, thread: ThreadId) -> String {
        self.shared.lock().machine.field(thread)
    }

    /// The lock named `name`; an empty name is refused.
    pub fn lock(&self, name: impl Into<String>) -> Result<RLock<T>, LockError> {
        Ok(RLock {
            shared: Arc::clone(&self.shared),
            name: LockName::new(name)?,
        })
    }

    /// A handle on the lock object `name` (an `RLock`, or the read or
    /// write lock of an `RReadWriteLock`, as its kind says).
    pub fn lock_object(&self, name: LockName) -> RLock<T> {
        RLock {
            shared: Arc::clone(&self.shared),
            name,
        }
    }

    /// Events (renewals, renewal stops, lost leases) from now on.
    pub fn events(&self) -> broadcast::Receiver<Event> {
        self.shared.events.subscribe()
    }

    /// Makes each timer and each interleaving point run `lag(what)` later
    /// than due (asked as each falls due): a process starved of CPU, or
    /// callbacks spread over several threads. For fault injection.
    pub fn set_lag(&self, lag: Lag) {
        self.shared.lock().lag = Some(lag);
    }

    /// Gives the client its own wall clock and timer oscillator (see
    /// [`LocalTime`]); timers already armed keep their instants until
    /// [`RedissonClient::clock_changed`]. For fault injection: set it before the
    /// first call.
    pub fn set_clock(&self, clock: Arc<dyn LocalTime>) {
        *self.shared.clock.lock().unwrap_or_else(|e| e.into_inner()) = clock;
    }

    /// The client's clock (see [`RedissonClient::set_clock`]) changed its
    /// rate: every pending timer is armed again to fire when the
    /// oscillator reaches its deadline at the new rate. For fault
    /// injection; call it on the client's runtime.
    pub fn clock_changed(&self) {
        let mut state = self.shared.lock();
        let pending: Vec<(TimerId, Millis)> = state
            .timers
            .iter()
            .filter(|(_, (_, task))| !task.is_finished())
            .map(|(&timer, &(count_to, _))| (timer, count_to))
            .collect();
        for (timer, count_to) in pending {
            self.shared.arm(&mut state, timer, count_to);
        }
    }
}

impl<T: Transport> Drop for RedissonClient<T> {
    fn drop(&mut self) {
        self.pump.abort();
        let mut state = self.shared.lock();
        state.closed = true;
        for (_, (_, task)) in std::mem::take(&mut state.timers) {
            task.abort();
        }
        state.returns.clear();
    }
}

/// A handle on one lock of a [`RedissonClient`], as Redisson's `RLock`.
/// Every method takes the calling thread explicitly; a thread has at most
/// one call in flight ([`LockError::ThreadBusy`] otherwise). Dropping a
/// call's future does not cancel the call in the machine.
pub struct RLock<T: Transport> {
    shared: Arc<Shared<T>>,
    name: LockName,
}

impl<T: Transport> Clone for RLock<T> {
    fn clone(&self) -> Self {
        RLock {
            shared: Arc::clone(&self.shared),
            name: self.name.clone(),
        }
    }
}

impl<T: Transport> std::fmt::Debug for RLock<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RLock")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

fn unexpected(outcome: CallOutcome) -> LockError {
    LockError::UnexpectedReply(format!("the call ended with {outcome:?}"))
}

impl<T: Transport> RLock<T> {
    /// The lock's name.
    pub fn name(&self) -> &LockName {
        &self.name
    }

    /// Any [`Call`], answered as the machine answers it: what the typed
    /// methods below are made of, and what a driver that runs scripted
    /// steps (the simulator's turmoil engine) calls.
    pub async fn call(&self, thread: ThreadId, call: Call) -> Result<CallOutcome, LockError> {
        self.shared.call(thread, &self.name, call).await
    }

    async fn acquire(&self, thread: ThreadId, call: Call) -> Result<bool, LockError> {
        match self.call(thread, call).await? {
            CallOutcome::Acquired { .. } => Ok(true),
            CallOutcome::NotAcquired => Ok(false),
            other => Err(unexpected(other)),
        }
    }

    /// `lock()`: waits as long as it takes; the watchdog keeps it alive.
    pub async fn lock(&self, thread: ThreadId) -> Result<(), LockError> {
        self.acquire(thread, Call::Lock { lease: None })
            .await
            .map(drop)
    }

    /// `lock(lease)`: waits as long as it takes; the key expires after `lease`.
    pub async fn lock_with_lease(&self, thread: ThreadId, lease: Millis) -> Result<(), LockError> {
        self.acquire(thread, Call::Lock { lease: Some(lease) })
            .await
            .map(drop)
    }

    /// `tryLock()`: one attempt.
    pub async fn try_lock(&self, thread: ThreadId) -> Result<bool, LockError> {
        let call = Call::TryLock {
            wait: None,
            lease: None,
        };
        self.acquire(thread, call).await
    }

    /// `tryLock(wait)`: keeps trying for `wait`; the watchdog keeps it alive.
    pub async fn try_lock_wait(&self, thread: ThreadId, wait: Millis) -> Result<bool, LockError> {
        let call = Call::TryLock {
            wait: Some(wait),
            lease: None,
        };
        self.acquire(thread, call).await
    }

    /// `tryLock(wait, lease)`.
    pub async fn try_lock_wait_lease(
        &self,
        thread: ThreadId,
        wait: Millis,
        lease: Millis,
    ) -> Result<bool, LockError> {
        let call = Call::TryLock {
            wait: Some(wait),
            lease: Some(lease),
        };
        self.acquire(thread, call).await
    }

    /// `Thread.interrupt()` of `thread` (whatever lock it is calling on):
    /// an acquiring call ends with [`LockError::Interrupted`] where the
    /// release lets it (see the `interrupt-cancels-acquire` switch); a
    /// thread between calls is not affected.
    pub fn interrupt(&self, thread: ThreadId) {
        self.shared.interrupt(thread);
    }

    /// Lets the client's callbacks interleave (for the whole client, not
    /// only this lock): while on, each callback reaching a point where two
    /// of Redisson's can interleave waits for the [`Lagged::Callback`]
    /// delay of [`RedissonClient::set_lag`] (none without a lag). For
    /// fault injection.
    pub fn set_interleaving(&self, on: bool) {
        self.shared.input(move |s, _| s.machine.interleave(on));
    }

    /// `unlock()`: true when the lock was released, false when a re-entrant
    /// hold remains.
    pub async fn unlock(&self, thread: ThreadId) -> Result<bool, LockError> {
        match self.shared.call(thread, &self.name, Call::Unlock).await? {
            CallOutcome::Unlocked { released } => Ok(released),
            other => Err(unexpected(other)),
        }
    }

    async fn boolean(&self, thread: ThreadId, call: Call) -> Result<bool, LockError> {
        match self.shared.call(thread, &self.name, call).await? {
            CallOutcome::Bool(b) => Ok(b),
            other => Err(unexpected(other)),
        }
    }

    /// `forceUnlock()`: whether a key was deleted.
    pub async fn force_unlock(&self, thread: ThreadId) -> Result<bool, LockError> {
        self.boolean(thread, Call::ForceUnlock).await
    }

    /// `isLocked()`.
    pub async fn is_locked(&self, thread: ThreadId) -> Result<bool, LockError> {
        self.boolean(thread, Call::IsLocked).await
    }

    /// `isHeldByThread(thread)`.
    pub async fn is_held_by_thread(&self, thread: ThreadId) -> Result<bool, LockError> {
        self.boolean(thread, Call::IsHeldByThread).await
    }

    /// `getHoldCount()` for `thread`.
    pub async fn hold_count(&self, thread: ThreadId) -> Result<u64, LockError> {
        match self
            .shared
            .call(thread, &self.name, Call::HoldCount)
            .await?
        {
            CallOutcome::Count(n) => Ok(n),
            other => Err(unexpected(other)),
        }
    }

    /// `remainTimeToLive()` in ms (-2 absent, -1 no expiry).
    pub async fn remain_ttl(&self, thread: ThreadId) -> Result<i64, LockError> {
        match self
            .shared
            .call(thread, &self.name, Call::RemainTtl)
            .await?
        {
            CallOutcome::Ttl(ttl) => Ok(ttl),
            other => Err(unexpected(other)),
        }
    }

    /// The fencing token `thread` holds this lock with (`fenced` profile).
    pub fn token(&self, thread: ThreadId) -> Option<FencingToken> {
        self.shared.lock().machine.token(thread, &self.name)
    }
}
