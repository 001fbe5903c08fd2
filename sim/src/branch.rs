//! Branching (issue 48 item 4): a run re-run from the instant it first
//! reached a rare point, with fresh draws from there on.
//!
//! A swarm seed that reaches a rare precondition (a count-down unlock
//! whose `WAIT` missed replicas, a batched round that met a lock with no
//! entry) has done the hard part; whether the defect behind it shows
//! depends on what the network, Redis and the faults do next. A uniform
//! sweep throws that state away and must find it again by luck. A branch
//! keeps it: the parent's spec and every draw up to the fork, and from
//! the fork on fresh draws, so each child is another roll of the dice
//! from the same state (FoundationDB's and Antithesis's "branch at a
//! rare state", deterministic here).
//!
//! A branch is a seed and a [`BranchPath`], a list of [`Fork`]s (the
//! instant in ms and the child's number); `locksim replay SEED --branch
//! PATH` replays it. [`branch`] turns the parent's spec into the child's,
//! a pure function of (spec, path):
//!
//! - a [`Reseed`] at the fork: from then on, each link's latencies and
//!   drops, each fault's draws and the replication lags come from
//!   streams of the fork's seed, derived from the parent's seed (or its
//!   last fork's) and the child's number (`Stream::Branch`);
//! - each fault of the plan that strikes at or after the fork is drawn
//!   again, the same kind (the seed's mix of kinds is what reached the
//!   rare point), at a fresh time between the fork and the end of the
//!   fault phase, on a fresh client (but a fault that moves a client's
//!   clock keeps its client, whose clock starts a day ahead from the
//!   run's start), with fresh fields
//!   (`Stream::BranchPlan`); a draw the plan cannot take (an overlap,
//!   a window past the liveness phase's start) is drawn again, up to
//!   [`REDRAWS`] times, and otherwise the fault is kept. Faults keep
//!   their places in the plan, so every draw before the fork is the
//!   parent's and the child is the parent up to the fork, byte for byte.
//!
//! Where to fork is [`fork_at`]: one ms after the first instant the run
//! passed a rare place (rarer than one run in [`RARE_PER`]) of the lock's algorithm (the fast engine
//! notes when each place was first passed), so the fork falls after the
//! rare point and every child reaches it too.

use rand::{Rng, RngExt};

use crate::model::fault::{Draw, GENERATORS};
use crate::model::reseed::Reseed;
use crate::model::rng::{self, Stream, between};
use crate::{PROBE, Point, Run, SimSpec};

/// The children a fork has in `explore` (and the highest child number
/// plus one that a path may name).
pub const BUDGET: u32 = 8;

/// The most forks a path may have: `explore` forks once (no branches of
/// branches); a path of up to this many forks replays.
pub const MAX_DEPTH: usize = 3;

/// How many times a fault after the fork is drawn again when the plan
/// cannot take a draw.
pub const REDRAWS: u32 = 4;

/// A point is rare for branching when fewer than one run in this many
/// reached it in [`CALIBRATION`].
pub const RARE_PER: u32 = 100;

/// The calibration: each place of the lock's algorithm that a directed
/// seed aims at ([`crate::directed::TARGETS`]), and the most runs of
/// 20,000 that reached it under any of 3.8.0, 3.23.4, 3.44.0 and 4.7.0
/// (`reports/coverage.md`, seeds 0..20000 of the default workload). A
/// fixed table, not counts of the sweep: a seed's branches must not
/// depend on the range it is swept in.
pub const CALIBRATION: &[(Point, u32)] = &[
    (Point::SubscribeFailedInTryLock, 23),
    (Point::TryLockWaitTimedOut, 602),
    (Point::CountDownUnlockNotSynced, 61),
    (Point::RoundSkippedLock, 30),
    (Point::RoundEmptyChunk, 136),
    (Point::ListenerRegistered, 3_093),
    (Point::RenewalFailed, 5_368),
    (Point::RenewalFoundLockGone, 9_286),
    (Point::RenewalMapRace, 1_617),
    (Point::AbandonedAcquireTookLock, 795),
];

