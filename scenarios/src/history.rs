//! Redisson's lock history as scenarios: each row of REDISSON.md §2 that
//! changes safety or liveness, run under the last release it affects and
//! under the release that fixed it.
//!
//! A history scenario is an ordinary scenario file with a `[history]`
//! table naming the switch and the two releases; its expectations for
//! both are under `[expect.release."<version>"]`. The first must break the
//! invariant the defect breaks, the second must hold. `locksim report`
//! draws the rows as a matrix (defect × release), and `cargo test` pins
//! their timelines.

use lockcore::{Release, Switch};
use serde::{Deserialize, Serialize};
use sim::Invariant;

use crate::Scenario;

/// Each history scenario's name and file text, oldest fix first.
const FILES: [(&str, &str); 47] = [
    (
        "read-lock-not-renewed-1604",
        include_str!("../history/read-lock-not-renewed-1604.toml"),
    ),
    (
        "write-unlock-wakes-one-reader-1542",
        include_str!("../history/write-unlock-wakes-one-reader-1542.toml"),
    ),
    (
        "unlock-error-renews-forever",
        include_str!("../history/unlock-error-renews-forever.toml"),
    ),
    (
        "multi-lock-timeout-leaves-lock-1606",
        include_str!("../history/multi-lock-timeout-leaves-lock-1606.toml"),
    ),
    (
        "unlock-count-down-renews-forever",
        include_str!("../history/unlock-count-down-renews-forever.toml"),
    ),
    (
        "fair-deadlines-drift-past-crashed-waiter-2099",
        include_str!("../history/fair-deadlines-drift-past-crashed-waiter-2099.toml"),
    ),
    (
        "reader-shortens-read-lock-2144",
        include_str!("../history/reader-shortens-read-lock-2144.toml"),
    ),
    (
        "nil-unlock-stale-entry",
        include_str!("../history/nil-unlock-stale-entry.toml"),
    ),
    (
        "trylock-hangs-when-redis-down",
        include_str!("../history/trylock-hangs-when-redis-down.toml"),
    ),
    (
        "fair-live-waiters-purged-as-stale-2883",
        include_str!("../history/fair-live-waiters-purged-as-stale-2883.toml"),
    ),
    (
        "renewal-error-stale-entry",
        include_str!("../history/renewal-error-stale-entry.toml"),
    ),
    (
        "renewal-zero-stale-entry",
        include_str!("../history/renewal-zero-stale-entry.toml"),
    ),
    (
        "interrupted-acquire-renews-forever",
        include_str!("../history/interrupted-acquire-renews-forever.toml"),
    ),
    (
        "spin-trylock-false-while-holding-4197",
        include_str!("../history/spin-trylock-false-while-holding-4197.toml"),
    ),
    (
        "watchdog-takes-previous-lease",
        include_str!("../history/watchdog-takes-previous-lease.toml"),
    ),
    (
        "unsynced-acquire-keeps-lock",
        include_str!("../history/unsynced-acquire-keeps-lock.toml"),
    ),
    (
        "spin-async-trylock-overstays-5002",
        include_str!("../history/spin-async-trylock-overstays-5002.toml"),
    ),
    (
        "unlock-resend-not-locked",
        include_str!("../history/unlock-resend-not-locked.toml"),
    ),
    (
        "renewal-error-stops-watchdog",
        include_str!("../history/renewal-error-stops-watchdog.toml"),
    ),
    (
        "count-down-resets-lease",
        include_str!("../history/count-down-resets-lease.toml"),
    ),
    (
        "async-waiter-misses-unlock",
        include_str!("../history/async-waiter-misses-unlock.toml"),
    ),
    (
        "fair-unscored-head-4153",
        include_str!("../history/fair-unscored-head-4153.toml"),
    ),
    (
        "fair-negative-reply-untimed-wait-4705",
        include_str!("../history/fair-negative-reply-untimed-wait-4705.toml"),
    ),
    (
        "rw-unlock-of-expired-lock-returns",
        include_str!("../history/rw-unlock-of-expired-lock-returns.toml"),
    ),
    (
        "fair-unscored-tail-6434",
        include_str!("../history/fair-unscored-tail-6434.toml"),
    ),
    (
        "round-throws-on-unlocked-lock",
        include_str!("../history/round-throws-on-unlocked-lock.toml"),
    ),
    (
        "reentrant-holder-leaves-stale-head",
        include_str!("../history/reentrant-holder-leaves-stale-head.toml"),
    ),
    (
        "unsynced-acquire-skips-rollback",
        include_str!("../history/unsynced-acquire-skips-rollback.toml"),
    ),
    (
        "unsynced-unlock-retry-not-locked",
        include_str!("../history/unsynced-unlock-retry-not-locked.toml"),
    ),
    (
        "reentrant-reader-renewal-fails-6883",
        include_str!("../history/reentrant-reader-renewal-fails-6883.toml"),
    ),
    (
        "sibling-loses-renewal-during-cancel",
        include_str!("../history/sibling-loses-renewal-during-cancel.toml"),
    ),
    (
        "unlock-latch-ttl-overflows",
        include_str!("../history/unlock-latch-ttl-overflows.toml"),
    ),
    (
        "dead-reader-kept-alive-7098",
        include_str!("../history/dead-reader-kept-alive-7098.toml"),
    ),
    (
        "trylock-timeout-throws",
        include_str!("../history/trylock-timeout-throws.toml"),
    ),
    (
        "fair-trylock-timeout-blocks-queue-5019",
        include_str!("../history/fair-trylock-timeout-blocks-queue-5019.toml"),
    ),
    (
        "fair-trylock-timeout-leaves-queue-5019",
        include_str!("../history/fair-trylock-timeout-leaves-queue-5019.toml"),
    ),
    (
        "interrupted-acquire-renews-again",
        include_str!("../history/interrupted-acquire-renews-again.toml"),
    ),
    (
        "reentrant-reader-stale-head-7251",
        include_str!("../history/reentrant-reader-stale-head-7251.toml"),
    ),
    (
        "unlock-on-demoted-primary-fails",
        include_str!("../history/unlock-on-demoted-primary-fails.toml"),
    ),
    (
        "sentinel-restart-stops-pubsub-6026",
        include_str!("../history/sentinel-restart-stops-pubsub-6026.toml"),
    ),
    (
        "replica-back-not-waited-for-6518",
        include_str!("../history/replica-back-not-waited-for-6518.toml"),
    ),
    (
        "waitaof-refused-fails-every-lock-6618",
        include_str!("../history/waitaof-refused-fails-every-lock-6618.toml"),
    ),
    (
        "unlock-resent-to-promoted-replica-noscript",
        include_str!("../history/unlock-resent-to-promoted-replica-noscript.toml"),
    ),
    (
        "failover-loses-unsynced-lock-6775",
        include_str!("../history/failover-loses-unsynced-lock-6775.toml"),
    ),
    (
        "waitaof-syncs-no-replica-6920",
        include_str!("../history/waitaof-syncs-no-replica-6920.toml"),
    ),
    (
        "proxy-renewal-crossslot-6867",
        include_str!("../history/proxy-renewal-crossslot-6867.toml"),
    ),
    (
        "cluster-paused-master-expires-other-masters-locks",
        include_str!("../history/cluster-paused-master-expires-other-masters-locks.toml"),
    ),
];

