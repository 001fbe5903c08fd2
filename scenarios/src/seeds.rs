//! A range of seeds to explore, checked when it is made: it is never empty
//! and never runs past `u64::MAX`, so a sweep cannot silently test nothing
//! or wrap around.

use std::fmt;
use std::ops::Range;

use crate::InputError;

/// The seeds `from..from + count`, with `count >= 1` and `from + count <= u64::MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeedRange {
    from: u64,
    count: u64,
}

impl SeedRange {
    /// `count` seeds from `from`, or why they cannot be explored.
    pub fn new(from: u64, count: u64) -> Result<SeedRange, InputError> {
        if count == 0 {
            return Err(InputError::NoSeeds);
        }
        if from.checked_add(count).is_none() {
            return Err(InputError::SeedRangeOverflow {
                from,
                seeds: count,
                max: u64::MAX - from,
            });
        }
        Ok(SeedRange { from, count })
    }

    /// The first seed.
    pub fn from(self) -> u64 {
        self.from
    }

    /// How many seeds.
    pub fn count(self) -> u64 {
        self.count
    }

    /// One past the last seed (never overflows: checked by [`SeedRange::new`]).
    pub fn end(self) -> u64 {
        self.from + self.count
    }

    /// The seeds, in order.
    pub fn seeds(self) -> Range<u64> {
        self.from..self.end()
    }

    /// Shard `shard` of `shards` (from 1): the range cut into `shards`
    /// contiguous parts whose sizes differ by at most one, so CI jobs
    /// (`--shard 1/4` ... `--shard 4/4`) cover it exactly once between them.
    pub fn shard(self, shard: u64, shards: u64) -> Result<SeedRange, InputError> {
        let bad = |reason: String| InputError::BadShard {
            shard,
            shards,
            reason,
        };
        if shards == 0 || shard == 0 || shard > shards {
            return Err(bad("give K/N with 1 <= K <= N".to_owned()));
        }
        if shards > self.count {
            return Err(bad(format!(
                "{} seeds cannot be cut into {shards} shards; use at most {} shards",
                self.count, self.count
            )));
        }
        let (base, extra) = (self.count / shards, self.count % shards);
        let k = shard - 1;
        let from = self.from + k * base + k.min(extra);
        let count = base + u64::from(k < extra);
        Ok(SeedRange { from, count })
    }

    /// The seeds from `next` on, if any are left: what a sweep stopped
    /// before `next` still has to explore.
    pub fn rest(self, next: u64) -> Option<SeedRange> {
        let next = next.max(self.from);
        (next < self.end()).then(|| SeedRange {
            from: next,
            count: self.end() - next,
        })
    }
}

impl fmt::Display for SeedRange {
    /// `from..end`, end exclusive, as Rust writes ranges.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.from, self.end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shards split a range into contiguous parts that cover it exactly
    /// once, sizes differing by at most one; impossible shards are refused.
    #[test]
    fn shards_cover_the_range_once() {
        let r = SeedRange::new(10, 10).unwrap();
        let parts: Vec<SeedRange> = (1..=3).map(|k| r.shard(k, 3).unwrap()).collect();
        assert_eq!(
            parts
                .iter()
                .map(|p| (p.from(), p.count()))
                .collect::<Vec<_>>(),
            vec![(10, 4), (14, 3), (17, 3)]
        );
        assert_eq!(r.shard(1, 1).unwrap(), r);
        for (k, n) in [(0, 3), (4, 3), (1, 0), (1, 11)] {
            assert!(r.shard(k, n).is_err(), "{k}/{n}");
        }
    }

    /// `--seeds 0` would explore nothing and pass: refused.
    #[test]
    fn empty_range_is_refused() {
        assert_eq!(SeedRange::new(5, 0), Err(InputError::NoSeeds));
        assert_eq!(
            InputError::NoSeeds.to_string(),
            "--seeds 0 explores nothing: give at least 1 seed"
        );
    }

    /// A range past `u64::MAX` would wrap (or be cut short): refused, and
    /// the message says how many seeds fit.
    #[test]
    fn overflowing_range_is_refused() {
        let err = SeedRange::new(u64::MAX - 2, 5).unwrap_err();
        assert_eq!(
            err,
            InputError::SeedRangeOverflow {
                from: u64::MAX - 2,
                seeds: 5,
                max: 2
            }
        );
        assert!(err.to_string().contains("at most 2 seeds from"), "{err}");
        assert_eq!(
            SeedRange::new(u64::MAX, 1).unwrap_err(),
            InputError::SeedRangeOverflow {
                from: u64::MAX,
                seeds: 1,
                max: 0
            }
        );
    }

    /// The largest ranges that fit are accepted and end at `u64::MAX`.
    #[test]
    fn ranges_up_to_the_last_seed_are_accepted() {
        let r = SeedRange::new(u64::MAX - 3, 3).unwrap();
        assert_eq!(r.end(), u64::MAX);
        assert_eq!(r.seeds().count(), 3);
        assert_eq!(SeedRange::new(0, u64::MAX).unwrap().end(), u64::MAX);
        assert_eq!(r.to_string(), format!("{}..{}", u64::MAX - 3, u64::MAX));
    }

    /// What is left after a stop: the seeds from the stop on, or nothing.
    #[test]
    fn rest_after_a_stop() {
        let r = SeedRange::new(10, 5).unwrap();
        assert_eq!(r.rest(10), Some(r));
        assert_eq!(r.rest(12), Some(SeedRange::new(12, 3).unwrap()));
        assert_eq!(r.rest(15), None);
    }
}
