//! `slots-renewed-apart` (locksim's proposal; in no Redisson release).
//!
//! In cluster mode the 3.44.0+ watchdog renews a client's locks slot by
//! slot (`RenewalTask.renewSlots`, 3.44.0 to 4.7.0): one slot's chunks,
//! then, once the last has answered, the next slot's. A chunk whose
//! master does not answer holds the whole round for its every retry (16.5
//! s with Redisson's defaults, 22 s from 3.48.0), and its error ends the
//! round: the later slots' locks, on masters that serve well, are not
//! renewed in it, and the next round comes a third of the watchdog
//! timeout after the error. A master stalled for about two thirds of the
//! timeout (a fork of a large dataset, a hang before its failover) so
//! loses locks on every other master of the cluster; before 3.44.0 each
//! lock had a timer of its own, and only the stalled master's locks were
//! at risk. Searched upstream (issues and pull requests on renewSlots,
//! RenewalTask and the cluster watchdog, to 2026-12): not reported.
//!
//! With this switch each slot renews on a chain of its own, as if each
//! had its own `RenewalTask`: the slot's chunks one after another, and
//! its next round a third of the timeout after its last chunk answered
//! or failed. A stalled master holds and fails only its own slots'
//! rounds. (Firing every slot at once but starting the next round when
//! the slowest is done would not do: the stalled slot's every retry, 22
//! s from 3.48.0, still delays every slot's next round past the 20 s a
//! renewed key has left.) An entry removed since the round read its keys
//! is skipped, as from 3.45.1 (#6472). `ReadLockTask` keeps the serial
//! walk.

use super::SwitchInfo;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "slots-renewed-apart",
    since: None,
    upstream: super::NOT_REPORTED,
    summary: "in cluster mode, each slot renews on a chain of its own (its chunks, then its next round a third of the timeout later), so a master that does not answer delays and fails only its own slots (every release from 3.44.0 walks the slots one after another, and a slot's error ends the round: a stalled master loses the locks of healthy ones)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Config, ThreadId, TransportError, Value};

    fn client(text: &str) -> Harness {
        let config = Config::builder()
            .release(release(text))
            .watchdog_timeout(3_000)
            .cluster_shards(3)
            .build()
            .unwrap();
        let mut h = Harness::with_config(config);
        // Slots, and bins of a 16-bin table: inventory 14370 (2), orders
        // 105 (9), payments 8507 (11); masters 2, 0 and 1. A cluster
        // client probes the server before its first lock script.
        h.call(ThreadId(1), "orders", crate::Call::Lock { lease: None })
            .unwrap();
        h.probed();
        let acquire = h.expect(crate::Purpose::Acquire);
        h.reply(acquire, Value::Nil);
        h.expect_acquired(ThreadId(1));
        h.acquire(ThreadId(2), "payments");
        h.acquire(ThreadId(3), "inventory");
        h
    }

    /// In cluster mode every command names its lock's master: the
    /// acquires, and each slot's renewal chunk (orders on master 0,
    /// payments on 1, inventory on 2).
    #[test]
    fn each_command_goes_to_its_slot_s_master() {
        use crate::{Output, Shard};
        let config = Config::builder()
            .release(release("4.7.0"))
            .watchdog_timeout(3_000)
            .cluster_shards(3)
            .build()
            .unwrap();
        let mut h = Harness::with_config(config);
        for (t, name) in [(1, "orders"), (2, "payments"), (3, "inventory")] {
            h.call(ThreadId(t), name, crate::Call::Lock { lease: None })
                .unwrap();
            if t == 1 {
                h.probed();
            }
            match h.next() {
                Some(Output::Send { shard, lock, request, .. }) => {
                    assert_eq!(shard, crate::shard_of(3, name), "{lock}");
                    h.reply(request, Value::Nil);
                }
                other => panic!("expected the acquire, got {other:?}"),
            }
            h.expect_acquired(ThreadId(t));
        }
        h.advance(1_000);
        let mut masters = Vec::new();
        while let Some(Output::Send { shard, request, .. }) = h.next() {
            masters.push(shard);
            h.reply(request, Value::Array(vec![Value::Int(1)]));
            h.expect_event();
        }
        // The slot table's order: inventory (bin 2), orders (9), payments (11).
        assert_eq!(masters, [Shard(2), Shard(0), Shard(1)]);
    }

    /// 4.7.0 walks the slots in the slot table's order, one after the
    /// other, and an error of the first ends the round; with the switch
    /// each slot has its own chain, and the error ends only its own.
    #[test]
    fn a_failed_slot_holds_and_ends_only_its_own_chain() {
        let mut h = client("4.7.0");
        h.advance(1_000);
        let (first, command) = h.expect_send();
        assert_eq!(&command[2..4], ["1", "inventory"]);
        h.expect_quiet();
        h.fail(first, TransportError::Connection("refused".into()));
        // The round is over: nothing until the next one.
        h.expect_quiet();

        let mut h = client("4.7.0 +slots-renewed-apart");
        h.advance(1_000);
        let mut sent = Vec::new();
        for _ in 0..3 {
            let (request, command) = h.expect_send();
            sent.push((request, command[3].clone()));
        }
        h.expect_quiet();
        // Each slot's chain started with its first lock, in that order.
        let names: Vec<&str> = sent.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(names, ["orders", "payments", "inventory"]);
        h.fail(sent[2].0, TransportError::Connection("refused".into()));
        h.expect_quiet();
        h.reply(sent[0].0, Value::Array(vec![Value::Int(1)]));
        h.expect_event();
        h.reply(sent[1].0, Value::Array(vec![Value::Int(1)]));
        h.expect_event();
        // A third of the timeout after each slot's round ended, its next.
        h.advance(1_000);
        let mut next: Vec<String> = (0..3).map(|_| h.expect_send().1[3].clone()).collect();
        next.sort();
        assert_eq!(next, ["inventory", "orders", "payments"]);
    }
}
