//! `replica-count-reset-on-more` (Redisson 3.46.0, #6518, commit
//! 67cc43151).
//!
//! 3.27.0 to 3.45.x forgot the cached replica count only when a `WAIT`
//! counted fewer replicas than it asked for: after a replica came back,
//! `WAIT` kept asking for too few, and a lock acknowledged by some
//! replicas could be missing on the one a failover promoted. From 3.46.0
//! a `WAIT` that counts more forgets it too, and the next synced script
//! asks `INFO` again. A count of 0 is still kept (see
//! `replica-count-cached`). See `machine/replica_count.rs`.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "replica-count-reset-on-more",
    since: Some(Version::new(3, 46, 0)),
    upstream: "#6518",
    summary: "a WAIT that counts more replicas than the cached count also forgets it, so INFO is asked again",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, Config, Purpose, ThreadId, Value};

    /// Two replicas configured, one connected when the count is read; the
    /// second is back when thread 2's `WAIT 1` counts both: 3.46.0 asks
    /// `INFO ALL` again and thread 3 waits for both.
    #[test]
    fn from_3_46_0_a_wait_that_counts_more_forgets_the_count() {
        let mut h = Harness::with_config(Config::builder().release(release("3.46.0")).replicas(2).build().unwrap());
        h.connected_replicas = Some(1);
        for (t, synced, asked) in [(1, 1, "1"), (2, 2, "1"), (3, 2, "2")] {
            h.call(ThreadId(t), "l", Call::TryLock { wait: None, lease: None }).unwrap();
            if t == 1 {
                h.probed();
            }
            let (script, purpose, _) = h.expect_send_purpose();
            assert_eq!(purpose, Purpose::Acquire);
            let (wait, words) = h.expect_send();
            assert_eq!(words, ["WAIT", asked, "1000"], "thread {t}");
            h.reply(script, Value::Nil);
            h.reply(wait, Value::Int(synced));
            h.expect_return(ThreadId(t)).unwrap();
            h.connected_replicas = Some(2);
        }
        assert_eq!(h.infos, ["INFO ALL", "INFO ALL"]);
        // Each reading is reported once: the client's timeline shows why
        // its WAIT asked for one replica, then for two.
        assert_eq!(h.replicas_counted, [1, 2]);
    }
}
