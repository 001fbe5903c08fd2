//! Driving one client's lockcore machine: its inputs (thread steps,
//! timers, replies, messages) and its outputs.

use lockcore::{Call, CallOutcome, LockError, Output, Purpose, RequestId, Value};

use crate::engines::fast::process::thread_id;
use crate::engines::fast::renewal::{
    self, Locks, Replies, is_renewal, renewal_locks, renewal_replies,
};
use crate::engines::fast::world::{Down, Ev, Up, World};
use crate::model::history::{Outcome, RecordKind, ReleaseCause};
use crate::model::script::Instr;

impl World<'_> {
    /// Handles an event of a live, running client.
    pub(crate) fn client_event(&mut self, c: u32, ev: Ev) {
        let ci = c as usize;
        match ev {
            Ev::ThreadStart { t, .. } => self.advance(ci, t as usize),
            Ev::Wake { t, .. } => {
                let th = &mut self.procs[ci].threads[t as usize];
                if th.sleeping {
                    th.sleeping = false;
                    self.advance(ci, t as usize);
                }
            }
            Ev::Timer { timer, version, .. }
                if version == self.procs[ci].clock.version
                    && self.procs[ci].timers.remove(&timer).is_some() =>
            {
                let now = self.local_now(ci);
                self.procs[ci].machine.on_timer(now, timer);
            }
            Ev::Resume { step, .. } => {
                let now = self.local_now(ci);
                self.procs[ci].machine.resume(now, step);
            }
            Ev::Interrupt { t, .. } => {
                let now = self.local_now(ci);
                self.procs[ci].machine.interrupt(now, thread_id(t as usize));
            }
            Ev::AtClient { msg, .. } => match msg {
                Down::Reply { request, value } => {
                    self.procs[ci].scans.remove(&request);
                    let value = crate::engines::fast::inprocess::lock_value(value);
                    if let Some(locks) = self.procs[ci].renewals.remove(&request) {
                        let replies = renewal_replies(&value, locks.len());
                        self.record_renew_replies(ci, request, locks, replies);
                    }
                    let now = self.local_now(ci);
                    self.procs[ci].machine.on_reply(now, request, Ok(value));
                }
                Down::Failed { request, reason } => {
                    self.procs[ci].scans.remove(&request);
                    if let Some(locks) = self.procs[ci].renewals.remove(&request) {
                        let replies = renewal::renewal_failed(&reason, locks.len());
                        self.record_renew_replies(ci, request, locks, replies);
                    }
                    let now = self.local_now(ci);
                    let error = lockcore::TransportError::Connection(reason);
                    self.procs[ci].machine.on_reply(now, request, Err(error));
                }
                Down::Message { channel, payload } => {
                    let process = self.procs[ci].proc();
                    self.record(RecordKind::Deliver {
                        process,
                        channel: channel.clone(),
                        payload: lockcore::lossy_text(&payload).into_owned(),
                    });
                    let now = self.local_now(ci);
                    self.procs[ci].machine.on_message(now, &channel, &payload);
                }
                Down::Closed => {
                    let now = self.local_now(ci);
                    self.procs[ci].machine.on_connection_lost(now);
                }
            },
            _ => {}
        }
        self.pump(ci);
    }

    /// Records the reply each lock of a renewal got.
    fn record_renew_replies(
        &mut self,
        c: usize,
        request: RequestId,
        locks: Locks,
        replies: Replies,
    ) {
        let process = self.procs[c].proc();
        for record in renewal::replied(&process, locks, request, replies) {
            self.record(record);
        }
    }

    /// Carries out everything the machine asked for, until it is quiet.
    pub(super) fn pump(&mut self, c: usize) {
        while let Some(out) = self.procs[c].machine.poll() {
            self.output(c, out);
        }
    }

    fn output(&mut self, c: usize, out: Output) {
        match out {
            Output::Send {
                request,
                purpose,
                lock,
                command,
                attempt,
                staged,
                shard,
            } => {
                if purpose == Purpose::Acquire && attempt == 0 {
                    let process = self.procs[c].proc();
                    self.record(RecordKind::AcquireSent {
                        process,
                        lock: lock.clone(),
                        request: request.0,
                    });
                }
                if purpose == Purpose::Unlock {
                    let process = self.procs[c].proc();
                    self.record(RecordKind::UnlockSent {
                        process,
                        lock: lock.clone(),
                        request: request.0,
                        attempt,
                    });
                }
                if purpose == Purpose::Scan {
                    self.procs[c].scans.insert(request, ());
                }
                if is_renewal(purpose) {
                    let locks = renewal_locks(&lock, &command);
                    let process = self.procs[c].proc();
                    for record in renewal::sent(&process, &locks, request, (attempt, staged)) {
                        self.record(record);
                    }
                    self.procs[c].renewals.insert(request, locks);
                }
                self.send_up(
                    c as u32,
                    Up::Command {
                        request,
                        purpose,
                        lock,
                        args: command,
                        shard: shard.0,
                    },
                );
            }
            Output::Subscribe {
                request,
                channel,
                shard,
            } => self.send_up(
                c as u32,
                Up::Subscribe {
                    request,
                    channel,
                    shard: shard.0,
                },
            ),
            Output::Unsubscribe { channel, shard } => self.send_up(
                c as u32,
                Up::Unsubscribe {
                    channel,
                    shard: shard.0,
                },
            ),
            Output::SetTimer { timer, at } => {
                let p = &mut self.procs[c];
                // `at` is on the client's clock: fire when it has run on
                // to `at`, whatever steps it takes meanwhile.
                let at = p.clock.oscillator(at);
                p.timers.insert(timer, at);
                let (life, version) = (p.life, p.clock.version);
                let due = p.clock.due(self.now, at);
                self.queue.push(
                    due,
                    Ev::Timer {
                        c: c as u32,
                        life,
                        timer,
                        version,
                        late: false,
                    },
                );
            }
            Output::CancelTimer { timer } => {
                self.procs[c].timers.remove(&timer);
            }
            Output::Step { step } => self.pause_step(c, step),
            Output::Constituent { thread, lock, call } => {
                let t = (thread.0 as usize).wrapping_sub(1);
                self.constituent(c, t, lock, call);
            }
            Output::ConstituentReturn {
                thread,
                lock,
                result,
            } => {
                let t = (thread.0 as usize).wrapping_sub(1);
                self.constituent_returned(c, t, lock, result);
            }
            Output::Return {
                thread,
                lock: _,
                result,
            } => {
                let t = (thread.0 as usize).wrapping_sub(1);
                if t < self.procs[c].threads.len() {
                    self.returned(c, t, result);
                    self.advance(c, t);
                }
            }
            Output::Event(event) => {
                let process = self.procs[c].proc();
                if let lockcore::Event::LeaseLost { lock, threads } = &event {
                    let lost: Vec<usize> = threads
                        .iter()
                        .map(|t| (t.0 as usize).wrapping_sub(1))
                        .filter(|t| self.procs[c].threads.get(*t).is_some())
                        .collect();
                    let lock = lock.clone();
                    self.record(RecordKind::Lock { process, event });
                    for t in lost {
                        if self.procs[c].threads[t].multi.is_some() {
                            self.release_part(c, t, &lock, ReleaseCause::LeaseLost);
                        } else if self.procs[c].threads[t].lock == lock {
                            self.release_belief(c, t, ReleaseCause::LeaseLost);
                        }
                    }
                } else if !matches!(event, lockcore::Event::Renewed { .. }) {
                    // `Renewed` repeats the renewal's reply, already recorded.
                    self.record(RecordKind::Lock { process, event });
                }
            }
        }
    }

    /// A call of thread `t` returned; the caller advances the thread.
    pub(crate) fn returned(&mut self, c: usize, t: usize, result: Result<CallOutcome, LockError>) {
        let Some((call, skip_to)) = self.procs[c].threads[t].pending.take() else {
            return;
        };
        let who = self.procs[c].who(t);
        let lock = self.procs[c].threads[t].lock.clone();
        let outcome = outcome_of(&result);
        if let Some(multi) = self.procs[c].threads[t].multi.clone() {
            let failed = !matches!(result, Ok(CallOutcome::Acquired { .. }));
            let failed_acquire = call.is_acquire() && failed;
            for record in self.procs[c].threads[t]
                .parts
                .answered(&who, failed_acquire)
            {
                self.record(record);
            }
            self.record(RecordKind::MultiReturn {
                who,
                multi: (*multi).clone(),
                call: call.clone(),
                outcome,
            });
            if call.is_acquire() && failed {
                self.procs[c].threads[t].cursor.skip_to(skip_to);
            }
            return;
        }
        self.record(RecordKind::Return {
            who: who.clone(),
            lock: lock.clone(),
            call: call.clone(),
            outcome,
        });
        let acquire = call.is_acquire();
        match result {
            Ok(CallOutcome::Acquired { token }) if acquire => {
                let th = &mut self.procs[c].threads[t];
                th.holds += 1;
                // A re-entry by `lock()` of an `RFencedLock` returns no
                // token: the application keeps the one it has.
                if let Some(token) = token {
                    th.token = Some(token.0);
                }
                if th.holds == 1 {
                    let watchdog_ms = self.procs[c].watchdog_ms;
                    self.record(RecordKind::hold(who, lock, &call, token, watchdog_ms));
                }
            }
            Ok(CallOutcome::NotAcquired) | Err(_) if acquire => {
                self.procs[c].threads[t].cursor.skip_to(skip_to);
            }
            _ => {}
        }
    }

    /// A callback paused where Redisson's can interleave goes on after a
    /// delay from the open `interleave` fault's stream (at once without
    /// one: a step paused as the window closed).
    fn pause_step(&mut self, c: usize, step: lockcore::StepId) {
        let Some((i, min, max)) = self.procs[c].interleave else {
            let now = self.local_now(c);
            self.procs[c].machine.resume(now, step);
            return;
        };
        let delay = rand::RngExt::random_range(&mut self.fault_rngs[i], min..=max);
        let (life, c) = (self.procs[c].life, c as u32);
        self.queue
            .push(self.now.plus_ms(delay), Ev::Resume { c, life, step });
    }

    /// Ends thread `t`'s belief that it holds its lock.
    pub(crate) fn release_belief(&mut self, c: usize, t: usize, cause: ReleaseCause) {
        if self.procs[c].threads[t].multi.is_some() {
            self.release_parts(c, t, cause);
            return;
        }
        let th = &mut self.procs[c].threads[t];
        if th.holds == 0 {
            return;
        }
        th.holds = 0;
        let lock = th.lock.clone();
        let who = self.procs[c].who(t);
        self.record(RecordKind::Release { who, lock, cause });
    }

    /// Runs thread `t` until it blocks (a call in flight, a work or sleep
    /// step) or its script ends.
    pub(crate) fn advance(&mut self, c: usize, t: usize) {
        loop {
            let th = &mut self.procs[c].threads[t];
            if th.done || th.pending.is_some() || th.sleeping {
                return;
            }
            let program = th.program.clone();
            let Some(instr) = th.cursor.next(&program) else {
                th.done = true;
                let who = self.procs[c].who(t);
                self.record(RecordKind::Done { who });
                return;
            };
            match instr {
                Instr::Call { call, skip_to } => {
                    self.believe_released(c, t, call);
                    self.call(c, t, call.clone(), *skip_to);
                }
                &Instr::Busy(ms) => {
                    let p = &mut self.procs[c];
                    p.threads[t].sleeping = true;
                    let life = p.life;
                    self.queue.push(
                        self.now.plus_ms(ms),
                        Ev::Wake {
                            c: c as u32,
                            life,
                            t: t as u32,
                            late: false,
                        },
                    );
                }
                Instr::Write => self.write(c, t),
                Instr::Loop { .. } | Instr::EndLoop { .. } => {}
            }
        }
    }

    /// A thread that calls `unlock` believes it has one hold less (none
    /// from its last), and one that calls `forceUnlock` none, before
    /// Redis answers.
    fn believe_released(&mut self, c: usize, t: usize, call: &Call) {
        let th = &mut self.procs[c].threads[t];
        if th.multi.is_some() {
            // Its multi-lock's unlocks of each lock say it.
            return;
        }
        match call {
            Call::Unlock if th.holds > 1 => th.holds -= 1,
            Call::Unlock | Call::ForceUnlock => {
                th.token = None;
                self.release_belief(c, t, ReleaseCause::Unlock);
            }
            _ => {}
        }
    }

    /// Starts `call`; a call the machine refuses returns its error at once.
    fn call(&mut self, c: usize, t: usize, call: Call, skip_to: usize) {
        self.procs[c].threads[t].pending = Some((call.clone(), skip_to));
        if call.is_acquire()
            && let Some(after) = self.procs[c].threads[t].interrupt_after.take()
        {
            let (life, ci, ti) = (self.procs[c].life, c as u32, t as u32);
            self.queue.push(
                self.now.plus_ms(after),
                Ev::Interrupt { c: ci, life, t: ti },
            );
        }
        if self.call_multi(c, t, &call) {
            return;
        }
        let who = self.procs[c].who(t);
        let lock = self.procs[c].threads[t].lock.clone();
        self.record(RecordKind::Call {
            who,
            lock: lock.clone(),
            call: call.clone(),
        });
        let now = self.local_now(c);
        if let Err(e) = self.procs[c].machine.call(now, thread_id(t), lock, call) {
            self.returned(c, t, Err(e));
        }
    }

    /// A write to the resource behind the thread's lock, carrying the token
    /// of the thread's last acquisition. The resource keeps the highest
    /// token it accepted and rejects lower ones; writes without a token are
    /// always accepted.
    fn write(&mut self, c: usize, t: usize) {
        let lock = self.procs[c].threads[t].lock.clone();
        let token = self.procs[c].threads[t].token;
        let accepted = self.resources.write(&lock, token);
        let who = self.procs[c].who(t);
        self.record(RecordKind::Write {
            who,
            lock,
            token,
            accepted,
        });
    }
}

