//! The invariant registry is whole: every invariant registered in
//! `invariants!` is named alike everywhere it is named, runs in
//! [`check_all`], reads the history it judges, and is in the guide's
//! table of invariants (`docs/src/concepts.md`).

use super::*;

/// Explored runs' histories, with and without faults that break things.
fn histories() -> Vec<History> {
    (0..12)
        .map(|seed| {
            let spec = crate::generate_with(seed, None, crate::Workload::default());
            crate::run(&spec).expect("an explored spec runs").history
        })
        .collect()
}

/// Each invariant's name is its serde name both ways and its `Display`,
/// and no two invariants share a name (a scenario file's `violated = [...]`
/// and explore's JSON name them by it).
#[test]
fn every_invariant_is_named_alike() {
    let mut names = std::collections::BTreeSet::new();
    for inv in Invariant::ALL {
        let json = serde_json::to_string(&inv).expect("serializes");
        assert_eq!(json, format!("\"{}\"", inv.name()));
        let back: Invariant = serde_json::from_str(&json).expect("reads back");
        assert_eq!(back, inv);
        assert_eq!(inv.to_string(), inv.name());
        assert!(names.insert(inv.name()), "{} named twice", inv.name());
    }
}

/// `check_all` runs every registered checker, each of which reads the
/// history: over explored histories, each invariant's checker alone does
/// some work, the work of all of them together is the sum, and
/// `check_all` finds exactly the violations of each checker run alone, in
/// registration order. A checker left out of the dispatch, or one that
/// judges without reading, fails here.
#[test]
fn check_all_runs_every_registered_checker() {
    for history in histories() {
        let all = Work::default();
        let together = checked(&history, &all, &Invariant::ALL);
        let mut sum = 0;
        let mut alone = Vec::new();
        for inv in Invariant::ALL {
            let work = Work::default();
            alone.extend(checked(&history, &work, &[inv]));
            assert!(work.total() > 0, "{inv}'s checker read nothing");
            sum += work.total();
        }
        assert_eq!(all.total(), sum, "check_all skipped a checker's work");
        assert_eq!(together, alone);
        assert_eq!(check_all(&history), together);
    }
}

/// The guide's table of invariants has a row for every registered
/// invariant, so the docs cannot miss a new checker.
#[test]
fn the_guide_lists_every_invariant() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/src/concepts.md");
    let page = std::fs::read_to_string(path).expect("the guide's concepts page");
    for inv in Invariant::ALL {
        let row = format!("| `{}` |", inv.name());
        assert!(page.contains(&row), "docs/src/concepts.md has no row {row}");
    }
}
