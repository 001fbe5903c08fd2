//! Coverage of the declared `sometimes` points (issue 48 item 3): what a
//! run reached is part of its result, read from the finished run, and the
//! same every time the seed runs.

use lockcore::Release;
use sim::{Coverage, Point, PointSource, Workload};

/// 300 seeds of explore's default workload under 3.23.4 and 3.44.0: each
/// run's coverage is the same when the seed runs again and survives its
/// JSON, and together the runs reach the common preconditions from both
/// sources (lockcore's places and the history's conditions). A point the
/// run never reached is not claimed: a run with no crash record has no
/// `crash-while-holding`, and one with no renewal resend none of
/// `renewal-resent`.
#[test]
fn runs_record_what_they_reached() {
    let mut union = Coverage::EMPTY;
    for release in ["3.23.4", "3.44.0"] {
        let release: Release = release.parse().unwrap();
        for seed in 0..300 {
            let spec = sim::generate_with(seed, Some(release), Workload::default());
            let run = sim::run(&spec).unwrap();
            let again = sim::run(&spec).unwrap();
            assert_eq!(run.coverage, again.coverage, "seed {seed}");
            let json = serde_json::to_string(&run).unwrap();
            let back: sim::Run = serde_json::from_str(&json).unwrap();
            assert_eq!(back.coverage, run.coverage);
            let crashed = run
                .history
                .records
                .iter()
                .any(|r| matches!(r.kind, sim::RecordKind::Crash { .. }));
            if !crashed {
                assert!(!run.coverage.has(Point::CrashWhileHolding), "seed {seed}");
            }
            let resent = run
                .history
                .records
                .iter()
                .any(|r| matches!(r.kind, sim::RecordKind::RenewSent { retry: true, .. }));
            assert_eq!(
                run.coverage.has(Point::RenewalResent),
                resent,
                "seed {seed}"
            );
            union = run.coverage.iter().fold(union, Coverage::with);
        }
    }
    for p in [
        Point::LockCommandTimedOut,
        Point::RenewalFailed,
        Point::TryLockGaveUp,
        Point::WokenByMessage,
        Point::ExpiredWhileBelieved,
        Point::CrashWhileHolding,
        Point::ReentrantHold,
        Point::TwoLocksHeld,
    ] {
        assert!(union.has(p), "no run of 600 reached {}", p.name());
    }
    let sources = |lock: bool| {
        union
            .iter()
            .filter(|p| matches!(p.source(), PointSource::Lock(_)) == lock)
            .count()
    };
    assert!(sources(true) >= 5 && sources(false) >= 10, "{union:?}");
}
