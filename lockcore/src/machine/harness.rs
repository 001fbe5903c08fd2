//! A scripted driver for unit tests: it plays the driver's part (keeps the
//! timers, advances time, fires timers in order) and lets a test answer
//! each command by hand. No I/O.

use std::collections::{BTreeMap, VecDeque};

use crate::Value;

use super::{Event, LockClient, Output, Purpose};
use crate::{
    Call, CallOutcome, Config, LockError, LockName, Millis, Release, RequestId, StepId, ThreadId,
    TimerId, TransportError,
};

/// `lock(lease)`.
pub(crate) fn lock_with_lease(ms: u64) -> Call {
    Call::Lock {
        lease: Some(Millis(ms)),
    }
}

/// A release by its text (`"3.8.0"`, `"4.7.0 +fencing"`).
pub(crate) fn release(text: &str) -> Release {
    text.parse().unwrap()
}

/// The uuid every harness client has.
pub(crate) const UUID: &str = "uuid-a";

/// A demoted primary's refusal of a lock script's write, in Redis 7.0's
/// words.
pub(crate) const READ_ONLY: &str =
    "READONLY You can't write against a read only replica. script: 0, on @user_script:1.";

/// The same refusal in Redis 6.2's words (fake-redis's
/// `RedisVersion::script_error`).
pub(crate) const READ_ONLY_6_2: &str = "ERR Error running script (call to f_0): @user_script:1: @user_script: 1: -READONLY You can't write against a read only replica.";

/// A replica's refusal of `WAIT`.
pub(crate) const REPLICA_WAIT: &str = "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.";

pub(crate) struct Harness {
    pub(crate) m: LockClient,
    pub(crate) now: Millis,
    /// Pending timers, as the driver sees them.
    pub(crate) timers: BTreeMap<TimerId, Millis>,
    /// Outputs other than timer bookkeeping, not yet looked at.
    pending: VecDeque<Output>,
    /// Whether fire-and-forget `Cleanup` sends (3.24's latch `DEL`) are
    /// shown; most tests are about other outputs, and the harness answers
    /// them itself.
    pub(crate) show_cleanup: bool,
    /// Whether paused callbacks wait for [`Harness::resume`] instead of
    /// going on at once.
    pub(crate) hold_steps: bool,
    held: Vec<StepId>,
    /// What the client made of each probe (`Event::SyncProbed`'s `wait`
    /// and `waitaof`), kept here rather than shown: the probe's tests read
    /// it, the others are about the sends around it.
    pub(crate) probe_readings: Vec<(bool, Option<bool>)>,
    /// The threads whose timed wait loop began (`Event::WaitBegan`).
    pub(crate) waits_began: Vec<ThreadId>,
    /// Each renewal that waited for a stage of its own
    /// (`Event::RenewalStaged`).
    pub(crate) renewals_staged: Vec<LockName>,
    /// Each count the client reported reading from `INFO`
    /// (`Event::ReplicasCounted`).
    pub(crate) replicas_counted: Vec<u32>,
    /// The replicas an `INFO` (3.18.1+) finds connected: the harness
    /// answers it itself, by default with the configured count, and keeps
    /// its words in [`Harness::infos`].
    pub(crate) connected_replicas: Option<u32>,
    /// What the automatic `INFO` reply says of the primary's AOF.
    pub(crate) aof_enabled: bool,
    /// Each `INFO` answered so far, as words (`"INFO ALL"`).
    pub(crate) infos: Vec<String>,
    /// Whether a batch's `SCRIPT LOAD` (3.46+) is shown; by default the
    /// harness answers it as Redis would and keeps its script's SHA1 in
    /// [`Harness::batch_loads`].
    pub(crate) show_batch_loads: bool,
    /// Whether the topology scan's `CLUSTER NODES` reaches the test;
    /// otherwise it is answered with the cluster as the config splits it.
    pub(crate) show_scans: bool,
    /// The SHA1 of each batch's `SCRIPT LOAD` answered so far.
    pub(crate) batch_loads: Vec<String>,
    /// Each multi-lock constituent call and answer, as `"call a
    /// try-lock"` / `"answer a acquired"`.
    pub(crate) constituents: Vec<String>,
}

