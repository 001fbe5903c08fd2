//! Which engine runs a spec: the fast discrete-event one, or turmoil's
//! simulated network with the code a user ships.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::{Run, SimError, SimSpec};

/// An engine that runs a [`SimSpec`] and judges its history.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// The discrete-event engine: lockcore's sans-IO machine and
    /// fake-redis's engine, driven directly ([`crate::run`]).
    #[default]
    Fast,
    /// lockcore's async client over RESP on turmoil's TCP, against
    /// fake-redis's RESP server ([`crate::run_turmoil`]).
    Turmoil,
}

impl Engine {
    /// Every engine, in order.
    pub const ALL: [Engine; 2] = [Engine::Fast, Engine::Turmoil];

    /// Runs `spec` on this engine.
    pub fn run(self, spec: &SimSpec) -> Result<Run, SimError> {
        match self {
            Engine::Fast => crate::run(spec),
            Engine::Turmoil => crate::run_turmoil(spec),
        }
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Fast => "fast",
            Engine::Turmoil => "turmoil",
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Engine {
    type Err = String;

    fn from_str(s: &str) -> Result<Engine, String> {
        Engine::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| format!("unknown engine '{s}': the engines are fast and turmoil"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_are_refused() {
        for e in Engine::ALL {
            assert_eq!(e.name().parse::<Engine>(), Ok(e));
        }
        let error = "redis".parse::<Engine>().unwrap_err();
        assert!(error.contains("fast and turmoil"), "{error}");
    }
}
