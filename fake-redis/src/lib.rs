//! fake-redis: an in-process Redis 7, proven equal to a real `redis-server`.
//!
//! (Crate docs are completed by the fake-redis issue.)

mod clock;
mod engine;
mod script;
pub mod testing;
mod value;

pub use clock::{Clock, ManualClock, SystemClock};
pub use engine::{ConnId, Engine, Protocol, Response};
pub use script::LockScript;
pub use value::Value;
