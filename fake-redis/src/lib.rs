//! fake-redis: an in-process Redis 7, proven equal to a real `redis-server`.
//!
//! (Crate docs are completed by the fake-redis issue.)

mod clock;
mod cmd;
mod db;
mod engine;
mod error;
mod native;
mod number;
mod pubsub;
mod script;
pub mod testing;
mod value;

pub use clock::{Clock, ManualClock, SystemClock};
pub use engine::{ConnId, Engine, HashFields, Protocol, Response};
pub use error::CmdError;
pub use script::{LockScript, sha1_hex};
pub use value::Value;
