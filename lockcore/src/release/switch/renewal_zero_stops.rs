//! `renewal-zero-stops` (Redisson 3.12.5, #2669).
//!
//! Commits f10d94d4e/60b261f93 ("RLock reliability during failover",
//! #2669) wrapped the reschedule in `if (res)`. The entry stays in the map
//! (stale) until `renewal-zero-removes-entry`.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "renewal-zero-stops",
    since: Some(Version::new(3, 12, 5)),
    upstream: "#2669",
    summary: "a renewal that returns 0 stops the chain (it used to reschedule itself whatever the reply)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Event, LockName, ThreadId};
    use crate::Value;

    #[test]
    fn before_3_12_5_a_zero_renewal_reschedules() {
        let mut h = Harness::short(release("3.12.4"));
        h.acquire(ThreadId(1), "l");
        let renew = h.renewal_due();
        h.reply(renew, Value::Int(0));
        h.expect_quiet();
        let _next = h.renewal_due();

        let mut h = Harness::short(release("3.12.5"));
        h.acquire(ThreadId(1), "l");
        let renew = h.renewal_due();
        h.reply(renew, Value::Int(0));
        assert_eq!(
            h.expect_event(),
            Event::RenewalStopped {
                lock: LockName::new("l").unwrap(),
                reason: "not-held; entry kept".into()
            }
        );
        assert!(!h.has_timers());
    }
}
