//! Maps the simulator's history onto the small event vocabulary that
//! scenario expectations use ([`EventKind`]).

use lockcore::Call;
use sim::{History, Outcome as CallOutcome, RecordKind, ServerCause};

use crate::{EventKind, Observation};

/// The events of `history` that expectations can count and time, in order.
pub(crate) fn observations(history: &History) -> Vec<Observation> {
    let records = &history.records;
    let mut out = Vec::new();
    for r in records {
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
                (
                    Call::Lock { .. } | Call::LockInterruptibly { .. } | Call::TryLock { .. },
                    CallOutcome::Error { .. },
                ) => (EventKind::AcquireError, &who.client, Some(who.thread)),
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
                            client: process.client.to_string(),
                            thread: None,
                            kind: EventKind::RenewalError,
                        });
                    }
                    (EventKind::RenewalStopped, &process.client, None)
                }
                lockcore::Event::LeaseLost { .. } => (EventKind::LeaseLost, &process.client, None),
                lockcore::Event::Renewed { .. }
                | lockcore::Event::Resubscribing { .. }
                | lockcore::Event::PubSubStopped { .. }
                | lockcore::Event::SyncProbed { .. }
                | lockcore::Event::ReplicasCounted { .. }
                | lockcore::Event::AcquireRolledBack { .. }
                | lockcore::Event::WaitBegan { .. }
                | lockcore::Event::RenewalStaged { .. } => continue,
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
            RecordKind::Server {
                cause: ServerCause::Expiry,
                ..
            } => {
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
            client: who_client.to_string(),
            thread,
            kind,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockcore::Release;

    fn kinds(scenario: &str, kind: EventKind) -> Vec<Observation> {
        let s = crate::builtin(scenario).unwrap();
        let run = sim::run(&s.spec(None, Some(Release::REDISSON))).unwrap();
        observations(&run.history)
            .into_iter()
            .filter(|o| o.kind == kind)
            .collect()
    }

    /// A crashed holder's key expires (002, 003): one expiry, about 30 s
    /// after the last renewal at 10 s (10.1 s: the timer's 100 ms tick). A key deleted by unlock is not an
    /// expiry: document 004's experiment 3 unlocks twice and expires nothing.
    #[test]
    fn expiry_is_told_from_deletion() {
        let expired = kinds("client-crash", EventKind::Expired);
        assert_eq!(expired.len(), 1, "{expired:?}");
        assert!(
            (40_000..40_200).contains(&expired[0].at.as_ms()),
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
