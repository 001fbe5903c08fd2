//! `expiration-entry` (Redisson 3.10.5, #1966).
//!
//! Commit deaca654c ("locked lock isn't unlocked after disconnect to Redis
//! #1966") replaced the doc 001/003 bookkeeping, where each completed
//! renewal removed the entry and the reply's 1 registered it again (so a
//! renewal answered after the unlock re-armed a lock nobody held), with
//! `ExpirationEntry`: threads with counts, one timer, and
//! `cancelExpirationRenewal(threadId)`, now called after every non-nil
//! unlock reply, that stops renewal when the last hold goes. Before, an
//! unlock that only counted a hold down (an acquire resent after a timeout
//! ran twice on the server, so Redis counted 2) cancelled nothing, and the
//! key was renewed for ever. Until `renewal-zero-stops` the chain reschedules itself
//! whatever the renewal returned.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "expiration-entry",
    since: Some(Version::new(3, 10, 5)),
    upstream: "#1966",
    summary: "one renewal entry per lock with per-thread counts and its own timer chain (renewExpiration), instead of removing and re-registering the entry on every renewal",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{CallOutcome, Event, ThreadId};
    use crate::Value;

    /// Redis counted the hold twice (#1966): the unlock only counts down.
    #[test]
    fn from_3_10_5_an_unlock_that_counts_down_cancels_the_threads_renewal() {
        let counted_down = Ok(CallOutcome::Unlocked { released: false });
        let (events, result, renewing) = Harness::after_unlock("3.10.4", Ok(Value::Int(0)));
        assert_eq!(result, counted_down);
        assert!(events.is_empty() && renewing, "{events:?}");
        let (events, _, renewing) = Harness::after_unlock("3.10.5", Ok(Value::Int(0)));
        assert!(matches!(&events[..], [Event::RenewalStopped { .. }]), "{events:?}");
        assert!(!renewing);
    }

    /// The legacy bookkeeping re-registers the entry on every renewal; the
    /// entry keeps one timer chain and renews its first thread.
    #[test]
    fn the_entry_keeps_one_chain() {
        let mut h = Harness::short(release("3.10.5"));
        h.acquire(ThreadId(1), "l");
        h.acquire(ThreadId(2), "l");
        assert_eq!(h.timers.len(), 1);
        let renew = h.renewal_due();
        h.reply(renew, Value::Int(1));
        assert!(matches!(h.expect_event(), Event::Renewed { .. }));
        assert_eq!(h.timers.len(), 1);
    }
}
