//! Timelines: every built-in scenario under every profile, and every
//! history row under its two releases, with the scenario's own seed,
//! rendered as `locksim run` prints it (settings, timeline, verdict) and
//! compared with the committed report's file under `reports/timelines/`,
//! the one golden copy (see [`golden`]).
//!
//! A timeline changes when anything the scenario exercises changes: the
//! lock's commands and replies, renewal timing, the network's draws, the
//! checkers' verdicts. A failing test prints the diff; such a change must
//! be reviewed before it is re-pinned with
//! `LOCKSIM_REPIN=1 cargo test -p locksim-tests --test timeline` (which
//! rewrites `reports/`) and committed; CI never re-pins.

mod golden;

use lockcore::Release;
use locksim::{Rerun, Trial, render_trial, timeline_path};

/// Renders `scenario` under every profile and checks each against its
/// report file.
fn snapshot_all_profiles(scenario: &str) {
    let s = locksim::builtin(scenario).unwrap_or_else(|| panic!("no built-in scenario {scenario}"));
    for p in Release::ERAS {
        let trial =
            Trial::run(&s, None, Some(p)).unwrap_or_else(|e| panic!("{scenario} under {p}: {e}"));
        let text = render_trial(
            &trial,
            &s.description,
            s.source.as_deref(),
            &Rerun::Scenario(s.name.clone()),
        );
        golden::assert_pinned(&timeline_path(scenario, p), &text);
    }
}

macro_rules! timeline_tests {
    ($($test:ident => $name:literal, $doc:literal;)*) => {
        $(
            #[doc = $doc]
            #[test]
            fn $test() {
                snapshot_all_profiles($name);
            }
        )*

        /// Every built-in scenario has a timeline test here, so a new
        /// scenario cannot go unpinned.
        #[test]
        fn every_builtin_is_snapshotted() {
            let tested = [$($name),*];
            for name in locksim::builtin_names() {
                assert!(tested.contains(&name), "no timeline test for built-in scenario {name}");
            }
        }
    };
}

timeline_tests! {
    watchdog_renews => "watchdog-renews",
        "004, experiment 1: the key is renewed every 10 s while A lives; B never gets it; the lock is left behind.";
    lease_shorter_than_work => "lease-shorter-than-work",
        "004, experiment 2: a 3 s lease under 5 s of work gives two holders and two failed unlocks (fenced: lease-lost instead of two holders).";
    watchdog_serializes => "watchdog-serializes",
        "004, experiment 3: the second thread is woken by the unlock message and acquires within milliseconds.";
    stw_pause => "stw-pause",
        "000/002: a 45 s pause outlives the lease; A's late write is accepted without fencing and rejected with it.";
    cpu_starvation => "cpu-starvation",
        "002: renewal timers running 25-30 s late let the key expire under A.";
    network_drop => "network-drop",
        "002: a partition over one renewal stops redisson's watchdog for good; batched and fenced renew after the heal.";
    network_drop_30s => "network-drop-30s",
        "002 at the default 30 s timeout: the failed renewal surfaces too late for batched renewal to save the lock.";
    client_crash => "client-crash",
        "002/003: a crashed holder's key expires 30 s after its last renewal and the waiter acquires.";
    tiny_watchdog_timeout => "tiny-watchdog-timeout",
        "000: at 100 ms the renewal arrives after the key expired.";
    lease_disables_watchdog => "lease-disables-watchdog",
        "002: a lease means no watchdog; B acquires at 10 s while A works.";
    reentrant_hold => "reentrant-hold",
        "Re-entrant count: the first unlock keeps the lock (and its renewal), the second releases and wakes B.";
    acquire_reply_late => "acquire-reply-late",
        "Redisson #1966 (fixed in 3.10.5): delayed replies make the acquire run twice; legacy renews the count-1 key for ever, later eras hold it a lease too long.";
    key_deleted => "key-deleted",
        "REDISSON.md §4: the key deleted behind the lock's back; no unlock message, B takes over while A works (fenced: lease-lost first).";
    unlock_reply_late => "unlock-reply-late",
        "Redisson #4871 (fixed in 3.24 by the unlock latch): the unlock runs, its reply is late, the resend reports not locked: a false unlock error.";
    clock_jump => "clock-jump",
        "REDISSON.md §4: Redis's clock jumps 26 s forward; the key expires at once, B takes over while A works (fenced: lease-lost).";
    redis_down => "redis-down",
        "REDISSON.md §4: Redis down for 4 s; the refused renewal stops redisson's watchdog for good; batched and fenced renew once it is back.";
    clock_skew => "clock-skew",
        "REDISSON.md §4: B's wall clock set 15 s ahead during tryLock(20 s); woken by A's unlock at 10 s, B counts 24 s waited and returns false on a free lock.";
    clock_drift_fast => "clock-drift-fast",
        "REDISSON.md §4: B's clock at twice true speed; its tryLock(10 s) gives up after 5 true seconds, before A's unlock at 8 s.";
    failover_loses_lock => "failover-loses-lock",
        "REDISSON.md §4: replication stalls, the primary fails and the replica that never got A's key is promoted. Before 3.16.7 (legacy) B acquires at once while A works; from 3.16.7 each acquire waits for the replica, is rolled back and retried (3.20.1+), and A and B take the lock in turn once replication resumes.";
    replica_lag_stops_renewal => "replica-lag-stops-renewal",
        "Redisson #4305: a replica 3 s behind makes the renewal's WAIT count none; 3.14.0-3.43.x stop the watchdog for good and B takes the lock at 40 s while A works; legacy (no WAIT) and batched (next round) keep it.";
    clock_drift_slow => "clock-drift-slow",
        "REDISSON.md §4: A's clock at a quarter of true speed; the watchdog's renewal (1 s of A's clock) goes out at 4 s, after the 3 s key expired; B takes over while A works (fenced: A's late write rejected).";
}

