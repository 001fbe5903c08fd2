//! Running one spec to the end.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::world::World;
use crate::{History, SimSpec, Violation, check_all};

/// Why a spec cannot run.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SimError {
    /// A fault names a client the spec does not have.
    #[error("fault names unknown client '{0}'")]
    UnknownClient(String),
    /// Settings that cannot be simulated (the message says which and why).
    #[error("invalid spec: {0}")]
    InvalidSpec(String),
}

/// The result of one run: the history and what the checkers found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// The spec that ran.
    pub spec: SimSpec,
    /// What happened.
    pub history: History,
    /// Broken invariants, in the order of `Invariant::ALL`, then by time.
    pub violations: Vec<Violation>,
}

/// Runs `spec` deterministically to its horizon and checks the history.
///
/// The same spec (seed included) always gives the same history, byte for
/// byte. A spec that cannot be simulated is refused before anything runs.
pub fn run(spec: &SimSpec) -> Result<Run, SimError> {
    crate::validate::validate(spec)?;
    let history = World::new(spec)?.run();
    let violations = check_all(&history);
    Ok(Run {
        spec: spec.clone(),
        history,
        violations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ClientSpec, DEFAULT_LOCK, FaultPlan, LatencyRange, Step, ThreadSpec};
    use lockcore::{LockName, Profile};

    pub(crate) fn thread(start_ms: u64, steps: Vec<Step>) -> ThreadSpec {
        ThreadSpec {
            start_ms,
            lock: LockName::new(DEFAULT_LOCK).expect("non-empty"),
            steps,
        }
    }

    pub(crate) fn client(name: &str, threads: Vec<ThreadSpec>) -> ClientSpec {
        ClientSpec {
            name: name.to_owned(),
            profile: None,
            watchdog_timeout_ms: None,
            threads,
        }
    }

    pub(crate) fn spec(clients: Vec<ClientSpec>) -> SimSpec {
        SimSpec {
            seed: 7,
            profile: Profile::Redisson,
            watchdog_timeout_ms: 30_000,
            latency: LatencyRange::default(),
            clients,
            faults: FaultPlan::default(),
            horizon_ms: 60_000,
        }
    }

    fn critical(work_ms: u64) -> Vec<Step> {
        vec![
            Step::Lock { lease_ms: None },
            Step::Work { ms: work_ms },
            Step::Write,
            Step::Unlock,
        ]
    }

    /// Two clients take turns on one lock with the watchdog: B waits while
    /// A works 15 s (renewed at 10 s), then gets it. No invariant breaks.
    #[test]
    fn two_clients_take_turns() {
        let s = spec(vec![
            client("A", vec![thread(0, critical(15_000))]),
            client("B", vec![thread(100, critical(1_000))]),
        ]);
        let r = run(&s).expect("valid spec");
        println!("{}", r.history);
        assert!(r.violations.is_empty(), "{:?}", r.violations);
    }
}
