//! `no-synced-slaves-exception` (Redisson 3.47.0, commit f2b6ad849).
//!
//! 3.47.0 raises the "too few replicas" failure as a
//! `NoSyncedSlavesException` and the rollback and the retry wrapper
//! match it by type (`CommandAsyncService`, lines 997 and 1000;
//! `ServiceManager.execute`, line 576 at the tag; CHANGELOG 3.47.0: "None
//! of slaves were synced exception is thrown"), so they run again after
//! the gap that `no-sync-message-lengthened` opened in 3.25.0.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "no-synced-slaves-exception",
    since: Some(Version::new(3, 47, 0)),
    upstream: "commit f2b6ad849",
    summary: "the no-synced-replicas failure is matched by type, so the rollback and retry run again (closing 3.25.0's gap)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::Harness;
    use crate::{Call, Purpose, ThreadId, Value};

    /// 3.46.0 answers a not-synced unlock with the error at once; 3.47.0
    /// tries it again after the retry interval.
    #[test]
    fn from_3_47_0_a_not_synced_unlock_is_tried_again() {
        for (release, retried) in [("3.46.0", false), ("3.47.0", true)] {
            let mut h = Harness::with_replicas(release, 1);
            h.call(ThreadId(1), "l", Call::TryLock { wait: None, lease: None }).unwrap();
            h.probed();
            let (acquire, _) = h.expect_send();
            let (wait, _) = h.expect_send();
            h.reply(acquire, Value::Nil);
            h.reply(wait, Value::Int(1));
            h.expect_return(ThreadId(1)).unwrap();
            h.call(ThreadId(1), "l", Call::Unlock).unwrap();
            let (unlock, purpose, _) = h.expect_send_purpose();
            assert_eq!(purpose, Purpose::Unlock);
            let (wait, _) = h.expect_send();
            h.reply(unlock, Value::Int(1));
            h.reply(wait, Value::Int(0));
            // Renewal is cancelled either way; only the return differs.
            let returned = h.returned(ThreadId(1));
            if retried {
                assert_eq!(returned, None, "{release}: waits to retry");
                h.advance(1_500);
                let (_, purpose, _) = h.expect_send_purpose();
                assert_eq!(purpose, Purpose::Unlock, "{release}: the retry");
            } else {
                assert!(matches!(returned, Some(Err(_))), "{release}: {returned:?}");
            }
        }
    }
}
