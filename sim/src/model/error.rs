//! Why a spec cannot run, on any engine.

use thiserror::Error;

/// Why a spec cannot run.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SimError {
    /// A field of the spec is out of range, names nothing, or asks for
    /// something that would never happen; `field` is its path in the spec
    /// (`faults[2].at_ms`).
    #[error("invalid spec: `{field}`: {reason}")]
    Invalid {
        /// The field's path (`clients[0].threads[1].start_ms`).
        field: String,
        /// What is wrong, with the accepted range or rule.
        reason: String,
    },
    /// Settings that cannot be simulated (the message says which and why).
    #[error("invalid spec: {0}")]
    InvalidSpec(String),
    /// A valid spec that the chosen engine cannot run (a fault it cannot
    /// inject); `what` names it and what the engine can do instead.
    #[error("the {engine} engine cannot run this spec: {what}")]
    Unsupported {
        /// The engine (`turmoil`).
        engine: String,
        /// What it cannot do, and what it can.
        what: String,
    },
    /// The engine itself failed (a simulated host's software errored).
    #[error("the {engine} engine failed: {reason}")]
    Engine {
        /// The engine.
        engine: String,
        /// What went wrong.
        reason: String,
    },
}
