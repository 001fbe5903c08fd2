//! `nil-unlock-cancels` (Redisson 3.12.1, #2515).
//!
//! From 3.12.1 `unlockAsync` calls `cancelExpirationRenewal(threadId)`
//! first, whatever the reply; before, a nil reply threw
//! `IllegalMonitorStateException` and left the entry, so a later acquire
//! by the same client joined a stale entry.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "nil-unlock-cancels",
    since: Some(Version::new(3, 12, 1)),
    upstream: "#2515",
    summary: "a nil unlock reply (lock no longer held) cancels renewal too",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::Harness;
    use crate::{Event, LockError};
    use crate::Value;

    #[test]
    fn from_3_12_1_a_nil_unlock_cancels_renewal() {
        let (events, result, renewing) = Harness::after_unlock("3.12.0", Ok(Value::Nil));
        assert!(matches!(result, Err(LockError::NotLockedByCurrentThread { .. })));
        assert!(events.is_empty() && renewing, "{events:?}");
        let (events, _, renewing) = Harness::after_unlock("3.12.1", Ok(Value::Nil));
        assert!(matches!(&events[..], [Event::RenewalStopped { .. }]), "{events:?}");
        assert!(!renewing);
    }
}
