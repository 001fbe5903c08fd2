//! Behaviour switches: each row of Redisson's history that changes what the
//! lock does, as a name, the release that brought it, and its upstream
//! issue. A release is the set of switches in force for it; a known defect
//! is the behaviour of the releases before its switch.
//!
//! A switch is one file here (its documentation, its [`SwitchInfo`] and
//! the unit tests of its behaviour) plus one line in [`switches!`]; the
//! machine asks its `SwitchReads` where the behaviour differs.

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use super::{ReleaseError, Version};

/// The `upstream` of a switch that fixes a defect locksim found and no
/// upstream issue reports (searched when it was added).
pub const NOT_REPORTED: &str = "not reported upstream";

/// What one switch is: its name, where it comes from, what it changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwitchInfo {
    /// The name used on the command line (`--with NAME`) and in files.
    pub name: &'static str,
    /// The first release that has it; `None` for locksim's own extensions,
    /// which no Redisson release has.
    pub since: Option<Version>,
    /// The upstream issue or commit behind it.
    pub upstream: &'static str,
    /// What it changes, in one line.
    pub summary: &'static str,
    /// Whether it removes a defect of the releases before it, as locksim
    /// models them: what explore's attribution may name as a defect's
    /// fix. False for a change that fixes nothing locksim models (the
    /// timer's tick, the acquire script's wire text) or that brought a
    /// defect (the renewal thread queue): adding one to an older release
    /// can only move the timing or add a defect, so a defect it makes
    /// disappear was not fixed by it.
    pub fixes: bool,
}

macro_rules! switches {
    ($($variant:ident => $module:ident,)*) => {
        $(mod $module;)*

        /// One behaviour switch (see [`SwitchInfo`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Switch {
            $(
                #[allow(missing_docs)]
                $variant,
            )*
        }

        impl Switch {
            /// Every switch, oldest release first.
            pub const ALL: &'static [Switch] = &[$(Switch::$variant,)*];

            /// The switch's name, origin and summary.
            pub fn info(self) -> &'static SwitchInfo {
                match self {
                    $(Switch::$variant => &$module::INFO,)*
                }
            }
        }
    };
}

switches! {
    RedLockWaitShare => red_lock_wait_share,
    RedLockWaitFloor => red_lock_wait_floor,
    UnlockErrorCancels => unlock_error_cancels,
    ReadLockRenewal => read_lock_renewal,
    WriteUnlockWakesAll => write_unlock_wakes_all,
    MultiTimeoutUnlocks => multi_timeout_unlocks,
    ConnectionClosedRemoved => connection_closed_removed,
    ExpirationEntry => expiration_entry,
    ReadAcquireKeepsTtl => read_acquire_keeps_ttl,
    FairEnqueueFromLast => fair_enqueue_from_last,
    MultiTryLockLease => multi_try_lock_lease,
    NilUnlockCancels => nil_unlock_cancels,
    RenewalZeroStops => renewal_zero_stops,
    LockScriptBatch => lock_script_batch,
    BatchFailureFailsCommands => batch_failure_fails_commands,
    FairWaitFromTryLock => fair_wait_from_try_lock,
    RenewalErrorRemovesEntry => renewal_error_removes_entry,
    WatchdogLeaseFromInstance => watchdog_lease_from_instance,
    SpinLock => spin_lock,
    RenewalZeroRemovesEntry => renewal_zero_removes_entry,
    InterruptCancelsAcquire => interrupt_cancels_acquire,
    LockWaitsForReplicas => lock_waits_for_replicas,
    SubscribeFailureFalse => subscribe_failure_false,
    ExpireScript => expire_script,
    MultiWaitEachRound => multi_wait_each_round,
    SpinLastSpinTrue => spin_last_spin_true,
    NoSyncedReplicasOnly => no_synced_replicas_only,
    ReplicaCountFromInfo => replica_count_from_info,
    CombinedAcquireScript => combined_acquire_script,
    FencedLock => fenced_lock,
    UnlockResetsLease => unlock_resets_lease,
    NoSyncRollback => no_sync_rollback,
    NoSyncRetry => no_sync_retry,
    AcquireRetryWrapper => acquire_retry_wrapper,
    PublishCommandArgument => publish_command_argument,
    SpinWaitFromStart => spin_wait_from_start,
    InfoOutsideSingleServer => info_outside_single_server,
    UnlockLatch => unlock_latch,
    LatchTtlAtLeastOne => latch_ttl_at_least_one,
    NoSyncMessageLengthened => no_sync_message_lengthened,
    JvmWaitProbe => jvm_wait_probe,
    ReplicaCountCached => replica_count_cached,
    ReadonlyRetried => readonly_retried,
    CountDownKeepsLease => count_down_keeps_lease,
    MultiUnlockInOrder => multi_unlock_in_order,
    ListenerRechecksLatch => listener_rechecks_latch,
    FairPurgeChecksScore => fair_purge_checks_score,
    FairWaitReplyPttl => fair_wait_reply_pttl,
    NoLockResend => no_lock_resend,
    ThreadQueue => thread_queue,
    BatchedRenewal => batched_renewal,
    ReadLockTask => read_lock_task,
    RwUnlockAbsentNil => rw_unlock_absent_nil,
    FairEnqueueChecksScore => fair_enqueue_checks_score,
    RoundSkipsRemovedLock => round_skips_removed_lock,
    ReplicaWaitRetried => replica_wait_retried,
    QueueClearedOnUnlock => queue_cleared_on_unlock,
    EmptyChunkCompletes => empty_chunk_completes,
    PubSubClosedEntryDropped => pubsub_closed_entry_dropped,
    ScriptCache => script_cache,
    WaitProbe => wait_probe,
    ReplicaCountResetOnMore => replica_count_reset_on_more,
    BatchFirstError => batch_first_error,
    NoSyncedSlavesException => no_synced_slaves_exception,
    ProbeBackticks => probe_backticks,
    ProbePrefixMatch => probe_prefix_match,
    BatchNoscriptReloads => batch_noscript_reloads,
    FixedTimerTick => fixed_timer_tick,
    JitteredRetryDelay => jittered_retry_delay,
    RetryDelayTimerTick => retry_delay_timer_tick,
    NoSyncKeepsRequestId => no_sync_keeps_request_id,
    ProbeReadsCauses => probe_reads_causes,
    LockSyncWaitOnly => lock_sync_wait_only,
    ReadRenewLoopFixed => read_renew_loop_fixed,
    AtomicRenewalMap => atomic_renewal_map,
    ReadRenewOwnNames => read_renew_own_names,
    LatchTtlLong => latch_ttl_long,
    TryLockTimeoutFalse => try_lock_timeout_false,
    Fencing => fencing,
    InterruptedAcquireUnlocks => interrupted_acquire_unlocks,
    ReadEntryClearsQueue => read_entry_clears_queue,
    RenewalBySlot => renewal_by_slot,
    SlotsRenewedApart => slots_renewed_apart,
}

