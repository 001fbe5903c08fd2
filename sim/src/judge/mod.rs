//! The judge: a finished history in, verdicts out. `check` holds one
//! checker per invariant, each a pure function of the history; `cause` is
//! the oracle that tells a violation's cause (misuse, beyond the
//! guarantee, or a defect); `residue` what a run leaves in Redis that no
//! invariant forbids (the fenced lock's token keys, #6510). All read the model alone, so they compile and
//! run without any engine.

pub(crate) mod cause;
pub(crate) mod check;
pub(crate) mod coverage;
pub(crate) mod residue;
