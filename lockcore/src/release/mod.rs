//! Releases: which Redisson a client runs, as data chosen once.
//!
//! A [`Release`] is a Redisson version (2.0.0 to 4.7.0) or one of the four
//! era names ([`Era`], aliases of documented releases), with switches
//! turned on (`--with`) or off (`--without`) for a what-if ("3.23.4 but
//! with 3.37's no-lock-resend"). [`Release::switches`] resolves it to the
//! [`SwitchSet`] in force; the machine reads that set and nothing else, so
//! a release's behaviour is decided in one place, and it notes each switch
//! it asks about ([`crate::LockClient::switches_read`]): a run is the same
//! under any release that agrees on those, which attribution relies on.
//!
//! Layout: `version` ([`Version`]), `era` ([`Era`]), `switch` ([`Switch`],
//! one file per switch, registered in one macro line), `reads` (the
//! switches a client asked about), `tick` (the timer's tick).
//!
//! The switches model the rows of Redisson's history that change what the
//! lock does; rows not yet modelled behave as the newest release does
//! whatever the version (the README lists them).

mod era;
mod reads;
mod switch;
mod tick;
mod version;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use thiserror::Error;

pub use era::Era;
pub(crate) use reads::SwitchReads;
pub use switch::{NOT_REPORTED, Switch, SwitchInfo, SwitchSet};
pub(crate) use tick::on_wheel;
pub use tick::{MAX_TIMER_TICK, TIMER_TICK_SWITCHES, timer_tick};
pub use version::Version;

/// Why a release, version or switch name was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReleaseError {
    /// Neither an era name nor a version number.
    #[error(
        "unknown release '{0}' (expected a Redisson version from 2.0.0 to 2.15.2 or 3.0.0 to 4.7.0, e.g. 3.23.4, or one of: redisson-legacy, redisson, redisson-batched, fenced)"
    )]
    UnknownRelease(String),
    /// Not `major.minor[.patch]`.
    #[error("'{0}' is not a version number (expected major.minor.patch, e.g. 3.23.4)")]
    BadVersion(String),
    /// A version locksim does not model.
    #[error("Redisson {0} is out of range: locksim models 2.0.0 to 2.15.2 and 3.0.0 to 4.7.0")]
    OutOfRange(Version),
    /// An unknown switch name.
    #[error("unknown switch '{0}' (`locksim versions` lists them)")]
    UnknownSwitch(String),
}

/// What a release is based on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Base {
    Era(Era),
    Version(Version),
}

/// A Redisson release, or an era alias, with switches toggled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Release {
    base: Base,
    with: SwitchSet,
    without: SwitchSet,
}

impl Release {
    /// `redisson-legacy` (3.8.0).
    pub const LEGACY: Release = Release::era(Era::RedissonLegacy);
    /// `redisson` (3.23.4), the default.
    pub const REDISSON: Release = Release::era(Era::Redisson);
    /// `redisson-batched` (3.44.0).
    pub const BATCHED: Release = Release::era(Era::RedissonBatched);
    /// `fenced` (4.7.0 plus `fencing`).
    pub const FENCED: Release = Release::era(Era::Fenced);
    /// The four eras, in order.
    pub const ERAS: [Release; 4] = [
        Release::LEGACY,
        Release::REDISSON,
        Release::BATCHED,
        Release::FENCED,
    ];

    const fn era(era: Era) -> Release {
        Release {
            base: Base::Era(era),
            with: SwitchSet::EMPTY,
            without: SwitchSet::EMPTY,
        }
    }

    /// Redisson `version` as released.
    pub fn version(version: Version) -> Release {
        Release {
            base: Base::Version(version),
            with: SwitchSet::EMPTY,
            without: SwitchSet::EMPTY,
        }
    }

    /// This release with `switch` forced on.
    pub fn with(mut self, switch: Switch) -> Release {
        self.with = self.with.with(switch);
        self.without = self.without.without(switch);
        self
    }

    /// This release with `switch` forced off.
    pub fn without(mut self, switch: Switch) -> Release {
        self.without = self.without.with(switch);
        self.with = self.with.without(switch);
        self
    }

    /// The Redisson version it is based on.
    pub fn base_version(self) -> Version {
        match self.base {
            Base::Era(era) => era.version(),
            Base::Version(v) => v,
        }
    }

    /// The switches in force.
    pub fn switches(self) -> SwitchSet {
        let mut set = SwitchSet::of_version(self.base_version());
        if self.base == Base::Era(Era::Fenced) {
            set = set.with(Switch::Fencing);
            set = set.with(Switch::InterruptedAcquireUnlocks);
            set = set.with(Switch::RenewalBySlot);
            set = set.with(Switch::SlotsRenewedApart);
        }
        set.union(self.with).difference(self.without)
    }

    /// Whether `switch` is in force.
    pub fn has(self, switch: Switch) -> bool {
        self.switches().has(switch)
    }

    /// The renewal bookkeeping it runs, as an era (expectations in scenario
    /// files are written per era).
    pub fn bookkeeping(self) -> Era {
        let set = self.switches();
        Era::of(|s| set.has(s))
    }

