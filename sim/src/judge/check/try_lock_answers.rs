//! `tryLock(wait)` answers: once the lock was found held and the wait
//! began, a timed-out attempt inside the wait loop ends it with `false`,
//! not an exception (Redisson #5019, fixed in 4.7.0).

use std::collections::BTreeMap;

use lockcore::{Call, TransportError};

use crate::judge::check::fault_index::FaultIndex;
use crate::judge::check::work::Count;
use crate::model::history::{Outcome, Phase, RecordKind, ServerCause};
use crate::model::name::Name;
use crate::{History, Invariant, SimTime, Violation};

/// A `tryLock(wait)` that fails with a response timeout later than its
/// first attempt could have (every attempt of one command and its
/// resends, timed by the client's own timers) failed inside its wait loop: the lock's own answer,
/// which 4.7.0 makes `false`. From 3.37 an acquire is sent once, so its
/// first attempt ends one response timeout after it went out (after an
/// `EVALSHA`'s `NOSCRIPT` and the `SCRIPT LOAD` at most two round trips
/// in): when no fault touched the client or Redis before that, a timeout
/// thrown later came from the wait loop, however soon (it once had to
/// come a whole retry budget into the call, which such a call rarely
/// lasts). When a fault touched it, the first attempt may take one
/// command's retries; with scripts sent by SHA (3.46+), when the run
/// shows the caller's `SCRIPT LOAD` held or lost, a restarted Redis's
/// `NOSCRIPT` may have come up to a response timeout in, and the load
/// taken one command's retries of its own before the `EVALSHA` went
/// again. A call during which a fault moved its
/// client's timers (a pause, starvation, a clock fault, interleaved
/// callbacks) is not judged: its first attempt may have failed late.
/// A first attempt that times out still throws in every release, and is
/// not judged either: a call whose thread never began its wait loop
/// (lockcore's `WaitBegan`: the first attempt found the lock held) threw
/// from its first attempt, however late. Redisson's retry wrapper runs
/// a first attempt whose `WAIT` synced too few replicas again after a
/// rollback, as often as the client retries (4.7.0 seeds 188812 and
/// 198898: a replication stall failed the first attempt's `WAIT`, and
/// the `INFO` of a retry timed out under a partition 24 s into a 3 s
/// `tryLock`). From 3.26.1 with replicas a client's first synced
/// scripts wait for its probe (`WAIT 0 0`, from 3.46 with `WAITAOF 0 0
/// 0`), retried like any command, so a call made before the client was seen past its probe
/// sends its first attempt a round trip late, or, when a fault that may
/// hold replies touched the client or Redis during that round trip, up to
/// a command budget late (4.7.0 seed 45310: the probe's replies delayed
/// 6 s, an 18 s probe, then a first attempt whose `WAIT` reply a drop
/// lost). A replication stall does not hold the probe, which asks for no
/// replica (3.45.0's audit seed 105 under 3.46.0 throws inside its wait
/// loop, with the probe answered at once).
pub(crate) fn check(history: &History, work: &impl Count) -> Vec<Violation> {
    let timed_out = format!("{}", lockcore::LockError::from(TransportError::Timeout));
    // The first attempt goes out as the call starts and fails by its own
    // timers, whatever the latency: its budget, each of its timeouts and
    // retry delays up to a tick of Redisson's timer late.
    let retries = history.meta.retries();
    let timers = 2 * u64::from(retries.attempts) + 1;
    let first_attempt = retries.budget_ms + timers * history.meta.max_timer_tick_ms + 5;
    let timing = timing_windows(history, work);
    // The first attempt of an acquire sent once, when no fault held it.
    let sent_once = (history.meta.acquire_once_ms)
        .map(|once| once + 3 * history.meta.max_timer_tick_ms + 5);
    let faults = FaultIndex::excusing(history, work);
    let held = FaultIndex::holding_replies(history, work);
    // The probe's replies send the script from their callback: no timer.
    let behind_probe = history.meta.probe.map(|probe| {
        let slow = probe.budget_ms + timers * history.meta.max_timer_tick_ms;
        (probe.round_trip_ms, slow)
    });
    let mut probed = Probed::default();
    // Each open call, and the probe it may have waited for (ms).
    let mut open: BTreeMap<(Name<'_>, u32, u64), (usize, u64)> = BTreeMap::new();
    // Open calls whose thread began its wait loop.
    let mut waiting = std::collections::BTreeSet::new();
    let mut found = Vec::new();
    for (i, r) in work.records(history) {
        probed.see(&r.kind);
        match &r.kind {
            RecordKind::Call {
                who,
                call: Call::TryLock { wait: Some(_), .. },
                ..
            } => {
                let start = r.at;
                let probe = behind_probe
                    .filter(|_| !probed.past(&who.client, who.life))
                    .map_or(0, |(quick, slow)| {
                        match held.touched(&who.client, start, start.plus_ms(quick), work) {
                            true => slow,
                            false => quick,
                        }
                    });
                let key = (Name(&who.client), who.life, who.thread);
                waiting.remove(&key);
                open.insert(key, (i, probe));
            }
            RecordKind::Lock {
                process,
                event: lockcore::Event::WaitBegan { thread, .. },
            } => {
                let key = (Name(&process.client), process.life, thread.0);
                if open.contains_key(&key) {
                    waiting.insert(key);
                }
            }
            RecordKind::Return {
                who,
                call: call @ Call::TryLock { wait: Some(_), .. },
                lock,
                outcome: Outcome::Error { message, .. },
            } if *message == timed_out => {
                let key = (Name(&who.client), who.life, who.thread);
                let Some((c, probe)) = open.remove(&key) else {
                    continue;
                };
                if !waiting.remove(&key) {
                    continue;
                }
                let start = history.records[c].at;
                let once = sent_once.map(|once| once + probe).filter(|&once| {
                    !faults.touched(&who.client, start, start.plus_ms(once), work)
                });
                // A fault may have held the `EVALSHA` until a restarted
                // Redis answered `NOSCRIPT`, and the `SCRIPT LOAD` after it
                // for its whole budget (4.7.0 seeds 830022 and 1806115),
                // when the run shows a load of the caller's held or lost
                // during the call. Elapsed time alone cannot tell that
                // from a throw in the wait loop (4.7.0 seeds 847410 and
                // 102984, a fair lock's after its wait, #5019).
                let script_load = (history.meta.script_load_ms.iter())
                    .find(|(client, _)| *client == *who.client)
                    .filter(|_| load_held(&history.records[c..i], who))
                    .map_or(0, |(_, ms)| *ms);
                let bound = once.unwrap_or(first_attempt + probe + script_load);
                let late = r.at.as_ms() > start.as_ms() + bound;
                let moved = timing.iter().any(|(client, from, to)| {
                    client.is_none_or(|n| *n == *who.client) && *from <= r.at && start <= *to
                });
                if late && !moved {
                    let took = SimTime(r.at.0 - start.0);
                    found.push(
                        Violation::new(
                            Invariant::TryLockAnswers,
                            r.at,
                            [who.client.clone()],
                            format!(
                                "{who}'s {} on {lock} threw \"{message}\" {took} in, inside its wait loop, instead of returning false",
                                crate::model::timeline::call_text(call)
                            ),
                            vec![c, i],
                        )
                        .own_doing(),
                    );
                }
            }
            _ => {}
        }
    }
    found
}

/// Whether `records` show a `SCRIPT LOAD` of `who`'s process held by a
/// partition or lost to a drop on its way to Redis.
fn load_held(records: &[crate::model::history::Record], who: &crate::model::history::Who) -> bool {
    let script = |what: &str| what == "SCRIPT" || what.starts_with("SCRIPT ");
    records.iter().any(|r| match &r.kind {
        RecordKind::Held { process, what, .. } | RecordKind::Drop { process, what, .. } => {
            process.client == who.client && process.life == who.life && script(what)
        }
        _ => false,
    })
}

/// The client processes seen past their server probe: a script of theirs
/// ran (Redis's view changed by their command), a renewal went out, or a
/// call of theirs had its answer; each process by client and life.
#[derive(Default)]
struct Probed<'h> {
    past: Vec<(&'h str, u32)>,
}

impl<'h> Probed<'h> {
    fn see(&mut self, kind: &'h RecordKind) {
        let process = match kind {
            RecordKind::Server {
                cause: ServerCause::Command { by, .. },
                ..
            } => (&*by.client, by.life),
            RecordKind::RenewSent { process, .. } => (&*process.client, process.life),
            RecordKind::Return {
                who,
                outcome: Outcome::Acquired { .. } | Outcome::NotAcquired | Outcome::Unlocked { .. },
                ..
            } => (&*who.client, who.life),
            _ => return,
        };
        if !self.past.contains(&process) {
            self.past.push(process);
        }
    }

    fn past(&self, client: &str, life: u32) -> bool {
        self.past.contains(&(client, life))
    }
}

/// The windows of faults that move a client's timers: client (`None`:
/// all), begin, effect end.
fn timing_windows<'h>(
    history: &'h History,
    work: &impl Count,
) -> Vec<(Option<&'h str>, SimTime, SimTime)> {
    work.records(history)
        .filter_map(|(_, r)| match &r.kind {
            RecordKind::Fault {
                fault,
                phase: Phase::Begin,
            } if moves_timers(fault) => {
                let end = fault.effect_end_ms().unwrap_or(fault.at_ms());
                Some((fault.client(), r.at, SimTime::from_ms(end)))
            }
            _ => None,
        })
        .collect()
}

