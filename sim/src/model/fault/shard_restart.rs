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
pub(super) mod tests {
    use lockcore::{LockName, Placement};

    use crate::run::tests::{client, critical, spec, thread};
    use crate::{Fault, FaultPlan, run};

    use super::*;

    /// Two independent masters, "a" on 0 and "b" on 1: A holds both for
    /// 5 s from 0 s, and B takes b and then a from 1.5 s. `edit` adds the
    /// fault on master 1 (and what it needs). The run, and its timeline.
    pub(in crate::model::fault) fn two_masters(
        edit: impl FnOnce(&mut crate::SimSpec),
    ) -> (crate::Run, String) {
        let on = |lock: &str, mut t: crate::ThreadSpec| {
            t.lock = LockName::new(lock).unwrap();
            t
        };
        let mut s = spec(vec![
            client(
                "A",
                vec![
                    on("a", thread(0, critical(5_000))),
                    on("b", thread(0, critical(5_000))),
                ],
            ),
            client(
                "B",
                vec![
                    on("b", thread(1_500, critical(100))),
                    on("a", thread(1_500, critical(100))),
                ],
            ),
        ]);
        s.horizon_ms = 20_000;
        s.redis.masters = 2;
        s.redis.placement = Placement::new([("b".to_owned(), 1)]);
        edit(&mut s);
        let r = run(&s).expect("valid");
        let text = r.history.to_string();
        (r, text)
    }

    /// When the timeline first shows `lock` held by `by`.
    pub(in crate::model::fault) fn held(text: &str, lock: &str, by: &str) -> Option<String> {
        text.lines()
            .find(|l| l.contains(&format!("{lock} held by {by}")))
            .map(|l| l.split_whitespace().next().unwrap().to_owned())
    }

    /// B took b at once, a only once A let it go at 5 s, and every
    /// violation is put beyond the guarantee by the fault on master 1
    /// (`cause` names it): A still believed it held b, and no lease-based
    /// lock survives its master losing the key.
    pub(in crate::model::fault) fn only_b_lost(r: &crate::Run, text: &str, cause: &str) {
        assert!(
            held(text, "b", "B").is_some_and(|t| t.starts_with("1.5")),
            "{text}"
        );
        assert!(
            held(text, "a", "B").is_some_and(|t| t.starts_with("5.")),
            "{text}"
        );
        assert!(!r.violations.is_empty(), "{text}");
        for v in &r.violations {
            assert_eq!(v.cause.name(), "beyond-guarantee", "{v}");
            assert!(v.cause.to_string().contains(cause), "{}", v.cause);
        }
    }

    /// Master 1 restarts at 1 s: b's key is gone (B takes it at once),
    /// a's stays.
    #[test]
    fn a_restarted_master_forgets_only_its_own_locks() {
        let (r, text) = two_masters(|s| {
            s.faults = FaultPlan(vec![Fault::ShardRestart(ShardRestart {
                shard: 1,
                at_ms: 1_000,
            })]);
        });
        assert!(text.contains("shard 1 restart"), "{text}");
        only_b_lost(&r, &text, "restart");
    }
}
