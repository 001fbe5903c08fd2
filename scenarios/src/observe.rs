//! Maps the simulator's history onto the small event vocabulary that
//! scenario expectations use ([`EventKind`]).

use lockcore::Call;
use sim::{History, Outcome as CallOutcome, Record, RecordKind, Who};

use crate::{EventKind, Observation};

/// The events of `history` that expectations can count and time, in order.
pub(crate) fn observations(history: &History) -> Vec<Observation> {
    let records = &history.records;
    let mut out = Vec::new();
    for (i, r) in records.iter().enumerate() {
        let (kind, who_client, thread) = match &r.kind {
            RecordKind::Return {
                who, outcome, call, ..
            } => match (call, outcome) {
                (_, CallOutcome::Acquired { .. }) => {
                    (EventKind::Acquired, &who.client, Some(who.thread))
                }
                (_, CallOutcome::NotAcquired) => {
                    (EventKind::AcquireFailed, &who.client, Some(who.thread))
                }
                (Call::Unlock, CallOutcome::Unlocked { released: true }) => {
                    (EventKind::Released, &who.client, Some(who.thread))
                }
                (Call::Unlock, CallOutcome::Error { .. }) => {
                    (EventKind::UnlockError, &who.client, Some(who.thread))
                }
                _ => continue,
            },
            RecordKind::RenewSent { process, .. } => (EventKind::Renewal, &process.client, None),
            RecordKind::RenewReply { process, reply, .. } => {
                let kind = match reply.as_str() {
                    "1" => EventKind::Renewed,
                    "0" => EventKind::RenewalMissed,
                    _ => EventKind::RenewalError,
                };
                (kind, &process.client, None)
            }
            RecordKind::Lock { process, event } => match event {
                lockcore::Event::RenewalStopped { reason, .. } => {
                    // A renewal that failed on the wire (timeout after its
                    // retries) has no reply; lockcore's stop reason says so.
                    if reason.starts_with("error") {
                        out.push(Observation {
                            at: r.at,
                            client: process.client.clone(),
                            thread: None,
                            kind: EventKind::RenewalError,
                        });
                    }
                    (EventKind::RenewalStopped, &process.client, None)
                }
                lockcore::Event::LeaseLost { .. } => (EventKind::LeaseLost, &process.client, None),
                lockcore::Event::Renewed { .. } => continue,
            },
            RecordKind::Write { who, accepted, .. } => {
                let kind = if *accepted {
                    EventKind::WriteAccepted
                } else {
                    EventKind::WriteRejected
                };
                (kind, &who.client, Some(who.thread))
            }
            RecordKind::Crash { process } => (EventKind::Crash, &process.client, None),
            RecordKind::Server { holder: None, .. } if is_expiry(history, i) => {
                out.push(Observation {
                    at: r.at,
                    client: String::new(),
                    thread: None,
                    kind: EventKind::Expired,
                });
                continue;
            }
            _ => continue,
        };
        out.push(Observation {
            at: r.at,
            client: who_client.clone(),
            thread,
            kind,
        });
    }
    out
}

/// Whether the key freed by record `index` (a `Server` record with no
/// holder) expired rather than being deleted.
///
/// The history records Redis's view of the key but not which command
/// changed it, so a deletion is recognised by its effect: the previous
/// holder's unlock (or anyone's forceUnlock) returns, having released the
/// lock, within one message delay after the key went. Anything else that
/// frees a held key is its expiry (or a Redis restart, whose fault record
/// sits at the same instant).
fn is_expiry(history: &History, index: usize) -> bool {
    let records = &history.records;
    let Some(Record {
        at,
        kind: RecordKind::Server { lock, .. },
    }) = records.get(index)
    else {
        return false;
    };
    let previous: Option<&Who> = records[..index]
        .iter()
        .rev()
        .find_map(|r| match &r.kind {
            RecordKind::Server {
                lock: l, holder, ..
            } if l == lock => Some(holder.as_ref()),
            _ => None,
        })
        .flatten();
    let Some(previous) = previous else {
        // It was already free: nothing expired.
        return false;
    };
    let window_end = at.plus_ms(history.meta.max_latency_ms.saturating_add(1));
    let restarted = records.iter().any(|r| {
        r.at == *at
            && matches!(
                &r.kind,
                RecordKind::Fault {
                    fault: sim::Fault::RedisRestart { .. },
                    ..
                }
            )
    });
    if restarted {
        return false;
    }
    let deleted = records[index..]
        .iter()
        .take_while(|r| r.at <= window_end)
        .any(|r| match &r.kind {
            RecordKind::Return {
                who,
                lock: l,
                call: Call::Unlock,
                outcome: CallOutcome::Unlocked { released: true },
            } => l == lock && who == previous,
            RecordKind::Return {
                lock: l,
                call: Call::ForceUnlock,
                outcome,
                ..
            } => l == lock && !matches!(outcome, CallOutcome::Error { .. }),
            _ => false,
        });
    !deleted
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockcore::Profile;

    fn kinds(scenario: &str, kind: EventKind) -> Vec<Observation> {
        let s = crate::builtin(scenario).unwrap();
        let run = sim::run(&s.spec(None, Some(Profile::Redisson))).unwrap();
        observations(&run.history)
            .into_iter()
            .filter(|o| o.kind == kind)
            .collect()
    }

    /// A crashed holder's key expires (002, 003): one expiry, about 30 s
    /// after the last renewal at 10 s. A key deleted by unlock is not an
    /// expiry: document 004's experiment 3 unlocks twice and expires nothing.
    #[test]
    fn expiry_is_told_from_deletion() {
        let expired = kinds("client-crash", EventKind::Expired);
        assert_eq!(expired.len(), 1, "{expired:?}");
        assert!(
            (40_000..40_100).contains(&expired[0].at.as_ms()),
            "{expired:?}"
        );
        assert_eq!(kinds("watchdog-serializes", EventKind::Expired), vec![]);
        assert_eq!(kinds("watchdog-serializes", EventKind::Released).len(), 2);
    }

    /// A renewal cut off by a partition fails after its retries and shows
    /// as a renewal error of that client (002).
    #[test]
    fn renewal_error_after_timeout() {
        let errors = kinds("network-drop", EventKind::RenewalError);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].client, "A");
    }
}
