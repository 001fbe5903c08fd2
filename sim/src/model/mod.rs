//! The model: what to simulate and what happened, as data. Specs, fault
//! kinds (their data, validation, timeline text, generators and, in verbs,
//! their effects), the history's records and their timeline, validation,
//! step kinds and the thread scripts they compile to, the random streams and the rules every engine shares
//! (a client's config, TCP's retransmission). Nothing here knows an
//! engine: the judge reads the model alone, and every engine writes it.

pub(crate) mod cluster;
pub(crate) mod config;
pub(crate) mod cut;
pub(crate) mod drop_cause;
pub(crate) mod ended;
pub(crate) mod error;
pub(crate) mod fault;
pub(crate) mod history;
pub(crate) mod leftover;
pub(crate) mod masters;
pub(crate) mod multi;
pub(crate) mod name;
pub(crate) mod reseed;
pub(crate) mod retransmission;
pub(crate) mod rng;
pub(crate) mod script;
pub(crate) mod server;
pub(crate) mod spec;
pub(crate) mod step;
pub(crate) mod time;
pub(crate) mod timeline;
pub(crate) mod validate;