    /// The command-line flags that select it: `--profile redisson`, or
    /// `--redisson 3.23.4 --with no-lock-resend --without fencing`.
    pub fn flags(self) -> String {
        let mut flags = match self.base {
            Base::Era(era) => format!("--profile {era}"),
            Base::Version(v) => format!("--redisson {v}"),
        };
        for w in self.with.iter() {
            flags.push_str(&format!(" --with {w}"));
        }
        for w in self.without.iter() {
            flags.push_str(&format!(" --without {w}"));
        }
        flags
    }

    /// The era alias it is, if it is one untouched.
    pub fn as_era(self) -> Option<Era> {
        match (self.base, self.with, self.without) {
            (Base::Era(era), SwitchSet::EMPTY, SwitchSet::EMPTY) => Some(era),
            _ => None,
        }
    }
}

impl Default for Release {
    fn default() -> Self {
        Release::REDISSON
    }
}

impl From<Era> for Release {
    fn from(era: Era) -> Self {
        Release::era(era)
    }
}

/// `3.23.4`, `redisson`, `3.23.4 +no-lock-resend -expiration-entry`.
impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.base {
            Base::Era(era) => write!(f, "{era}")?,
            Base::Version(v) => write!(f, "{v}")?,
        }
        for w in self.with.iter() {
            write!(f, " +{w}")?;
        }
        for w in self.without.iter() {
            write!(f, " -{w}")?;
        }
        Ok(())
    }
}

impl FromStr for Release {
    type Err = ReleaseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut words = s.split_whitespace();
        let base = words.next().unwrap_or("");
        let mut release = match base.parse::<Era>() {
            Ok(era) => Release::era(era),
            Err(_)
                if base.starts_with(|c: char| c.is_ascii_digit())
                    || base.starts_with("redisson-") =>
            {
                Release::version(base.parse()?)
            }
            Err(e) => return Err(e),
        };
        for word in words {
            release = match (word.strip_prefix('+'), word.strip_prefix('-')) {
                (Some(name), _) => release.with(name.parse()?),
                (_, Some(name)) => release.without(name.parse()?),
                _ => return Err(ReleaseError::UnknownSwitch(word.to_owned())),
            };
        }
        Ok(release)
    }
}

impl Serialize for Release {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Release {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eras_are_aliases_of_documented_releases() {
        assert_eq!(
            Release::REDISSON.switches(),
            SwitchSet::of_version(Version::new(3, 23, 4))
        );
        assert_eq!(Release::LEGACY.bookkeeping(), Era::RedissonLegacy);
        assert_eq!(Release::REDISSON.bookkeeping(), Era::Redisson);
        assert_eq!(Release::BATCHED.bookkeeping(), Era::RedissonBatched);
        assert_eq!(Release::FENCED.bookkeeping(), Era::Fenced);
        assert!(Release::FENCED.has(Switch::NoLockResend));
        for era in Era::ALL {
            assert_eq!(Release::from(era).to_string(), era.name());
            assert_eq!(era.name().parse::<Release>(), Ok(Release::from(era)));
        }
    }

    #[test]
    fn versions_pick_their_bookkeeping() {
        let at = |s: &str| s.parse::<Release>().unwrap().bookkeeping();
        assert_eq!(at("2.15.2"), Era::RedissonLegacy);
        assert_eq!(at("3.10.4"), Era::RedissonLegacy);
        assert_eq!(at("3.10.5"), Era::Redisson);
        assert_eq!(at("3.43.0"), Era::Redisson);
        assert_eq!(at("3.44.0"), Era::RedissonBatched);
        assert_eq!(at("4.7.0 +fencing"), Era::Fenced);
    }

    #[test]
    fn what_ifs_round_trip_through_text() {
        let r = Release::version(Version::new(3, 23, 4))
            .with(Switch::NoLockResend)
            .without(Switch::RenewalZeroRemovesEntry);
        assert_eq!(
            r.to_string(),
            "3.23.4 +no-lock-resend -renewal-zero-removes-entry"
        );
        assert_eq!(r.to_string().parse::<Release>(), Ok(r));
        assert!(r.has(Switch::NoLockResend));
        assert!(!r.has(Switch::RenewalZeroRemovesEntry));
        // The last word wins.
        assert!(!r.without(Switch::NoLockResend).has(Switch::NoLockResend));
    }

    #[test]
    fn bad_releases_say_what_is_known() {
        let err = |s: &str| s.parse::<Release>().unwrap_err().to_string();
        assert!(
            err("redison").contains("2.0.0 to 2.15.2 or 3.0.0 to 4.7.0"),
            "{}",
            err("redison")
        );
        assert!(err("4.8.0").contains("out of range"));
        assert!(err("3.23.4 +latch").contains("unknown switch 'latch'"));
        assert!(err("3.23.4 latch").contains("unknown switch"));
        assert!(err("").contains("unknown release ''"));
    }

    #[test]
    fn serde_uses_the_text_form() {
        let r: Release = serde_json::from_str("\"3.44.0 -batched-renewal\"").unwrap();
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            "\"3.44.0 -batched-renewal\""
        );
        assert!(serde_json::from_str::<Release>("\"9.9.9\"").is_err());
    }
}
