//! lockcore: the Redisson lock, written once.
//!
//! (Crate docs are completed by the lockcore issue.)

mod call;
mod config;
mod error;
mod id;
mod machine;
mod profile;

pub use call::{Call, CallOutcome};
pub use config::{Config, ConfigBuilder};
pub use error::{LockError, TransportError};
pub use id::{FencingToken, LockName, Millis, RequestId, ThreadId, TimerId};
pub use machine::{Event, LockClient, Output, Purpose};
pub use profile::Profile;
