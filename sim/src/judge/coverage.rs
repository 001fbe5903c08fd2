//! Coverage: which declared `sometimes` points a run reached.
//!
//! A uniform swarm is blind to what it did not draw: nothing says whether
//! a range of seeds ever lost an unlock's reply, interrupted an acquire in
//! flight or failed a subscription inside `tryLock(wait)`, the
//! preconditions of Redisson's known defects. As Antithesis's `sometimes`
//! assertions, each point below is a condition that some runs should
//! reach; a sweep counts the runs that reached each one, and a point no
//! run reaches is a gap in the generator.
//!
//! Points come from two places, one line each in the `points!` table:
//!
//! - `lock(..)`: a place in lockcore's algorithm, which the machine notes
//!   as it passes ([`lockcore::Sometimes`], [`lockcore::LockClient::reached`]);
//!   noting changes nothing it does or emits.
//! - `history`: a condition on the run's history and spec (a crash while
//!   holding, a failover that lost a lock), read after the run by
//!   `seen::reached_in`, so every engine's run is covered the same way.
//!
//! Counting coverage reads a finished run and never changes one: a seed's
//! history is the same, byte for byte.

mod seen;

use lockcore::{Reached, Sometimes};
use serde::{Deserialize, Serialize};

use crate::History;
use crate::model::spec::SimSpec;

/// Where a point is observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A place in lockcore's algorithm.
    Lock(Sometimes),
    /// A condition on the history and the spec.
    History,
}

macro_rules! points {
    ($($variant:ident => $name:literal, $source:expr, $meaning:literal;)+) => {
        /// A declared `sometimes` point (see the module docs).
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
        )]
        #[serde(rename_all = "kebab-case")]
        pub enum Point {
            $(#[doc = $meaning] $variant,)+
        }

        impl Point {
            /// Every point, in declaration order (the order coverage is
            /// printed in).
            pub const ALL: &'static [Point] = &[$(Point::$variant,)+];

            /// Its stable name (serde's).
            pub fn name(self) -> &'static str {
                match self {
                    $(Point::$variant => $name,)+
                }
            }

            /// What reaching it means, in one line.
            pub fn meaning(self) -> &'static str {
                match self {
                    $(Point::$variant => $meaning,)+
                }
            }

            /// Where it is observed.
            pub fn source(self) -> Source {
                use Source::{History, Lock};
                match self {
                    $(Point::$variant => $source,)+
                }
            }
        }
    };
}

points! {
    LockCommandTimedOut => "lock-command-timed-out", Lock(Sometimes::LockCommandTimedOut),
        "an acquire or unlock timed out unanswered and may be sent again (#1966, #4871)";
    UnlockFoundLockGone => "unlock-found-lock-gone", Lock(Sometimes::UnlockFoundLockGone),
        "an unlock's script found the lock not held by its thread (#2515, #4871)";
    UnlockFailed => "unlock-failed", Lock(Sometimes::UnlockFailed),
        "an unlock failed with an error (#1602)";
    AcquireAbandoned => "acquire-abandoned", Lock(Sometimes::AcquireAbandoned),
        "a thread was interrupted with its acquire in flight (#2714, #7272)";
    AbandonedAcquireTookLock => "abandoned-acquire-took-lock", Lock(Sometimes::AbandonedAcquireTookLock),
        "an interrupted thread's acquire was answered and took the lock (#2714, #7272)";
    SubscribeFailedInTryLock => "subscribe-failed-in-try-lock", Lock(Sometimes::SubscribeFailedInTryLock),
        "a tryLock(wait)'s subscription to the unlock channel failed (tag redisson-3.17.0)";
    TryLockWaitTimedOut => "try-lock-wait-timed-out", Lock(Sometimes::TryLockWaitTimedOut),
        "an acquire inside tryLock's wait loop timed out (#5019)";
    ListenerRegistered => "listener-registered", Lock(Sometimes::ListenerRegistered),
        "an async waiter registered its unlock listener (#5761)";
    AcquireNotSynced => "acquire-not-synced", Lock(Sometimes::AcquireNotSynced),
        "an acquire's WAIT synced too few replicas (#4822)";
    UnlockNotSynced => "unlock-not-synced", Lock(Sometimes::UnlockNotSynced),
        "an unlock's WAIT synced too few replicas (#6651)";
    SyncRefused => "sync-refused", Lock(Sometimes::SyncRefused),
        "a lock script's WAIT or WAITAOF was refused with an error (#6488, #6618)";
    BatchNoScript => "batch-no-script", Lock(Sometimes::BatchNoScript),
        "a synced lock script's batch was answered NOSCRIPT (commit 32df429bd)";
    Redirected => "redirected", Lock(Sometimes::Redirected),
        "a cluster node answered MOVED or ASK and the command went to the node named (slot-migration)";
    TriedAgain => "tried-again", Lock(Sometimes::TriedAgain),
        "a command answered TRYAGAIN or LOADING was sent again after the retry delay (slot-migration)";
    CountDownUnlockNotSynced => "count-down-unlock-not-synced", Lock(Sometimes::CountDownUnlockNotSynced),
        "a count-down unlock's WAIT synced too few replicas (the defect not reported upstream)";
    ReplicaCountKeptLow => "replica-count-kept-low", Lock(Sometimes::ReplicaCountKeptLow),
        "a WAIT counted more replicas than the client's cached count asked for, and the client kept the count (#6518)";
    RenewalFailed => "renewal-failed", Lock(Sometimes::RenewalFailed),
        "a renewal failed with an error (#3194, #6303, #6472)";
    RenewalFoundLockGone => "renewal-found-lock-gone", Lock(Sometimes::RenewalFoundLockGone),
        "a renewal answered 0: the client no longer held the key (#3712/#3714)";
    RoundSkippedLock => "round-skipped-lock", Lock(Sometimes::RoundSkippedLock),
        "a batched renewal round met a lock with no renewal entry (#6472)";
    RoundEmptyChunk => "round-empty-chunk", Lock(Sometimes::RoundEmptyChunk),
        "a batched renewal round had locks but no thread to renew (#6506)";
    RenewalMapRace => "renewal-map-race", Lock(Sometimes::RenewalMapRace),
        "an emptied renewal entry left the map in a step another callback could precede (#6844)";
    RenewalResent => "renewal-resent", History,
        "a renewal was sent again after it timed out unanswered";
    RenewalAfterUnlock => "renewal-after-unlock", History,
        "a client renewed a lock none of its threads held after unlocking it (#1602, #2515, #7272)";
    ReentrantHold => "reentrant-hold", History,
        "a thread acquired a lock it already held (#5623, #4109)";
    TwoLocksHeld => "two-locks-held", History,
        "one client held two locks at once (#6303's batched round)";
    TryLockGaveUp => "try-lock-gave-up", History,
        "a tryLock returned false";
    UnlockErrorReturned => "unlock-error-returned", History,
        "an unlock call returned an error to its thread";
    WokenByMessage => "woken-by-message", History,
        "an unlock message reached a client";
    Resubscribed => "resubscribed", History,
        "a client sent its subscriptions again after its connections closed";
    ReplyDropped => "reply-dropped", History,
        "the network dropped a reply or message on its way to a client";
    MessageHeld => "message-held", History,
        "a partition held a message until TCP's retransmission";
    ExpiredWhileBelieved => "expired-while-believed", History,
        "a lock's key expired while a thread believed it held it";
    TwoBelievers => "two-believers", History,
        "two threads believed they held the same lock at once";
    CrashWhileHolding => "crash-while-holding", History,
        "a client process crashed while one of its threads held a lock";
    PauseBeyondWatchdog => "pause-beyond-watchdog", History,
        "a client holding a lock was paused longer than its lockWatchdogTimeout";
    FailoverLostLock => "failover-lost-lock", History,
        "a failover promoted a replica that did not have a held lock";
    RestartLostLock => "restart-lost-lock", History,
        "Redis restarted without persistence while a lock was held";
    KeyDeletedWhileHeld => "key-deleted-while-held", History,
        "someone other than the lock deleted a held lock's key";
    LeaseLostSignalled => "lease-lost-signalled", History,
        "fenced: a holder learned that its lease was lost";
    LateWriteRejected => "late-write-rejected", History,
        "the resource refused a write for its stale fencing token";
}