fn moves_timers(fault: &crate::Fault) -> bool {
    use crate::Fault as F;
    matches!(
        fault,
        F::Pause(_)
            | F::Starve(_)
            | F::ClockDrift(_)
            | F::ClockSkew(_)
            | F::ClockJump(_)
            | F::Interleave(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::check::sample::{Sample, try_wait, who};
    use crate::judge::check::work::Work;

    /// `sample` with Redis paused from 1 s for 1 s.
    fn redis_paused_at_1s(sample: Sample) -> Sample {
        let pause = crate::faults::RedisPause {
            at_ms: 1_000,
            duration_ms: 1_000,
        };
        sample.at(
            1_000,
            RecordKind::Fault {
                fault: crate::Fault::RedisPause(pause),
                phase: Phase::Begin,
            },
        )
    }

    fn timed_out() -> Outcome {
        Outcome::Error {
            message: lockcore::LockError::from(TransportError::Timeout).to_string(),
            script: false,
        }
    }

    /// A tryLock(30 s) that throws a timeout 20 s in (past the first
    /// attempt's 16.5 s) breaks it; one that throws 3 s in (its first
    /// attempt) or returns false does not.
    #[test]
    fn a_timeout_inside_the_wait_loop_must_be_false() {
        let call = try_wait(30_000);
        let late = Sample::new(5)
            .call(0, who("A", 1), call.clone())
            .waits(10, &who("A", 1))
            .ret(20_000, who("A", 1), call.clone(), timed_out())
            .build();
        let found = check(&late, &Work::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].own_doing);
        let first = Sample::new(5)
            .call(0, who("A", 1), call.clone())
            .waits(10, &who("A", 1))
            .ret(3_000, who("A", 1), call.clone(), timed_out())
            .build();
        assert!(check(&first, &Work::default()).is_empty());
        let answered = Sample::new(5)
            .call(0, who("A", 1), call.clone())
            .waits(10, &who("A", 1))
            .ret(20_000, who("A", 1), call.clone(), Outcome::NotAcquired)
            .build();
        assert!(check(&answered, &Work::default()).is_empty());
        // However late, a throw before the loop began is the first
        // attempt's: one rolled back for too few synced replicas runs
        // again (4.7.0 seeds 188812 and 198898).
        let never_waited = Sample::new(5)
            .call(0, who("A", 1), call.clone())
            .ret(20_000, who("A", 1), call, timed_out())
            .build();
        assert!(check(&never_waited, &Work::default()).is_empty());
    }

    /// From 3.37 (an acquire sent once, 3 s timeout): a tryLock(30 s) that
    /// throws a timeout 8 s in threw it from its wait loop, well before a
    /// retry budget (16.5 s) into the call; 3.02 s in is its first
    /// attempt. A fault on Redis during the first attempt may have held
    /// it, so then only the budget tells.
    #[test]
    fn an_acquire_sent_once_bounds_the_first_attempt() {
        let call = try_wait(30_000);
        let run = |ret_ms: u64, fault: bool| {
            let mut sample = Sample::new(5)
                .call(0, who("A", 1), call.clone())
                .waits(10, &who("A", 1));
            if fault {
                sample = redis_paused_at_1s(sample);
            }
            let mut h = sample
                .ret(ret_ms, who("A", 1), call.clone(), timed_out())
                .build();
            // 3 s and five one-way trips of 4 ms.
            h.meta.acquire_once_ms = Some(3_020);
            check(&h, &Work::default())
        };
        assert_eq!(run(8_000, false).len(), 1);
        assert!(run(3_020, false).is_empty());
        assert!(run(8_000, true).is_empty());
    }

    /// 3.46+ with replicas: a client's first synced script waits for its
    /// `WAIT`/`WAITAOF` probe, retried like any command (4.7.0 seed 45310,
    /// shrunk: replies delayed 6 s made an 18 s probe, then a first
    /// attempt timed out 22 s into a tryLock(733)). A call made before the
    /// client was seen past its probe, with a fault on Redis as it began,
    /// may throw its first attempt's timeout up to a probe's budget late;
    /// with no fault the probe is one round trip, and once a renewal of
    /// the client went out the probe was behind it: then the same call
    /// 20 s in threw from its wait loop.
    #[test]
    fn a_call_behind_the_server_probe_may_start_its_first_attempt_late() {
        let call = try_wait(733);
        let run = |renewed_first: bool, fault: bool| {
            let mut sample = Sample::new(5);
            if renewed_first {
                sample = sample.renew(100, "A");
            }
            if fault {
                sample = redis_paused_at_1s(sample);
            }
            let mut h = sample
                .call(1_000, who("A", 2), call.clone())
                .waits(1_010, &who("A", 2))
                .ret(21_000, who("A", 2), call.clone(), timed_out())
                .build();
            h.meta.probe = Some(crate::model::history::ProbeBound {
                round_trip_ms: 15,
                budget_ms: 16_500,
            });
            check(&h, &Work::default()).len()
        };
        assert_eq!(run(false, true), 0);
        assert_eq!(run(false, false), 1);
        assert_eq!(run(true, true), 1);
    }
}
