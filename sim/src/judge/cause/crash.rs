//! A crash and the invariant that judges it.

use crate::{Fault, Invariant, Violation};

/// Whether `f` may excuse `v` in the catch-all rule. A crash is what
/// release-after-crash judges, not its excuse: a crashed holder's key must
/// go within its lease however the holder died, so a key that outlives it
/// (kept by a lease carried over from an earlier call, 3.14.0 to 3.19.1's
/// path to #4818) is the lock's doing. Other faults (a Redis pause, a
/// clock jump) still excuse it. A crash once excused every such
/// violation, so the check could never find a defect. Nor does a fault
/// on the replicas' links alone (`replication-drop`, `replica-down`): the
/// key lives on the primary by its own TTL whatever its replicas receive
/// (a failover, which replaces the primary, is its own kind).
pub(super) fn may_excuse(v: &Violation, f: &Fault) -> bool {
    v.invariant != Invariant::ReleaseAfterCrash
        || (!matches!(f, Fault::Crash(_)) && f.kind().holds_replies())
}

#[cfg(test)]
mod tests {
    use crate::run::tests::{causes, client, run_under, thread};
    use crate::steps;
    use crate::{Fault, Invariant, Step};

    /// A/t1 takes lock(60 s), unlocks, then lock() with the watchdog, and
    /// A crashes at 12 s; B waits from 3 s. The causes of the
    /// release-after-crash violations under `release`.
    fn late_release(release: &str) -> Vec<&'static str> {
        let a = vec![
            Step::Lock(steps::Lock {
                lease_ms: Some(60_000),
            }),
            Step::Work(steps::Work { ms: 1_000 }),
            Step::Unlock(steps::Unlock {}),
            Step::Lock(steps::Lock { lease_ms: None }),
            Step::Work(steps::Work { ms: 100_000 }),
            Step::Unlock(steps::Unlock {}),
        ];
        let b = vec![
            Step::Lock(steps::Lock { lease_ms: None }),
            Step::Unlock(steps::Unlock {}),
        ];
        let clients = vec![
            client("A", vec![thread(0, a)]),
            client("B", vec![thread(3_000, b)]),
        ];
        let crash = Fault::Crash(crate::faults::Crash {
            client: "A".to_owned(),
            at_ms: 12_000,
            restart_after_ms: None,
        });
        let run = run_under(release, clients, 150_000, vec![crash]);
        causes(&run, Invariant::ReleaseAfterCrash)
    }

    /// Under 3.16.6 the watchdog lock takes the 60 s lease of the earlier
    /// lock(60 s) (commit 2b3ae3905; #4818), so the crashed holder's key
    /// lives 60 s: a defect, where the crash was once blamed for it. From
    /// 3.19.2 the key goes within the watchdog's 30 s.
    #[test]
    fn a_crash_does_not_excuse_a_key_kept_past_its_lease() {
        assert_eq!(late_release("3.16.6"), ["defect"]);
        assert!(late_release("3.19.2").is_empty());
    }

    /// A holds the read lock with a 3 s watchdog and crashes at 1 s; B's
    /// read lock (a 10 s lease) joins it at 0.2 s, and a pause of B from
    /// 0.201 s to 8 s holds its reply. B's hold, learned only at 8 s, is
    /// what shows the key in use by someone else past A's lease: B's
    /// pause, a fault on the client that settled it, explains the
    /// lateness (4.7.0 seed 719363). It once named only A, and the check
    /// called it a defect.
    #[test]
    fn a_sharers_hold_learned_late_under_its_own_pause_is_the_pauses() {
        let read = |lease_ms| {
            Step::ReadLock(steps::ReadLock {
                lease_ms,
                is_async: false,
            })
        };
        let a = vec![
            read(None),
            Step::Work(steps::Work { ms: 5_000 }),
            Step::Unlock(steps::Unlock {}),
        ];
        let b = vec![
            read(Some(10_000)),
            Step::Work(steps::Work { ms: 100 }),
            Step::Unlock(steps::Unlock {}),
        ];
        let clients = vec![
            client("A", vec![thread(0, a)]),
            client("B", vec![thread(200, b)]),
        ];
        let faults = vec![
            Fault::Crash(crate::faults::Crash {
                client: "A".to_owned(),
                at_ms: 1_000,
                restart_after_ms: None,
            }),
            Fault::Pause(crate::faults::Pause {
                client: "B".to_owned(),
                at_ms: 201,
                duration_ms: 7_799,
            }),
        ];
        let mut s = crate::run::tests::spec(clients);
        s.profile = "4.7.0".parse().expect("a release");
        s.watchdog_timeout_ms = 3_000;
        s.horizon_ms = 30_000;
        s.faults = crate::FaultPlan(faults);
        let run = crate::run(&s).expect("valid");
        assert_eq!(
            causes(&run, Invariant::ReleaseAfterCrash),
            ["beyond-guarantee"],
            "{}",
            run.history
        );
    }
}
