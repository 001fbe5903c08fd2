//! `renewal-by-slot` (Redisson PR #7114 for #7116, unmerged; #6867).
//!
//! From 3.44.0 (`batched-renewal`, 597d604a3) the watchdog renews all of
//! a client's locks in one `EVAL` per chunk. Through a proxy in front of
//! a Redis Cluster (Envoy, Twemproxy, Azure Redis Enterprise, one
//! address for the client's `useSingleServer()`), a chunk whose keys
//! hash to different slots is refused with `CROSSSLOT`, every round, and
//! the locks expire under their holders (#6867). 4.0.0 (bc5657973)
//! probes at connect (`MasterSlaveConnectionManager.detectCluster`: `MGET
//! test1 test2`, an `EVAL` of two keys from 4.3.1, 874588fa3) and, when
//! it reads `CROSSSLOT`, groups the renewal by `calcSlot(name)`
//! (`RenewalTask.renewSlots`); but outside cluster mode `calcSlot` is
//! `MasterSlaveConnectionManager`'s, 0 for every key (4.7.0 lines
//! 598-610), so every lock still lands in one group and one chunk
//! (#7116, 4.0.0 to 4.7.0 and master 66863978b). PR #7114 computes the
//! real CRC16 slot once a cluster is detected. With it, a round renews
//! each slot's locks as chunks of their own, slot after slot (Redisson
//! walks a `ConcurrentHashMap` of slots; locksim takes them in slot
//! order), and an error in one slot's chunk ends the round as before.
//!
//! The connect-time probe runs inside `Redisson.create()`, before the
//! client's first command, and is not sent on the wire here (like
//! `INFO`): [`Config::cluster_proxy`](crate::Config::cluster_proxy) is
//! what it reads.

use super::SwitchInfo;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "renewal-by-slot",
    since: None,
    upstream: "#6867, #7116 (PR #7114, unmerged)",
    summary: "behind a cluster proxy, the batched renewal groups locks by their CRC16 slot, one chain of chunks per slot (not in any Redisson release: outside cluster mode every key is slot 0, so one EVAL spans slots and the proxy refuses it with CROSSSLOT, #6867)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Config, ThreadId, Value};

    fn client(text: &str, proxy: bool) -> Harness {
        let config = Config::builder()
            .release(release(text))
            .watchdog_timeout(3_000)
            .cluster_proxy(proxy)
            .build()
            .unwrap();
        let mut h = Harness::with_config(config);
        // `foo` is slot 12182, `bar` 5061.
        h.acquire(ThreadId(1), "foo");
        h.acquire(ThreadId(2), "bar");
        h
    }

    /// Two locks in different slots behind a proxy: 4.7.0 renews both in
    /// one EVAL (which the proxy refuses); with the fix each slot has an
    /// EVAL of its own, slot order, the second once the first answered.
    #[test]
    fn a_round_sends_one_chunk_per_slot() {
        let mut h = client("4.7.0", true);
        h.advance(1_000);
        let (_, command) = h.expect_send();
        assert_eq!(&command[2..5], ["2", "bar", "foo"]);

        let mut h = client("4.7.0 +renewal-by-slot", true);
        h.advance(1_000);
        let (first, command) = h.expect_send();
        assert_eq!(&command[2..4], ["1", "bar"]);
        h.expect_quiet();
        h.reply(first, Value::Array(vec![Value::Int(1)]));
        h.expect_event();
        let (_, command) = h.expect_send();
        assert_eq!(&command[2..4], ["1", "foo"]);
    }

    /// On a server that is no cluster the probe reads no `CROSSSLOT`, and
    /// the fix changes nothing: one chunk.
    #[test]
    fn a_plain_server_keeps_one_chunk() {
        let mut h = client("4.7.0 +renewal-by-slot", false);
        h.advance(1_000);
        let (_, command) = h.expect_send();
        assert_eq!(&command[2..5], ["2", "bar", "foo"]);
    }
}
