//! Key expiries that a renewal chain (a lock's, or from 3.44 the
//! client's) stalled on a lost or late request explains.

use lockcore::{Config, LockName, Switch};

use crate::model::history::{Proc, RecordKind};
use crate::{History, SimSpec, SimTime, Violation};

/// Redisson sets a lock's next renewal in the callback of the last one,
/// and from 3.44 (`batched-renewal`, #6303) a client renews all its locks
/// in one chain whose next round waits for every renewal of the last. A
/// renewal that a fault lost (a restart that closed the connection under
/// it, a drop) or held past that timeout (a partition, whose TCP
/// retransmission comes late) answers only at its response timeout (3 s,
/// then its resend), so no hold of that lock (from 3.44: of any lock of
/// that client) is renewed meanwhile, even one taken after the fault
/// healed; with a lease shorter than that wait the key expires (3.44.0
/// seed 5992: a Redis restart dropped the round's EVAL, and the client's
/// next hold was never renewed). That is the release's design meeting a
/// fault, not a defect: it needs the believer's client to have sent its
/// last round of renewals before the key's last lease began, a renewal of
/// that round unanswered in time (4.7.0 seed 24176: the other lock's,
/// dropped and resent) or, with replicas, answered by its script only
/// (its `WAIT` is not shown), and an excusing fault on that client or on
/// Redis striking while the round was on its way.
pub(super) fn chain_stalled<'s>(
    spec: &'s SimSpec,
    history: &History,
    v: &Violation,
    (start, end): (u64, u64),
) -> Option<(String, &'s crate::Fault)> {
    let first = *v.events.iter().min()?;
    let RecordKind::Hold { who, .. } = &history.records.get(first)?.kind else {
        return None;
    };
    let config = config_of(spec, &who.client)?;
    let lock = (!config.release.has(Switch::BatchedRenewal))
        .then(|| super::violated_lock(history, v))
        .flatten();
    let process = who.process();
    let rtt = 2 * history.meta.max_latency_ms;
    // The last round before the expiry came before the lease began, or
    // began it (its script refreshed the key, and its `WAIT`'s reply was
    // lost): none came after it (resends of its
    // renewals may have).
    let (sent, round) = last_round_before(history, &process, lock.as_ref(), end)?;
    if sent > start {
        return None;
    }
    // The lock's chain had ended (its renewal stopped) before the
    // believer's hold began: nothing was waiting on that round when the
    // hold came, and a hold that starts no renewal of its own joined a
    // stale entry (#3194), the release's bookkeeping, not a stall.
    if let Some(lock) = &lock
        && chain_ended(history, &process, lock, (sent, first))
    {
        return None;
    }
    // A reply after the attempt's timeout is ignored: the chain waits for
    // the resend (4.7.0 seed 10535: a renewal queued by a Redis pause).
    // With replicas the renewal is a batch with a `WAIT` whose reply the
    // history does not show: the script's answer alone does not complete
    // it (4.7.0 seed 80644: a drop lost the `WAIT`'s reply).
    let timeout = config.response_timeout.0 + sync_timeout(&config);
    let answered = |request: u64| {
        history.records.iter().any(|r| {
            matches!(&r.kind, RecordKind::RenewReply { process: p, request: q, .. }
                if *p == process && *q == request && r.at.as_ms() <= end.min(sent + timeout))
        })
    };
    // A round still waiting on its stage sent no script yet.
    let scripts_answered = !round.is_empty() && round.iter().all(|&request| answered(request));
    if scripts_answered && config.replicas == 0 {
        return None;
    }
    let lost_by = super::excusing(spec).find(|f| {
        // A replication stall makes a `WAIT` answer (none synced), not go
        // unanswered: the renewal failed, and what the release does then
        // is its own (the history scenario replica-lag-stops-renewal).
        let loses_replies = f.kind().holds_replies();
        f.client().is_none_or(|name| name == &*process.client)
            && f.at_ms() <= sent + rtt
            && sent <= f.effect_end_ms().unwrap_or(f.at_ms())
            && (loses_replies || !scripts_answered)
    })?;
    let why = format!(
        "the client's renewal chain waited on a renewal sent at {} that {} (at {}) kept unanswered past its timeout (lost, or delivered late); no round came after it",
        SimTime::from_ms(sent),
        lost_by.text(),
        SimTime::from_ms(lost_by.at_ms())
    );
    Some((why, lost_by))
}

/// Whether `process` stopped renewing `lock` at or after `from` (ms) and
/// before record `hold` (the believer's hold; the same instant counts
/// when the stop was recorded first).
fn chain_ended(
    history: &History,
    process: &Proc,
    lock: &LockName,
    (from, hold): (u64, usize),
) -> bool {
    history.records[..hold.min(history.records.len())]
        .iter()
        .any(|r| {
            r.at.as_ms() >= from
                && matches!(&r.kind, RecordKind::Lock {
                    process: p,
                    event: lockcore::Event::RenewalStopped { lock: l, .. },
                } if p == process && l.as_str() == lock.as_str())
        })
}

