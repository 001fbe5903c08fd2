//! The fast engine: a deterministic discrete-event world. `world` owns the
//! event loop over the processes (`process`, `driver`, `multi` for a
//! thread's multi-lock, `clock`), Redis
//! (`server`, `deployment`, `replication`, `execution`, `slot_move`), the network
//! (`network`, `windows`), the recorder (`observe`) and the protected
//! resources (`resource`); `injection` and `effects` carry out the fault
//! plan; `queue` is the event queue; `reseed` gives a branch's
//! run fresh streams at its fork, and `first_reach` notes when each place
//! of the lock was first passed. `inprocess` is lockcore's async
//! client over fake-redis's engine in the same process.

pub(crate) mod clock;
pub(crate) mod cut;
pub(crate) mod deployment;
pub(crate) mod driver;
pub(crate) mod effects;
pub(crate) mod execution;
pub(crate) mod first_reach;
pub(crate) mod injection;
pub(crate) mod inprocess;
pub(crate) mod multi;
pub(crate) mod network;
pub(crate) mod observe;
pub(crate) mod process;
pub(crate) mod queue;
pub(crate) mod renewal;
pub(crate) mod replication;
pub(crate) mod reseed;
pub(crate) mod resource;
pub(crate) mod server;
pub(crate) mod slot_move;
pub(crate) mod switchover;
pub(crate) mod windows;
pub(crate) mod world;
