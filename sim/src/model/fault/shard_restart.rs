//! `shard-restart`: one master restarts without persistence.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Invalid, Kind, Strike};
use crate::SimSpec;

/// One master (of a cluster, `[sim.redis] shards`, or of the independent
/// masters, `masters`) restarts without persistence: its keys and its
/// connections are lost, commands in flight to it get no reply, and its
/// subscriptions are gone. The other masters go on as they were. Over
/// independent masters it is the red lock's known weak point: a majority
/// can be taken twice once a master that held part of one forgets it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShardRestart {
    /// The master, numbered from 0 (a cluster's in slot order).
    pub shard: u16,
    /// When.
    pub at_ms: u64,
}

impl Kind for ShardRestart {
    fn at_ms(&self) -> u64 {
        self.at_ms
    }

    fn end_ms(&self) -> Option<u64> {
        None
    }

    fn check_plan(&self, _i: usize, spec: &SimSpec) -> Result<(), Invalid> {
        super::shard_pause::check_master("shard-restart restarts", self.shard, spec)
    }

    fn needs_cluster(&self) -> bool {
        true
    }

    fn shard(&self) -> Option<u16> {
        Some(self.shard)
    }

    fn text(&self) -> String {
        format!("shard {} restart", self.shard)
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.restart_redis(s, Some(self.shard));
    }
}

/// A restart of one of the first three masters (a drawn deployment has
/// two or three; a fault naming one it lacks is dropped).
pub(crate) fn generate(r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::ShardRestart(ShardRestart {
        shard: r.random_range(0..3),
        at_ms: d.at_ms,
    })
}

#[cfg(test)]
mod tests {
    use lockcore::{LockName, Placement};

    use crate::run::tests::{client, critical, spec, thread};
    use crate::{Fault, FaultPlan, run};

    use super::*;

    /// Two independent masters, "a" on 0 and "b" on 1, each held by a
    /// thread of A for 5 s; master 1 restarts at 1 s: b's key is gone
    /// (B takes it at once), a's stays.
    #[test]
    fn a_restarted_master_forgets_only_its_own_locks() {
        let mut a = thread(0, critical(5_000));
        a.lock = LockName::new("a").unwrap();
        let mut b = thread(0, critical(5_000));
        b.lock = LockName::new("b").unwrap();
        let mut late = thread(1_500, critical(100));
        late.lock = LockName::new("b").unwrap();
        let mut other = thread(1_500, critical(100));
        other.lock = LockName::new("a").unwrap();
        let mut s = spec(vec![
            client("A", vec![a, b]),
            client("B", vec![late, other]),
        ]);
        s.horizon_ms = 20_000;
        s.redis.masters = 2;
        s.redis.placement = Placement::new([("b".to_owned(), 1)]);
        s.faults = FaultPlan(vec![Fault::ShardRestart(ShardRestart {
            shard: 1,
            at_ms: 1_000,
        })]);
        let r = run(&s).expect("valid");
        let text = r.history.to_string();
        let held = |lock: &str, by: &str| {
            text.lines()
                .find(|l| l.contains(&format!("{lock} held by {by}")))
                .map(|l| l.split_whitespace().next().unwrap().to_owned())
        };
        assert!(text.contains("shard 1 restart"), "{text}");
        assert!(
            held("b", "B").is_some_and(|t| t.starts_with("1.5")),
            "{text}"
        );
        assert!(
            held("a", "B").is_some_and(|t| t.starts_with("5.")),
            "{text}"
        );
        // A still believed it held b when B took it: the restart's
        // doing, which no lease-based lock survives.
        assert!(!r.violations.is_empty(), "{text}");
        for v in &r.violations {
            assert_eq!(v.cause.name(), "beyond-guarantee", "{v}");
            assert!(v.cause.to_string().contains("restart"), "{}", v.cause);
        }
    }
}
