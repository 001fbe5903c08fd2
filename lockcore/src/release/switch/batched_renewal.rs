//! `batched-renewal` (Redisson 3.44.0, #6303).
//!
//! `LockTask` (3.44.0): every T/3 after the previous round finished,
//! renew every lock of the client's renewal map in chunks of
//! `lockWatchdogBatchSize`; for each key that answered 0,
//! `cancelExpirationRenewal(key, threadId)` removes that thread's count
//! only, so another thread of the same client holding the lock re-entrantly
//! keeps its renewal; a failed round is logged and the chain goes on.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "batched-renewal",
    since: Some(Version::new(3, 44, 0)),
    upstream: "#6303",
    summary: "one renewal chain per client renews every held lock in one EVAL every T/3; a 0 for a lock cancels only that thread's hold of it; an error skips a round",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Event, ThreadId};
    use crate::Value;

    /// A re-entrant hold (count 2) whose renewal finds the key gone: 3.43
    /// drops the whole entry; 3.44's chain takes one count off and renews
    /// again next round (with the 3.46 queue fix: 3.44's own queue keeps
    /// a stale head here, see `thread-queue`).
    #[test]
    fn a_zero_takes_one_hold_off_the_entry() {
        let mut h = Harness::short(release("3.43.0"));
        h.acquire(ThreadId(1), "l");
        h.acquire(ThreadId(1), "l");
        let renew = h.renewal_due();
        h.reply(renew, Value::Int(0));
        assert!(matches!(h.expect_event(), Event::RenewalStopped { .. }));
        assert!(!h.has_timers());

        let mut h = Harness::short(release("3.44.0 +queue-cleared-on-unlock"));
        h.acquire(ThreadId(1), "l");
        h.acquire(ThreadId(1), "l");
        let renew = h.renewal_due();
        h.reply(renew, Value::Array(vec![Value::Int(0)]));
        h.expect_quiet();
        let renew = h.renewal_due();
        h.reply(renew, Value::Array(vec![Value::Int(0)]));
        assert!(matches!(h.expect_event(), Event::RenewalStopped { .. }));
        assert!(!h.has_timers());
    }
}
