//! The mutation sweep's behaviour: what kills a mutant, what makes one
//! equivalent, and that the report does not depend on the threads.

use std::sync::atomic::AtomicBool;

use lockcore::{Release, Switch};

use super::probe::spec_of;
use super::*;
use crate::SeedRange;

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a pool")
}

fn newest() -> Release {
    "4.7.0".parse().expect("a release")
}

/// The fixes of 4.7.0 are its switches marked as fixes: the unlock
/// latch is one, the timer's tick and the thread queue are not.
#[test]
fn the_mutants_are_the_fixes_in_force() {
    let mutants = mutants_of(newest());
    let names: Vec<&str> = mutants.iter().map(|m| m.switch.name()).collect();
    assert!(names.contains(&"unlock-latch"), "{names:?}");
    assert!(!names.contains(&"thread-queue"), "{names:?}");
    assert!(!names.contains(&"retry-delay-timer-tick"), "{names:?}");
    assert!(!names.contains(&"interrupted-acquire-unlocks"), "{names:?}");
    assert!(
        mutants
            .iter()
            .all(|m| m.switch.info().fixes && newest().has(m.switch))
    );
    assert!(mutants_of("3.0.0".parse().unwrap()).is_empty());
}

/// A fix that acts only through a switch the release lacks is inert
/// there: 3.52's kept request id on an unlock retried for the `WAIT`,
/// given a release without the retry.
#[test]
fn a_fix_without_what_it_works_through_is_equivalent() {
    let release = newest().without(Switch::NoSyncRetry);
    let m = Mutant {
        release,
        switch: Switch::NoSyncKeepsRequestId,
    };
    let reason = m.inert().expect("inert");
    assert!(reason.contains("no-sync-retry"), "{reason}");
    let kept = Mutant {
        release: newest(),
        switch: Switch::NoSyncKeepsRequestId,
    };
    assert_eq!(kept.inert(), None);
}

/// A fix whose code a later switch replaced is never asked about by a
/// release with the replacement: over 300 explored seeds of 4.7.0 and
/// 3.44.0, no run asks about one, and its mutants are equivalent.
#[test]
fn a_replaced_fix_is_never_asked_about() {
    let replaced: Vec<Switch> = Switch::ALL
        .iter()
        .copied()
        .filter(|s| s.replaced_by().is_some())
        .collect();
    assert!(replaced.contains(&Switch::RenewalZeroStops), "{replaced:?}");
    for release in ["4.7.0", "3.48.0"] {
        let release: Release = release.parse().expect("a release");
        let live: Vec<Switch> = replaced
            .iter()
            .copied()
            .filter(|s| s.replaced_by().is_some_and(|by| release.has(by)))
            .collect();
        assert!(!live.is_empty(), "{release}");
        for seed in 0..300 {
            let run = sim::run(&spec_of(seed, release, sim::Strategy::Uniform)).expect("a run");
            for s in &live {
                assert!(
                    !run.switches_read.has(*s),
                    "seed {seed} under {release} asked {s}"
                );
            }
        }
        for s in live {
            let reason = Mutant { release, switch: s }.inert().expect("inert");
            assert!(reason.contains("replaced"), "{reason}");
        }
    }
}

/// The sweep runs a mutant's seed again when its spec differs from the
/// release's (the generator may refuse a lock object under one release
/// and not the other) or the release's run asked about the switch; that
/// is sound only if a run of the same spec that never asked is the same
/// run. Over 40 seeds and every mutant of 4.7.0, it holds.
#[test]
fn a_run_that_never_asked_about_the_switch_is_the_mutants_run() {
    let mut unread = 0;
    for seed in 0..40 {
        let base_spec = spec_of(seed, newest(), sim::Strategy::Uniform);
        let base = sim::run(&base_spec).expect("a run");
        for m in mutants_of(newest()) {
            let spec = spec_of(seed, m.mutated(), sim::Strategy::Uniform);
            let mut same = base_spec.clone();
            same.profile = m.mutated();
            // The generator reads the release where it draws a lock
            // object the release may refuse: such a mutant is always run.
            if spec != same {
                continue;
            }
            if !base.switches_read.has(m.switch) {
                unread += 1;
                let run = sim::run(&spec).expect("a run");
                assert_eq!(run.history, base.history, "seed {seed} {}", m.switch);
            }
        }
    }
    assert!(
        unread > 100,
        "{unread} unread pairs: the check tested little"
    );
}

