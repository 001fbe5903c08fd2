//! `renewal-zero-removes-entry` (Redisson 3.16.1, #3712, #3714).
//!
//! The same stale-entry effect as `renewal-error-removes-entry`, for a
//! renewal that found the lock gone (expired or deleted).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "renewal-zero-removes-entry",
    since: Some(Version::new(3, 16, 1)),
    upstream: "#3712, #3714",
    summary: "a renewal that returns 0 cancels and removes the entry (3.12.5 to 3.16.0 stopped but kept it)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::Harness;
    use crate::Value;

    /// After a renewal that found the key gone another thread of the
    /// client takes the lock: it joins the stale entry, unrenewed, until
    /// 3.16.1.
    #[test]
    fn the_stale_entry_leaves_a_new_hold_unrenewed_until_the_fix() {
        assert!(!Harness::next_hold_renewed_after("3.16.0", Ok(Value::Int(0))));
        assert!(Harness::next_hold_renewed_after("3.16.1", Ok(Value::Int(0))));
    }
}