impl Switch {
    /// The switch's name.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The switch without which this one changes nothing: what a lock
    /// script does when its `WAIT` counts too few replicas matters only
    /// where a `WAIT` is sent. Explore's attribution skips a candidate fix
    /// that cannot act on the run.
    pub fn needs(self) -> Option<Switch> {
        match self {
            Switch::NoSyncedReplicasOnly
            | Switch::NoSyncRollback
            | Switch::NoSyncRetry
            | Switch::NoSyncMessageLengthened
            | Switch::NoSyncedSlavesException
            | Switch::JvmWaitProbe
            | Switch::WaitProbe
            | Switch::ProbeBackticks
            | Switch::ProbePrefixMatch
            | Switch::ProbeReadsCauses
            | Switch::LockSyncWaitOnly
            | Switch::ReplicaWaitRetried
            | Switch::BatchFirstError
            | Switch::NoSyncKeepsRequestId
            | Switch::ReplicaCountFromInfo
            | Switch::ReplicaCountCached
            | Switch::InfoOutsideSingleServer => Some(Switch::LockWaitsForReplicas),
            Switch::ReplicaCountResetOnMore => Some(Switch::ReplicaCountCached),
            Switch::ReadRenewLoopFixed
            | Switch::ReadRenewOwnNames
            | Switch::ReadEntryClearsQueue => Some(Switch::ReadLockTask),
            Switch::RenewalBySlot | Switch::SlotsRenewedApart => Some(Switch::BatchedRenewal),
            Switch::BatchNoscriptReloads => Some(Switch::ScriptCache),
            _ => None,
        }
    }

    /// The switch that replaced the code this one changes, so that with
    /// it in force this one is never asked about: the outcomes of a
    /// per-lock renewal (3.12.5 to 3.16.1) belong to the chain that 3.44's
    /// batched renewal replaced, and the unlock latch's TTL raised to at
    /// least 1 in `int` arithmetic (3.24.3) to the `long` arithmetic of
    /// 3.48, which raises it too. `locksim mutants` counts removing such a
    /// fix from a release that has its replacement as equivalent. An
    /// interrupt's cancel of the acquire (3.16.3) is not one: 3.20.1's
    /// retry wrapper hides it from `RLock`'s acquires, but `RSpinLock`'s
    /// acquire is outside the wrapper in every release and still reads it.
    pub fn replaced_by(self) -> Option<Switch> {
        match self {
            Switch::RenewalZeroStops
            | Switch::RenewalErrorRemovesEntry
            | Switch::RenewalZeroRemovesEntry => Some(Switch::BatchedRenewal),
            Switch::LatchTtlAtLeastOne => Some(Switch::JitteredRetryDelay),
            Switch::JvmWaitProbe => Some(Switch::WaitProbe),
            _ => None,
        }
    }

