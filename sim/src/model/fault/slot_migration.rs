//! `slot-migration`: a Redis Cluster moves a lock's slot to another
//! master while the clients use it, as `redis-cli --cluster reshard` (or a
//! managed cluster's scaling) does.

use lockcore::LockName;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Invalid, Kind, Strike};
use crate::SimSpec;

/// At `at_ms` the slot of `lock` (its key's, and every key Redisson keeps
/// beside it) starts moving from its master to master `to`: `CLUSTER
/// SETSLOT <slot> IMPORTING` on `to`, `MIGRATING` on its master. For
/// `duration_ms` (the slot's other keys moving, batch by batch) the old
/// master serves the keys it still has, answers `ASK` for those it has
/// not and `TRYAGAIN` for a command whose keys it has only some of (a
/// lock's unlock names its channel as a key, which is never there); `to`
/// serves a command sent after `ASKING`. Then the lock's keys move with
/// their TTLs (`MIGRATE`) and the slot is `to`'s (`SETSLOT NODE` on every
/// master): the old master answers `MOVED`. Clients follow `ASK` and
/// `MOVED` and learn the new master at their next topology scan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlotMigration {
    /// The lock whose slot moves.
    #[schemars(with = "String", length(min = 1))]
    pub lock: LockName,
    /// The master it moves to, numbered from 0 in slot order.
    pub to: u16,
    /// When the migration starts.
    pub at_ms: u64,
    /// How long until the lock's keys move and the slot is `to`'s.
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub duration_ms: u64,
}

impl Kind for SlotMigration {
    redis_window!();

    fn needs_cluster(&self) -> bool {
        true
    }

    fn slot_move(&self) -> Option<(&LockName, u16)> {
        Some((&self.lock, self.to))
    }

    fn check_plan(&self, i: usize, spec: &SimSpec) -> Result<(), Invalid> {
        if spec.redis.shards < 2 {
            return Err((
                "fault",
                "slot-migration moves a slot between the masters of a cluster; give `shards = 2` or more under `[sim.redis]` (independent masters have no slots)".to_owned(),
            ));
        }
        super::shard_pause::check_master("slot-migration moves a slot to", self.to, spec)?;
        let from = spec.redis.route(self.lock.as_str());
        if from == self.to {
            return Err((
                "to",
                format!(
                    "lock '{}' is on master {from} already; name another master",
                    self.lock
                ),
            ));
        }
        let slot = lockcore::calc_slot(self.lock.as_str());
        let same_slot = |f: &Fault| {
            f.slot_move()
                .is_some_and(|(l, _)| lockcore::calc_slot(l.as_str()) == slot)
        };
        if let Some(j) = spec.faults.0[..i].iter().position(same_slot) {
            return Err((
                "lock",
                format!("slot {slot} moves in faults[{j}] already: a slot moves once a run"),
            ));
        }
        // A master's failover or restart while a slot moves (its
        // migration state, the keys in flight) is not modelled.
        let end = self.at_ms.saturating_add(self.duration_ms);
        let fails = |f: &Fault| matches!(f, Fault::ShardFailover(_) | Fault::ShardRestart(_));
        let during =
            |f: &Fault| f.at_ms() < end && self.at_ms < f.end_ms().unwrap_or(f.at_ms()) + 1;
        match spec.faults.0.iter().position(|f| fails(f) && during(f)) {
            Some(j) => Err((
                "at_ms",
                format!(
                    "faults[{j}] ({}) fails or restarts a master while the slot moves; a migration must end before it (not modelled)",
                    spec.faults.0[j].text()
                ),
            )),
            None => Ok(()),
        }
    }

    fn text(&self) -> String {
        format!(
            "slot of {} migrates to shard {} over {}ms",
            self.lock, self.to, self.duration_ms
        )
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.migrate_slot(s, &self.lock, self.to, true);
    }

    fn end(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.migrate_slot(s, &self.lock, self.to, false);
    }
}

