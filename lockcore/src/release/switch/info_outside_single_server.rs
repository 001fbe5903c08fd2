//! `info-outside-single-server` (Redisson 3.23.4, #5256, commit
//! 9b7c332f2).
//!
//! Before 3.23.4 a lock script read the replica count from `INFO` only
//! where the client's entry knew of replicas (`entry.getAvailableSlaves()
//! > 0`); otherwise its batch counted none and had no `WAIT`, which for
//! locksim's client is the plain script. From 3.23.4 every client outside
//! single-server mode asks (`!isSingleConfig()`), so a cluster client
//! whose masters have no replica sends its lock scripts as batches too:
//! after `INFO` each time until 3.26.x, once from 3.27.0 (the count of 0
//! is kept, `replica-count-cached`), after the server probe from 3.26.1
//! (`jvm-wait-probe`), and as `EVALSHA` from 3.46.0 (`script-cache`). A
//! batch keeps its retries where a single server's lock script has none
//! (3.37.0's `no-lock-resend` reaches `evalWriteNoRetryAsync` only in
//! single-server mode; read at tags redisson-3.37.0 and 4.7.0,
//! `CommandAsyncService.syncedEval`): a cluster client's acquire or
//! unlock refused with `TRYAGAIN` during a slot migration is sent again
//! (a timed-out batch is not resent here yet: see `no-lock-resend`).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "info-outside-single-server",
    since: Some(Version::new(3, 23, 4)),
    upstream: "#5256",
    summary: "outside single-server mode (a cluster) every lock script reads the replica count from INFO and goes as a batch, even where no replica is known (before: only where some was); a batch keeps its retries",
    fixes: false,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, Config, Purpose, ThreadId};

    /// A cluster client without replicas: 3.23.3 sends the acquire
    /// alone; 3.23.4 asks `INFO` first (which the harness answers: 0
    /// replicas, so the batch has no `WAIT`).
    #[test]
    fn from_3_23_4_a_cluster_client_asks_info_before_its_scripts() {
        for (version, infos) in [("3.23.3", 0), ("3.23.4", 1)] {
            let config = Config::builder()
                .release(release(version))
                .cluster_shards(3)
                .build()
                .unwrap();
            let mut h = Harness::with_config(config);
            h.call(ThreadId(1), "orders", Call::TryLock { wait: None, lease: None })
                .unwrap();
            let (_, purpose, command) = h.expect_send_purpose();
            assert_eq!((purpose, command[0].as_str()), (Purpose::Acquire, "EVAL"), "{version}");
            assert_eq!(h.infos.len(), infos, "{version}");
        }
    }
}
