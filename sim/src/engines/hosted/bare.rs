//! The floor the turmoil engine is benchmarked against (issue 14: the
//! engine within 1.5x of a bare turmoil program with the same hosts and
//! simulated time).
//!
//! It builds the engine's simulation ([`super::tcp::builder`]: the same tick,
//! latency range, seed and horizon) with the engine's hosts, a `redis`
//! host listening on 6379 and one host per client that opens its two
//! connections (commands and pub/sub, as `RespTransport` does) during the
//! boot phase, and steps it as the engine's loop does. Nothing else runs:
//! no lockcore, no fake-redis, no RESP, no scripts, no faults, no
//! recording, no checkers. What the engine costs beyond this is the
//! price of running the code a user ships; the benchmark
//! (`locksim bench --engine turmoil`) times both from outside.

use std::cell::Cell;
use std::rc::Rc;

use super::process::client_host;
use super::tcp::{PORT, REDIS, builder, engine_failed, horizon};
use crate::{SimError, SimSpec};

/// What a bare run did: enough to show it covered the engine's ground.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BareRun {
    /// Turmoil steps taken (the engine's `Run::events` for the same spec).
    pub steps: u64,
    /// Connections Redis accepted: two per client.
    pub connections: u64,
}

/// Steps `spec`'s hosts, idle after they connect, to the spec's horizon.
/// The spec's threads and faults are ignored: this is the floor for any
/// spec, including one the engine refuses.
pub fn run_turmoil_bare(spec: &SimSpec) -> Result<BareRun, SimError> {
    crate::model::validate::validate_spec(spec)?;
    let mut sim = builder(spec).build();
    let accepted = Rc::new(Cell::new(0u64));
    let counter = accepted.clone();
    sim.host(REDIS, move || {
        let counter = counter.clone();
        async move {
            let listener = turmoil::net::TcpListener::bind(("0.0.0.0", PORT)).await?;
            // Held, never read: the clients send nothing, and a dropped
            // stream would close the connection the client holds.
            let mut open = Vec::new();
            loop {
                let (stream, _) = listener.accept().await?;
                counter.set(counter.get() + 1);
                open.push(stream);
            }
        }
    });
    for cs in &spec.clients {
        sim.host(client_host(&cs.name), || async {
            let commands = turmoil::net::TcpStream::connect((REDIS, PORT)).await?;
            let pubsub = turmoil::net::TcpStream::connect((REDIS, PORT)).await?;
            let _held = (commands, pubsub);
            std::future::pending().await
        });
    }
    let horizon = horizon(spec);
    let mut steps = 0u64;
    while sim.elapsed() < horizon {
        sim.step().map_err(engine_failed)?;
        steps += 1;
    }
    Ok(BareRun {
        steps,
        connections: accepted.get(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::tests::{client, critical, spec, thread};

    /// The bare program steps to the engine's horizon, as many steps as
    /// the engine takes on the same spec, with two connections a client.
    #[test]
    fn steps_as_far_as_the_engine_with_two_connections_a_client() {
        let mut s = spec(vec![
            client("A", vec![thread(0, critical(500))]),
            client("B", vec![thread(100, critical(200))]),
        ]);
        s.horizon_ms = 2_000;
        let bare = run_turmoil_bare(&s).expect("runs");
        assert_eq!(bare.steps, super::super::tcp::BOOT_MS + 2_000);
        assert_eq!(bare.connections, 4);
        let engine = crate::run_turmoil(&s).expect("runs");
        assert_eq!(bare.steps, engine.events);
    }

    /// A spec that fails validation is refused, not run.
    #[test]
    fn an_invalid_spec_is_refused() {
        let mut s = spec(vec![client("A", vec![thread(0, critical(500))])]);
        s.horizon_ms = 0;
        assert!(run_turmoil_bare(&s).is_err());
    }
}