pub(crate) fn outcome_of(result: &Result<CallOutcome, LockError>) -> Outcome {
    match result {
        Ok(CallOutcome::Acquired { token }) => Outcome::Acquired {
            token: token.map(|t| t.0),
        },
        Ok(CallOutcome::NotAcquired) => Outcome::NotAcquired,
        Ok(CallOutcome::Unlocked { released }) => Outcome::Unlocked {
            released: *released,
        },
        Ok(CallOutcome::Bool(b)) => Outcome::Value {
            value: b.to_string(),
        },
        Ok(CallOutcome::Count(n)) => Outcome::Value {
            value: n.to_string(),
        },
        Ok(CallOutcome::Ttl(n)) => Outcome::Value {
            value: format!("{n}ms"),
        },
        Err(e) => Outcome::Error {
            message: e.to_string(),
            script: e.is_script_error(),
        },
    }
}

/// A reply in a few characters: `1`, `0`, `nil`, `ERR ...`.
pub(crate) fn value_text(v: &Value) -> String {
    match v {
        Value::Int(n) => n.to_string(),
        Value::Nil => "nil".to_owned(),
        Value::Simple(s) => s.clone(),
        Value::Error(e) => format!("error: {e}"),
        Value::Bulk(b) => lockcore::lossy_text(b).into_owned(),
        Value::Array(items) | Value::Push(items) => {
            let parts: Vec<String> = items.iter().map(value_text).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Map(_) => "map".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use lockcore::Release;

    use crate::model::history::RecordKind;
    use crate::run::tests::{client, critical, records, spec, thread};
    use crate::{Fault, FaultPlan, run};

    /// Generated seed 39's shape, by hand: under `redisson-batched` (T/3 =
    /// 3 333 ms) a Redis pause holds A's round renewal past lockcore's
    /// 3 000 ms response timeout; its late reply reaches A (ignored by
    /// lockcore) just before A's unlock returns, and lockcore's resend of
    /// that renewal goes out after the unlock. The resend is lockcore's
    /// command retry of a renewal first sent while A held the lock, so it
    /// is marked a retry and no renewal-after-unlock is reported. The old
    /// driver guessed retries from renewals still unanswered past the
    /// timeout; the late reply had cleared that one, so it called the
    /// resend a new renewal and the checker flagged it.
    #[test]
    fn resend_after_unlock_is_a_retry() {
        let mut s = spec(vec![client("A", vec![thread(0, critical(6_000))])]);
        s.profile = Release::BATCHED;
        s.watchdog_timeout_ms = 10_000;
        s.faults = FaultPlan(vec![Fault::RedisPause(crate::model::fault::RedisPause {
            at_ms: 3_000,
            duration_ms: 4_200,
        })]);
        let r = run(&s).expect("valid spec");
        let h = &r.history;
        let unlocked = records(h, |k| {
            matches!(
                k,
                RecordKind::Return {
                    call: lockcore::Call::Unlock,
                    ..
                }
            )
        })
        .map(|r| r.at)
        .next()
        .expect("A unlocks");
        let sent: Vec<_> = records(h, |k| matches!(k, RecordKind::RenewSent { .. }))
            .map(|r| {
                (
                    r.at,
                    matches!(r.kind, RecordKind::RenewSent { retry: true, .. }),
                )
            })
            .collect();
        assert_eq!(sent.len(), 2, "{h}");
        assert!(!sent[0].1 && sent[0].0 < unlocked, "{h}");
        assert!(sent[1].1 && sent[1].0 > unlocked, "{h}");
        let late_reply = records(h, |k| matches!(k, RecordKind::RenewReply { .. }))
            .next()
            .expect("the first attempt's late reply is recorded");
        assert!(late_reply.at < sent[1].0, "{h}");
        assert!(r.violations.is_empty(), "{:?}\n{h}", r.violations);
    }
}