impl Harness {
    pub(crate) fn new(release: impl Into<Release>) -> Self {
        Self::with_config(Config::builder().release(release.into()).build().unwrap())
    }

    /// A client with a 3 000 ms watchdog (renewal every 1 000 ms).
    pub(crate) fn short(release: impl Into<Release>) -> Self {
        Self::with_config(
            Config::builder()
                .release(release.into())
                .watchdog_timeout(3_000)
                .response_timeout(100)
                .retry_attempts(0)
                .retry_interval(50)
                .build()
                .unwrap(),
        )
    }

    /// A client of `version` (`"3.37.0"`) that resends a timed-out command
    /// once: 100 ms response timeout, 50 ms before the resend.
    pub(crate) fn retrying(version: &str) -> Self {
        Self::with_config(
            Config::builder()
                .release(release(version))
                .response_timeout(100)
                .retry_attempts(1)
                .retry_interval(50)
                .build()
                .unwrap(),
        )
    }

    /// A `version` client with one replica whose thread 1 took `l` (its
    /// script and `WAIT` answered) and has just called `unlock()`: the
    /// unlock's batch is next.
    pub(crate) fn synced_holder_unlocking(version: &str) -> Self {
        let mut h = Self::with_replicas(version, 1);
        let t = ThreadId(1);
        h.call(
            t,
            "l",
            Call::TryLock {
                wait: None,
                lease: None,
            },
        )
        .unwrap();
        h.probed();
        let (acquire, _) = h.expect_send();
        let (wait, _) = h.expect_send();
        h.reply(acquire, Value::Nil);
        h.reply(wait, Value::Int(1));
        h.expect_return(t).unwrap();
        h.call(t, "l", Call::Unlock).unwrap();
        h
    }

    /// A `version` client that knows of `replicas` replicas.
    pub(crate) fn with_replicas(version: &str, replicas: u32) -> Self {
        Self::with_config(
            Config::builder()
                .release(release(version))
                .replicas(replicas)
                .build()
                .unwrap(),
        )
    }

    pub(crate) fn with_config(config: Config) -> Self {
        Harness {
            m: LockClient::new(UUID, config),
            now: Millis(0),
            timers: BTreeMap::new(),
            pending: VecDeque::new(),
            show_cleanup: false,
            probe_readings: Vec::new(),
            waits_began: Vec::new(),
            renewals_staged: Vec::new(),
            replicas_counted: Vec::new(),
            connected_replicas: None,
            aof_enabled: false,
            infos: Vec::new(),
            show_batch_loads: false,
            show_scans: false,
            batch_loads: Vec::new(),
            constituents: Vec::new(),
            hold_steps: false,
            held: Vec::new(),
        }
    }

    pub(crate) fn pump(&mut self) {
        while let Some(output) = self.m.poll() {
            match output {
                Output::SetTimer { timer, at } => {
                    self.timers.insert(timer, at);
                }
                Output::CancelTimer { timer } => {
                    self.timers.remove(&timer);
                }
                Output::Step { step } if self.hold_steps => self.held.push(step),
                Output::Step { step } => self.m.resume(self.now, step),
                other => self.pending.push_back(other),
            }
        }
    }

    pub(crate) fn call(
        &mut self,
        thread: ThreadId,
        lock: &str,
        call: Call,
    ) -> Result<(), LockError> {
        let result = self
            .m
            .call(self.now, thread, LockName::new(lock).unwrap(), call);
        self.pump();
        result
    }