/// The report is the same on one thread and on three, and with
/// `--first` every killed mutant stops at the same first kill.
#[test]
fn the_report_is_the_same_whatever_the_threads() {
    let range = SeedRange::new(0, 300).expect("a range");
    let options = MutantsOptions::new(newest(), range).expect("options");
    let stop = AtomicBool::new(false);
    let one = mutation_sweep(&pool(1), &options, &stop, |_| {});
    let three = mutation_sweep(&pool(3), &options, &stop, |_| {});
    assert_eq!(one, three);
    assert!(one.killed > 0, "{}", render_report(&one));
    let first = MutantsOptions {
        first: true,
        ..options
    };
    let quick = mutation_sweep(&pool(2), &first, &stop, |_| {});
    for (a, b) in one.mutants.iter().zip(&quick.mutants) {
        assert_eq!(a.first_kill, b.first_kill, "{}", a.switch);
        if b.first_kill.is_some() {
            assert_eq!(b.killing_runs, 1, "{}", b.switch);
            assert_eq!(Some(b.seeds), b.seeds_to_kill, "{}", b.switch);
        }
    }
}

/// 3.10.5's fix for an acquire that ran twice (#1966, whose history
/// scenario is `unlock-count-down-renews-forever`), removed from 4.7.0, is
/// killed within 50 seeds; its first kill, explored alone with
/// `--without expiration-entry` as `locksim explore` explores it, has a
/// defect attributed to that fix, and the same seed under 4.7.0 has none.
#[test]
fn a_fix_with_a_history_scenario_is_killed_within_a_few_seeds() {
    let range = SeedRange::new(0, 50).expect("a range");
    let mut options = MutantsOptions::new(newest(), range).expect("options");
    options.first = true;
    let report = mutation_sweep(&pool(2), &options, &AtomicBool::new(false), |_| {});
    let m = report
        .mutants
        .iter()
        .find(|m| m.switch == "expiration-entry")
        .expect("a mutant");
    assert_eq!(
        m.verdict,
        MutantVerdict::Killed,
        "{}",
        render_report(&report)
    );
    let seed = m.first_kill.expect("killed");
    let fixes = |release: Release| -> Vec<String> {
        let one = SeedRange::new(seed, 1).expect("a range");
        let mut named = Vec::new();
        crate::explore_on(&pool(1), one, Some(release), &AtomicBool::new(false), |e| {
            if let crate::SweepEvent::Found(f) = e {
                named.extend(
                    f.defects
                        .iter()
                        .filter_map(|d| Some(d.fixed_by.as_ref()?.switch.clone())),
                );
            }
        });
        named
    };
    let mutant = newest().without(Switch::ExpirationEntry);
    assert!(
        fixes(mutant).contains(&"expiration-entry".to_owned()),
        "seed {seed}"
    );
    assert!(
        !fixes(newest()).contains(&"expiration-entry".to_owned()),
        "seed {seed}"
    );
    assert_eq!(
        m.replay.as_deref(),
        Some(format!("locksim replay {seed} --redisson 4.7.0 --without expiration-entry").as_str())
    );
}

/// A fix whose history scenario still breaks under the mutant is no
/// equivalent mutant whatever the search found: `listener-rechecks-latch`
/// (#5761) over 3 seeds, none of which kills it.
#[test]
fn a_mutant_whose_history_breaks_is_not_equivalent() {
    let range = SeedRange::new(0, 3).expect("a range");
    let options = MutantsOptions::new(newest(), range).expect("options");
    let report = mutation_sweep(&pool(1), &options, &AtomicBool::new(false), |_| {});
    let m = report
        .mutants
        .iter()
        .find(|m| m.switch == "listener-rechecks-latch")
        .expect("a mutant");
    let MutantVerdict::Survived(why) = &m.verdict else {
        panic!("{:?}", m.verdict)
    };
    assert!(why.contains("async-waiter-misses-unlock breaks"), "{why}");
    assert!(m.witness.as_ref().is_some_and(|w| w.breaks));
    assert_eq!(
        report.killed + report.equivalent + report.survived,
        report.mutants.len()
    );
}