/// The names of the history scenarios, oldest fix first.
pub fn history_names() -> impl Iterator<Item = &'static str> {
    FILES.iter().map(|(name, _)| *name)
}

/// The history scenario called `name`, if there is one.
pub fn history_scenario(name: &str) -> Option<Scenario> {
    let (_, text) = FILES.iter().find(|(n, _)| *n == name)?;
    // Part of the crate, parsed by a unit test: a failure is a bug here.
    Some(Scenario::parse(text, &format!("history:{name}")).expect("history scenarios parse"))
}

/// Every history scenario, oldest fix first.
pub fn history() -> Vec<Scenario> {
    history_names().filter_map(history_scenario).collect()
}

/// One row of the history: a switch, and the releases either side of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HistoryRow {
    /// The switch whose absence is the defect (`locksim versions`).
    pub switch: String,
    /// The upstream issue, as written in REDISSON.md (`#1602`).
    pub issue: String,
    /// The invariant the defect breaks: broken under `affected`, held
    /// under `fixed`.
    pub breaks: Invariant,
    /// The last release with the defect.
    #[schemars(with = "String")]
    pub affected: Release,
    /// The first release with the fix.
    #[schemars(with = "String")]
    pub fixed: Release,
}

impl HistoryRow {
    /// The switch, or why the row is wrong (a field path and a reason).
    pub fn check(&self) -> Result<Switch, (String, String)> {
        let switch = self
            .switch
            .parse::<Switch>()
            .map_err(|e| ("history.switch".to_owned(), e.to_string()))?;
        if self.affected.has(switch) {
            return Err((
                "history.affected".to_owned(),
                format!("{} already has {switch}", self.affected),
            ));
        }
        if !self.fixed.has(switch) {
            return Err((
                "history.fixed".to_owned(),
                format!("{} does not have {switch}", self.fixed),
            ));
        }
        Ok(switch)
    }