/// Every built-in scenario gives, under every profile, exactly what its
/// file expects; the snapshots above show how, this says whether.
#[test]
fn every_builtin_is_as_expected() {
    let mut wrong = Vec::new();
    for s in locksim::builtins() {
        for p in Release::ERAS {
            let trial = Trial::run(&s, None, Some(p))
                .unwrap_or_else(|e| panic!("{} under {p}: {e}", s.name));
            if !trial.as_expected() {
                let m: Vec<String> = trial.mismatches.iter().map(ToString::to_string).collect();
                wrong.push(format!("{} under {p}: {}", s.name, m.join("; ")));
            }
        }
    }
    assert!(wrong.is_empty(), "not as expected:\n{}", wrong.join("\n"));
}

/// The committed `reports/` is what `locksim report` writes today: the
/// matrix and every timeline and chart, byte for byte, and no stale timeline
/// of a scenario that no longer exists. Fails after any change to a
/// scenario or to the simulator until the report is re-pinned
/// (`LOCKSIM_REPIN=1 cargo test -p locksim-tests --test timeline`, or
/// `cargo run --release -- report`) and reviewed.
#[test]
fn committed_report_is_current() {
    let dir = golden::reports_dir();
    let files = locksim::report_files(
        &locksim::run_matrix(&locksim::builtins()).unwrap(),
        &locksim::history_matrix(&locksim::history()).unwrap(),
    );
    if golden::repinning() {
        locksim::write_report(&dir, &files).expect("reports/ is writable");
        return;
    }
    let mut stale = Vec::new();
    for f in &files {
        let committed = std::fs::read_to_string(dir.join(&f.path)).unwrap_or_default();
        if committed != f.contents {
            stale.push(f.path.clone());
        }
    }
    let expected: std::collections::BTreeSet<String> =
        files.iter().map(|f| f.path.clone()).collect();
    for sub in ["timelines", "charts"] {
        for entry in std::fs::read_dir(dir.join(sub)).unwrap() {
            let name = format!("{sub}/{}", entry.unwrap().file_name().to_string_lossy());
            if !expected.contains(&name) {
                stale.push(format!("{name} (no such scenario and profile)"));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "reports/ is out of date; review, then re-pin with `{}`:\n{}",
        golden::REPIN,
        stale.join("\n")
    );
}

/// Redisson's lock history: each row's scenario under the last affected
/// release and under the fixing release, checked against its report file.
#[test]
fn history_rows() {
    for s in locksim::history() {
        let row = s.history.clone().expect("history scenarios have a row");
        for release in [row.affected, row.fixed] {
            let trial = Trial::run(&s, None, Some(release))
                .unwrap_or_else(|e| panic!("{} under {release}: {e}", s.name));
            let text = render_trial(
                &trial,
                &s.description,
                s.source.as_deref(),
                &Rerun::Scenario(s.name.clone()),
            );
            golden::assert_pinned(&timeline_path(&s.name, release), &text);
        }
    }
}
