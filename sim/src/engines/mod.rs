//! The engines: what turns a spec into a history. `fast` is the
//! discrete-event simulator (the world and its event loop: the only
//! place whose modules import one another in a circle); `hosted` runs the
//! same spec through lockcore's async client over RESP, on turmoil's
//! simulated TCP or against a real `redis-server`. Every engine carries
//! out a fault through the verbs of `model::fault::effect`, and hands its
//! history to the judge as a `model::ended::Ended`. `parts` keeps a
//! multi-lock thread's beliefs per lock, for every engine.

pub(crate) mod fast;
pub(crate) mod hosted;
pub(crate) mod parts;
