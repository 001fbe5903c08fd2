//! Running one spec to the end.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::{History, SimSpec, Violation};

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
pub fn run(spec: &SimSpec) -> Result<Run, SimError> {
    let _ = spec;
    todo!("sim issue")
}
