//! The sorted set: members ordered by score, then by member bytes, as
//! Redis orders them.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Range;

use bytes::Bytes;

/// A sorted set (never empty in the keyspace: Redis deletes it with its
/// last member).
///
/// Members sit in a vector sorted as Redis sorts them (score, then member
/// bytes), with each member's score in an ordered map beside it: rank
/// and range queries are binary searches and slices, score lookups a map
/// search. Inserting moves the vector's tail, as Redis's listpack (its
/// encoding up to 128 members) moves its bytes; RFairLock's timeout set
/// holds one member per waiting thread. Nothing here hashes, so every
/// iteration is in Redis's order.
///
/// Scores are never NaN and never `-0`: Redis stores a small set's score
/// as text and reads `-0` back as `0` (replies of the command that set it
/// still show `-0`, and so do the commands here, see `ZADD`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Zset {
    order: Vec<(f64, Bytes)>,
    scores: BTreeMap<Bytes, f64>,
}

// Scores are never NaN, so equality is an equivalence.
impl Eq for Zset {}

/// Redis's order: by score, then by member bytes.
fn cmp(a: (f64, &[u8]), b: (f64, &[u8])) -> Ordering {
    a.0.total_cmp(&b.0).then_with(|| a.1.cmp(b.1))
}

impl Zset {
    /// How many members.
    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The members and their scores in order.
    pub(crate) fn entries(&self) -> &[(f64, Bytes)] {
        &self.order
    }

    /// `member`'s score.
    pub(crate) fn score(&self, member: &[u8]) -> Option<f64> {
        self.scores.get(member).copied()
    }

    /// `member`'s 0-based position in order.
    pub(crate) fn rank(&self, member: &[u8]) -> Option<usize> {
        let score = self.score(member)?;
        self.order
            .binary_search_by(|(s, m)| cmp((*s, m), (score, member)))
            .ok()
    }

    /// Sets `member`'s score (not NaN), adding it when new.
    pub(crate) fn insert(&mut self, member: &Bytes, score: f64) {
        // `-0.0 + 0.0` is `0.0`: the score as Redis reads it back.
        let score = score + 0.0;
        if let Some(old) = self.scores.insert(member.clone(), score)
            && let Ok(at) = self
                .order
                .binary_search_by(|(s, m)| cmp((*s, m), (old, member)))
        {
            self.order.remove(at);
        }
        let at = self
            .order
            .binary_search_by(|(s, m)| cmp((*s, m), (score, member)))
            .unwrap_or_else(|at| at);
        self.order.insert(at, (score, member.clone()));
    }

    /// Removes `member`; whether it was there.
    pub(crate) fn remove(&mut self, member: &[u8]) -> bool {
        match self.rank(member) {
            Some(at) => {
                self.order.remove(at);
                self.scores.remove(member);
                true
            }
            None => false,
        }
    }

    /// Removes the members at positions `range`, returning them in order.
    pub(crate) fn remove_range(&mut self, range: Range<usize>) -> Vec<(f64, Bytes)> {
        let gone: Vec<(f64, Bytes)> = self.order.drain(range).collect();
        for (_, member) in &gone {
            self.scores.remove(member);
        }
        gone
    }

    /// The positions of the members whose scores are in `range`.
    pub(crate) fn score_positions(&self, range: &ScoreRange) -> Range<usize> {
        let start = self.order.partition_point(|(s, _)| !range.above_min(*s));
        let end = self.order.partition_point(|(s, _)| range.below_max(*s));
        start..end.max(start)
    }

    /// Redis's `zzlIsInLexRange`: the range is not empty, the last member
    /// is at least its min and the first at most its max.
    fn may_hold(&self, range: &LexRange) -> bool {
        match (self.order.first(), self.order.last()) {
            (Some((_, first)), Some((_, last))) => {
                !range.is_empty() && range.above_min(last) && range.below_max(first)
            }
            _ => false,
        }
    }

