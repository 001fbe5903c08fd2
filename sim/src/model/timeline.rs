//! The timeline: one short, stable line per record.
//!
//! `  10.002341s  A/t1     renew -> 1` - virtual time (right-aligned), the
//! actor (a thread, a process, `redis`, `fault` or `net`, padded), then
//! what happened. No Debug dumps: timelines are snapshotted.

use std::fmt::{self, Write as _};

use lockcore::{Call, Purpose};

use crate::model::history::{
    Direction, Outcome, Phase, Record, RecordKind, ReleaseCause, ServerCause, Who,
};

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (actor, text) = describe(&self.kind);
        write!(f, "{:>12}  {:<8} {}", self.at.to_string(), actor, text)
    }
}

fn describe(kind: &RecordKind) -> (String, String) {
    match kind {
        RecordKind::Start { process, uuid } => (process.to_string(), format!("start uuid={uuid}")),
        RecordKind::Call { who, call, .. } => {
            (who.to_string(), format!("call {}", call_text(call)))
        }
        RecordKind::Return {
            who, call, outcome, ..
        } => (
            who.to_string(),
            format!("{} -> {}", call_name(call), outcome_text(outcome)),
        ),
        RecordKind::MultiCall { who, multi, call } => {
            let kind = multi.kind().name();
            let locks: Vec<&str> = multi.locks().iter().map(|l| l.as_str()).collect();
            let call = call_text(call);
            (
                who.to_string(),
                format!("call {kind}[{}].{call}", locks.join(", ")),
            )
        }
        RecordKind::MultiReturn {
            who,
            multi,
            call,
            outcome,
        } => (
            who.to_string(),
            format!(
                "{}.{} -> {}",
                multi.kind().name(),
                call_name(call),
                outcome_text(outcome)
            ),
        ),
        RecordKind::Hold {
            who,
            lock,
            token,
            lease_ms,
            watchdog,
        } => {
            let mut s = format!("holds {lock}");
            if let Some(t) = token {
                let _ = write!(s, " token={t}");
            }
            let how = if *watchdog { "watchdog" } else { "lease" };
            let _ = write!(s, " ({how} {lease_ms}ms)");
            (who.to_string(), s)
        }
        RecordKind::Release { who, lock, cause } => {
            let cause = match cause {
                ReleaseCause::Unlock => "unlock",
                ReleaseCause::Crash => "crash",
                ReleaseCause::LeaseLost => "lease lost",
            };
            (who.to_string(), format!("lets go {lock} ({cause})"))
        }
        RecordKind::Server {
            lock,
            holder,
            count,
            ttl_ms,
            cause,
            ..
        } => {
            let s = match (holder, cause) {
                (Some(h), _) => format!("{lock} held by {h} x{count} ttl={ttl_ms}ms"),
                (None, ServerCause::Expiry) => format!("{lock} free (expired)"),
                (None, ServerCause::Restart) => format!("{lock} free (restart)"),
                (None, ServerCause::Deleted) => format!("{lock} free (deleted)"),
                (None, ServerCause::Failover) => format!("{lock} free (failover)"),
                (None, ServerCause::Command { by, purpose }) => {
                    let what = match purpose {
                        Purpose::Acquire => "acquire",
                        Purpose::Renew => "renew",
                        Purpose::Unlock => "unlock",
                        Purpose::ForceUnlock => "force-unlock",
                        Purpose::AcquireFailed => "acquire-failed",
                        Purpose::Query => "query",
                        Purpose::Cleanup => "cleanup",
                        Purpose::Sync => "wait-for-replicas",
                        Purpose::Probe => "probe-wait-support",
                        Purpose::Info => "replica-count",
                        Purpose::ScriptLoad => "script-load",
                        Purpose::BatchLoad => "batch-script-load",
                        Purpose::Expire => "expire",
                        Purpose::Asking => "asking",
                        Purpose::Scan => "cluster-nodes",
                    };
                    format!("{lock} free ({what} by {by})")
                }
            };
            ("redis".to_owned(), s)
        }
        RecordKind::AcquireSent { process, lock, .. } => {
            (process.to_string(), format!("acquire {lock} sent"))
        }
        RecordKind::UnlockSent { process, lock, .. } => {
            (process.to_string(), format!("unlock {lock} sent"))
        }
        RecordKind::RenewSent {
            process,
            lock,
            retry,
            ..
        } => {
            let retry = if *retry { " (retry)" } else { "" };
            (process.to_string(), format!("renew {lock}{retry}"))
        }
        RecordKind::RenewReply { process, reply, .. } => {
            (process.to_string(), format!("renew -> {reply}"))
        }
        RecordKind::Lock { process, event } => {
            let s = match event {
                lockcore::Event::Renewed { lock } => format!("renewed {lock}"),
                lockcore::Event::RenewalStopped { lock, reason } => {
                    format!("renewal of {lock} stopped: {reason}")
                }
                lockcore::Event::WaitBegan { lock, thread } => {
                    format!("t{thread} waits for {lock}")
                }
                lockcore::Event::RenewalStaged { lock } => {
                    format!("renewal of {lock} waits for its stage")
                }
                lockcore::Event::AcquireRolledBack { lock, thread } => {
                    format!("t{thread}'s acquire of {lock} synced too few replicas: rolled back")
                }
                lockcore::Event::LeaseLost { lock, threads } => {
                    let ts: Vec<String> = threads.iter().map(|t| format!("t{t}")).collect();
                    format!("lease of {lock} lost ({})", ts.join(","))
                }
                lockcore::Event::Resubscribing { channel } => {
                    format!("reconnect: subscribing to {channel} again")
                }
                lockcore::Event::SyncProbed {
                    wait,
                    waitaof,
                    bare,
                } => {
                    let has = |yes: bool| if yes { "has" } else { "lacks" };
                    let read = match waitaof {
                        Some(aof) => format!(
                            "probe read: the server {} WAIT, {} WAITAOF",
                            has(*wait),
                            has(*aof)
                        ),
                        None => format!("probe read: the server {} WAIT", has(*wait)),
                    };
                    // Without WAIT every script goes bare, which the
                    // reading says; with it, only the probing one does.
                    if *bare && *wait {
                        format!("{read}; the script that probed goes bare")
                    } else {
                        read
                    }
                }
                lockcore::Event::ReplicasCounted { connected } => {
                    format!("INFO read: {connected} replica(s) connected, to WAIT for")
                }
                lockcore::Event::PubSubStopped { channels } => format!(
                    "reconnect: pub/sub stopped for good, {} not subscribed again (#6026)",
                    channels.join(", ")
                ),
            };
            (process.to_string(), s)
        }
        RecordKind::Write {
            who,
            token,
            accepted,
            ..
        } => {
            let token = match token {
                Some(t) => format!("token={t}"),
                None => "no token".to_owned(),
            };
            let verdict = if *accepted { "accepted" } else { "REJECTED" };
            (who.to_string(), format!("write ({token}) {verdict}"))
        }
        RecordKind::Deliver {
            process,
            channel,
            payload,
        } => (process.to_string(), format!("message {channel} {payload}")),
        RecordKind::Drop {
            process,
            direction,
            what,
            why,
        } => {
            let arrow = arrow(process, *direction);
            ("net".to_owned(), format!("dropped {what} ({why}) {arrow}"))
        }
        RecordKind::Held {
            process,
            direction,
            what,
            until,
        } => {
            let arrow = arrow(process, *direction);
            let text = format!("held {what} {arrow} until {until} (TCP retransmission)");
            ("net".to_owned(), text)
        }
        RecordKind::Fault { fault, phase } => {
            let phase = match (phase, fault.end_ms()) {
                // An instant (a Redis restart) has no window to open.
                (Phase::Begin, None) => "",
                (Phase::Begin, Some(_)) => " begins",
                (Phase::End, _) => " ends",
            };
            ("fault".to_owned(), format!("{}{phase}", fault.text()))
        }
        RecordKind::Crash { process } => (process.to_string(), "crash".to_owned()),
        RecordKind::Done { who } => (who.to_string(), "done".to_owned()),
        RecordKind::Leftover {
            lock,
            what,
            key,
            entries,
        } => (
            "redis".to_owned(),
            format!(
                "{lock}'s {} {key} left without a TTL [{}]",
                what.words(),
                entries
                    .iter()
                    .map(Who::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        RecordKind::End => ("-".to_owned(), "end of run".to_owned()),
    }
}

fn opt_ms(v: &Option<lockcore::Millis>) -> String {
    match v {
        Some(m) => m.0.to_string(),
        None => "-".to_owned(),
    }
}

/// `lock()`, `lock(5000)`, `tryLock(100, -)`, `unlock()`.
pub(crate) fn call_text(call: &Call) -> String {
    let name = call_name(call);
    match call {
        Call::Lock { lease: Some(_) }
        | Call::LockInterruptibly { lease: Some(_) }
        | Call::LockAsync { lease: Some(_) } => format!("{name}({})", opt_ms(&call.lease())),
        Call::TryLock {
            wait: wait @ Some(_),
            lease,
        }
        | Call::TryLockAsync {
            wait: wait @ Some(_),
            lease,
        } => match lease {
            None => format!("{name}({})", opt_ms(wait)),
            Some(_) => format!("{name}({}, {})", opt_ms(wait), opt_ms(lease)),
        },
        Call::TryLock { wait: None, lease } | Call::TryLockAsync { wait: None, lease }
            if lease.is_some() =>
        {
            format!("{name}(-, {})", opt_ms(lease))
        }
        // Java's -1 for an unbounded wait or the watchdog's lease.
        Call::TryLockAndGetToken { wait, lease } if wait.is_some() || lease.is_some() => {
            let ms = |m: &Option<lockcore::Millis>| m.map_or("-1".to_owned(), |m| m.0.to_string());
            format!("{name}({}, {})", ms(wait), ms(lease))
        }
        _ => format!("{name}()"),
    }
}

fn call_name(call: &Call) -> &'static str {
    match call {
        Call::Lock { .. } => "lock",
        Call::LockInterruptibly { .. } => "lockInterruptibly",
        Call::TryLock { .. } => "tryLock",
        Call::LockAsync { .. } => "lockAsync",
        Call::TryLockAsync { .. } => "tryLockAsync",
        Call::Unlock => "unlock",
        Call::ForceUnlock => "forceUnlock",
        Call::IsLocked => "isLocked",
        Call::IsHeldByThread => "isHeldByThread",
        Call::HoldCount => "getHoldCount",
        Call::RemainTtl => "remainTimeToLive",
        Call::TryLockAndGetToken { .. } => "tryLockAndGetTokenAsync",
        Call::GetToken => "getToken",
    }
}

fn outcome_text(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Acquired { token: None } => "acquired".to_owned(),
        Outcome::Acquired { token: Some(t) } => format!("acquired token={t}"),
        Outcome::NotAcquired => "not acquired".to_owned(),
        Outcome::Unlocked { released: true } => "released".to_owned(),
        Outcome::Unlocked { released: false } => "still held (count down)".to_owned(),
        Outcome::Value { value } => value.clone(),
        Outcome::Error { message, .. } => format!("ERROR {message}"),
    }
}

/// Which way a message went on `process`'s link, for the timeline.
fn arrow(process: &crate::model::history::Proc, direction: Direction) -> String {
    match direction {
        Direction::Up => format!("{process} -> redis"),
        Direction::Down => format!("redis -> {process}"),
    }
}

#[cfg(test)]
mod tests {
    use crate::judge::check::sample::{Sample, lock_call, proc, who};
    use crate::model::history::{Outcome, RecordKind};
    use crate::{Fault, SimTime};

    /// The timeline is the snapshot format of the scenarios: time right-
    /// aligned, actor padded, one short line per record. Any change to it
    /// shows here first.
    #[test]
    fn renders_one_aligned_line_per_record() {
        let h = Sample::new(5)
            .call(0, who("A", 1), lock_call())
            .server(2, Some(who("A", 1)))
            .ret(
                4,
                who("A", 1),
                lock_call(),
                Outcome::Acquired { token: Some(3) },
            )
            .at(
                10_002,
                RecordKind::RenewReply {
                    process: proc("A"),
                    lock: crate::judge::check::sample::lock(),
                    request: 7,
                    reply: "1".into(),
                },
            )
            .at(
                12_000,
                RecordKind::Fault {
                    fault: Fault::Pause(crate::model::fault::Pause {
                        client: "A".into(),
                        at_ms: 12_000,
                        duration_ms: 5_000,
                    }),
                    phase: crate::Phase::Begin,
                },
            )
            .at(
                12_500,
                RecordKind::Fault {
                    fault: Fault::RedisRestart(crate::model::fault::RedisRestart { at_ms: 12_500 }),
                    phase: crate::Phase::Begin,
                },
            )
            .write(13_000, who("B", 2), None, true)
            .server(30_001, None)
            .build();
        let mut h = h;
        h.records[1].at = SimTime(2_470);
        let expected = "   0.000000s  A/t1     call lock()
   0.002470s  redis    redisson:lock held by A/t1 x1 ttl=30000ms
   0.004000s  A/t1     lock -> acquired token=3
  10.002000s  A        renew -> 1
  12.000000s  fault    pause A 5000ms begins
  12.500000s  fault    redis restart
  13.000000s  B/t2     write (no token) accepted
  30.001000s  redis    redisson:lock free (expired)
";
        assert_eq!(h.to_string(), expected);
        assert_eq!(
            h.line(3).as_deref(),
            Some("  10.002000s  A        renew -> 1")
        );
    }
}
