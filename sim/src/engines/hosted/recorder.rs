//! The turmoil engine's observer: the same [`History`] records the fast
//! engine writes, gathered from lockcore's tracer on each client host,
//! from fake-redis's command hook on the Redis host, from the thread
//! scripts and from the engine's loop.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use fake_redis::{ConnId, Engine};
use lockcore::{Call, CallOutcome, LockError, LockName, Output, Purpose, RequestId, Trace};
use rand_chacha::ChaCha8Rng;

use crate::engines::fast::driver::outcome_of;
use crate::engines::fast::observe::{Change, Seen, who_of_field};
use crate::engines::fast::renewal::{self, is_renewal, renewal_locks, renewal_replies};
use crate::engines::fast::resource::Resources;
use crate::engines::fast::server::{EPOCH_MS, KeyView, key_view};
use crate::model::history::{Proc, Record, RecordKind, ReleaseCause, ServerCause, Who};
use crate::model::rng::{self, Stream};
use crate::{SimSpec, SimTime};

/// What a thread believes about its lock.
#[derive(Debug, Clone, Copy, Default)]
struct Belief {
    holds: u32,
    token: Option<u64>,
}

/// Where the recorder reads the time.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TimeSource {
    /// Turmoil's simulated time (the running host's, else `loop_now`),
    /// less the boot phase.
    Turmoil,
    /// Real time since `zero`, times `scale` (a run slowed down by no one:
    /// the spec ran `scale` times faster than written).
    Real {
        zero: std::time::Instant,
        scale: u64,
    },
}

/// Everything recorded so far, and what recording needs to know.
#[derive(Debug)]
pub(crate) struct Recorder {
    pub(crate) records: Vec<Record>,
    /// The time outside any host (the engine's loop), set before each use.
    pub(crate) loop_now: SimTime,
    pub(crate) time: TimeSource,
    /// How far turmoil's Redis clock was moved by `clock-jump` faults.
    pub(crate) redis_offset_ms: i64,
    names: Vec<Arc<str>>,
    lives: Vec<u32>,
    locks: Vec<LockName>,
    /// Each thread's lock, by client and thread index.
    thread_locks: Vec<Vec<LockName>>,
    uuid_rng: ChaCha8Rng,
    uuids: BTreeMap<String, (Arc<str>, u32)>,
    /// The process each connection name (`A`, `A~1`) stands for.
    procs: BTreeMap<String, Proc>,
    /// Why each command was sent (the same words always mean the same).
    purposes: BTreeMap<lockcore::Command, Purpose>,
    renewals: BTreeMap<(usize, u32, RequestId), renewal::Locks>,
    seen: BTreeMap<LockName, Seen>,
    /// The virtual ms at which each lock's key expires, as last observed.
    expiries: BTreeMap<LockName, u64>,
    beliefs: BTreeMap<(usize, usize), Belief>,
    /// Each thread's multi-lock, by client and thread index.
    multis: Vec<Vec<Option<lockcore::MultiLock>>>,
    /// A multi-lock thread's beliefs, per lock.
    parts: BTreeMap<(usize, usize), crate::engines::parts::Parts>,
    /// Each client's watchdog timeout, in ms.
    watchdogs: Vec<u64>,
    resources: Resources,
}

/// The recorder, shared by every host and the loop.
pub(crate) type Shared = Arc<Mutex<Recorder>>;

pub(crate) fn lock(shared: &Shared) -> MutexGuard<'_, Recorder> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