    /// The positions of the members in `range`, found as Redis finds them
    /// in a listpack (`zzlFirstInLexRange`, `zzlLastInLexRange`): a lex
    /// range is meant for members of equal score; with mixed scores this
    /// is still Redis's answer for a set of up to 128 members.
    pub(crate) fn lex_positions(&self, range: &LexRange) -> Range<usize> {
        if !self.may_hold(range) {
            return 0..0;
        }
        let Some(start) = self.order.iter().position(|(_, m)| range.above_min(m)) else {
            return 0..0;
        };
        let len = self.order[start..]
            .iter()
            .take_while(|(_, m)| range.below_max(m))
            .count();
        start..start + len
    }

    /// [`Zset::lex_positions`] walking from the end, as Redis does for a
    /// reversed range: the last member at most `max`, then back while at
    /// least `min`.
    pub(crate) fn lex_positions_rev(&self, range: &LexRange) -> Range<usize> {
        if !self.may_hold(range) {
            return 0..0;
        }
        let Some(end) = self.order.iter().rposition(|(_, m)| range.below_max(m)) else {
            return 0..0;
        };
        let len = self.order[..=end]
            .iter()
            .rev()
            .take_while(|(_, m)| range.above_min(m))
            .count();
        end + 1 - len..end + 1
    }
}

/// A score range (`ZRANGEBYSCORE`'s `min max`, `(` for exclusive).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ScoreRange {
    pub(crate) min: f64,
    pub(crate) max: f64,
    pub(crate) min_exclusive: bool,
    pub(crate) max_exclusive: bool,
}

impl ScoreRange {
    fn above_min(&self, score: f64) -> bool {
        if self.min_exclusive {
            score > self.min
        } else {
            score >= self.min
        }
    }

    fn below_max(&self, score: f64) -> bool {
        if self.max_exclusive {
            score < self.max
        } else {
            score <= self.max
        }
    }
}

/// One end of a lex range: `-`, `+`, `[member` or `(member`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LexBound {
    /// `-`: below every member.
    Min,
    /// `+`: above every member.
    Max,
    /// `[member`.
    Inclusive(Bytes),
    /// `(member`.
    Exclusive(Bytes),
}

impl LexBound {
    /// Redis's `zslParseLexRangeItem`.
    pub(crate) fn parse(arg: &[u8]) -> Option<LexBound> {
        match arg {
            b"-" => Some(LexBound::Min),
            b"+" => Some(LexBound::Max),
            [b'[', rest @ ..] => Some(LexBound::Inclusive(Bytes::copy_from_slice(rest))),
            [b'(', rest @ ..] => Some(LexBound::Exclusive(Bytes::copy_from_slice(rest))),
            _ => None,
        }
    }

    /// Where this bound sits against `member`, `-` and `+` beyond all.
    fn cmp_member(&self, member: &[u8]) -> Ordering {
        match self {
            LexBound::Min => Ordering::Less,
            LexBound::Max => Ordering::Greater,
            LexBound::Inclusive(b) | LexBound::Exclusive(b) => b.as_ref().cmp(member),
        }
    }

    fn exclusive(&self) -> bool {
        !matches!(self, LexBound::Inclusive(_))
    }
}

/// A lex range (`ZRANGE ... BYLEX`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LexRange {
    pub(crate) min: LexBound,
    pub(crate) max: LexBound,
}

impl LexRange {
    /// Redis's `zslIsInLexRange` test that the range can hold anything.
    fn is_empty(&self) -> bool {
        let order = match (&self.min, &self.max) {
            (LexBound::Max, _) | (_, LexBound::Min) => return true,
            (LexBound::Min, _) | (_, LexBound::Max) => return false,
            (a, b) => a.cmp_member(match b {
                LexBound::Inclusive(m) | LexBound::Exclusive(m) => m,
                _ => return false,
            }),
        };
        order == Ordering::Greater
            || (order == Ordering::Equal && (self.min.exclusive() || self.max.exclusive()))
    }

    fn above_min(&self, member: &[u8]) -> bool {
        match self.min.cmp_member(member) {
            Ordering::Less => true,
            Ordering::Equal => !self.min.exclusive(),
            Ordering::Greater => false,
        }
    }

