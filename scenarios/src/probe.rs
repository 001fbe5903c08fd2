//! One seed's runs: its own, and when a portfolio sweep's run reaches a
//! rare point its branches ([`sim::branch`]), each judged and signed as
//! any run is, in a fixed order (the seed's run, then its branches by
//! child), so what a seed gives is the same alone and inside any range.

use lockcore::Release;
use rayon::prelude::*;
use sim::{Coverage, Run, SimError, SimSpec, Workload};

use crate::Finding;
use crate::attribution::Pending;
use crate::explore::explored_spec_on;

/// The spec of `branch` of the run explored for `seed` on `engine` (the
/// explored spec itself for no branch): `locksim replay SEED --branch
/// PATH`. Only the fast engine replays a branch.
pub fn explored_branch_on(
    seed: u64,
    profile: Option<Release>,
    workload: Workload,
    engine: &sim::Engine,
    branch: Option<&sim::BranchPath>,
) -> Result<SimSpec, crate::InputError> {
    let spec = explored_spec_on(seed, profile, workload, engine);
    let Some(path) = branch else {
        return Ok(spec);
    };
    if *engine != sim::Engine::Fast {
        return Err(crate::InputError::Branch(format!(
            "--branch {path}: a branch replays on the fast engine, not {engine} (its fork needs the fast engine's streams)"
        )));
    }
    Ok(sim::branch::branch(spec, path)?)
}

/// Whether a sweep of `workload` on `engine` branches its runs at rare
/// points: the portfolio's, on the fast engine.
pub fn branches(workload: Workload, engine: &sim::Engine) -> bool {
    workload.strategy == sim::Strategy::Portfolio && *engine == sim::Engine::Fast
}

/// Why a run was not made.
#[derive(Debug)]
pub(crate) enum Unrun {
    /// The engine cannot carry out one of its faults: counted, not shown.
    Refused,
    /// A bug in sim's generator.
    Failed(String),
}

/// Runs seed `seed` under `profile` on `engine`, and when its workload
/// branches ([`branches`]) and the run reached a rare point
/// ([`sim::branch::fork_at`]), its [`sim::branch::BUDGET`] branches from
/// there: a pure function of the four, so runs may be made on any thread
/// in any order. The seed's run comes first, then its branches by child.
pub(crate) fn probe(
    seed: u64,
    profile: Release,
    workload: Workload,
    engine: &sim::Engine,
) -> Vec<Probed> {
    let spec = explored_spec_on(seed, Some(profile), workload, engine);
    let run = engine.run_owned(spec);
    let fork = match &run {
        Ok(run) if branches(workload, engine) => {
            sim::branch::fork_at(run).map(|at_ms| (at_ms, run.spec.clone()))
        }
        _ => None,
    };
    let mut probed = vec![judge((seed, profile, None), workload, engine, run)];
    if let Some((at_ms, parent)) = fork {
        let children: Vec<Probed> = (0..sim::branch::BUDGET)
            .into_par_iter()
            .map(|child| {
                let fork = sim::Fork { at_ms, child };
                let path = sim::BranchPath::new(vec![fork]).map_err(|e| e.to_string());
                let run = path.clone().and_then(|path| {
                    let spec = sim::branch::branch(parent.clone(), &path);
                    spec.map_err(|e| e.to_string())
                });
                let run = run.map_err(SimError::InvalidSpec);
                let run = run.and_then(|spec| engine.run_owned(spec));
                judge((seed, profile, path.ok()), workload, engine, run)
            })
            .collect();
        probed.extend(children);
    }
    probed
}

/// What `run` (of seed `seed` under `profile`, or of its branch) gave. A
/// finding's defects are signed, not attributed: its spec and run are
/// kept for [`settle`] when it has any.
fn judge(
    (seed, profile, branch): (u64, Release, Option<sim::BranchPath>),
    workload: Workload,
    engine: &sim::Engine,
    run: Result<Run, SimError>,
) -> Probed {
    match run {
        Ok(run) if !run.violations.is_empty() => {
            let reached = Reached::of(&run);
            let finding = Finding {
                seed,
                branch,
                profile,
                broken: crate::Outcome::broken_of(&run),
                history_len: run.history.len(),
                workload: workload.for_seed(seed),
                defects: crate::defect::defects_signed(&run),
                engine: engine.clone(),
            };
            let kept = (!finding.defects.is_empty()).then_some(run);
            Ok((reached, Some((finding, kept))))
        }
        Ok(run) => Ok((Reached::of(&run), None)),
        Err(SimError::Unsupported { .. }) => Err(Unrun::Refused),
        Err(e) => Err(Unrun::Failed(e.to_string())),
    }
}

/// What every run gives besides a finding: the `sometimes` points it
/// reached, and whether it left a key without a TTL (`sim::Residue`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reached {
    pub(crate) coverage: Coverage,
    pub(crate) left: bool,
}

impl Reached {
    fn of(run: &sim::Run) -> Reached {
        Reached {
            coverage: run.coverage,
            left: !run.residue.is_empty(),
        }
    }
}

/// What [`probe`] gave: the points the run reached and a finding still
/// to attribute or nothing, or why the run was not made.
pub(crate) type Probed = Result<(Reached, Option<Pending>), Unrun>;

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;
    use crate::{SeedRange, explore_workload_on};

    /// Issue 48 item 4: a portfolio sweep branches the runs that reach a
    /// rare point. 3.44.0 seed 525 (the PCT arm) reaches one at 6.500 s,
    /// so its eight branches fork at 6 501 ms (seed 501, the example
    /// until the `switchover` kind, now draws one and no longer forks); each branch finding names its path in its replay
    /// command and replays to the same history; the sweep counts the branches; and the seed explored
    /// alone gives the same findings, branches and labels included.
    #[test]
    fn portfolio_branches_replay_and_stand_alone() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let release: Release = "3.44.0".parse().unwrap();
        let sweep = |range| crate::explore::portfolio_sweep(&pool, range, release);
        let (swept, found) = sweep(SeedRange::new(521, 10).unwrap());
        assert_eq!(swept.branches, u64::from(sim::branch::BUDGET));
        assert_eq!(swept.runs, 10 + swept.branches);
        let branched: Vec<&Finding> = found.iter().filter(|f| f.branch.is_some()).collect();
        assert!(!branched.is_empty());
        for f in &branched {
            let path = f.branch.as_ref().unwrap();
            assert_eq!((f.seed, path.forks()[0].at_ms), (525, 6_501));
            assert!(
                f.replay_command().ends_with(&format!(
                    " --redisson 3.44.0 --strategy pct --branch {path}"
                )),
                "{}",
                f.replay_command()
            );
            let spec = f.spec().unwrap();
            let run = sim::run(&spec).unwrap();
            assert_eq!(run.history.len(), f.history_len);
            assert_eq!(Ok(run.history.hash()), f.history_hash());
        }
        let inside: Vec<&Finding> = found.iter().filter(|f| f.seed == 525).collect();
        let (_, alone) = sweep(SeedRange::new(525, 1).unwrap());
        assert_eq!(alone.iter().collect::<Vec<_>>(), inside);
        let uniform = explore_workload_on(
            &pool,
            SeedRange::new(521, 10).unwrap(),
            Some(release),
            (Workload::default(), &sim::Engine::Fast),
            &AtomicBool::new(false),
            |_| {},
        );
        assert_eq!((uniform.runs, uniform.branches), (10, 0));
    }
}
