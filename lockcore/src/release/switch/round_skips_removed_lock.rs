//! `round-skips-removed-lock` (Redisson 3.45.1, #6472, commit 5f9589346).
//!
//! The batched renewal round of 3.44.0 (`LockTask.renew`) walks the
//! renewal map's keys and looks each entry up again
//! (`name2entry.get(key).getFirstThreadId()`). The round runs on the
//! timer's thread while unlock callbacks run on Netty threads, so an
//! unlock can remove an entry between the two: the lookup gives null and
//! the round throws a `NullPointerException` before it sends anything.
//! It throws out of `RenewalTask.run`, past the `whenComplete` that sets
//! the next round, and `running` stays true, so no later lock restarts
//! the chain either: no lock of the client is renewed again until all of
//! them are unlocked and the map empties (`stop()`). 3.45.1 skips a key
//! whose entry is gone. locksim pauses the round between reading the keys
//! and looking them up ([`Output::Step`](crate::Output::Step)) so a driver
//! can interleave; without the fix a key gone by then breaks the chain.
//! Every batched release pauses there, so the switch changes only what a
//! missing entry does (explore's attribution toggles it on a run whose
//! timing stays the same).
//!
//! Skipping the key is not the end of it: a chunk all of whose keys were
//! skipped still threw until 3.46.0 (`empty-chunk-completes`, #6506).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "round-skips-removed-lock",
    since: Some(Version::new(3, 45, 1)),
    upstream: "#6472",
    summary: "the batched renewal round skips a lock unlocked while it read the renewal map (3.44.0 and 3.45.0: a NullPointerException that stopped renewal of every lock of the client)",
    fixes: true,
};

// Its behaviour is tested where the round lives: `machine::batched`.