    pub(crate) fn next(&mut self) -> Option<Output> {
        self.pump();
        loop {
            match self.pending.pop_front() {
                // Answered at once, as Redis would, so its timeout goes.
                Some(Output::Send {
                    request,
                    purpose: Purpose::Cleanup,
                    ..
                }) if !self.show_cleanup => {
                    self.m.on_reply(self.now, request, Ok(Value::Int(1)));
                    self.pump();
                }
                Some(Output::Send {
                    request,
                    purpose: Purpose::Info,
                    command,
                    ..
                }) => {
                    let words: Vec<String> = command
                        .iter()
                        .map(|w| String::from_utf8_lossy(w).into_owned())
                        .collect();
                    self.infos.push(words.join(" "));
                    let n = self.connected_replicas.unwrap_or(self.m.config().replicas);
                    let aof = u8::from(self.aof_enabled);
                    let text = format!(
                        "# Persistence\r\naof_enabled:{aof}\r\n# Replication\r\nrole:master\r\nconnected_slaves:{n}\r\n"
                    );
                    self.m
                        .on_reply(self.now, request, Ok(Value::Bulk(text.into_bytes().into())));
                    self.pump();
                }
                Some(Output::Send {
                    request,
                    purpose: Purpose::BatchLoad,
                    command,
                    ..
                }) if !self.show_batch_loads => {
                    let script = crate::script::LockScript::from_text(&command[2])
                        .expect("a batch loads a lock script");
                    self.batch_loads.push(script.sha1().to_owned());
                    self.m
                        .on_reply(self.now, request, Ok(Value::bulk(script.sha1())));
                    self.pump();
                }
                Some(Output::Send {
                    request,
                    purpose: Purpose::Scan,
                    ..
                }) if !self.show_scans => {
                    let text = static_nodes(&self.m.config().cluster_nodes);
                    self.m
                        .on_reply(self.now, request, Ok(Value::Bulk(text.into())));
                    self.pump();
                }
                Some(Output::Constituent { lock, call, .. }) => {
                    let call = serde_json::to_value(&call).unwrap()["call"].clone();
                    self.constituents
                        .push(format!("call {lock} {}", call.as_str().unwrap()));
                }
                Some(Output::ConstituentReturn { lock, result, .. }) => {
                    let answer = match result {
                        Ok(outcome) => serde_json::to_value(&outcome).unwrap()["outcome"]
                            .as_str()
                            .unwrap()
                            .to_owned(),
                        Err(error) => error.to_string(),
                    };
                    self.constituents.push(format!("answer {lock} {answer}"));
                }
                Some(Output::Event(Event::SyncProbed { wait, waitaof, .. })) => {
                    self.probe_readings.push((wait, waitaof));
                }
                Some(Output::Event(Event::ReplicasCounted { connected })) => {
                    self.replicas_counted.push(connected);
                }
                Some(Output::Event(Event::WaitBegan { thread, .. })) => {
                    self.waits_began.push(thread);
                }
                Some(Output::Event(Event::RenewalStaged { lock })) => {
                    self.renewals_staged.push(lock);
                }
                other => return other,
            }
        }
    }

    /// 3.26.1+: the probe before the first synced lock script, answered
    /// as a Redis 7.2 answers (both commands supported, nothing written):
    /// `WAIT 0 0` alone until 3.45.x, with `WAITAOF 0 0 0` from 3.46.0.
    pub(crate) fn probed(&mut self) {
        let parts = if self.m.switches.has(crate::Switch::WaitProbe) {
            2
        } else {
            1
        };
        for _ in 0..parts {
            let (request, purpose, command) = self.expect_send_purpose();
            assert_eq!(purpose, Purpose::Probe, "{command:?}");
            let reply = if command[0] == "WAIT" {
                Value::Int(0)
            } else {
                Value::Array(vec![Value::Int(0), Value::Int(0)])
            };
            self.reply(request, reply);
        }
    }

    /// The next output must be a Send; returns its id, purpose and attempt.
    pub(crate) fn expect_attempt(&mut self) -> (RequestId, Purpose, u32) {
        match self.next() {
            Some(Output::Send {
                request,
                purpose,
                attempt,
                ..
            }) => (request, purpose, attempt),
            other => panic!("expected a Send, got {other:?}"),
        }
    }

    /// The next output must be a Send; returns its id and command as text.
    pub(crate) fn expect_send(&mut self) -> (RequestId, Vec<String>) {
        let (request, _, command) = self.expect_send_purpose();
        (request, command)
    }

    /// The next output must be the report that `thread`'s acquire was
    /// rolled back for too few synced replicas.
    pub(crate) fn expect_rolled_back(&mut self, thread: ThreadId) {
        match self.next() {
            Some(Output::Event(Event::AcquireRolledBack { thread: t, .. })) if t == thread => {}
            other => panic!("expected {thread}'s rollback, got {other:?}"),
        }
    }