    /// The two releases, affected first.
    pub fn releases(&self) -> [Release; 2] {
        [self.affected, self.fixed]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(switch: &str, affected: &str, fixed: &str) -> HistoryRow {
        HistoryRow {
            switch: switch.into(),
            issue: "#1".into(),
            breaks: Invariant::MutualExclusion,
            affected: affected.parse().unwrap(),
            fixed: fixed.parse().unwrap(),
        }
    }

    #[test]
    fn a_row_must_straddle_its_switch() {
        assert_eq!(
            row("expiration-entry", "3.10.4", "3.10.5").check(),
            Ok(Switch::ExpirationEntry)
        );
        let swapped = row("expiration-entry", "3.10.5", "3.10.4")
            .check()
            .unwrap_err();
        assert_eq!(swapped.0, "history.affected");
        let unknown = row("latch", "3.10.4", "3.10.5").check().unwrap_err();
        assert!(unknown.1.contains("unknown switch 'latch'"), "{unknown:?}");
    }
}

#[cfg(test)]
mod files {
    use super::*;
    use crate::Trial;

    /// Every file parses, is named as its file, cites its source, and its
    /// row straddles its switch.
    #[test]
    fn every_history_file_parses() {
        for (name, text) in FILES {
            let s = Scenario::parse(text, name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(s.name, name);
            assert!(s.source.is_some(), "{name} cites no source");
            let row = s
                .history
                .as_ref()
                .unwrap_or_else(|| panic!("{name}: no [history]"));
            assert!(row.check().is_ok(), "{name}: {:?}", row.check());
        }
        assert_eq!(history().len(), FILES.len());
    }

    /// After a delete of the fair lock's timeout set, the queue places a
    /// fixed release leaves behind are the lost deadlines' doing, not a
    /// defect (`delete-key`'s `key`, issue 47).
    #[test]
    fn places_left_after_a_lost_timeout_set_are_beyond_the_guarantee() {
        let s = history()
            .into_iter()
            .find(|s| s.name == "fair-unscored-tail-6434")
            .expect("registered");
        let t = Trial::run(&s, None, Some("3.45.0".parse().unwrap())).expect("runs");
        let left = t
            .outcome
            .broken
            .iter()
            .find(|b| b.invariant == Invariant::NothingLeftBehind)
            .expect("the second places are left");
        assert!(
            matches!(left.cause, sim::Cause::BeyondGuarantee { .. }),
            "{:?}",
            left.cause
        );
    }

    /// The proof of each row, over seeds 0 to 99: under the last affected
    /// release the defect's invariant breaks, under the fixing release it
    /// holds, and both give what the file expects.
    #[test]
    fn each_row_breaks_before_its_fix_and_holds_after() {
        let mut wrong = Vec::new();
        for s in history() {
            let row = s.history.clone().expect("checked above");
            for (release, broken) in [(row.affected, true), (row.fixed, false)] {
                for seed in 0..100 {
                    let t = Trial::run(&s, Some(seed), Some(release))
                        .unwrap_or_else(|e| panic!("{}: {e}", s.name));
                    let breaks = t.run.violations.iter().any(|v| v.invariant == row.breaks);
                    if !t.as_expected() || breaks != broken {
                        wrong.push(format!(
                            "{} --seed {seed} under {release}: {} broken: {breaks}; {:?}",
                            s.name, row.breaks, t.mismatches
                        ));
                    }
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// A lock script's sync refused with an error is the `sync-refused`
    /// point: a demoted primary's `WAIT` (#6488, refused under the fix
    /// too, which retries it) and Redis 7.0's `WAITAOF` (#6618, which
    /// 3.48.0 no longer sends).
    #[test]
    fn refused_syncs_reach_their_point() {
        let reached = |name: &str, release: &str| {
            let s = history_scenario(name).expect("a row");
            let t = Trial::run(&s, None, Some(release.parse().unwrap())).unwrap();
            t.run.coverage.has(sim::Point::SyncRefused)
        };
        assert!(reached("unlock-on-demoted-primary-fails", "3.45.0"));
        assert!(reached("unlock-on-demoted-primary-fails", "3.45.1"));
        assert!(reached("waitaof-refused-fails-every-lock-6618", "3.47.0"));
        assert!(!reached("waitaof-refused-fails-every-lock-6618", "3.48.0"));
    }

    /// A batch resent to a promoted replica meets `NOSCRIPT` under the
    /// defect and the fix alike (the fix reloads it): the
    /// `batch-no-script` point; a row without a failover never does.
    #[test]
    fn a_batch_resent_to_a_promoted_replica_reaches_no_script() {
        let reached = |name: &str, release: &str| {
            let s = history_scenario(name).expect("a row");
            let t = Trial::run(&s, None, Some(release.parse().unwrap())).unwrap();
            t.run.coverage.has(sim::Point::BatchNoScript)
        };
        let row = "unlock-resent-to-promoted-replica-noscript";
        assert!(reached(row, "3.47.0"));
        assert!(reached(row, "3.48.0"));
        assert!(!reached("waitaof-syncs-no-replica-6920", "4.0.0"));
    }
}