    fn below_max(&self, member: &[u8]) -> bool {
        match self.max.cmp_member(member) {
            Ordering::Greater => true,
            Ordering::Equal => !self.max.exclusive(),
            Ordering::Less => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(pairs: &[(f64, &str)]) -> Zset {
        let mut z = Zset::default();
        for (score, member) in pairs {
            z.insert(&Bytes::copy_from_slice(member.as_bytes()), *score);
        }
        z
    }

    fn members(z: &Zset, range: Range<usize>) -> Vec<&str> {
        z.entries()[range]
            .iter()
            .map(|(_, m)| std::str::from_utf8(m).unwrap_or("?"))
            .collect()
    }

    /// Equal scores order by member bytes, infinities at the ends, a
    /// re-scored member moves, and `-0` is stored as `0` (so `0 a` and
    /// `-0 b` order by member, as on redis-server 7.0.15).
    #[test]
    fn order_is_score_then_member() {
        let mut z = set(&[(1.0, "b"), (1.0, "a"), (f64::INFINITY, "z"), (-0.0, "y")]);
        z.insert(&Bytes::from_static(b"c"), f64::NEG_INFINITY);
        z.insert(&Bytes::from_static(b"x"), 0.0);
        assert_eq!(members(&z, 0..z.len()), ["c", "x", "y", "a", "b", "z"]);
        assert_eq!(z.score(b"y").map(f64::is_sign_negative), Some(false));
        z.insert(&Bytes::from_static(b"a"), 2.0);
        assert_eq!(members(&z, 0..z.len()), ["c", "x", "y", "b", "a", "z"]);
        assert_eq!(z.rank(b"a"), Some(4));
        assert!(z.remove(b"c"));
        assert!(!z.remove(b"c"));
        assert_eq!(z.rank(b"x"), Some(0));
        assert_eq!(z.len(), 5);
    }

    /// Inclusive and exclusive score bounds, and an empty range when min
    /// is above max.
    #[test]
    fn score_ranges_honour_exclusive_bounds() {
        let z = set(&[(1.0, "a"), (2.0, "b"), (2.0, "c"), (3.0, "d")]);
        let range = |min, max, min_exclusive, max_exclusive| ScoreRange {
            min,
            max,
            min_exclusive,
            max_exclusive,
        };
        assert_eq!(
            members(&z, z.score_positions(&range(2.0, 3.0, false, false))),
            ["b", "c", "d"]
        );
        assert_eq!(
            members(&z, z.score_positions(&range(1.0, 3.0, true, true))),
            ["b", "c"]
        );
        assert_eq!(z.score_positions(&range(3.0, 1.0, false, false)).len(), 0);
        assert_eq!(z.score_positions(&range(2.0, 2.0, true, false)).len(), 0);
    }

    /// Lex bounds as Redis parses them, and ranges over equal scores.
    #[test]
    fn lex_ranges_over_equal_scores() {
        let z = set(&[(0.0, "a"), (0.0, "b"), (0.0, "c"), (0.0, "d")]);
        let lex = |min: &str, max: &str| LexRange {
            min: LexBound::parse(min.as_bytes()).expect("bound"),
            max: LexBound::parse(max.as_bytes()).expect("bound"),
        };
        assert_eq!(
            members(&z, z.lex_positions(&lex("-", "+"))),
            ["a", "b", "c", "d"]
        );
        assert_eq!(members(&z, z.lex_positions(&lex("(a", "[c"))), ["b", "c"]);
        assert_eq!(
            members(&z, z.lex_positions_rev(&lex("[b", "(d"))),
            ["b", "c"]
        );
        assert_eq!(z.lex_positions(&lex("+", "-")).len(), 0);
        assert_eq!(z.lex_positions(&lex("(b", "[b")).len(), 0);
        assert_eq!(LexBound::parse(b"b"), None);
        assert_eq!(LexBound::parse(b"-x"), None);
        assert_eq!(
            LexBound::parse(b"["),
            Some(LexBound::Inclusive(Bytes::new()))
        );
    }
}