    pub(crate) fn expect_send_purpose(&mut self) -> (RequestId, Purpose, Vec<String>) {
        match self.next() {
            Some(Output::Send {
                request,
                purpose,
                command,
                ..
            }) => (
                request,
                purpose,
                command
                    .iter()
                    .map(|b| String::from_utf8_lossy(b).into_owned())
                    .collect(),
            ),
            other => panic!("expected a Send, got {other:?}"),
        }
    }

    /// Thread 1 of a `version` client starts `call` on `l` and is
    /// interrupted while the acquire is on the wire; the acquire then
    /// answers "acquired". Whether a renewal follows within 1.5 s.
    pub(crate) fn renewed_after_interrupted(version: &str, call: Call) -> bool {
        let mut h = Harness::short(release(version));
        let thread = ThreadId(1);
        h.call(thread, "l", call).unwrap();
        let request = h.expect(Purpose::Acquire);
        assert!(h.m.interrupt(h.now, thread));
        assert_eq!(h.expect_return(thread), Err(LockError::Interrupted));
        h.reply(request, Value::Nil);
        h.advance(1_500);
        h.sends().contains(&Purpose::Renew)
    }

    /// The callbacks paused so far (with `hold_steps`), oldest first.
    pub(crate) fn take_steps(&mut self) -> Vec<StepId> {
        self.pump();
        std::mem::take(&mut self.held)
    }

    /// Goes on with a paused callback.
    pub(crate) fn resume(&mut self, step: StepId) {
        self.m.resume(self.now, step);
        self.pump();
    }

    /// Every output not yet looked at: the purposes of its Sends.
    pub(crate) fn sends(&mut self) -> Vec<Purpose> {
        std::iter::from_fn(|| self.next())
            .filter_map(|output| match output {
                Output::Send { purpose, .. } => Some(purpose),
                _ => None,
            })
            .collect()
    }

    /// The next output must be a Send of `purpose`.
    pub(crate) fn expect(&mut self, purpose: Purpose) -> RequestId {
        let (request, got, command) = self.expect_send_purpose();
        assert_eq!(got, purpose, "command {command:?}");
        request
    }

    pub(crate) fn expect_subscribe(&mut self) -> RequestId {
        match self.next() {
            Some(Output::Subscribe { request, .. }) => request,
            other => panic!("expected a Subscribe, got {other:?}"),
        }
    }

    pub(crate) fn expect_unsubscribe(&mut self) -> String {
        match self.next() {
            Some(Output::Unsubscribe { channel, .. }) => channel,
            other => panic!("expected an Unsubscribe, got {other:?}"),
        }
    }

    /// The return of `thread` among the outputs not yet looked at, if any.
    pub(crate) fn returned(&mut self, thread: ThreadId) -> Option<Result<CallOutcome, LockError>> {
        std::iter::from_fn(|| self.next()).find_map(|output| match output {
            Output::Return {
                thread: t, result, ..
            } if t == thread => Some(result),
            _ => None,
        })
    }

    pub(crate) fn expect_return(&mut self, thread: ThreadId) -> Result<CallOutcome, LockError> {
        match self.next() {
            Some(Output::Return {
                thread: t, result, ..
            }) if t == thread => result,
            other => panic!("expected the return of {thread:?}, got {other:?}"),
        }
    }

    /// The next output must be `thread`'s successful acquisition.
    pub(crate) fn expect_acquired(&mut self, thread: ThreadId) {
        let result = self.expect_return(thread);
        assert!(
            matches!(result, Ok(CallOutcome::Acquired { .. })),
            "{thread:?} got {result:?}"
        );
    }

    pub(crate) fn expect_event(&mut self) -> Event {
        match self.next() {
            Some(Output::Event(event)) => event,
            other => panic!("expected an event, got {other:?}"),
        }
    }

    pub(crate) fn expect_quiet(&mut self) {
        if let Some(output) = self.next() {
            panic!("expected nothing, got {output:?}");
        }
    }

    pub(crate) fn reply(&mut self, request: RequestId, value: Value) {
        self.m.on_reply(self.now, request, Ok(value));
        self.pump();
    }

