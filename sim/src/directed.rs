//! The directed arm's weights: fault kinds and workload features bent
//! toward the preconditions of one rare `sometimes` point per seed.
//!
//! The weighting is static, read from each target point's preconditions
//! (what has to happen for the place in Redisson's algorithm or the
//! history condition to be reached), not learnt from the counts of
//! earlier seeds: a seed's run must not depend on the range it is swept
//! in. Each seed draws one target from [`TARGETS`] (`Stream::Directed`);
//! the target's kinds are enabled with [`TARGET_KIND_CHANCE`], every other
//! kind with [`OTHER_KIND_CHANCE`] (fewer unrelated faults, many of which
//! excuse what they touch), and its workload features are always drawn.
//! The rest of the scenario is drawn as the uniform swarm draws it.

use rand::RngExt;

use crate::Point;
use crate::Strategy;
use crate::model::rng::{self, Stream};
use crate::swarm::{ASYNC_CHANCE, SWARM_CHANCE, TWO_LOCKS_CHANCE};
use crate::workload::{NESTING_CHANCE, RELAY_CHANCE};

/// The chance that a directed seed enables a kind its target needs.
pub const TARGET_KIND_CHANCE: f64 = 0.8;

/// The chance that a directed seed enables any other kind.
pub const OTHER_KIND_CHANCE: f64 = 0.1;

/// A workload feature a target needs (each has a chance in the uniform
/// swarm; a target's features are always drawn).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// Each client's second thread takes a second lock.
    TwoLocks,
    /// One client acquires through the async API.
    Async,
    /// One thread holds its lock re-entrantly.
    Nesting,
    /// One client's threads hand the lock over.
    Relay,
}

/// A rare point and its preconditions: the fault kinds (by registered
/// name) and workload features that lead to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    /// The point aimed at.
    pub point: Point,
    /// Kinds that can bring it about.
    pub kinds: &'static [&'static str],
    /// Features it needs.
    pub features: &'static [Feature],
}

/// The targets, each drawn by an equal share of directed seeds: the
/// points below 1·10⁻³ a run in `reports/coverage.md` and the
/// preconditions of the rarest known defects (issue 48).
pub const TARGETS: &[Target] = &[
    // tryLock(wait)'s subscription fails: the subscribe is lost or late
    // (3.17.0's subscribe-failure path).
    Target {
        point: Point::SubscribeFailedInTryLock,
        kinds: &[
            "Partition",
            "DropRate",
            "RedisDown",
            "DelayReplies",
            "RedisPause",
        ],
        features: &[],
    },
    // An acquire inside tryLock's wait loop times out (#5019).
    Target {
        point: Point::TryLockWaitTimedOut,
        kinds: &["DelayReplies", "RedisPause", "DropRate", "Partition"],
        features: &[],
    },
    // A count-down unlock's WAIT misses replicas: a re-entrant hold
    // under replication trouble (the defect not reported upstream).
    Target {
        point: Point::CountDownUnlockNotSynced,
        kinds: &["ReplicationDrop", "Failover"],
        features: &[Feature::Nesting],
    },
    // A batched round meets a lock whose entry is gone, or a chunk with
    // no thread (#6472, #6506): two locks on one client, an unlock
    // landing inside the round.
    Target {
        point: Point::RoundSkippedLock,
        kinds: &["Interleave", "DelayReplies"],
        features: &[Feature::TwoLocks, Feature::Relay],
    },
    Target {
        point: Point::RoundEmptyChunk,
        kinds: &["Interleave", "DelayReplies", "DropRate"],
        features: &[Feature::TwoLocks, Feature::Relay],
    },
    // The async waiter's listener and the latch race (#5761).
    Target {
        point: Point::ListenerRegistered,
        kinds: &["Interleave", "DelayReplies", "DropRate"],
        features: &[Feature::Async],
    },
    // A renewal's error meets a re-entrant hold (#3194).
    Target {
        point: Point::RenewalFailed,
        kinds: &["RedisPause", "DelayReplies", "Partition", "DropRate"],
        features: &[Feature::Nesting],
    },
    // A renewal finds the key gone (#2669, #3712/#3714).
    Target {
        point: Point::RenewalFoundLockGone,
        kinds: &["DeleteKey", "RedisRestart", "Failover", "ClockJump"],
        features: &[Feature::Nesting],
    },
    // A failover loses a held lock.
    Target {
        point: Point::FailoverLostLock,
        kinds: &["Failover", "ReplicationDrop"],
        features: &[],
    },
    // The renewal map's two-step removal crossed by a sibling (#6844).
    Target {
        point: Point::RenewalMapRace,
        kinds: &["Interleave"],
        features: &[Feature::Relay],
    },
    // An interrupted acquire answered after the interrupt (#2714, #7272).
    Target {
        point: Point::AbandonedAcquireTookLock,
        kinds: &["Interrupt", "DelayReplies"],
        features: &[],
    },
];

