//! The `fake-redis` binary (server wiring comes with the RESP server).

fn main() {}