    pub(crate) fn fail(&mut self, request: RequestId, error: TransportError) {
        self.m.on_reply(self.now, request, Err(error));
        self.pump();
    }

    pub(crate) fn message(&mut self, lock: &str, payload: &str) {
        let channel = LockName::new(lock).unwrap().channel().to_owned();
        self.m.on_message(self.now, &channel, payload.as_bytes());
        self.pump();
    }

    /// The earliest pending timer's time.
    pub(crate) fn next_timer_at(&self) -> Option<Millis> {
        self.timers.values().min().copied()
    }

    /// Moves time forward by `ms`, firing due timers in time order (ties
    /// by id), each at its own time.
    pub(crate) fn advance(&mut self, ms: u64) {
        let end = self.now.plus(Millis(ms));
        self.advance_to(end);
    }

    pub(crate) fn advance_to(&mut self, end: Millis) {
        loop {
            self.pump();
            let due = self
                .timers
                .iter()
                .filter(|(_, at)| **at <= end)
                .min_by_key(|(id, at)| (**at, **id))
                .map(|(id, at)| (*id, *at));
            let Some((timer, at)) = due else {
                break;
            };
            self.timers.remove(&timer);
            self.now = self.now.max(at);
            self.m.on_timer(self.now, timer);
        }
        self.now = end;
    }

    /// The first attempt of a waiting call finds the lock held for `ttl`;
    /// the subscription is confirmed; returns the second attempt.
    pub(crate) fn held_then_subscribed(&mut self, ttl: i64) -> RequestId {
        let request = self.expect(Purpose::Acquire);
        self.reply(request, Value::Int(ttl));
        let subscribe = self.expect_subscribe();
        self.reply(subscribe, Value::Int(1));
        self.expect(Purpose::Acquire)
    }

    /// Skips outputs until `thread`'s call returns; the events passed on
    /// the way, and the result.
    pub(crate) fn until_return(
        &mut self,
        thread: ThreadId,
    ) -> (Vec<Event>, Result<CallOutcome, LockError>) {
        let mut events = Vec::new();
        loop {
            match self.next() {
                Some(Output::Return {
                    thread: t, result, ..
                }) if t == thread => return (events, result),
                Some(Output::Event(e)) => events.push(e),
                Some(_) => {}
                None => panic!("{thread} never returned; events {events:?}"),
            }
        }
    }

    /// A watchdog hold of thread 1 on `l` under `version`, then its unlock
    /// answered with `reply`: the events on the way, the call's result,
    /// and whether a timer (the renewal) is still pending.
    pub(crate) fn after_unlock(
        version: &str,
        reply: Result<Value, TransportError>,
    ) -> (Vec<Event>, Result<CallOutcome, LockError>, bool) {
        let mut h = Harness::short(release(version));
        h.acquire(ThreadId(1), "l");
        h.call(ThreadId(1), "l", Call::Unlock).unwrap();
        let unlock = h.expect(Purpose::Unlock);
        h.m.on_reply(h.now, unlock, reply);
        let (events, result) = h.until_return(ThreadId(1));
        (events, result, h.has_timers())
    }

    /// Thread 1's renewal under `version` is answered with `reply` and
    /// stops; then thread 2 takes the lock: whether its hold is renewed.
    pub(crate) fn next_hold_renewed_after(
        version: &str,
        reply: Result<Value, TransportError>,
    ) -> bool {
        let mut h = Harness::short(release(version));
        h.acquire(ThreadId(1), "l");
        let renew = h.renewal_due();
        h.m.on_reply(h.now, renew, reply);
        h.pump();
        let _stopped = h.expect_event();
        assert!(!h.has_timers());
        h.acquire(ThreadId(2), "l");
        h.has_timers()
    }

    /// Whether a renewal timer (or any timer) is pending.
    pub(crate) fn has_timers(&self) -> bool {
        !self.timers.is_empty()
    }

    /// Advances to the next timer, which must send a renewal.
    pub(crate) fn renewal_due(&mut self) -> RequestId {
        if let Some(at) = self.next_timer_at() {
            self.advance_to(at);
        }
        self.expect(Purpose::Renew)
    }