impl Recorder {
    pub(crate) fn new(spec: &SimSpec) -> Recorder {
        let mut locks: Vec<LockName> = Vec::new();
        let thread_locks: Vec<Vec<LockName>> = spec
            .clients
            .iter()
            .map(|c| c.threads.iter().map(|t| t.object()).collect())
            .collect();
        let multis: Vec<Vec<Option<lockcore::MultiLock>>> = spec
            .clients
            .iter()
            .map(|c| c.threads.iter().map(|t| t.multi_lock()).collect())
            .collect();
        let parts = multis.iter().flatten().flatten().flat_map(|m| m.locks());
        for lock in
            thread_locks
                .iter()
                .flatten()
                .chain(parts)
                .chain(spec.faults.0.iter().filter_map(|f| match f {
                    crate::Fault::DeleteKey(d) => Some(&d.lock),
                    _ => None,
                }))
        {
            if !locks.contains(lock) {
                locks.push(lock.clone());
            }
        }
        Recorder {
            records: Vec::with_capacity(256),
            loop_now: SimTime::ZERO,
            redis_offset_ms: 0,
            time: TimeSource::Turmoil,
            names: spec
                .clients
                .iter()
                .map(|c| c.name.as_str().into())
                .collect(),
            lives: vec![0; spec.clients.len()],
            locks,
            thread_locks,
            uuid_rng: rng::stream(spec.seed, Stream::Uuids),
            uuids: BTreeMap::new(),
            procs: BTreeMap::new(),
            purposes: BTreeMap::new(),
            renewals: BTreeMap::new(),
            seen: BTreeMap::new(),
            expiries: BTreeMap::new(),
            beliefs: BTreeMap::new(),
            multis,
            parts: BTreeMap::new(),
            watchdogs: (spec.clients.iter())
                .map(|c| c.watchdog_timeout_ms.unwrap_or(spec.watchdog_timeout_ms))
                .collect(),
            resources: Resources::default(),
        }
    }

    /// Now, in the spec's time.
    pub(crate) fn now(&self) -> SimTime {
        match self.time {
            TimeSource::Turmoil => match turmoil::sim_elapsed() {
                Some(d) => {
                    let boot_us = super::tcp::BOOT_MS * 1_000;
                    SimTime::ZERO.plus_us((d.as_micros() as u64).saturating_sub(boot_us))
                }
                None => self.loop_now,
            },
            // The one wall-clock reading of sim: a real Redis runs in real time.
            TimeSource::Real { zero, scale } => {
                let us = std::time::Instant::now()
                    .saturating_duration_since(zero)
                    .as_micros() as u64;
                SimTime::ZERO.plus_us(us.saturating_mul(scale))
            }
        }
    }

    pub(crate) fn record(&mut self, kind: RecordKind) {
        let at = self.now();
        self.record_at(at, kind);
    }

    pub(crate) fn record_at(&mut self, at: SimTime, kind: RecordKind) {
        self.records
            .push(crate::model::history::Record { at, kind });
    }

    /// Records the family keys [`crate::model::leftover::LEFTOVERS`]'s
    /// `reply` lists, at `at` (the horizon).
    pub(crate) fn leftovers(&mut self, spec: &SimSpec, at: SimTime, reply: &lockcore::Value) {
        let uuids = &self.uuids;
        let found = crate::model::leftover::records(spec, reply, |f| who_of_field(uuids, f));
        for kind in found {
            self.record_at(at, kind);
        }
    }

    pub(crate) fn proc(&self, c: usize) -> Proc {
        Proc {
            client: self.names[c].clone(),
            life: self.lives[c],
        }
    }

    pub(crate) fn who(&self, c: usize, t: usize) -> Who {
        Who {
            client: self.names[c].clone(),
            life: self.lives[c],
            thread: t as u64 + 1,
        }
    }

    /// A new life of client `c` starts: the next uuid of the run's stream
    /// (the fast engine draws them in the same order).
    pub(crate) fn start(&mut self, c: usize, life: u32) -> String {
        self.lives[c] = life;
        let uuid = rng::uuid(&mut self.uuid_rng);
        let process = self.proc(c);
        self.uuids
            .insert(uuid.clone(), (process.client.clone(), life));
        self.procs.insert(process.to_string(), process.clone());
        for t in 0..self.thread_locks[c].len() {
            self.beliefs.remove(&(c, t));
            self.parts.remove(&(c, t));
        }
        self.record(RecordKind::Start {
            process,
            uuid: uuid.clone(),
        });
        uuid
    }