    /// The switches this fix works through, which a release lacking them
    /// must be given with it to show what the fix does: a retried unlock
    /// keeps its latch id (3.52.0) only where unlocks are retried for the
    /// `WAIT` (3.20.1) and leave a latch (3.24.0). The fair lock's fixes
    /// change script texts that exist only from an era on: the purge's
    /// score check (3.31.0, #4153) the texts that enqueue from the last
    /// thread (3.11.1) and unlock with a publish argument (3.22.0) and a
    /// latch (3.24.0); the PTTL reply (3.32.0, #4705) the enqueue from the
    /// last thread; the enqueue's score check (3.45.0, #6434) the PTTL
    /// reply's text with the purge's check, and what that needs. The read
    /// and write unlock's nil for a missing K (3.44.0) changed the latched
    /// texts (3.24.0) alone. Before those eras Redisson's scripts had the
    /// same faults in their own words (an unchecked `tonumber(zscore)`, a
    /// `return 1` for a missing K), which only the later texts can show
    /// fixed.
    pub fn works_with(self) -> &'static [Switch] {
        match self {
            Switch::NoSyncKeepsRequestId => &[Switch::NoSyncRetry, Switch::UnlockLatch],
            Switch::FairPurgeChecksScore => &[
                Switch::FairEnqueueFromLast,
                Switch::PublishCommandArgument,
                Switch::UnlockLatch,
            ],
            Switch::FairWaitReplyPttl => &[Switch::FairEnqueueFromLast],
            Switch::RwUnlockAbsentNil => &[Switch::UnlockLatch],
            Switch::FairEnqueueChecksScore => &[
                Switch::FairEnqueueFromLast,
                Switch::FairWaitReplyPttl,
                Switch::FairPurgeChecksScore,
                Switch::PublishCommandArgument,
                Switch::UnlockLatch,
            ],
            _ => &[],
        }
    }

    /// The later fixes of this fix's own faults, which attribution gives
    /// it when it tests the fix on a release that lacks them, as an
    /// upgrade past both would: the unlock latch (3.24.0, #4871) sent
    /// `PX 0` for `retryAttempts = 0`, and `PX` of an `int` product that
    /// wrapped negative for a huge one, and Redis refused the script after
    /// it had released the lock, so the owner got an error for an unlock
    /// that happened, until 3.24.3 (#5392) and 4.4.0 (#7089). Without
    /// them a run whose false unlock error the latch removes is named by
    /// no fix (3.23.4 seed 43619: a red lock's unlock resent after a
    /// Redis pause, by a client with `retryAttempts = 1462531864`).
    pub fn repaired_by(self) -> &'static [Switch] {
        match self {
            Switch::UnlockLatch => &[Switch::LatchTtlAtLeastOne, Switch::LatchTtlLong],
            _ => &[],
        }
    }

    /// Whether it is a fix in no release of a defect with no other fix:
    /// one proposed upstream for an open issue (a pull request no release
    /// has merged), or locksim's for a defect it found that no upstream
    /// issue reports ([`NOT_REPORTED`]); not locksim's own design of a
    /// lock (`fencing`).
    pub fn is_proposed_fix(self) -> bool {
        let info = self.info();
        info.since.is_none() && (info.upstream.starts_with('#') || info.upstream == NOT_REPORTED)
    }

    /// Whether `version` has this switch (locksim's extensions: never).
    pub fn in_release(self, version: Version) -> bool {
        self.info()
            .since
            .is_some_and(|since| version.lock_code() >= since)
    }
}

impl fmt::Display for Switch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Switch {
    type Err = ReleaseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Switch::ALL
            .iter()
            .copied()
            .find(|w| w.name() == s)
            .ok_or_else(|| ReleaseError::UnknownSwitch(s.to_owned()))
    }
}

/// A set of switches, as a bit set (in [`Switch::ALL`] order).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SwitchSet(u128);

impl SwitchSet {
    /// No switch.
    pub const EMPTY: SwitchSet = SwitchSet(0);

