//! `atomic-renewal-map` (Redisson 4.4.0, #6844, commit dc4cdf096).
//!
//! Before 4.4.0 `cancelExpirationRenewal` took the thread off the lock's
//! entry, saw it empty, and then removed the entry from the map in a
//! separate step, while `add` joined an existing entry with
//! `putIfAbsent` then `addThreadId`. Run on two Netty threads, a sibling
//! thread's acquire could join the entry between the two steps of an
//! unlock's cancel, and lose its renewal with the entry: its key expired
//! while it worked (#6844, on 3.52). 4.4.0 does both inside
//! `name2entry.compute`. locksim pauses the cancel there
//! ([`Output::Step`](crate::Output::Step)) so a driver can interleave.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "atomic-renewal-map",
    since: Some(Version::new(4, 4, 0)),
    upstream: "#6844",
    summary: "joining and leaving a lock's renewal entry are atomic (before, an unlock's cancel could remove the entry a sibling thread had just joined)",
    fixes: true,
};

// Its behaviour is tested where the step lives: `machine::step`.
