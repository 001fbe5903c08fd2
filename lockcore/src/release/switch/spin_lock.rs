//! `spin-lock` (Redisson 3.15.0, PR #3364, commit 4acee8eb2).
//!
//! `RSpinLock` (`getSpinLock`) is added: `RLock`'s hash without pub/sub,
//! whose waiters sleep a back-off and attempt again (`kind/spin.rs`,
//! `machine/spin.rs`). Releases before it have no such object and refuse
//! the lock type.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "spin-lock",
    since: Some(Version::new(3, 15, 0)),
    upstream: "PR #3364",
    summary: "RSpinLock is added: RLock's hash without pub/sub, waiters sleep a back-off and attempt again (the spin lock is modelled from here)",
    fixes: false,
};