    /// The switches `version` has.
    ///
    /// Every client a run starts builds its config from a release, a few
    /// times a seed: reading each switch's info for it was about 1% of an
    /// explored seed, so the sets are kept by release, oldest first.
    pub fn of_version(version: Version) -> SwitchSet {
        static BY_RELEASE: OnceLock<Vec<(Version, SwitchSet)>> = OnceLock::new();
        let by_release = BY_RELEASE.get_or_init(|| {
            let mut since: Vec<(Version, Switch)> = Switch::ALL
                .iter()
                .filter_map(|&w| Some((w.info().since?, w)))
                .collect();
            since.sort();
            let mut set = SwitchSet::EMPTY;
            since
                .into_iter()
                .map(|(v, w)| {
                    set = set.with(w);
                    (v, set)
                })
                .collect()
        });
        let code = version.lock_code();
        match by_release.partition_point(|(since, _)| *since <= code) {
            0 => SwitchSet::EMPTY,
            n => by_release[n - 1].1,
        }
    }

    /// Every switch.
    pub fn all() -> SwitchSet {
        Switch::ALL
            .iter()
            .fold(SwitchSet::EMPTY, |set, &w| set.with(w))
    }

    /// This set with `switch` on.
    pub const fn with(self, switch: Switch) -> SwitchSet {
        SwitchSet(self.0 | 1 << switch as u128)
    }

    /// This set with `switch` off.
    pub const fn without(self, switch: Switch) -> SwitchSet {
        SwitchSet(self.0 & !(1 << switch as u128))
    }

    /// Whether `switch` is on.
    pub const fn has(self, switch: Switch) -> bool {
        self.0 & 1 << switch as u128 != 0
    }

    /// The switches on in either set.
    pub const fn union(self, other: SwitchSet) -> SwitchSet {
        SwitchSet(self.0 | other.0)
    }

    /// The switches on in this set and not in `other`.
    pub const fn difference(self, other: SwitchSet) -> SwitchSet {
        SwitchSet(self.0 & !other.0)
    }

    /// Whether this set and `other` agree on every switch of `on`.
    pub const fn agrees_on(self, other: SwitchSet, on: SwitchSet) -> bool {
        (self.0 ^ other.0) & on.0 == 0
    }

    /// The switches on, in [`Switch::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Switch> {
        Switch::ALL.iter().copied().filter(move |&w| self.has(w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repair is a later fix: it ships after the fix it repairs, and
    /// both remove a defect.
    #[test]
    fn repairs_are_later_fixes() {
        let mut repaired = 0;
        for &s in Switch::ALL {
            for &r in s.repaired_by() {
                repaired += 1;
                assert!(s.info().fixes && r.info().fixes, "{s:?} by {r:?}");
                assert!(s.info().since < r.info().since, "{s:?} by {r:?}");
            }
        }
        assert!(repaired > 0);
    }

    #[test]
    fn names_are_unique_and_round_trip() {
        for &w in Switch::ALL {
            assert_eq!(w.name().parse::<Switch>(), Ok(w));
            assert_eq!(
                Switch::ALL.iter().filter(|o| o.name() == w.name()).count(),
                1
            );
        }
        assert_eq!(
            "unlock-latch-typo".parse::<Switch>(),
            Err(ReleaseError::UnknownSwitch("unlock-latch-typo".into()))
        );
    }

    /// Registration order is release order, so `locksim versions` reads as
    /// a history; locksim's own switches come last.
    #[test]
    fn switches_are_listed_oldest_first() {
        let since: Vec<Version> = Switch::ALL.iter().filter_map(|w| w.info().since).collect();
        assert!(since.windows(2).all(|p| p[0] <= p[1]), "{since:?}");
        assert!(Switch::ALL.len() <= 128, "SwitchSet is a u128");
    }

    #[test]
    fn a_release_has_the_switches_of_its_past() {
        let v3234 = SwitchSet::of_version(Version::new(3, 23, 4));
        assert!(v3234.has(Switch::RenewalZeroRemovesEntry));
        assert!(!v3234.has(Switch::NoLockResend));
        assert!(!v3234.has(Switch::Fencing));
        let v2152 = SwitchSet::of_version(Version::new(2, 15, 2));
        assert!(v2152.has(Switch::UnlockErrorCancels));
        assert!(!v2152.has(Switch::ExpirationEntry));
        assert_eq!(
            SwitchSet::of_version(Version::new(3, 0, 0)),
            SwitchSet::EMPTY
        );
    }

    /// The kept sets give every version exactly the switches whose own
    /// rule (`in_release`) takes it, 2.x read as the 3.x it runs.
    #[test]
    fn kept_sets_agree_with_each_switchs_rule() {
        for major in 2..=5 {
            for minor in 0..=60 {
                for patch in 0..=12 {
                    let v = Version::new(major, minor, patch);
                    let rule = Switch::ALL
                        .iter()
                        .filter(|w| w.in_release(v))
                        .fold(SwitchSet::EMPTY, |set, &w| set.with(w));
                    assert_eq!(SwitchSet::of_version(v), rule, "{v}");
                }
            }
        }
    }
}