/// The runs of 20,000 that [`CALIBRATION`] counts.
const CALIBRATION_RUNS: u32 = 20_000;

/// Whether a run that first reached `point` forks there: a point of
/// [`CALIBRATION`] reached by fewer than one run in [`RARE_PER`].
pub fn is_rare(point: Point) -> bool {
    CALIBRATION
        .iter()
        .any(|(p, runs)| *p == point && runs * RARE_PER < CALIBRATION_RUNS)
}

/// One fork of a path: the instant (ms) it forks at, and which child.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fork {
    /// The instant, in virtual ms: draws from then on are the child's.
    pub at_ms: u64,
    /// The child's number, below [`BUDGET`].
    pub child: u32,
}

/// A branch's path from its seed's run: its forks, in order. Written
/// `AT_MS:CHILD` joined by commas (`41250:3`, `41250:3,52007:0`).
#[derive(Debug, Clone, PartialEq, Eq, Default, PartialOrd, Ord, Hash)]
pub struct BranchPath(Vec<Fork>);

/// A branch path that cannot be taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadBranch {
    /// It does not read as a path.
    #[error(
        "bad branch `{0}`: a path is AT_MS:CHILD forks joined by commas, as explore prints it (e.g. `41250:3`)"
    )]
    Syntax(String),
    /// It names no fork.
    #[error("bad branch: a path has at least one fork (AT_MS:CHILD)")]
    Empty,
    /// A child's number is past the budget.
    #[error("bad branch: child {child} of the fork at {at_ms} ms; a fork has children 0..{BUDGET}")]
    Child {
        /// The fork's instant.
        at_ms: u64,
        /// The child asked for.
        child: u32,
    },
    /// Too many forks.
    #[error("bad branch: {depth} forks; a path has at most {MAX_DEPTH}")]
    Depth {
        /// The forks asked for.
        depth: usize,
    },
    /// A fork not after the one before it, or not inside the run.
    #[error(
        "bad branch: the fork at {at_ms} ms must be after 0 ms, after the fork before it and before the run's horizon ({horizon_ms} ms)"
    )]
    Instant {
        /// The fork's instant.
        at_ms: u64,
        /// The run's horizon.
        horizon_ms: u64,
    },
}

impl BranchPath {
    /// The path of `forks`, its numbers and depth checked (its instants
    /// are checked against a run by [`branch`]).
    pub fn new(forks: Vec<Fork>) -> Result<BranchPath, BadBranch> {
        if forks.is_empty() {
            return Err(BadBranch::Empty);
        }
        if forks.len() > MAX_DEPTH {
            return Err(BadBranch::Depth { depth: forks.len() });
        }
        if let Some(f) = forks.iter().find(|f| f.child >= BUDGET) {
            return Err(BadBranch::Child {
                at_ms: f.at_ms,
                child: f.child,
            });
        }
        Ok(BranchPath(forks))
    }

    /// Its forks, in order.
    pub fn forks(&self) -> &[Fork] {
        &self.0
    }
}

impl std::fmt::Display for BranchPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, fork) in self.0.iter().enumerate() {
            let comma = if i == 0 { "" } else { "," };
            write!(f, "{comma}{}:{}", fork.at_ms, fork.child)?;
        }
        Ok(())
    }
}

/// Serialized as its text (`41250:3`), as `--branch` takes it.
impl serde::Serialize for BranchPath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl std::str::FromStr for BranchPath {
    type Err = BadBranch;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let syntax = || BadBranch::Syntax(s.to_owned());
        let forks = s
            .split(',')
            .map(|fork| {
                let (at, child) = fork.split_once(':').ok_or_else(syntax)?;
                Ok(Fork {
                    at_ms: at.trim().parse().map_err(|_| syntax())?,
                    child: child.trim().parse().map_err(|_| syntax())?,
                })
            })
            .collect::<Result<Vec<Fork>, BadBranch>>()?;
        BranchPath::new(forks)
    }
}

