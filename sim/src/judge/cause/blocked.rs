//! Key expiries that faults explain by blocking every renewal the
//! holder's lease needed.

use crate::model::history::{Direction, RecordKind};
use crate::{History, SimSpec, Violation};

use super::{chain, excusing, violated_lock};

/// A renewal: its client's name, and the life and request id of its
/// process (request ids start again with each life).
type Renewal<'h> = (&'h str, (u32, u64));

/// Whether faults blocked every renewal the involved clients sent in the
/// lease before an expiry after the last that succeeded: each failed (an
/// error, a 0, or no reply before the expiry) while a fault on its client
/// or on Redis was in force. A
/// renewal goes every third of the lease and the third is due as the key
/// expires, so two blocked renewals lose the key whatever the fault's
/// share of the lease.
pub(super) fn renewals_blocked<'s>(
    spec: &'s SimSpec,
    history: &History,
    v: &Violation,
    (start, end): (u64, u64),
) -> Option<(String, Option<&'s crate::Fault>)> {
    let lease = end - start;
    // The renewal that set the key's last TTL ran a one-way delay after
    // it was sent, so the window reaches back by a round trip.
    let rtt = 2 * history.meta.max_latency_ms;
    let start = start.saturating_sub(rtt);
    // Another lock's renewals (a client may hold two) say nothing of it.
    let key = violated_lock(history, v)?;
    // Request ids start again with each life of a process.
    let mut sent: Vec<(u64, &str, (u32, u64))> = Vec::new();
    let mut ok = std::collections::BTreeSet::new();
    // When each renewal was first answered.
    let mut answered = std::collections::BTreeMap::new();
    let mut other_thread = std::collections::BTreeSet::new();
    let mut reloaded: Vec<(Renewal<'_>, u64)> = Vec::new();
    // Messages of each process (client, life) a drop fault lost, and when.
    let mut dropped: Vec<(&str, u32, u64)> = Vec::new();
    // When each renewal failed with an error, and when the command layer
    // sent it again after that (its retry pause, not a third of the lease).
    let mut errored: Vec<(Renewal<'_>, u64)> = Vec::new();
    let mut resent: Vec<(&str, u32, u64)> = Vec::new();
    // Every reply to a renewal, whenever it came: when, and whether it
    // was `NOSCRIPT`.
    let mut replies: Vec<(Renewal<'_>, u64, bool)> = Vec::new();
    for r in &history.records {
        let ms = r.at.as_ms();
        match &r.kind {
            RecordKind::RenewSent {
                process,
                request,
                lock,
                ..
            } if (start..end).contains(&ms)
                && lock.as_str() == key.as_str()
                && v.clients.iter().any(|c| **c == *process.client) =>
            {
                sent.push((ms, &*process.client, (process.life, *request)));
            }
            RecordKind::RenewSent {
                process,
                lock,
                retry: true,
                ..
            } if lock.as_str() == key.as_str() => resent.push((&*process.client, process.life, ms)),
            RecordKind::RenewReply {
                process,
                request,
                reply,
                ..
            } => {
                let renewal = (&*process.client, (process.life, *request));
                replies.push((renewal, ms, reply.contains("NOSCRIPT")));
                if ms > end {
                    continue;
                }
                answered.entry(renewal).or_insert(ms);
                match reply.as_str() {
                    "1" => {
                        ok.insert(renewal);
                    }
                    "0" => {
                        other_thread.insert(renewal);
                    }
                    // 3.46+ loads the script and sends the renewal again
                    // (its own record): that resend is the one that had
                    // to get through (4.7.0 seed 26953, after a restart).
                    text if text.contains("NOSCRIPT") => reloaded.push((renewal, ms)),
                    text if text.starts_with("error") => errored.push((renewal, ms)),
                    _ => {}
                }
            }
            RecordKind::Drop { process, .. } if ms <= end => {
                dropped.push((&*process.client, process.life, ms));
            }
            _ => {}
        }
    }
    // A renewal answered `NOSCRIPT` whose `SCRIPT LOAD` (or its reply) a
    // drop then lost: it goes again only once the load timed out (4.7.0
    // seed 127659: a 3 s lease, the load's reply dropped 9 ms after the
    // `NOSCRIPT`).
    let load_lost: Vec<(Renewal<'_>, u64)> = (reloaded.iter())
        .filter(|&&((c, (life, _)), at)| {
            (dropped.iter()).any(|&(dc, dl, ms)| dc == c && dl == life && ms >= at)
        })
        .copied()
        .collect();
    let lost_at = |r: Renewal<'_>| load_lost.iter().find(|(k, _)| *k == r).map(|&(_, at)| at);
    // The key was the believer's all through the window, so a renewal of
    // it that found no hold renewed another thread of the client (a stale
    // head of its renewal entry, 3.44.0 seed 26953): not the believer's.
    let reloads = |r: Renewal<'_>| reloaded.iter().any(|(k, _)| *k == r);
    sent.retain(|&(_, c, r)| {
        !other_thread.contains(&(c, r)) && (!reloads((c, r)) || lost_at((c, r)).is_some())
    });
    // Only the renewals after the last that succeeded (it set the TTL
    // that ran out) had to get through.
    if let Some(last_ok) = sent.iter().rposition(|&(_, c, r)| ok.contains(&(c, r))) {
        sent.drain(..=last_ok);
    }
    if sent.is_empty() {
        return none_sent(spec, history, v, (lease, end));
    }
    let mut blamed = None;
    let mut healed = 0;
    for &(ms, client, request) in &sent {
        // A renewal Redis answered (a proxy's `CROSSSLOT`, say) before a
        // fault began was not that fault's to fail, however long the
        // run's longest delay (4.7.0 seed 33564: a delay fault 7 s after
        // two refused renewals); one whose reload a drop lost was.
        let replied = answered
            .get(&(client, request))
            .filter(|_| lost_at((client, request)).is_none());
        let on_it = excusing(spec).find(|f| {
            // A fault that struck while the renewal was on its way to
            // Redis blocked it too (4.7.0 seed 8923: sent 4 ms before a
            // Redis pause).
            f.client().is_none_or(|c| c == client)
                && f.at_ms() <= ms + history.meta.max_latency_ms
                && replied.is_none_or(|&a| f.at_ms() <= a)
                && ms <= f.effect_end_ms().unwrap_or(f.at_ms())
        });
        let on_it = on_it.or_else(|| emptied_cache(spec, &replies, (client, request), ms))?;
        blamed.get_or_insert(on_it);
        healed = healed.max(on_it.effect_end_ms().unwrap_or(on_it.at_ms()));
    }
    // Every renewal failed under a fault, but the faults ended in time for
    // the next renewal (a third of the lease later) and none came: the
    // watchdog gave up on its own (the documents' network drop, #3194).
    // When the fault lost the last one outright, the next comes only when
    // the command layer resends it after its response timeout: Redisson
    // sets the next renewal in the reply's callback (4.7.0 seed 5119: a
    // dropped reply, a 3 s lease).
    let next = match sent.last() {
        Some(&(_, client, request)) if lost_at((client, request)).is_some() => {
            let at = lost_at((client, request)).unwrap_or(0);
            (healed + lease / 3).max(at + chain::resend_after_ms(spec, client))
        }
        Some(&(ms, client, request)) if !answered.contains_key(&(client, request)) => {
            (healed + lease / 3).max(ms + chain::resend_after_ms(spec, client))
        }
        // Answered with an error the command layer retries: the next try
        // is its resend, a retry pause after the error (4.7.0 seed 75220:
        // a switchover's READONLY, a 1 s watchdog, a 1 to 2 s pause).
        Some(&(_, client, request)) => {
            let failed_at = errored.iter().find(|(k, _)| *k == (client, request));
            let resend = failed_at.and_then(|&(_, at)| {
                (resent.iter())
                    .find(|&&(c, life, ms)| c == client && life == request.0 && ms >= at)
                    .map(|&(_, _, ms)| ms)
            });
            (healed + lease / 3).max(resend.unwrap_or(0))
        }
        None => healed + lease / 3,
    };
    if end > next + history.meta.max_timer_tick_ms + rtt {
        let &(_, client, (life, _)) = sent.last()?;
        let process = crate::Proc {
            client: client.into(),
            life,
        };
        return next_held(spec, history, v, (process, next, lease, end), blamed);
    }
    let why = format!(
        "all {} renewal(s) sent in the lease before it failed under faults ({})",
        sent.len(),
        blamed.map(|f| f.text()).unwrap_or_default()
    );
    Some((why, blamed))
}

/// The fault that emptied the script cache of the primary the renewal
/// `sent` at `ms` met, when Redis answered it `NOSCRIPT`: the last
/// failover, switchover or restart before it. Redis 7.0+ replicates no
/// scripts, so a promoted replica has none. Such a renewal is judged at
/// all only when its reload and resend could not come in time: answered
/// after the expiry (4.7.0 seed 411960: a switchover refused a renewal
/// and three resends; the fourth went 1.9 s after it ended, 13 ms before
/// the expiry, and met `NOSCRIPT`), or lost (seed 669503: the resend
/// after the reload went into a failover).
fn emptied_cache<'s>(
    spec: &'s SimSpec,
    replies: &[(Renewal<'_>, u64, bool)],
    sent: Renewal<'_>,
    ms: u64,
) -> Option<&'s crate::Fault> {
    let &(_, _, noscript) = replies.iter().find(|&&(r, at, _)| r == sent && at >= ms)?;
    if !noscript {
        return None;
    }
    excusing(spec)
        .filter(|f| {
            let loses_scripts = f.restarts_redis() || f.promotes_replica();
            f.at_ms() <= ms && loses_scripts
        })
        .max_by_key(|f| f.at_ms())
}

/// The renewals sent failed under `blamed`, and the next, due by `next`,
/// would have been in time, but a fault on its client or on Redis was in
/// force when it fell due and lasted until a renewal sent as it ended
/// could no longer reach Redis before the expiry at `end` (4.7.0 seed
/// 1609745: a failover refused the renewal at 18 s, and a 14 s pause from
/// 26 s held the one due at 28 s past the expiry at 38 s), or failed
/// that round and the ones after it as `none_sent` says (4.7.0 seed
/// 201990: a pause held a renewal into a failover that refused it, and
/// refused the next round, a third of the lease later; the one after
/// fell due after the expiry, 108 ms after the failover ended).
fn next_held<'s>(
    spec: &'s SimSpec,
    history: &History,
    v: &Violation,
    (process, next, lease, end): (crate::Proc, u64, u64, u64),
    blamed: Option<&crate::Fault>,
) -> Option<(String, Option<&'s crate::Fault>)> {
    let due = next + history.meta.max_timer_tick_ms;
    let failed = blamed.map(|f| f.text()).unwrap_or_default();
    let held = excusing(spec).find(|f| {
        f.client().is_none_or(|c| *c == *process.client)
            && f.at_ms() <= due
            && f.effect_end_ms().unwrap_or(f.at_ms()) + history.meta.max_latency_ms >= end
    });
    let Some(held) = held else {
        let round = FirstRound {
            process,
            due,
            lead: 0,
            synced: 0,
        };
        let (why, f) = rounds_lost(spec, history, v, (0, lease, end), round)?;
        let why =
            format!("the renewal(s) sent in the lease failed under faults ({failed}), and {why}");
        return Some((why, f));
    };
    let why = format!(
        "the renewal(s) sent in the lease failed under faults ({failed}), and {} held the next, due by {}, until it could no longer arrive",
        held.text(),
        crate::SimTime::from_ms(due)
    );
    Some((why, Some(held)))
}

/// No renewal went in the lease: a fault on the holder's client or on
/// Redis was in force when the watchdog's next renewal fell due (a third
/// of the lease after the holder learned of its hold or of its last
/// renewal, plus a timer tick), early enough for a renewal on time to
/// arrive, and lasted until a renewal sent as it ended could no longer
/// reach Redis before the expiry (4.7.0 seed 413189: a pause began 15 ms
/// before the first renewal was due and outlasted the key, of which it
/// covered 651 of 1,000 ms).
fn none_sent<'s>(
    spec: &'s SimSpec,
    history: &History,
    v: &Violation,
    (lease, end): (u64, u64),
) -> Option<(String, Option<&'s crate::Fault>)> {
    let first = *v.events.iter().min()?;
    let round = first_round(spec, history, first, (lease, end))?;
    let (why, f) = rounds_lost(spec, history, v, (first, lease, end), round)?;
    Some((format!("no renewal went: {why}"), f))
}

/// The watchdog's round due at `round.due` and each after it (records
/// from `first`, up to the expiry at `end`) failed under a fault until
/// the next fell due too late: why, and the fault that failed the first.
fn rounds_lost<'s>(
    spec: &'s SimSpec,
    history: &History,
    v: &Violation,
    (first, lease, end): (usize, u64, u64),
    round: FirstRound,
) -> Option<(String, Option<&'s crate::Fault>)> {
    let FirstRound {
        process,
        mut due,
        mut lead,
        mut synced,
    } = round;
    let tick = history.meta.max_timer_tick_ms;
    let latency = history.meta.max_latency_ms;
    let quiet = spec.latency.max_ms.min(latency);
    let mut refused = Vec::new();
    let mut blamed: Option<&crate::Fault> = None;
    let ends = |f: &crate::Fault| f.effect_end_ms().unwrap_or(f.at_ms());
    // The soonest the round can go: its due time, or for a resend after a
    // round lost unanswered the shortest of its jittered pauses (4.7.0
    // seed 238769: a dropped reply's resend went 3.7 s after the round,
    // the longest pause would have put it at 6 s).
    let mut soonest = due;
    loop {
        let in_force = |f: &&crate::Fault| {
            f.client().is_none_or(|c| *c == *process.client)
                // A fault that struck while the round was on its way
                // caught it too (4.7.0 seed 106226: a switchover closed
                // the connection 5 ms after the round's `SCRIPT LOAD` went).
                && f.at_ms() <= due + synced + latency
                && soonest.saturating_sub(tick) <= ends(f) + latency
        };
        if let Some(f) = excusing(spec).find(|f| in_force(f) && ends(f) + latency >= end) {
            let f = blamed.unwrap_or(f);
            return Some((none_went(f, due, &refused), Some(f)));
        }
        // The fault named is the one that refused the first round.
        let f = *blamed.get_or_insert(excusing(spec).find(in_force)?);
        // The fault ended in time, but it refused the attempt before the
        // renewal's script went (3.46+: the batch's `SCRIPT LOAD`, or an
        // `INFO`, dropped at the due time): the round failed, and the
        // watchdog's next is a third of the lease after it (4.7.0 seed
        // 139: a 5 s failover refused two rounds of a 10 s lease, and the
        // third fell due after the expiry).
        // Under `interleave` the round's callback may run that window's
        // delay late (4.7.0 seed 39802: a failover refused a round at
        // 16.19 s and the next, 97 ms late, at 19.62 s).
        let from = soonest.saturating_sub(2 * tick + quiet + lead);
        let slack = super::interleave_delay(spec, v, from, due + latency);
        let to = due + synced + latency + slack;
        let (at, why) = lost_round(history, (first, end), &process, (from, to), latency)?;
        refused.push((at, why));
        synced = 0;
        soonest = at + chain::resend_soonest_ms(spec, &process.client);
        due = if why.answered() {
            // The refusal comes back a one-way delay after the send, and
            // the next round is set a third of the lease after that
            // (4.7.0 seed 40695: refused at 16.71 s, the next at 20.10 s).
            at + quiet + lease / 3 + tick
        } else {
            // Lost unanswered (on a connection a switchover had closed):
            // only the response timeout fails it, and the command layer
            // resends after its retry pause (4.7.0 seed 106226: a 3 s
            // watchdog's `SCRIPT LOAD` lost so at 13.83 s, the key
            // expired at 15.76 s, the resend due after 16.83 s).
            at + chain::resend_after_ms(spec, &process.client) + tick
        };
        let (ahead, behind) = clock_drift(spec, &process.client, (at, due));
        (lead, due) = (ahead, due + behind);
        if why.answered() {
            soonest = due;
        }
        if due + quiet >= end {
            return Some((none_went(f, due, &refused), Some(f)));
        }
    }
}

/// When the watchdog's first round after a hold's start (or its last
/// renewal) fell due, on true time; how far the client's clock ran
/// ahead by then; and how long the renewing round's `WAIT` may have held
/// its end.
struct FirstRound {
    process: crate::Proc,
    due: u64,
    lead: u64,
    synced: u64,
}

/// The first round of the believer's hold (record `first`), if it was a
/// watchdog hold whose renewal the watchdog did not stop on its own and
/// a renewal on time could have arrived before the expiry at `end`.
fn first_round(
    spec: &SimSpec,
    history: &History,
    first: usize,
    (lease, end): (u64, u64),
) -> Option<FirstRound> {
    let hold = history.records.get(first)?;
    let RecordKind::Hold {
        who,
        lock,
        watchdog: true,
        ..
    } = &hold.kind
    else {
        return None;
    };
    let process = who.process();
    let window = || {
        history.records[first..]
            .iter()
            .take_while(|r| r.at.as_ms() <= end)
    };
    // The watchdog let go on its own (an unlock's cancel, a renewal's
    // 0): why is for other rules, not a fault that merely was in force
    // (4.7.0 seed 1809674: a count-down unlock retried for a replication
    // stall cancelled renewal, #4822's retry, while the thread held on).
    let stopped = window().any(|r| {
        matches!(&r.kind, RecordKind::Lock {
            process: p,
            event: lockcore::Event::RenewalStopped { lock: l, .. },
        } if *p == process && l.as_str() == lock.as_str())
    });
    if stopped {
        return None;
    }
    let renewed = window()
        .filter(|r| {
            matches!(&r.kind, RecordKind::RenewReply { process: p, lock: l, reply, .. }
                if *p == process && l.as_str() == lock.as_str() && reply == "1")
        })
        .map(|r| r.at.as_ms())
        .last();
    let learned = renewed.unwrap_or(hold.at.as_ms());
    // The round that renewed ended when its batch's `WAIT` answered,
    // which a replication stall holds up to the sync timeout; the next is
    // set from there (4.7.0 seed 174449: a stall held the WAIT 590 ms,
    // and the next round went that much after a third of the lease).
    // A hold is recorded as its call returns, after its batch ended.
    let synced = renewed.map_or(0, |_| chain::sync_wait_ms(spec, &process.client));
    let due = learned + lease / 3 + history.meta.max_timer_tick_ms;
    // A key that ran out before a renewal on time could arrive had a
    // shorter TTL than the watchdog's (3.19.1's previous lease, #4818):
    // no fault explains that. On time means without faults: the run's
    // bound adds every delay fault's, which is what is being judged
    // (4.7.0 seed 4980: a 7.6 s reply delay later in the run hid a 1 s
    // key whose first round, a `SCRIPT LOAD`, a 3.7 s delay held).
    if due + spec.latency.max_ms.min(history.meta.max_latency_ms) >= end {
        return None;
    }
    // The client's timers run on its clock: a slow one fires the round
    // late, a fast one early (4.7.0 seed 118379: a drift to a third of
    // true speed for 125 ms put the round 83 ms past its due time).
    let (lead, lag) = clock_drift(spec, &process.client, (learned, due));
    Some(FirstRound {
        process,
        due: due + lag,
        lead,
        synced,
    })
}

/// The first round `process` lost in `from..=to` (ms; records from the
/// hold `first` up to `end`): when it went, and why it was lost. A
/// resubscription refused in the same window is the pub/sub
/// connection's, not the round's (4.7.0 seed 92802: a failover refused
/// a SUBSCRIBE 52 ms before the round's `SCRIPT LOAD`, and the next
/// round was looked for 52 ms early). A round a partition held and then
/// lost (its connection closed meanwhile) failed unanswered, timed from
/// when it went (4.7.0 seed 191312: held at 26.55 s, lost at 29.55 s on
/// a connection a failover had closed, resent after 4.4 s and a 2.6 s
/// pause). A round whose reply a fault dropped on the way back (`what`
/// "reply", up to a one-way delay later) was lost unanswered too (4.7.0
/// seed 238769: a 50 % drop took the reply to the round's `SCRIPT LOAD`
/// and to its resend). Where the round is on record in the window (its
/// stage, or its script sent), what the process lost before it was
/// another call's (4.7.0 seed 664396: a failover refused a thread's
/// acquire 69 ms before the round's `SCRIPT LOAD`, and the next round
/// was looked for that much early).
fn lost_round(
    history: &History,
    (first, end): (usize, u64),
    process: &crate::Proc,
    (from, to): (u64, u64),
    latency: u64,
) -> Option<(u64, crate::DropCause)> {
    let window = || {
        history.records[first..]
            .iter()
            .take_while(|r| r.at.as_ms() <= end)
            .filter(|r| (from..=to + latency).contains(&r.at.as_ms()))
    };
    let went = window()
        .find(|r| match &r.kind {
            RecordKind::Lock {
                process: p,
                event: lockcore::Event::RenewalStaged { .. },
            } => p == process,
            RecordKind::RenewSent {
                process: p,
                retry: false,
                ..
            } => p == process,
            _ => false,
        })
        .map_or(from, |r| r.at.as_ms());
    window()
        .filter(|r| r.at.as_ms() >= went)
        .find_map(|r| match &r.kind {
            RecordKind::Drop {
                process: p,
                direction: Direction::Up,
                what,
                why,
            } if p == process && !what.contains("SUBSCRIBE") && r.at.as_ms() <= to => {
                Some((r.at.as_ms(), *why))
            }
            RecordKind::Drop {
                process: p,
                direction: Direction::Down,
                what,
                why,
            } if p == process && what == "reply" && !why.answered() => Some((r.at.as_ms(), *why)),
            RecordKind::Held {
                process: p,
                direction: Direction::Up,
                what,
                until,
            } if p == process && !what.contains("SUBSCRIBE") && r.at.as_ms() <= to => {
                let why = held_then_lost(history, (p, what), *until)?;
                Some((r.at.as_ms(), why))
            }
            _ => None,
        })
}

/// Why the message `what` of `process` that a partition held until
/// `until` was then lost, if it was (it reached Redis on a connection
/// closed meanwhile).
fn held_then_lost(
    history: &History,
    (process, what): (&crate::Proc, &str),
    until: crate::SimTime,
) -> Option<crate::DropCause> {
    history.records.iter().find_map(|r| match &r.kind {
        RecordKind::Drop {
            process: p,
            direction: Direction::Up,
            what: w,
            why,
        } if r.at == until && p == process && w == what => Some(*why),
        _ => None,
    })
}

/// How far `client`'s clock runs ahead of true time and behind it over
/// the true-time window `(start, due)` (its drifts' gains and losses,
/// in ms, rounded up): a timer set at `start` for `due` fires up to the
/// loss later, or up to the gain earlier. A loss moves the window on,
/// so it is taken again over the longer window until it settles.
fn clock_drift(spec: &SimSpec, client: &str, (start, due): (u64, u64)) -> (u64, u64) {
    let over = |end: u64, slow: bool| -> u64 {
        (spec.faults.0.iter())
            .filter_map(|f| match f {
                crate::Fault::ClockDrift(d) if d.client == client && (d.drift_ppm < 0) == slow => {
                    let overlap = (d.at_ms + d.duration_ms)
                        .min(end)
                        .saturating_sub(d.at_ms.max(start));
                    Some((overlap * d.drift_ppm.unsigned_abs()).div_ceil(1_000_000))
                }
                _ => None,
            })
            .sum()
    };
    let mut lag = 0;
    for _ in 0..4 {
        lag = over(due + lag, true);
    }
    (over(due, false), lag)
}

/// Why no renewal went in time: `f` was in force when one fell due, and failed
/// the attempts at `refused` (if any) until the next fell due at `due`.
fn none_went(f: &crate::Fault, due: u64, refused: &[(u64, crate::DropCause)]) -> String {
    let at = |ms: u64| crate::SimTime::from_ms(ms).to_string();
    if refused.is_empty() {
        return format!(
            "{} (at {}) was in force when the renewal fell due at {} and until it could no longer arrive",
            f.text(),
            at(f.at_ms()),
            at(due)
        );
    }
    let rounds: Vec<String> = (refused.iter())
        .map(|&(ms, why)| format!("{} ({why})", at(ms)))
        .collect();
    format!(
        "{} (at {}) failed the watchdog's rounds at {}, and the next fell due at {}, too late",
        f.text(),
        at(f.at_ms()),
        rounds.join(", "),
        at(due)
    )
}

#[cfg(test)]
mod tests {
    use crate::faults::{Failover, Pause, RedisDown, Switchover};
    use crate::run::tests::{causes, client, critical, spec, thread};
    use crate::{Fault, FaultPlan, Invariant, run};

    /// A holds the lock with a 1 s watchdog; a switchover from 300 ms to
    /// 450 ms puts its first renewal (due at 333 ms) on the demoted
    /// primary, which answers `READONLY`. 4.7.0's command layer sends it
    /// again after its retry pause (1 to 2 s), after the key expired at
    /// 1 s, and B takes the lock while A works. The switchover failed the
    /// only renewal the lease had: beyond the guarantee (4.7.0 seed
    /// 75220). The rule once took the next try for a third of the lease
    /// after the fault, and called the expiry a defect.
    #[test]
    fn a_renewal_failed_by_a_fault_and_resent_late_is_the_faults() {
        let switchover = Fault::Switchover(Switchover {
            at_ms: 300,
            duration_ms: 150,
            replica: None,
        });
        assert_lost_beyond_guarantee((3_000, 1_000, 1), vec![switchover]);
    }

    /// A holds the lock for `work` ms with a `watchdog` ms watchdog, B
    /// tries it at 200 ms, Redis has `replicas`, under 4.7.0 and `faults`:
    /// the mutual-exclusion violation is beyond the guarantee.
    fn assert_lost_beyond_guarantee(
        (work, watchdog, replicas): (u64, u64, u32),
        faults: Vec<Fault>,
    ) {
        let mut s = spec(vec![
            client("A", vec![thread(0, critical(work))]),
            client("B", vec![thread(200, critical(10))]),
        ]);
        s.profile = "4.7.0".parse().expect("a release");
        s.watchdog_timeout_ms = watchdog;
        s.horizon_ms = 30_000;
        s.redis.replicas = replicas;
        s.faults = FaultPlan(faults);
        let r = run(&s).expect("valid");
        assert_eq!(
            causes(&r, Invariant::MutualExclusion),
            ["beyond-guarantee"],
            "{}",
            r.history
        );
    }

    /// A holds the lock with a 3 s watchdog. Its first renewal (at 1 s)
    /// is refused by Redis, down from 0.9 s to 1.3 s; a pause of A from
    /// 1.5 s to 4.5 s then holds the next one (due about 2 s) past the
    /// key's expiry at 3 s, and B takes the lock. The two faults cover
    /// less than two thirds of the lease, but every renewal the lease had
    /// was refused or held: beyond the guarantee (4.7.0 seed 1609745: a
    /// failover refused the renewal at 18 s, a 14 s pause held the one
    /// due at 28 s). The rule once stopped at the first fault's end and
    /// called the expiry a defect.
    #[test]
    fn a_renewal_refused_then_the_next_held_by_a_pause_is_the_faults() {
        let down = Fault::RedisDown(RedisDown {
            at_ms: 900,
            duration_ms: 400,
            keep_data: true,
        });
        let pause = Fault::Pause(Pause {
            client: "A".into(),
            at_ms: 1_500,
            duration_ms: 3_000,
        });
        assert_lost_beyond_guarantee((6_000, 3_000, 0), vec![down, pause]);
    }

    /// A holds the lock with a 3 s watchdog and one replica; a failover
    /// from 0.8 s to 2.4 s refuses the watchdog's rounds at about 1 s and
    /// 2 s (4.7.0's batch sends the renewal script's `SCRIPT LOAD` first,
    /// as the failover emptied the client's set, and that is what is
    /// refused: no renewal is sent at all), and the third round falls due
    /// as the key expires at 3 s. The failover ended a lease's third
    /// before the expiry, but it refused every round the lease had: beyond
    /// the guarantee (4.7.0 seed 139, a 5 s failover and a 10 s lease).
    /// The rule once took the next renewal to go as the fault ended, and
    /// called the expiry a defect.
    #[test]
    fn rounds_refused_before_their_script_went_are_the_faults() {
        let failover = Fault::Failover(Failover {
            at_ms: 800,
            duration_ms: 1_600,
            replica: None,
        });
        assert_lost_beyond_guarantee((6_000, 3_000, 1), vec![failover]);
    }
}