/// The last round of renewals `process` sent before `until` (of `lock`,
/// if given; resends of earlier renewals are not rounds): when, and its
/// requests. A round whose renewals waited for a stage of their own (the
/// probe, `INFO`, the batch's `SCRIPT LOAD`) went when its stage did: its
/// renewals, sent once the stage answered, join it, and a round still
/// waiting on its stage has none (4.7.0 seed 147395 under `pct`: a Redis
/// pause held the round's `SCRIPT LOAD`, its timeout and retry pause ran
/// to after the expiry, and the client's next hold, taken meanwhile, was
/// never renewed).
fn last_round_before(
    history: &History,
    process: &Proc,
    lock: Option<&LockName>,
    until: u64,
) -> Option<(u64, Vec<u64>)> {
    let mut last: Option<(u64, Vec<u64>)> = None;
    // Whether the last round's renewals are still to come after a stage.
    let mut staging = false;
    for r in history.records.iter().take_while(|r| r.at.as_ms() < until) {
        let at = r.at.as_ms();
        match &r.kind {
            RecordKind::Lock {
                process: p,
                event: lockcore::Event::RenewalStaged { lock: l },
            } if p == process && lock.is_none_or(|lock| lock.as_str() == l.as_str()) => {
                if !matches!(&last, Some((when, _)) if *when == at) {
                    last = Some((at, Vec::new()));
                }
                staging = true;
            }
            RecordKind::RenewSent {
                process: p,
                lock: l,
                request,
                retry: false,
                staged,
            } if p == process && lock.is_none_or(|lock| lock.as_str() == l.as_str()) => {
                match &mut last {
                    Some((_, requests)) if *staged && staging => requests.push(*request),
                    Some((when, requests)) if *when == at => requests.push(*request),
                    _ => {
                        last = Some((at, vec![*request]));
                        staging = false;
                    }
                }
            }
            _ => {}
        }
    }
    last
}

/// How long after a request of client `client` was sent its command layer
/// resends it when no reply came: the response timeout (with a `WAIT`
/// batch's sync timeout when Redis has replicas), then the retry interval.
/// With no retries the command fails at its timeout instead, and from
/// 3.44 the batched chain's next round comes a third of the lease later
/// (4.7.0 seed 1459507: `retryAttempts` 0, a dropped round failed at
/// 4.7 s and the next went 3.3 s after). 0 for an unknown client.
pub(super) fn resend_after_ms(spec: &SimSpec, client: &str) -> u64 {
    config_of(spec, client).map_or(0, |config| {
        let next_round = config.retry_attempts == 0 && config.release.has(Switch::BatchedRenewal);
        config.response_timeout.0
            + sync_timeout(&config)
            + if next_round {
                config.renewal_interval().0
            } else {
                config.retry_delay_range(0).1.0
            }
    })
}

/// The soonest a request of client `client` that went unanswered is
/// sent again: its response timeout (with no `WAIT` in its batch: a
/// round's `SCRIPT LOAD`), then the shortest retry pause. With no
/// retries, the batched chain's next round a third of the lease later.
/// 0 for an unknown client.
pub(super) fn resend_soonest_ms(spec: &SimSpec, client: &str) -> u64 {
    config_of(spec, client).map_or(0, |config| {
        let next_round = config.retry_attempts == 0 && config.release.has(Switch::BatchedRenewal);
        config.response_timeout.0
            + if next_round {
                config.renewal_interval().0
            } else {
                config.retry_delay_range(0).0.0
            }
    })
}

/// How long a synced round's `WAIT` may hold its end after the renewal
/// script answered (the client's sync timeout when Redis has replicas):
/// the next round is set from the batch's end. 0 for an unknown client.
pub(super) fn sync_wait_ms(spec: &SimSpec, client: &str) -> u64 {
    config_of(spec, client).map_or(0, |config| sync_timeout(&config))
}

/// Client `client`'s lock config, if the spec has the client.
fn config_of(spec: &SimSpec, client: &str) -> Option<Config> {
    let c = spec.clients.iter().position(|c| c.name == client)?;
    crate::model::config::client_config(spec, c).ok()
}

/// What a `WAIT` batch adds to a command's wait: the sync timeout, when
/// Redis has replicas.
fn sync_timeout(config: &Config) -> u64 {
    if config.replicas > 0 {
        config.slaves_sync_timeout.0
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use crate::run::tests::{causes, client, run_under, thread};
    use crate::steps;
    use crate::{Fault, Invariant, Step};

    /// A/t1 holds the lock with the watchdog; a drop on A from 9 s to
    /// 27 s loses the renewal due at 10 s and its resends, and renewal
    /// stops at 27.3 s; the key expires at 30 s. A/t2 takes the lock at
    /// 35 s, and B waits from 40 s. The causes of the mutual-exclusion
    /// violations under `release`.
    fn t2_loses_the_lock(release: &str) -> Vec<&'static str> {
        let work = |ms| {
            vec![
                Step::Lock(steps::Lock { lease_ms: None }),
                Step::Work(steps::Work { ms }),
                Step::Unlock(steps::Unlock {}),
            ]
        };
        let a = client(
            "A",
            vec![thread(0, work(50_000)), thread(35_000, work(40_000))],
        );
        let b = client("B", vec![thread(40_000, work(10))]);
        let drop = Fault::DropRate(crate::faults::DropRate {
            client: "A".to_owned(),
            at_ms: 9_000,
            duration_ms: 18_000,
            probability: 1.0,
        });
        let run = run_under(release, vec![a, b], 120_000, vec![drop]);
        causes(&run, Invariant::MutualExclusion)
    }

    /// Redisson #3194 under 3.13.6: the renewal error leaves the entry,
    /// A/t2's hold joins it and is never renewed, and B takes the lock
    /// when the key expires at 65 s. The chain had ended 8 s before the
    /// hold began, so the drop that stalled it explains nothing (the
    /// chain rule once blamed it): a defect. 3.14.0 removes the entry on
    /// the error, A/t2 is renewed, and B waits for its unlock. A/t2's
    /// acquire while A/t1 still believed it held the lock is the drop's
    /// under both.
    #[test]
    fn a_chain_that_ended_before_the_hold_explains_nothing() {
        let beyond = "beyond-guarantee";
        assert_eq!(t2_loses_the_lock("3.13.6"), [beyond, "defect"]);
        assert_eq!(t2_loses_the_lock("3.14.0"), [beyond]);
    }
}