/// The chances a seed's scenario is drawn with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Bias {
    /// The target whose kinds and features are favoured, if any.
    target: Option<&'static Target>,
    /// The chance of two locks.
    pub(crate) two_locks: f64,
    /// The chance of a client on the async API.
    pub(crate) async_api: f64,
    /// The chance of a re-entrant hold.
    pub(crate) nesting: f64,
    /// The chance of a hand-over between a client's threads.
    pub(crate) relay: f64,
}

impl Bias {
    /// The uniform swarm's chances.
    pub(crate) const UNIFORM: Bias = Bias {
        target: None,
        two_locks: TWO_LOCKS_CHANCE,
        async_api: ASYNC_CHANCE,
        nesting: NESTING_CHANCE,
        relay: RELAY_CHANCE,
    };

    /// The chances for `seed` under `arm`: the uniform swarm's, or for a
    /// directed seed its target's.
    pub(crate) fn of(seed: u64, arm: Strategy) -> Bias {
        if arm != Strategy::Directed {
            return Bias::UNIFORM;
        }
        let target = target(seed);
        let chance = |f: Feature, uniform: f64| match target.features.contains(&f) {
            true => 1.0,
            false => uniform,
        };
        Bias {
            target: Some(target),
            two_locks: chance(Feature::TwoLocks, TWO_LOCKS_CHANCE),
            async_api: chance(Feature::Async, ASYNC_CHANCE),
            nesting: chance(Feature::Nesting, NESTING_CHANCE),
            relay: chance(Feature::Relay, RELAY_CHANCE),
        }
    }

    /// The chance that the swarm enables the kind registered as `name`.
    pub(crate) fn kind_chance(&self, name: &str) -> f64 {
        match self.target {
            None => SWARM_CHANCE,
            Some(t) if t.kinds.contains(&name) => TARGET_KIND_CHANCE,
            Some(_) => OTHER_KIND_CHANCE,
        }
    }
}

/// The target a directed `seed` aims at.
pub fn target(seed: u64) -> &'static Target {
    let mut r = rng::stream(seed, Stream::Directed);
    &TARGETS[r.random_range(0..TARGETS.len())]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fault::GENERATORS;

    /// Every kind a target names is a registered kind (a misspelt name
    /// would silently never be favoured).
    #[test]
    fn targets_name_registered_kinds() {
        for t in TARGETS {
            for k in t.kinds {
                assert!(
                    GENERATORS.iter().any(|(name, _)| name == k),
                    "{:?} names {k}",
                    t.point
                );
            }
        }
    }

    /// A directed seed's plan favours its target's kinds, and its
    /// features are drawn; the uniform arm's chances are the swarm's.
    #[test]
    fn directed_seeds_favour_their_targets_preconditions() {
        assert_eq!(Bias::of(3, Strategy::Uniform), Bias::UNIFORM);
        assert_eq!(Bias::of(3, Strategy::Pct), Bias::UNIFORM);
        let (mut favoured, mut plans) = (0, 0);
        for seed in 0..400 {
            let target = target(seed);
            let bias = Bias::of(seed, Strategy::Directed);
            for k in target.kinds {
                assert_eq!(bias.kind_chance(k), TARGET_KIND_CHANCE);
            }
            if target.features.contains(&Feature::Nesting) {
                assert_eq!(bias.nesting, 1.0);
            }
            let spec = crate::generate_with(
                seed,
                None,
                crate::Workload {
                    strategy: Strategy::Directed,
                    ..Default::default()
                },
            );
            plans += 1;
            let names: Vec<String> = spec.faults.0.iter().map(|f| format!("{f:?}")).collect();
            if target
                .kinds
                .iter()
                .any(|k| names.iter().any(|n| n.starts_with(k)))
            {
                favoured += 1;
            }
        }
        assert!(favoured * 10 >= plans * 7, "{favoured} of {plans}");
    }
}