    /// Client `c`'s process died: its threads' beliefs end.
    pub(crate) fn crash(&mut self, c: usize) {
        for t in 0..self.thread_locks[c].len() {
            self.release(c, t, ReleaseCause::Crash);
        }
        let process = self.proc(c);
        self.record(RecordKind::Crash { process });
    }

    /// Thread `t` of `c` calls `call`; its belief changes first for an
    /// unlock (as the fast engine's driver records it).
    pub(crate) fn call(&mut self, c: usize, t: usize, call: &Call) {
        if let Some(multi) = self.multis[c][t].clone() {
            let who = self.who(c, t);
            let call = call.clone();
            self.record(RecordKind::MultiCall {
                who: who.clone(),
                multi,
                call: call.clone(),
            });
            let parts = self.parts.entry((c, t)).or_default();
            for record in parts.multi_call(&who, &call) {
                self.record(record);
            }
            return;
        }
        let lock = self.thread_locks[c][t].clone();
        match call {
            Call::Unlock => {
                let belief = self.beliefs.entry((c, t)).or_default();
                if belief.holds > 1 {
                    belief.holds -= 1;
                } else {
                    belief.token = None;
                    self.release(c, t, ReleaseCause::Unlock);
                }
            }
            Call::ForceUnlock => {
                self.beliefs.entry((c, t)).or_default().token = None;
                self.release(c, t, ReleaseCause::Unlock);
            }
            _ => {}
        }
        let who = self.who(c, t);
        self.record(RecordKind::Call {
            who,
            lock,
            call: call.clone(),
        });
    }

    /// Thread `t`'s call returned; whether an acquire failed (the script
    /// skips to the end of its block).
    pub(crate) fn returned(
        &mut self,
        c: usize,
        t: usize,
        call: &Call,
        result: &Result<CallOutcome, LockError>,
        watchdog_ms: u64,
    ) -> bool {
        let (who, lock) = (self.who(c, t), self.thread_locks[c][t].clone());
        if let Some(multi) = self.multis[c][t].clone() {
            let failed = call.is_acquire() && !matches!(result, Ok(CallOutcome::Acquired { .. }));
            let parts = self.parts.entry((c, t)).or_default();
            for record in parts.answered(&who, failed) {
                self.record(record);
            }
            self.record(RecordKind::MultiReturn {
                who,
                multi,
                call: call.clone(),
                outcome: outcome_of(result),
            });
            return call.is_acquire() && !matches!(result, Ok(CallOutcome::Acquired { .. }));
        }
        self.record(RecordKind::Return {
            who: who.clone(),
            lock: lock.clone(),
            call: call.clone(),
            outcome: outcome_of(result),
        });
        if !call.is_acquire() {
            return false;
        }
        let Ok(CallOutcome::Acquired { token }) = result else {
            return true;
        };
        let belief = self.beliefs.entry((c, t)).or_default();
        belief.holds += 1;
        // As the fast engine: a re-entry without a token keeps the one
        // the thread has.
        if let Some(token) = token {
            belief.token = Some(token.0);
        }
        if belief.holds == 1 {
            self.record(RecordKind::hold(who, lock, call, *token, watchdog_ms));
        }
        false
    }

    /// A write to the resource behind thread `t`'s lock, with its token.
    pub(crate) fn write(&mut self, c: usize, t: usize) {
        let lock = self.thread_locks[c][t].clone();
        let token = self.beliefs.get(&(c, t)).and_then(|b| b.token);
        let accepted = self.resources.write(&lock, token);
        let who = self.who(c, t);
        self.record(RecordKind::Write {
            who,
            lock,
            token,
            accepted,
        });
    }

    fn release(&mut self, c: usize, t: usize, cause: ReleaseCause) {
        if self.multis[c][t].is_some() {
            let who = self.who(c, t);
            let parts = self.parts.entry((c, t)).or_default();
            for record in parts.release_all(&who, cause) {
                self.record(record);
            }
            return;
        }
        let belief = self.beliefs.entry((c, t)).or_default();
        if belief.holds == 0 {
            return;
        }
        belief.holds = 0;
        let (who, lock) = (self.who(c, t), self.thread_locks[c][t].clone());
        self.record(RecordKind::Release { who, lock, cause });
    }

