//! `shard-pause`: one master of a Redis Cluster (or of the independent
//! masters) executes no command for a while.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Invalid, Kind, Strike};
use crate::SimSpec;

/// One master of the cluster (`[sim.redis] shards`) stops executing
/// commands (as `CLIENT PAUSE` on that node: a master stalled by a fork
/// of a large dataset, a slow script, or a hang before its failover);
/// they wait, and run in arrival order when it ends. The other masters
/// go on serving their slots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShardPause {
    /// The master, numbered from 0 in slot order.
    pub shard: u16,
    /// When.
    pub at_ms: u64,
    /// For how long.
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub duration_ms: u64,
}

impl Kind for ShardPause {
    redis_window!();

    fn check_plan(&self, _i: usize, spec: &SimSpec) -> Result<(), Invalid> {
        check_master("shard-pause pauses", self.shard, spec)
    }

    fn needs_cluster(&self) -> bool {
        true
    }

    fn shard(&self) -> Option<u16> {
        Some(self.shard)
    }

    fn text(&self) -> String {
        format!("shard {} pause {}ms", self.shard, self.duration_ms)
    }

    fn free_delay_ms(&self) -> Option<u64> {
        Some(self.duration_ms)
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.pause_redis(s, true, self.duration_ms, Some(self.shard));
    }

    fn end(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.pause_redis(s, false, self.duration_ms, Some(self.shard));
    }
}

/// Whether `shard` is one of `spec`'s masters, for a kind that `acts`
/// on one.
pub(super) fn check_master(acts: &str, shard: u16, spec: &SimSpec) -> Result<(), Invalid> {
    if !spec.redis.has_masters() {
        return Err((
            "fault",
            format!(
                "{acts} one master of several, but Redis is one (give `shards = 2` or `masters = 2` or more under `[sim.redis]`)"
            ),
        ));
    }
    let masters = spec.redis.master_count();
    if shard >= masters {
        return Err((
            "shard",
            format!("Redis has {masters} master(s), numbered from 0; got {shard}"),
        ));
    }
    Ok(())
}

/// A pause of up to 20 s, long enough to outlast a renewal's every retry
/// (16.5 s with Redisson's defaults), of one of the first three masters
/// (a drawn cluster has two or three; a fault naming one it lacks is
/// dropped).
pub(crate) fn generate(r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::ShardPause(ShardPause {
        shard: r.random_range(0..3),
        at_ms: d.at_ms,
        duration_ms: crate::model::rng::between(r, 10, 20_000),
    })
}

#[cfg(test)]
mod tests {
    use lockcore::LockName;

    use crate::run::tests::{client, critical, spec, thread};
    use crate::{Fault, FaultPlan, SimError, run};

    use super::*;

    /// Three masters: "orders" is served by master 0, "inventory" by
    /// master 2. Master 2 paused for the first 5 s: A takes orders at
    /// once, B's acquire of inventory runs when the pause ends.
    fn paused(shard: u16) -> crate::SimSpec {
        let mut a = thread(0, critical(1_000));
        a.lock = LockName::new("orders").unwrap();
        let mut b = thread(0, critical(1_000));
        b.lock = LockName::new("inventory").unwrap();
        let mut s = spec(vec![client("A", vec![a]), client("B", vec![b])]);
        s.horizon_ms = 20_000;
        s.redis.shards = 3;
        s.faults = FaultPlan(vec![Fault::ShardPause(ShardPause {
            shard,
            at_ms: 0,
            duration_ms: 5_000,
        })]);
        s
    }

    #[test]
    fn a_paused_master_holds_only_its_own_slots_commands() {
        let text = run(&paused(2)).expect("valid").history.to_string();
        let held = |lock: &str| {
            let line = text
                .lines()
                .find(|l| l.contains(&format!("{lock} held by")))
                .unwrap_or_else(|| panic!("{lock} never held:\n{text}"));
            line.split_whitespace().next().unwrap().to_owned()
        };
        assert!(held("orders").starts_with("0.00"), "{text}");
        assert!(held("inventory").starts_with("5.00"), "{text}");
        assert!(text.contains("shard 2 pause 5000ms begins"), "{text}");
    }

    /// A master the cluster lacks, or no cluster at all, is refused by
    /// name.
    #[test]
    fn the_master_must_exist() {
        let e = run(&paused(3)).unwrap_err();
        assert!(
            matches!(&e, SimError::Invalid { field, reason } if field.contains("shard") && reason.contains("3 master(s)")),
            "{e}"
        );
        let mut s = paused(0);
        s.redis.shards = 0;
        let e = run(&s).unwrap_err().to_string();
        assert!(e.contains("but Redis is one"), "{e}");
    }
}
