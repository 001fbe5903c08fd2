//! sim: locksim's deterministic discrete-event engine.
//!
//! (Crate docs are completed below.)

mod check;
mod driver;
mod execution;
mod fault;
mod history;
mod network;
mod process;
mod queue;
mod rng;
mod run;
mod script;
mod server;
mod spec;
mod swarm;
mod time;
mod timeline;
mod validate;
mod world;

pub use check::{Invariant, Violation, check_all};
pub use fault::{Fault, FaultPlan};
pub use history::{
    Direction, History, Meta, Outcome, Phase, Proc, Record, RecordKind, ReleaseCause, UnlockError,
    Who,
};
pub use run::{Run, SimError, run};
pub use spec::{ClientSpec, DEFAULT_LOCK, LatencyRange, SimSpec, Step, ThreadSpec};
pub use swarm::generate;
pub use time::{ClientId, SimTime};