    /// What client `c`'s lock did, seen through its tracer.
    pub(crate) fn trace(&mut self, c: usize, life: u32, trace: Trace<'_>) {
        if self.lives[c] != life {
            return;
        }
        let process = self.proc(c);
        match trace {
            Trace::Output(Output::Send {
                request,
                purpose,
                lock,
                command,
                attempt,
                staged,
                ..
            }) => {
                self.purposes.insert(command.clone(), *purpose);
                if *purpose == lockcore::Purpose::Acquire && *attempt == 0 {
                    self.record(RecordKind::AcquireSent {
                        process: process.clone(),
                        lock: lock.clone(),
                        request: request.0,
                    });
                }
                if *purpose == lockcore::Purpose::Unlock {
                    self.record(RecordKind::UnlockSent {
                        process: process.clone(),
                        lock: lock.clone(),
                        request: request.0,
                        attempt: *attempt,
                    });
                }
                if is_renewal(*purpose) {
                    let locks = renewal_locks(lock, command);
                    for record in renewal::sent(&process, &locks, *request, (*attempt, *staged)) {
                        self.record(record);
                    }
                    self.renewals.insert((c, life, *request), locks);
                }
            }
            Trace::Output(Output::Event(event)) => self.event(c, process, event),
            Trace::Output(Output::Constituent { thread, lock, call }) => {
                let t = (thread.0 as usize).wrapping_sub(1);
                let who = self.who(c, t);
                let parts = self.parts.entry((c, t)).or_default();
                for record in parts.call(&who, lock.clone(), call.clone()) {
                    self.record(record);
                }
            }
            Trace::Output(Output::ConstituentReturn {
                thread,
                lock,
                result,
            }) => {
                let t = (thread.0 as usize).wrapping_sub(1);
                let who = self.who(c, t);
                let watchdog_ms = self.watchdogs[c];
                let parts = self.parts.entry((c, t)).or_default();
                for record in parts.returned(&who, lock.clone(), result, watchdog_ms) {
                    self.record(record);
                }
            }
            Trace::Output(_) => {}
            Trace::Reply { request, reply } => {
                if let Some(locks) = self.renewals.remove(&(c, life, request)) {
                    let replies = match reply {
                        Ok(value) => renewal_replies(value, locks.len()),
                        Err(e) => renewal::renewal_failed(e, locks.len()),
                    };
                    for record in renewal::replied(&process, locks, request, replies) {
                        self.record(record);
                    }
                }
            }
            Trace::Message { channel, payload } => self.record(RecordKind::Deliver {
                process,
                channel: channel.to_owned(),
                payload: String::from_utf8_lossy(payload).into_owned(),
            }),
            // What follows shows it: the lock's `Resubscribing` events.
            Trace::Reconnected => {}
        }
    }

    fn event(&mut self, c: usize, process: Proc, event: &lockcore::Event) {
        match event {
            // `Renewed` repeats the renewal's reply, already recorded.
            lockcore::Event::Renewed { .. } => {}
            lockcore::Event::LeaseLost { lock, threads } => {
                self.record(RecordKind::Lock {
                    process,
                    event: event.clone(),
                });
                for t in threads.iter().map(|t| (t.0 as usize).wrapping_sub(1)) {
                    if self.multis[c].get(t).is_some_and(Option::is_some) {
                        let who = self.who(c, t);
                        let parts = self.parts.entry((c, t)).or_default();
                        let released = parts.release(&who, lock, ReleaseCause::LeaseLost);
                        if let Some(record) = released {
                            self.record(record);
                        }
                    } else if self.thread_locks[c].get(t) == Some(lock) {
                        self.release(c, t, ReleaseCause::LeaseLost);
                    }
                }
            }
            _ => self.record(RecordKind::Lock {
                process,
                event: event.clone(),
            }),
        }
    }

