//! Places in the lock's algorithm that a test wants to see reached now
//! and then: the preconditions of Redisson's known lock defects, as
//! Antithesis's `sometimes` assertions.
//!
//! The machine notes each place as it passes it ([`LockClient::reached`]);
//! noting changes nothing it does or emits, so a run is the same with or
//! without anyone reading them. A simulator counts them over many runs to
//! tell which preconditions its random runs ever reach (sim's coverage).

use serde::{Deserialize, Serialize};

use super::LockClient;

macro_rules! places {
    ($($(#[$doc:meta])* $variant:ident => $name:literal,)+) => {
        /// A place in the lock's algorithm (see the module docs).
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
        )]
        #[serde(rename_all = "kebab-case")]
        pub enum Sometimes {
            $($(#[$doc])* $variant,)+
        }

        impl Sometimes {
            /// Every place, in declaration order.
            pub const ALL: &'static [Sometimes] = &[$(Sometimes::$variant,)+];

            /// Its stable name (serde's).
            pub fn name(self) -> &'static str {
                match self {
                    $(Sometimes::$variant => $name,)+
                }
            }
        }
    };
}

places! {
    /// A `tryLock(wait)`'s subscription to the unlock channel failed
    /// (3.17.0's `subscribe-failure-false` path).
    SubscribeFailedInTryLock => "subscribe-failed-in-try-lock",
    /// A thread was interrupted while its acquire was in flight or
    /// waiting to be resent (#2714, #4368, #7272).
    AcquireAbandoned => "acquire-abandoned",
    /// The reply to an interrupted thread's acquire took the lock
    /// (#2714, #7272: the late reply may arm the watchdog).
    AbandonedAcquireTookLock => "abandoned-acquire-took-lock",
    /// An acquire's `WAIT` synced too few replicas (#4822).
    AcquireNotSynced => "acquire-not-synced",
    /// An unlock's `WAIT` synced too few replicas (#6651).
    UnlockNotSynced => "unlock-not-synced",
    /// A lock script's `WAIT` or `WAITAOF` was refused with an error: a
    /// demoted primary's `ERR WAIT cannot be used with replica instances`
    /// (#6488), or a server without `WAITAOF` (#6618).
    SyncRefused => "sync-refused",
    /// A synced lock script's batch (3.46+, `EVALSHA`) was answered
    /// `NOSCRIPT`: resent to a node that lacks it, or after a `SCRIPT
    /// FLUSH` (commit 32df429bd).
    BatchNoScript => "batch-no-script",
    /// A cluster node answered a command `MOVED` or `ASK` (a slot being
    /// migrated, or moved) and it went to the node named.
    Redirected => "redirected",
    /// A command answered `TRYAGAIN` (a multi-key command while its slot
    /// migrates) or `LOADING` was sent again after the retry delay.
    TriedAgain => "tried-again",
    /// An unlock that counts a re-entrant hold down had its `WAIT` sync
    /// too few replicas (the defect not reported upstream).
    CountDownUnlockNotSynced => "count-down-unlock-not-synced",
    /// A synced script's `WAIT` counted more replicas than the client's
    /// cached count asked for, and the client kept the count: its later
    /// scripts wait for too few (3.27.0 to 3.45.x, #6518).
    ReplicaCountKeptLow => "replica-count-kept-low",
    /// A renewal failed with an error (#3194, #6303).
    RenewalFailed => "renewal-failed",
    /// A renewal answered 0: the key was not held by the client
    /// (#3712/#3714).
    RenewalFoundLockGone => "renewal-found-lock-gone",
    /// A batched renewal round (3.44+) met a lock with no renewal entry
    /// and skipped it.
    RoundSkippedLock => "round-skipped-lock",
    /// A batched renewal round met locks none of whose entries had a
    /// thread to renew: an empty chunk (#6506).
    RoundEmptyChunk => "round-empty-chunk",
    /// An attempt of `tryLock`'s wait loop timed out (#5019).
    TryLockWaitTimedOut => "try-lock-wait-timed-out",
    /// An acquire or an unlock timed out unanswered and the release
    /// decided whether to send it again (#1966, #4871).
    LockCommandTimedOut => "lock-command-timed-out",
    /// An unlock answered that the lock was not held (nil: #2515).
    UnlockFoundLockGone => "unlock-found-lock-gone",
    /// An unlock failed with an error, renewal then cancelled or not
    /// (#1602).
    UnlockFailed => "unlock-failed",
    /// A renewal entry emptied by an unlock was removed from the map in a
    /// second step another callback could run before (#6844).
    RenewalMapRace => "renewal-map-race",
    /// An asynchronous waiter registered its listener, where an unlock
    /// message can slip in before (#5761).
    ListenerRegistered => "listener-registered",
}

/// The places a client reached, as a set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reached(u64);

impl Reached {
    /// Nothing reached.
    pub const EMPTY: Reached = Reached(0);

    /// `self` with `place` added.
    pub const fn with(self, place: Sometimes) -> Reached {
        Reached(self.0 | 1 << place as u32)
    }

    /// Whether `place` was reached.
    pub const fn has(self, place: Sometimes) -> bool {
        self.0 & (1 << place as u32) != 0
    }

    /// The places of both.
    pub const fn union(self, other: Reached) -> Reached {
        Reached(self.0 | other.0)
    }

    /// The places reached, in declaration order.
    pub fn iter(self) -> impl Iterator<Item = Sometimes> {
        Sometimes::ALL.iter().copied().filter(move |p| self.has(*p))
    }
}

impl LockClient {
    /// Notes that the machine passed `place`; nothing else changes.
    pub(super) fn reach(&mut self, place: Sometimes) {
        self.reached = self.reached.with(place);
    }

    /// The places of its algorithm this client has passed so far.
    pub fn reached(&self) -> Reached {
        self.reached
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::harness::{Harness, release};
    use crate::{Call, Millis, Purpose, ThreadId, TransportError, Value};

    /// A `tryLock(wait)` whose subscription fails, under a release before
    /// and after 3.17.0's change: the place is noted in both (it is the
    /// precondition, whatever the release does next), and only there; a
    /// `lock()` whose subscription fails does not reach it.
    #[test]
    fn a_failed_subscription_inside_try_lock_is_noted() {
        let reached = |version: &str, call: Call| {
            let mut h = Harness::short(release(version));
            h.call(ThreadId(1), "l", call).unwrap();
            assert_eq!(h.m.reached(), Reached::EMPTY);
            let first = h.expect(Purpose::Acquire);
            h.reply(first, Value::Int(5_000));
            let subscribe = h.expect_subscribe();
            h.fail(subscribe, TransportError::Timeout);
            let _ = h.until_return(ThreadId(1));
            h.m.reached()
        };
        let try_lock = || Call::TryLock {
            wait: Some(Millis(10_000)),
            lease: None,
        };
        for version in ["3.16.8", "3.17.0"] {
            let got = reached(version, try_lock());
            assert!(got.has(Sometimes::SubscribeFailedInTryLock), "{version}");
        }
        let lock = reached("3.17.0", Call::Lock { lease: None });
        assert!(!lock.has(Sometimes::SubscribeFailedInTryLock));
    }

    /// Names are distinct and fit the set's 64 bits.
    #[test]
    fn places_are_named_once_and_fit_the_set() {
        assert!(Sometimes::ALL.len() <= 64);
        let mut names: Vec<&str> = Sometimes::ALL.iter().map(|p| p.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Sometimes::ALL.len());
        let set = Reached::EMPTY
            .with(Sometimes::RenewalFailed)
            .union(Reached::EMPTY.with(Sometimes::AcquireAbandoned));
        let got: Vec<Sometimes> = set.iter().collect();
        assert_eq!(got, [Sometimes::AcquireAbandoned, Sometimes::RenewalFailed]);
    }
}
