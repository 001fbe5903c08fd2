//! fake-redis: an in-process Redis 7, proven equal to a real `redis-server`.
//!
//! (Crate docs are completed by the fake-redis issue.)

mod clock;
mod cmd;
mod connection;
mod db;
mod engine;
mod error;
mod frame;
mod native;
mod number;
mod pubsub;
mod request;
mod script;
mod server;
pub mod testing;
mod value;

pub use clock::{Clock, ManualClock, SystemClock};
pub use connection::serve_connection;
pub use engine::{ConnId, Engine, HashFields, Protocol, Response};
pub use error::CmdError;
pub use frame::{encode, encode_to_vec};
pub use request::{MAX_BULK, MAX_INLINE, MAX_MULTIBULK, ProtocolError, Request, parse_request};
pub use script::{LockScript, sha1_hex};
pub use server::{BackgroundServer, SharedEngine, serve, spawn_local_server};
pub use value::Value;