impl Point {
    /// The point that counts `place` of the lock's algorithm (the
    /// registry test shows each place has exactly one).
    pub fn of_place(place: Sometimes) -> Point {
        Point::ALL
            .iter()
            .copied()
            .find(|p| p.source() == Source::Lock(place))
            .unwrap_or_else(|| unreachable!("every place is a point: {place:?}"))
    }
}

/// The points a run reached, as a set (serde: their names, in
/// declaration order).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coverage(u64);

impl Coverage {
    /// No point.
    pub const EMPTY: Coverage = Coverage(0);

    /// `self` with `point` added.
    pub const fn with(self, point: Point) -> Coverage {
        Coverage(self.0 | 1 << point as u32)
    }

    /// Whether it has `point`.
    pub const fn has(self, point: Point) -> bool {
        self.0 & (1 << point as u32) != 0
    }

    /// The points reached, in declaration order.
    pub fn iter(self) -> impl Iterator<Item = Point> {
        Point::ALL.iter().copied().filter(move |p| self.has(*p))
    }

    /// The points of a run: the places its clients' lock passed
    /// (`reached`) and the conditions its history shows.
    pub fn of(spec: &SimSpec, history: &History, reached: Reached) -> Coverage {
        let lock = Point::ALL
            .iter()
            .fold(Coverage::EMPTY, |c, p| match p.source() {
                Source::Lock(place) if reached.has(place) => c.with(*p),
                _ => c,
            });
        seen::reached_in(spec, history, lock)
    }
}

impl Serialize for Coverage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

impl<'de> Deserialize<'de> for Coverage {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let points = Vec::<Point>::deserialize(d)?;
        Ok(points.into_iter().fold(Coverage::EMPTY, Coverage::with))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registry: names are unique and fit the set, and every place
    /// lockcore notes is counted by exactly one point (a place no point
    /// names could never be counted).
    #[test]
    fn every_place_of_the_lock_is_one_point() {
        assert!(Point::ALL.len() <= 64);
        let mut names: Vec<&str> = Point::ALL.iter().map(|p| p.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Point::ALL.len());
        for place in Sometimes::ALL {
            let points: Vec<Point> = Point::ALL
                .iter()
                .copied()
                .filter(|p| p.source() == Source::Lock(*place))
                .collect();
            assert_eq!(points.len(), 1, "{place:?} is counted by {points:?}");
            assert_eq!(points[0].name(), place.name());
        }
    }

    /// A set goes to JSON as its names and comes back the same.
    #[test]
    fn coverage_round_trips_as_names() {
        let c = Coverage::EMPTY
            .with(Point::CrashWhileHolding)
            .with(Point::LockCommandTimedOut);
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(json, r#"["lock-command-timed-out","crash-while-holding"]"#);
        assert_eq!(serde_json::from_str::<Coverage>(&json).unwrap(), c);
    }
}
