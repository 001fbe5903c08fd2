//! Redisson version numbers, and the 2.x line's mapping onto 3.x.

use std::fmt;
use std::str::FromStr;

use super::ReleaseError;

/// A Redisson release number, `major.minor.patch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// 2, 3 or 4.
    pub major: u16,
    /// The minor number.
    pub minor: u16,
    /// The patch number.
    pub patch: u16,
}

impl Version {
    /// The oldest release locksim models.
    pub const OLDEST: Version = Version::new(2, 0, 0);
    /// The last release of the 2.x line (JDK 6), made beside 3.10.2.
    pub const NEWEST_2X: Version = Version::new(2, 15, 2);
    /// The newest release locksim models (2026-08).
    pub const NEWEST: Version = Version::new(4, 7, 0);

    /// `major.minor.patch`.
    pub const fn new(major: u16, minor: u16, patch: u16) -> Version {
        Version {
            major,
            minor,
            patch,
        }
    }

    /// The 3.x release whose lock code this release runs. Redisson shipped
    /// 2.x (JDK 6) and 3.x side by side from the same sources: 2.12.2 came
    /// out with 3.7.2 and 2.15.2 with 3.10.2 (same tag dates), so 2.N.p runs
    /// 3.(N−5).p; 2.0 to 2.4 came before 3.0 and before every switch.
    pub fn lock_code(self) -> Version {
        if self.major != 2 {
            return self;
        }
        match self.minor.checked_sub(5) {
            Some(minor) => Version::new(3, minor, self.patch),
            None => Version::new(3, 0, 0),
        }
    }

    /// Whether locksim models this release (2.0.0 to 2.15.2, 3.0.0 to 4.7.0).
    fn in_range(self) -> bool {
        (Version::OLDEST..=Version::NEWEST_2X).contains(&self)
            || (Version::new(3, 0, 0)..=Version::NEWEST).contains(&self)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl FromStr for Version {
    type Err = ReleaseError;

    /// `3.23.4`, `3.23` (patch 0) or `redisson-3.23.4` (the tag's name).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || ReleaseError::BadVersion(s.to_owned());
        let digits = s.strip_prefix("redisson-").unwrap_or(s);
        let mut parts = digits.split('.');
        let mut number = || -> Result<Option<u16>, ReleaseError> {
            match parts.next() {
                None => Ok(None),
                Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
                    p.parse().map(Some).map_err(|_| bad())
                }
                Some(_) => Err(bad()),
            }
        };
        let (Some(major), Some(minor)) = (number()?, number()?) else {
            return Err(bad());
        };
        let patch = number()?.unwrap_or(0);
        if number()?.is_some() {
            return Err(bad());
        }
        let version = Version::new(major, minor, patch);
        if !version.in_range() {
            return Err(ReleaseError::OutOfRange(version));
        }
        Ok(version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tags_and_short_forms() {
        assert_eq!("3.23.4".parse::<Version>(), Ok(Version::new(3, 23, 4)));
        assert_eq!("3.44".parse::<Version>(), Ok(Version::new(3, 44, 0)));
        assert_eq!(
            "redisson-4.7.0".parse::<Version>(),
            Ok(Version::new(4, 7, 0))
        );
    }

    #[test]
    fn refuses_what_is_not_a_modelled_release() {
        for bad in [
            "",
            "3",
            "3.x.1",
            "3.23.4.1",
            "-3.1.0",
            "3..1",
            "99999999.1.1",
        ] {
            assert_eq!(
                bad.parse::<Version>(),
                Err(ReleaseError::BadVersion(bad.to_owned())),
                "{bad}"
            );
        }
        for out in ["4.8.0", "5.0.0", "1.9.9", "2.16.0"] {
            assert!(
                matches!(out.parse::<Version>(), Err(ReleaseError::OutOfRange(_))),
                "{out}"
            );
        }
    }

    #[test]
    fn the_2x_line_runs_the_3x_code_of_its_day() {
        assert_eq!(Version::new(2, 15, 2).lock_code(), Version::new(3, 10, 2));
        assert_eq!(Version::new(2, 13, 1).lock_code(), Version::new(3, 8, 1));
        assert_eq!(Version::new(2, 3, 0).lock_code(), Version::new(3, 0, 0));
        assert_eq!(Version::new(3, 23, 4).lock_code(), Version::new(3, 23, 4));
    }
}
