//! `crash`: the process dies; its threads, timers and connections are gone.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Invalid, Kind, Strike};

/// The process dies: its threads, timers and connections are gone. With
/// `restart_after_ms` it comes back as a new client (new uuid, nothing
/// remembered) and runs its scripts again from the start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Crash {
    /// The client.
    pub client: String,
    /// When.
    pub at_ms: u64,
    /// Restart after this long, if set.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub restart_after_ms: Option<u64>,
}

impl Kind for Crash {
    fn client(&self) -> Option<&str> {
        Some(&self.client)
    }

    fn at_ms(&self) -> u64 {
        self.at_ms
    }

    fn end_ms(&self) -> Option<u64> {
        self.restart_after_ms.map(|r| self.at_ms.saturating_add(r))
    }

    fn check(&self, horizon_ms: u64) -> Result<(), Invalid> {
        match self.restart_after_ms {
            Some(r) if r == 0 || self.at_ms.saturating_add(r) >= horizon_ms => Err((
                "restart_after_ms",
                format!(
                    "the restart must come after the crash and before the horizon: between 1 and {} ms, got {r}",
                    horizon_ms.saturating_sub(self.at_ms + 1)
                ),
            )),
            _ => Ok(()),
        }
    }

    fn text(&self) -> String {
        match self.restart_after_ms {
            Some(r) => format!("crash {} (restart after {r}ms)", self.client),
            None => format!("crash {}", self.client),
        }
    }

    /// A crash is an instant and a restart another; neither opens a
    /// window (the world records a `Crash` record, not a fault window).
    fn recorded(&self) -> bool {
        false
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.crash(s);
    }

    fn end(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.restart(s);
    }
}

pub(crate) fn generate(r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::Crash(Crash {
        client: d.client,
        at_ms: d.at_ms,
        restart_after_ms: r.random_bool(0.5).then(|| r.random_range(100..=10_000)),
    })
}