    /// The process a connection name (`A`, `A~1`) stands for.
    pub(crate) fn sender(&self, name: &[u8]) -> Option<Proc> {
        self.procs
            .get(String::from_utf8_lossy(name).as_ref())
            .cloned()
    }

    /// Why `args` was sent (a query if no lock sent it).
    pub(crate) fn purpose(&self, args: &[Bytes]) -> Purpose {
        self.purposes.get(args).copied().unwrap_or(Purpose::Query)
    }

    /// The spec's locks that `args` names (its words after the first).
    /// Redis's view is the key's: a read or write lock is named by its
    /// key as an `RLock` is, once.
    pub(crate) fn named(&self, args: &[Bytes]) -> Vec<LockName> {
        let mut named: Vec<LockName> = Vec::new();
        for lock in self.locks.iter().filter(|l| {
            args.iter()
                .skip(1)
                .any(|a| a.as_ref() == l.as_str().as_bytes())
        }) {
            let key = lock.with_kind(lockcore::LockKind::Lock);
            if !named.contains(&key) {
                named.push(key);
            }
        }
        named
    }

    /// Turmoil's Redis ran `args` for `conn`: records the locks it named
    /// that changed.
    pub(crate) fn command(&mut self, engine: &Engine, conn: ConnId, args: &[Bytes]) {
        let Some(by) = engine.client_name(conn).and_then(|n| self.sender(n)) else {
            return;
        };
        let purpose = self.purpose(args);
        let deletes = matches!(purpose, Purpose::Unlock | Purpose::ForceUnlock);
        for lock in self.named(args) {
            let cause = ServerCause::Command {
                by: by.clone(),
                purpose,
            };
            let view = turmoil_view(engine, &lock, self.now(), self.redis_offset_ms);
            self.observe(&lock, view, true, deletes, cause, None);
        }
    }

    /// Every lock Redis has held so far.
    pub(crate) fn seen_locks(&self) -> Vec<LockName> {
        self.seen.keys().cloned().collect()
    }

    /// After a step: every lock whose key expired by `now` is recorded as
    /// freed at its expiry instant; `view` reads a lock at an instant.
    pub(crate) fn expire(
        &mut self,
        now: SimTime,
        mut view: impl FnMut(&LockName, SimTime) -> KeyView,
    ) {
        let due: Vec<(LockName, u64)> = self
            .expiries
            .iter()
            .filter(|(_, at)| **at <= now.as_ms())
            .map(|(l, at)| (l.clone(), *at))
            .collect();
        for (lock, at) in due {
            self.expiries.remove(&lock);
            let v = view(&lock, SimTime::from_ms(at));

            let at = SimTime::from_ms(at);
            self.observe(&lock, v, false, false, ServerCause::Expiry, Some(at));
        }
    }

    /// Records `lock` as `view` shows it, if that changed; `at` (else
    /// now) is when. `view`'s times are the spec's.
    pub(crate) fn observe(
        &mut self,
        lock: &LockName,
        view: KeyView,
        command: bool,
        deletes: bool,
        cause: ServerCause,
        at: Option<SimTime>,
    ) {
        let now = self.now();
        match view.expires_ms {
            Some(at) => self.expiries.insert(lock.clone(), at),
            None => self.expiries.remove(lock),
        };
        let change = Change {
            first: view.first,
            shared: view.shared,
            pttl: view.pttl,
            command,
            deletes,
        };
        let uuids = &self.uuids;
        if let Some(kind) = change.apply(&mut self.seen, lock, |f| who_of_field(uuids, f), cause) {
            self.record_at(at.unwrap_or(now), kind);
        }
    }
}

/// `lock` as turmoil's Redis holds it at `at` (spec time).
pub(crate) fn turmoil_view(
    engine: &Engine,
    lock: &LockName,
    at: SimTime,
    offset_ms: i64,
) -> KeyView {
    let base = EPOCH_MS.saturating_add_signed(offset_ms);
    key_view(engine, lock.as_str(), base, base + at.as_ms())
}
