//! `unlock-error-cancels` (Redisson 3.8.1, #1602).
//!
//! Up to 3.8.0 (doc 001) `unlockAsync` cancelled renewal only when the
//! script released the lock (`if (opStatus) cancelExpirationRenewal()`):
//! an unlock that failed on the wire left the watchdog renewing a lock its
//! thread had given up, for as long as the process lived. 3.8.1 calls
//! `cancelExpirationRenewal(threadId)` on an error too. A reply of 0 (a
//! re-entrant hold counted down) cancels only from `expiration-entry`
//! (3.10.5, #1966), a nil reply only from `nil-unlock-cancels` (3.12.1).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "unlock-error-cancels",
    since: Some(Version::new(3, 8, 1)),
    upstream: "#1602",
    summary: "an unlock that fails with an error cancels renewal (before: only an unlock that released the lock did)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::Harness;
    use crate::{Event, TransportError};

    /// An unlock refused on the wire: 3.8.0 keeps renewing, 3.8.1 stops.
    #[test]
    fn before_3_8_1_a_failed_unlock_leaves_renewal_running() {
        let refused = || Err(TransportError::Connection("refused".into()));
        let (events, result, renewing) = Harness::after_unlock("3.8.0", refused());
        assert!(result.is_err() && events.is_empty() && renewing, "{events:?}");
        let (events, _, renewing) = Harness::after_unlock("3.8.1", refused());
        assert!(matches!(&events[..], [Event::RenewalStopped { .. }]), "{events:?}");
        assert!(!renewing);
    }
}
