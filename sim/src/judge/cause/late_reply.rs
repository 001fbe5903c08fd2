//! Holds whose key ran out because the acquire's reply came late.

use crate::model::history::RecordKind;
use crate::{History, SimSpec, SimTime, Violation};

use super::faults_on;

/// The holder learned of its lock too late to keep it, while a fault held
/// the acquire's reply back: the key's TTL, set when the acquire ran on
/// Redis (`end` minus the hold's lease), ran out at `end` with no renewal
/// in between.
///
/// - An explicit lease (no watchdog): the script's lease covers its work
///   (or the run is misuse), so the holder could have let go in time only
///   if it ran when the lease ran out and got the reply in time. A fault
///   on the holder's client or on Redis in force at the expiry, or
///   between the acquire on Redis and its reply, explains it.
/// - A watchdog: Redisson schedules the first renewal a third of the
///   lease after the acquire's future completes, and with replicas that
///   is after the batch's `WAIT` answered. When the reply came so late
///   that the first renewal (plus a timer tick and a one-way trip) could
///   not reach Redis before the expiry, a fault between the acquire on
///   Redis and its reply explains it (3.44.0 seeds 41612 and 99641: a
///   replication stall held the acquire's `WAIT` for 560 ms of a 1 s
///   lease).
pub(super) fn late_reply<'s>(
    spec: &'s SimSpec,
    history: &History,
    v: &'s Violation,
    end: u64,
) -> Option<(String, &'s crate::Fault)> {
    let first = *v.events.iter().min()?;
    let hold = history.records.get(first)?;
    let RecordKind::Hold {
        who,
        lease_ms,
        watchdog,
        ..
    } = &hold.kind
    else {
        return None;
    };
    let acquired = end.saturating_sub(*lease_ms);
    let replied = hold.at.as_ms();
    // The expiry is the acquire's lease only if the acquire could have
    // set it: after the thread called. A key that ran out earlier had its
    // TTL cut since (3.23.4 seed 20: a fair lock's count-down unlock set
    // it to the watchdog's 1 s under a 13 s lease, #5623), which no fault
    // before the call explains.
    if super::called_at(history, who, first).is_none_or(|c| end < c + lease_ms) {
        return None;
    }
    if !watchdog {
        let f = faults_on(spec, v, end, end)
            .chain(faults_on(spec, v, acquired, replied))
            .chain(
                slowed_calls(history, who, acquired, v.at.as_ms())
                    .flat_map(|(s, e)| faults_on(spec, v, s, e)),
            )
            .next()?;
        let why = format!(
            "its {lease_ms} ms lease ran out while {} (at {}) held the holder back",
            f.text(),
            SimTime::from_ms(f.at_ms())
        );
        return Some((why, f));
    }
    // A TTL set after the reply was a renewal's: the watchdog ran.
    if acquired > replied {
        return None;
    }
    let latency = history.meta.max_latency_ms;
    // A renewal staged behind its `INFO` (3.18.1+) or its script's `SCRIPT
    // LOAD` (3.46+, the client's first renewal since its connections
    // opened) went a round trip after it fell due (4.7.0 seed 14515: a
    // stall held the acquire's `WAIT` 580 ms of a 1 s lease, and the
    // first renewal's load left it 8 ms short).
    let staged = first_renewal_staged(history, who, first);
    let renewal_lands = replied
        + lease_ms / 3
        + history.meta.max_timer_tick_ms
        + if staged { 3 * latency } else { latency };
    if renewal_lands < end {
        return None;
    }
    let f = faults_on(spec, v, acquired, replied).next()?;
    let why = format!(
        "the acquire's reply came {} ms into its {lease_ms} ms lease, too late for the first renewal, held back by {} (at {})",
        replied - acquired,
        f.text(),
        SimTime::from_ms(f.at_ms())
    );
    Some((why, f))
}

/// Whether the first renewal `who`'s process sent after its hold (the
/// record at `hold`) went behind a staging command of its round.
fn first_renewal_staged(history: &History, who: &crate::model::history::Who, hold: usize) -> bool {
    let process = who.process();
    history.records[hold..].iter().find_map(|r| match &r.kind {
        RecordKind::RenewSent {
            process: p, staged, ..
        } if *p == process => Some(*staged),
        _ => None,
    }) == Some(true)
}

/// The spans (call to return, in ms) of `who`'s calls that were out at
/// some time in `from..=to`: a count-down unlock, a re-entry or an acquire
/// made after the lease's TTL was set. When one of them was slowed by a
/// fault (4.7.0 seed 50880: a count-down unlock retried for ten seconds of
/// a replication stall, `NoSyncedSlaves` on every `WAIT`), the thread
/// reached the rest of its work past the lease it asked for.
fn slowed_calls<'h>(
    history: &'h History,
    who: &'h crate::model::history::Who,
    from: u64,
    to: u64,
) -> impl Iterator<Item = (u64, u64)> + 'h {
    let mut out: Option<u64> = None;
    history.records.iter().filter_map(move |r| {
        let at = r.at.as_ms();
        match &r.kind {
            RecordKind::Call { who: w, .. } if w == who && at <= to => {
                out = Some(at);
                None
            }
            RecordKind::Return { who: w, .. } if w == who => {
                let start = out.take()?;
                (at >= from).then_some((start, at))
            }
            _ => None,
        }
    })
}
