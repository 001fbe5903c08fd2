//! `no-sync-keeps-request-id` (Redisson 3.52.0, #6651, commit 7337c86d1).
//!
//! An unlock that fails for too few synced replicas is retried (3.20.1+),
//! but the first attempt ran on the primary: it released (or counted
//! down) the lock and left its result in the unlock latch (3.24+). Until
//! 3.52.0 the retry draws a new request id, misses that latch, runs the
//! script again on a lock it no longer holds and throws "attempt to unlock
//! lock, not locked by current thread". 3.52.0 generates the id once per
//! `unlock()`, so the retry reads the latch and returns normally.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "no-sync-keeps-request-id",
    since: Some(Version::new(3, 52, 0)),
    upstream: "#6651",
    summary: "an unlock retried for too few synced replicas keeps its request id, so it reads the latch its first attempt left instead of finding the lock gone",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::Harness;
    use crate::{Call, ThreadId, Value};

    /// The unlock's WAIT counts none; 1.5 s later it is sent again, with
    /// its latch key (the script's fourth key) unchanged from 3.52.0 and
    /// new before.
    #[test]
    fn the_retried_unlock_keeps_its_latch_from_3_52_0() {
        for (release, same) in [("3.51.0", false), ("3.52.0", true)] {
            let mut h = Harness::with_replicas(release, 1);
            h.call(ThreadId(1), "l", Call::TryLock { wait: None, lease: None }).unwrap();
            h.probed();
            let (acquire, _) = h.expect_send();
            let (wait, _) = h.expect_send();
            h.reply(acquire, Value::Nil);
            h.reply(wait, Value::Int(1));
            let _ = h.expect_return(ThreadId(1));
            h.call(ThreadId(1), "l", Call::Unlock).unwrap();
            let (first, command) = h.expect_send();
            let (wait, _) = h.expect_send();
            h.reply(first, Value::Int(1));
            h.reply(wait, Value::Int(0));
            // Each attempt cancels renewal, as unlockAsync0 does.
            assert!(matches!(h.expect_event(), crate::Event::RenewalStopped { .. }));
            h.expect_quiet();
            h.advance(1_500);
            let (_, again) = h.expect_send();
            let latch = |c: &[String]| c.iter().find(|w| w.contains("unlock_latch")).cloned();
            assert!(latch(&command).is_some(), "{command:?}");
            assert_eq!(latch(&command) == latch(&again), same, "{release}");
        }
    }
}
