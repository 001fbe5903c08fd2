//! `replica-count-cached` (Redisson 3.27.0, #5614, commit 0ee5155b5).
//!
//! From 3.27.0 the replica count read from `INFO REPLICATION` is kept per
//! client (`MasterSlaveEntry.availableSlaves`) and `INFO` is asked only
//! while it is unknown. It is forgotten only when a `WAIT` counts fewer
//! replicas than it asked for, so a replica that comes back is not waited
//! for until another goes (#6518, fixed 3.46.0). A count of 0 is never
//! forgotten, in any release since: with 0 no `WAIT` is sent, so no count
//! can differ from it. See `machine/replica_count.rs`.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "replica-count-cached",
    since: Some(Version::new(3, 27, 0)),
    upstream: "#5614",
    summary: "the replica count from INFO is kept per client until a WAIT counts fewer replicas; a count of 0 is kept for good",
    fixes: false,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, Config, Purpose, ThreadId, Value};

    /// `tryLock()` on `lock` by thread `t`: the `WAIT` words after its
    /// script (`None`: bare), both answered, the `WAIT` with `synced`.
    fn try_lock(h: &mut Harness, t: u64, lock: &str, synced: i64) -> Option<Vec<String>> {
        h.call(ThreadId(t), lock, Call::TryLock { wait: None, lease: None }).unwrap();
        if t == 1 {
            h.probed();
        }
        let (script, purpose, _) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::Acquire);
        let wait = match h.next() {
            Some(crate::Output::Send { request, command, .. }) => {
                Some((request, command.iter().map(|b| String::from_utf8_lossy(b).into_owned()).collect()))
            }
            _ => None,
        };
        h.reply(script, Value::Nil);
        if let Some((request, _)) = &wait {
            h.reply(*request, Value::Int(synced));
        }
        h.expect_return(ThreadId(t)).unwrap();
        wait.map(|w| w.1)
    }

    /// Two replicas configured, one connected at first: 3.26.1 asks
    /// `INFO` before every script and waits for both once the second is
    /// back; 3.27.0 asks once and keeps waiting for one (#6518).
    #[test]
    fn from_3_27_0_the_count_is_kept_until_a_wait_counts_fewer() {
        for (version, infos, last) in [("3.26.1", 3, "2"), ("3.27.0", 1, "1")] {
            let mut h = Harness::with_config(Config::builder().release(release(version)).replicas(2).build().unwrap());
            h.connected_replicas = Some(1);
            assert_eq!(try_lock(&mut h, 1, "a", 1).unwrap()[1], "1", "{version}");
            h.connected_replicas = Some(2);
            // The second replica is back: this WAIT counts both.
            assert_eq!(try_lock(&mut h, 2, "b", 2).unwrap()[1], if version == "3.26.1" { "2" } else { "1" });
            assert_eq!(try_lock(&mut h, 3, "c", 2).unwrap()[1], last, "{version}");
            assert_eq!(h.infos.len(), infos, "{version}");
        }
    }

    /// A count of 0 is kept for good, even in 4.7.0: no `WAIT` goes out,
    /// so nothing can count differently.
    #[test]
    fn a_count_of_zero_is_never_forgotten() {
        let mut h = Harness::with_config(Config::builder().release(release("4.7.0")).replicas(1).build().unwrap());
        h.connected_replicas = Some(0);
        h.call(ThreadId(1), "a", Call::TryLock { wait: None, lease: None }).unwrap();
        h.probed();
        let (script, purpose, _) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::Acquire);
        assert!(h.next().is_none(), "bare");
        h.reply(script, Value::Nil);
        h.expect_return(ThreadId(1)).unwrap();
        h.connected_replicas = Some(1);
        assert_eq!(try_lock(&mut h, 2, "b", 1), None);
        assert_eq!(h.infos, ["INFO ALL"]);
    }
}