    /// `call` on `kind`'s object of key `lock`.
    pub(crate) fn call_kind(
        &mut self,
        thread: ThreadId,
        lock: &str,
        kind: crate::LockKind,
        call: Call,
    ) -> Result<(), LockError> {
        let name = LockName::of_kind(lock, kind).unwrap();
        let result = self.m.call(self.now, thread, name, call);
        self.pump();
        result
    }

    /// Runs a successful watchdog `lock()` of `kind`'s object.
    pub(crate) fn acquire_kind(&mut self, thread: ThreadId, lock: &str, kind: crate::LockKind) {
        self.acquire_call_kind(thread, lock, kind, Call::Lock { lease: None });
    }

    /// Runs a successful acquire `call` of `kind`'s object.
    pub(crate) fn acquire_call_kind(
        &mut self,
        thread: ThreadId,
        lock: &str,
        kind: crate::LockKind,
        call: Call,
    ) {
        self.call_kind(thread, lock, kind, call).unwrap();
        let request = self.expect(Purpose::Acquire);
        self.reply(request, Value::Nil);
        assert!(matches!(
            self.expect_return(thread),
            Ok(CallOutcome::Acquired { .. })
        ));
    }

    /// The next Send of `purpose`, skipping other outputs.
    pub(crate) fn expect_send_of(&mut self, purpose: Purpose) -> (RequestId, Vec<String>) {
        loop {
            let (request, got, command) = self.expect_send_purpose();
            if got == purpose {
                return (request, command);
            }
        }
    }

    /// Runs a successful watchdog `lock()` for `thread` (first attempt wins).
    pub(crate) fn acquire(&mut self, thread: ThreadId, lock: &str) {
        self.call(thread, lock, Call::Lock { lease: None }).unwrap();
        let request = self.expect(Purpose::Acquire);
        self.reply(request, self.acquired_value());
        assert!(matches!(
            self.expect_return(thread),
            Ok(CallOutcome::Acquired { .. })
        ));
    }

    /// What Redis answers a renewal of locks each `held` (1) or not (0):
    /// the per-lock script's number, or the batched round's list (3.44+).
    pub(crate) fn renewal_value(&self, held: &[i64]) -> Value {
        if self.m.switches.bookkeeping() == crate::Era::RedissonBatched {
            Value::Array(held.iter().map(|&n| Value::Int(n)).collect())
        } else {
            Value::Int(held.first().copied().unwrap_or(0))
        }
    }

    fn acquired_value(&self) -> Value {
        if self.m.config().release.has(crate::Switch::Fencing) {
            Value::Array(vec![Value::Int(1), Value::Int(1)])
        } else {
            Value::Nil
        }
    }
}

/// `CLUSTER NODES` of masters at `addrs` splitting the slots as
/// `redis-cli --cluster create` does.
fn static_nodes(addrs: &[String]) -> Vec<u8> {
    match nodes_reply(addrs, None) {
        Value::Bulk(text) => text.to_vec(),
        _ => Vec::new(),
    }
}

/// `CLUSTER NODES` of masters at `addrs` splitting the slots as
/// `redis-cli --cluster create` does, but for `moved`'s slot, which the
/// master of its index serves.
pub(crate) fn nodes_reply(addrs: &[String], moved: Option<(u16, usize)>) -> Value {
    let split = fake_redis::Topology::even_split(addrs.len());
    let mut text = String::new();
    for (i, (addr, slots)) in addrs.iter().zip(split).enumerate() {
        text.push_str(&format!("id{i} {addr}@0 master - 0 0 {} connected", i + 1));
        let mut runs = vec![(*slots.start(), *slots.end())];
        if let Some((slot, _)) = moved.filter(|(slot, _)| slots.contains(slot)) {
            runs = vec![
                (*slots.start(), slot.wrapping_sub(1)),
                (slot + 1, *slots.end()),
            ];
        }
        for (first, last) in runs.into_iter().filter(|(f, l)| f <= l && *l != u16::MAX) {
            text.push_str(&format!(" {first}-{last}"));
        }
        if let Some((slot, _)) = moved.filter(|&(_, to)| to == i) {
            text.push_str(&format!(" {slot}"));
        }
        text.push('\n');
    }
    Value::Bulk(text.into_bytes().into())
}
