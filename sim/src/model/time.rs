//! Virtual time.

use std::fmt;

use serde::{Deserialize, Serialize};

/// An instant of virtual time, in microseconds since the run started.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
pub struct SimTime(pub u64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);

    /// The instant `ms` milliseconds after the start.
    pub fn from_ms(ms: u64) -> SimTime {
        SimTime(ms.saturating_mul(1_000))
    }

    /// Whole milliseconds since the start (rounded down).
    pub fn as_ms(self) -> u64 {
        self.0 / 1_000
    }

    /// `self + micros`, saturating.
    pub fn plus_us(self, micros: u64) -> SimTime {
        SimTime(self.0.saturating_add(micros))
    }

    /// `self + ms` milliseconds, saturating.
    pub fn plus_ms(self, ms: u64) -> SimTime {
        self.plus_us(ms.saturating_mul(1_000))
    }
}

impl fmt::Display for SimTime {
    /// `12.345678s`: seconds with microseconds, fixed width after the point.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:06}s", self.0 / 1_000_000, self.0 % 1_000_000)
    }
}

/// A simulated client process, by its index in the spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ClientId(pub u32);

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "c{}", self.0)
    }
}

/// Redis's clock reads this many Unix ms at virtual time zero (a fixed
/// instant, so runs do not depend on the day they run).
pub(crate) const EPOCH_MS: u64 = 1_700_000_000_000;
