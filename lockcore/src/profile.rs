//! Profiles: which renewal bookkeeping a client runs.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::LockError;

/// Which version of the lock's bookkeeping a client runs.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// Documents 001 and 003: the renewal entry is removed when each renewal
    /// completes and registered again; the older acquire script.
    RedissonLegacy,
    /// Documents 002 and 004 (Redisson 3.13 to 3.43): a per-lock timer at
    /// T/3; 0 cancels renewal; an error drops the entry and renewal stops
    /// for good.
    #[default]
    Redisson,
    /// Redisson 3.44 and later: one chain per client renews all held locks
    /// every T/3; an error skips a round and the chain goes on.
    RedissonBatched,
    /// Beyond Redisson: fencing tokens, a lease-lost signal, and renewal that
    /// retries until the lease would really have ended.
    Fenced,
}

impl Profile {
    /// Every profile, in a fixed order.
    pub const ALL: [Profile; 4] = [
        Profile::RedissonLegacy,
        Profile::Redisson,
        Profile::RedissonBatched,
        Profile::Fenced,
    ];

    /// The profile's name, as written in scenario files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Profile::RedissonLegacy => "redisson-legacy",
            Profile::Redisson => "redisson",
            Profile::RedissonBatched => "redisson-batched",
            Profile::Fenced => "fenced",
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Profile {
    type Err = LockError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Profile::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| LockError::UnknownProfile(s.to_owned()))
    }
}