/// The child's spec: `spec` forked at each fork of `path` in turn.
pub fn branch(mut spec: SimSpec, path: &BranchPath) -> Result<SimSpec, BadBranch> {
    for f in path.forks() {
        let after = spec.reseeds.last().map_or(0, |r| r.at_ms);
        if f.at_ms == 0 || f.at_ms <= after || f.at_ms >= spec.horizon_ms {
            return Err(BadBranch::Instant {
                at_ms: f.at_ms,
                horizon_ms: spec.horizon_ms,
            });
        }
        fork(&mut spec, *f);
    }
    Ok(spec)
}

/// Where a branch of `run` forks: one ms after the first instant it
/// passed a rare place of the lock ([`is_rare`]), if it did.
pub fn fork_at(run: &Run) -> Option<u64> {
    let (_, at) = run.first_reached.iter().find(|(p, _)| is_rare(*p))?;
    let at_ms = at.as_ms() + 1;
    let after = run.spec.reseeds.last().map_or(0, |r| r.at_ms);
    (at_ms > after && at_ms < run.spec.horizon_ms).then_some(at_ms)
}

/// Forks `spec` at `f`: a reseed there, and the faults from there on
/// drawn again.
fn fork(spec: &mut SimSpec, f: Fork) {
    let parent = spec.reseeds.last().map_or(spec.seed, |r| r.seed);
    // The instant is mixed in, so two forks of one run at different
    // instants draw differently.
    let seed = rng::stream(parent ^ f.at_ms.rotate_left(32), Stream::Branch(f.child)).next_u64();
    redraw_plan(spec, f.at_ms, seed);
    spec.reseeds.push(Reseed {
        at_ms: f.at_ms,
        seed,
    });
}

/// Draws again each fault of `spec` that strikes at or after `at_ms`, in
/// its place, from `seed`'s [`Stream::BranchPlan`].
fn redraw_plan(spec: &mut SimSpec, at_ms: u64, seed: u64) {
    let end = plan_end(spec);
    let clients: Vec<String> = (spec.clients.iter())
        .filter(|c| c.name != PROBE)
        .map(|c| c.name.clone())
        .collect();
    if at_ms > end || clients.is_empty() {
        return;
    }
    let mut r = rng::stream(seed, Stream::BranchPlan);
    for i in 0..spec.faults.0.len() {
        if spec.faults.0[i].at_ms() < at_ms {
            continue;
        }
        let name = spec.faults.0[i].registered_name();
        let Some((_, generate)) = GENERATORS.iter().find(|(n, _)| *n == name) else {
            continue;
        };
        // A client whose clock a fault moves starts a day ahead
        // (`clock::epoch_of`), from the run's first instant: such a fault
        // keeps its client, so the run before the fork is the parent's.
        let kept = (spec.faults.0[i].kind().moves_clock())
            .then(|| spec.faults.0[i].client().map(str::to_owned))
            .flatten();
        for _ in 0..REDRAWS {
            let drawn_client = &clients[r.random_range(0..clients.len())];
            let client = kept.as_ref().unwrap_or(drawn_client);
            let draw = Draw {
                client: client.clone(),
                threads: crate::swarm::threads_of(spec, client),
                at_ms: r.random_range(at_ms..=end),
                duration_ms: between(&mut r, 100, 15_000),
            };
            let drawn = generate(&mut r, draw);
            let old = std::mem::replace(&mut spec.faults.0[i], drawn);
            if fits(spec, i, end) {
                break;
            }
            spec.faults.0[i] = old;
        }
    }
}

/// The end of the fault phase: the liveness probe's start (a fault must
/// heal by then), or two thirds of the horizon, as the swarm draws.
fn plan_end(spec: &SimSpec) -> u64 {
    let probe = spec.clients.iter().find(|c| c.name == PROBE);
    probe
        .and_then(|p| p.threads.first())
        .map_or(spec.horizon_ms * 2 / 3, |t| t.start_ms)
}

