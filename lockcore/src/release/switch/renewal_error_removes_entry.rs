//! `renewal-error-removes-entry` (Redisson 3.14.0, #3194).
//!
//! 3.13.6 logged the error and returned, leaving the entry in
//! `EXPIRATION_RENEWAL_MAP`: the next `scheduleExpirationRenewal` for the
//! same lock on that client found it, added its thread and started no
//! timer, so the new hold expired after one lease.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "renewal-error-removes-entry",
    since: Some(Version::new(3, 14, 0)),
    upstream: "#3194",
    summary: "a renewal that fails with an error removes the renewal entry (before: the chain stopped but the entry stayed, so a later re-lock on the client was never renewed)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::TransportError;
    use crate::machine::harness::Harness;

    /// After a refused renewal another thread of the client takes the
    /// lock: it joins the stale entry, unrenewed, until 3.14.0.
    #[test]
    fn the_stale_entry_leaves_a_new_hold_unrenewed_until_the_fix() {
        let refused = || Err(TransportError::Connection("refused".into()));
        assert!(!Harness::next_hold_renewed_after("3.13.6", refused()));
        assert!(Harness::next_hold_renewed_after("3.14.0", refused()));
    }
}