/// The default lock's slot moving to one of the first three masters (a
/// drawn cluster has two or three; a fault naming one it lacks, or the
/// lock's own, is dropped), over up to 10 s: a slot of a few keys moves in
/// milliseconds, a large one in seconds.
pub(crate) fn generate(r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::SlotMigration(SlotMigration {
        lock: LockName::new(crate::DEFAULT_LOCK).unwrap_or_else(|_| unreachable!()),
        to: r.random_range(0..3),
        at_ms: d.at_ms,
        duration_ms: crate::model::rng::between(r, 1, 10_000),
    })
}

#[cfg(test)]
mod tests {
    use lockcore::LockName;

    use crate::run::tests::{client, critical, spec, thread};
    use crate::{Fault, FaultPlan, run, validate_spec};

    use super::*;

    /// Three masters: A holds "orders" (slot 105, master 0) for 12 s with
    /// a 3 s watchdog, B waits for it from 1 s; the slot moves to `to`
    /// from 2 s to 2 s + `duration_ms`.
    fn migrating(to: u16, duration_ms: u64, release: &str) -> crate::SimSpec {
        let mut a = thread(0, critical(12_000));
        a.lock = LockName::new("orders").unwrap();
        let mut b = thread(1_000, critical(1_000));
        b.lock = a.lock.clone();
        let lock = a.lock.clone();
        let mut s = spec(vec![client("A", vec![a]), client("B", vec![b])]);
        s.watchdog_timeout_ms = 3_000;
        s.horizon_ms = 30_000;
        s.profile = release.parse().unwrap();
        s.redis.shards = 3;
        s.faults = FaultPlan(vec![Fault::SlotMigration(SlotMigration {
            lock,
            to,
            at_ms: 2_000,
            duration_ms,
        })]);
        s
    }

    /// The watchdog renews the key through the move (every second, on
    /// master 0, then by `MOVED` on master 2), the unlock at 12 s reaches
    /// master 2, and its message reaches B's subscription on master 0
    /// over the cluster bus: B takes the lock at once.
    #[test]
    fn a_held_lock_is_renewed_through_its_slot_s_move_and_its_unlock_wakes_b() {
        for release in ["3.36.0", "4.7.0"] {
            let r = run(&migrating(2, 3_000, release)).expect("valid");
            let text = r.history.to_string();
            assert!(r.violations.is_empty(), "{release}:\n{text}");
            assert!(
                text.contains("slot of orders migrates to shard 2 over 3000ms begins"),
                "{text}"
            );
            let taken = text
                .lines()
                .find(|l| l.contains("B/t1") && l.contains("lock -> acquired"))
                .unwrap_or_else(|| panic!("{release}: B never took it:\n{text}"));
            let at: f64 = taken
                .split_whitespace()
                .next()
                .unwrap()
                .trim_end_matches('s')
                .parse()
                .unwrap();
            assert!(
                (12.0..12.2).contains(&at),
                "{release}: B took it at {at} s:\n{text}"
            );
        }
    }

    /// The slot must move to another master of a cluster, once a run,
    /// and not while a master fails over.
    #[test]
    fn a_move_needs_a_cluster_and_another_master() {
        let e = validate_spec(&migrating(0, 1_000, "4.7.0"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is on master 0 already"), "{e}");
        let e = validate_spec(&migrating(3, 1_000, "4.7.0"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("3 master(s)"), "{e}");
        let mut s = migrating(1, 1_000, "4.7.0");
        s.redis.shards = 0;
        let e = validate_spec(&s).unwrap_err().to_string();
        assert!(e.contains("shards = 2"), "{e}");
        let mut s = migrating(1, 1_000, "4.7.0");
        let again = s.faults.0[0].clone();
        s.faults.0.push(again);
        let e = validate_spec(&s).unwrap_err().to_string();
        assert!(e.contains("a slot moves once a run"), "{e}");
        let mut s = migrating(1, 1_000, "4.7.0");
        s.faults
            .0
            .push(Fault::ShardRestart(super::super::ShardRestart {
                shard: 2,
                at_ms: 2_500,
            }));
        let e = validate_spec(&s).unwrap_err().to_string();
        assert!(e.contains("while the slot moves"), "{e}");
    }
}
