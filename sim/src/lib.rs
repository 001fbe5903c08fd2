//! sim: locksim's deterministic discrete-event engine.
//!
//! (Crate docs are completed by the sim issue.)

mod check;
mod fault;
mod history;
mod run;
mod spec;
mod time;

pub use check::{Invariant, Violation, check_all};
pub use fault::{Fault, FaultPlan};
pub use history::{History, UnlockError};
pub use run::{Run, SimError, run};
pub use spec::{ClientSpec, DEFAULT_LOCK, LatencyRange, SimSpec, Step, ThreadSpec};
pub use time::{ClientId, SimTime};