/// Whether the plan takes its fault `i` as drawn: valid, and healed by
/// the liveness probe's start when there is one.
fn fits(spec: &SimSpec, i: usize, end: u64) -> bool {
    let f = &spec.faults.0[i];
    let healed = f.effect_end_ms().unwrap_or(f.at_ms()) <= end;
    let probed = spec.clients.iter().any(|c| c.name == PROBE);
    (healed || !probed) && crate::model::validate::validate_faults(spec).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{SimTime, Workload};

    /// The parent run of `seed` under `release` (default workload) and
    /// where it forks.
    fn parent(seed: u64, release: &str) -> (Run, u64) {
        let release: lockcore::Release = release.parse().unwrap();
        let run = crate::run(&crate::generate_with(
            seed,
            Some(release),
            Workload::default(),
        ))
        .unwrap();
        let at = fork_at(&run).expect("the seed reaches a rare point");
        (run, at)
    }

    fn child(run: &Run, at_ms: u64, child: u32) -> Run {
        let path = BranchPath::new(vec![Fork { at_ms, child }]).unwrap();
        crate::run(&branch(run.spec.clone(), &path).unwrap()).unwrap()
    }

    /// The records of `run` before `ms`.
    fn before(run: &Run, ms: u64) -> &[crate::Record] {
        let end = SimTime::from_ms(ms);
        let n = run
            .history
            .records
            .iter()
            .take_while(|r| r.at < end)
            .count();
        &run.history.records[..n]
    }

    /// 3.44.0 seed 5 first passes a count-down unlock whose WAIT missed
    /// replicas at 50.936 s. Each child replays byte for byte, is its
    /// parent up to the fork (so it reaches the point too, at the same
    /// instant), and the children do not all repeat the parent after it:
    /// the fresh draws change what follows.
    #[test]
    fn a_branch_replays_and_is_its_parent_up_to_the_fork() {
        let (run, at) = parent(5, "3.44.0");
        assert_eq!(at, 50_936);
        let mut differ = 0;
        for c in 0..BUDGET {
            let a = child(&run, at, c);
            let b = child(&run, at, c);
            assert_eq!(a.history.to_string(), b.history.to_string());
            assert_eq!(a.history.hash(), b.history.hash());
            assert_eq!(before(&a, at), before(&run, at), "child {c}");
            let point = Point::CountDownUnlockNotSynced;
            let first = |r: &Run| r.first_reached.iter().find(|(p, _)| *p == point).copied();
            assert_eq!(first(&a), first(&run));
            differ += usize::from(a.history.hash() != run.history.hash());
        }
        assert!(differ >= BUDGET as usize / 2, "{differ} children differ");
    }

    /// 3.44.0 seed 100 forks at 7.3 s (a batched round's chunk was empty),
    /// before some of its faults: those are drawn again, the same kinds,
    /// at or after the fork; the faults before it are the parent's, in
    /// their places; the child's spec is valid.
    #[test]
    fn faults_after_the_fork_are_drawn_again() {
        let (run, at) = parent(100, "3.44.0");
        let parent = &run.spec.faults.0;
        assert!(parent.iter().any(|f| f.at_ms() >= at), "{parent:?}");
        let mut moved = 0;
        for c in 0..BUDGET {
            let path = BranchPath::new(vec![Fork {
                at_ms: at,
                child: c,
            }])
            .unwrap();
            let spec = branch(run.spec.clone(), &path).unwrap();
            assert_eq!(crate::validate_spec(&spec), Ok(()));
            assert_eq!(spec.faults.0.len(), parent.len());
            for (old, new) in parent.iter().zip(&spec.faults.0) {
                assert_eq!(old.registered_name(), new.registered_name());
                if old.at_ms() < at {
                    assert_eq!(old, new);
                } else {
                    assert!(new.at_ms() >= at, "{new:?}");
                    moved += usize::from(old != new);
                }
            }
            assert_eq!(spec.reseeds.len(), 1);
        }
        assert!(moved > 0);
    }

    /// Every seed of 0..600 under 3.44.0 that forks (four do): each
    /// child is its parent up to the fork, whatever faults were drawn
    /// again after it, and reaches the rare point it forked at.
    #[test]
    fn every_forking_seed_keeps_its_prefix() {
        let release: lockcore::Release = "3.44.0".parse().unwrap();
        let mut forked = 0;
        for seed in 0..600 {
            let spec = crate::generate_with(seed, Some(release), Workload::default());
            let run = crate::run(&spec).unwrap();
            let Some(at) = fork_at(&run) else { continue };
            forked += 1;
            let point = run.first_reached.iter().find(|(p, _)| is_rare(*p)).copied();
            for c in [0, BUDGET - 1] {
                let a = child(&run, at, c);
                assert_eq!(before(&a, at), before(&run, at), "seed {seed} child {c}");
                assert_eq!(
                    a.first_reached.iter().find(|(p, _)| is_rare(*p)).copied(),
                    point
                );
            }
        }
        assert!(forked >= 4, "{forked} seeds forked");
    }

    const PARENT_SEED: u64 = 399;

    /// A branch of a branch: deterministic, and the first branch up to
    /// the second fork.
    #[test]
    fn a_branch_of_a_branch_keeps_the_first_up_to_its_fork() {
        let (run, at) = parent(PARENT_SEED, "3.44.0");
        let first = child(&run, at, 2);
        let second_at = at + 5_000;
        let path = BranchPath::new(vec![
            Fork {
                at_ms: at,
                child: 2,
            },
            Fork {
                at_ms: second_at,
                child: 5,
            },
        ])
        .unwrap();
        assert_eq!(path.to_string(), format!("{at}:2,{second_at}:5"));
        let spec = branch(run.spec.clone(), &path).unwrap();
        let a = crate::run(&spec).unwrap();
        let b = crate::run(&spec).unwrap();
        assert_eq!(a.history.hash(), b.history.hash());
        assert_eq!(before(&a, second_at), before(&first, second_at));
    }

    /// A path reads back as it prints; a bad one is a clear error.
    #[test]
    fn paths_parse_and_bad_ones_say_why() {
        let path: BranchPath = "41250:3,52007:0".parse().unwrap();
        assert_eq!(path.to_string(), "41250:3,52007:0");
        let err = |s: &str| s.parse::<BranchPath>().unwrap_err().to_string();
        assert_eq!(
            err("41250"),
            "bad branch `41250`: a path is AT_MS:CHILD forks joined by commas, as explore prints it (e.g. `41250:3`)"
        );
        assert_eq!(
            err("x:1"),
            "bad branch `x:1`: a path is AT_MS:CHILD forks joined by commas, as explore prints it (e.g. `41250:3`)"
        );
        assert_eq!(
            err("41250:8"),
            "bad branch: child 8 of the fork at 41250 ms; a fork has children 0..8"
        );
        assert_eq!(
            err("1:0,2:0,3:0,4:0"),
            "bad branch: 4 forks; a path has at most 3"
        );
        let spec = crate::generate_with(1, None, Workload::default());
        let late = BranchPath::new(vec![Fork {
            at_ms: spec.horizon_ms,
            child: 0,
        }])
        .unwrap();
        assert_eq!(
            branch(spec.clone(), &late).unwrap_err(),
            BadBranch::Instant {
                at_ms: spec.horizon_ms,
                horizon_ms: spec.horizon_ms
            }
        );
        let backwards: BranchPath = "5000:0,4000:1".parse().unwrap();
        assert!(matches!(
            branch(spec, &backwards),
            Err(BadBranch::Instant { at_ms: 4000, .. })
        ));
    }

    /// The rare places are the calibration's below one run in a hundred.
    #[test]
    fn rare_places_are_the_calibrations_rarest() {
        let rare: Vec<Point> = Point::ALL.iter().copied().filter(|p| is_rare(*p)).collect();
        assert_eq!(
            rare,
            [
                Point::SubscribeFailedInTryLock,
                Point::CountDownUnlockNotSynced,
                Point::RoundSkippedLock,
                Point::RoundEmptyChunk,
            ]
        );
        for (p, _) in CALIBRATION {
            assert!(matches!(p.source(), crate::PointSource::Lock(_)), "{p:?}");
        }
    }
}
