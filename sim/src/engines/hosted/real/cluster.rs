//! Several masters on the real engine: a Redis Cluster (`[sim.redis]
//! shards = N`), or independent masters (`masters = N`, the servers a red
//! lock is built over). The engine starts them itself (`--redis spawn`):
//! a cluster's N masters formed on loopback, or N standalone servers that
//! share nothing and on which no `CLUSTER` setup is done. Each client
//! reaches each master through a loopback proxy of its own, its lock
//! client over a connection per master (in cluster mode, or one Redisson
//! instance per independent master, each lock on the master its
//! `placement` names).
//!
//! The engine keeps one [`super::nodes::Nodes`] per master (a primary
//! without replicas: the validator refuses replicas with either), and
//! every command of its own goes to the master that serves the key it
//! names, as the clients route it ([`lockcore::route`]): a real cluster
//! answers `MOVED` on any other, and an independent master simply does
//! not hold the key. Redis-side faults act on the masters they name:
//!
//! - `shard-pause`: `CLIENT PAUSE <ms> ALL` on that master alone;
//!   `redis-pause` on every master.
//! - `shard-restart`: that master alone, as `redis-restart` is done on
//!   every master (its proxies close their connections; `FLUSHALL` and
//!   `SCRIPT FLUSH` on it): see `effects`.
//! - `redis-restart`, `redis-down`: every master at once (every proxy
//!   closes its connections, refuses new ones while down; `FLUSHALL` on
//!   each master when the keys are lost).
//! - `delete-key`: `DEL` on the key's master.
//! - `clock-jump`: the TTL script on each master, over its own locks.
//! - the replication faults need replicas, which neither has.

use bytes::Bytes;

use super::{RealRedis, RedisTarget};
use crate::{SimError, SimSpec};

/// Which masters one of the engine's own commands goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum To {
    /// Master `i` (in slot order); 0 is the primary outside a cluster.
    Master(usize),
    /// Every master.
    Every,
}

impl To {
    /// Whether master `i` of `n` is one it names.
    pub(super) fn reaches(self, i: usize) -> bool {
        match self {
            To::Master(k) => k == i,
            To::Every => true,
        }
    }
}

/// A command of the engine's own, and where it goes.
pub(super) type Routed = (To, Vec<Bytes>);

/// The master that serves `key` in `spec`'s Redis, as the clients route
/// it: in a cluster the slot of its hash tag, or of the whole key; on
/// independent masters the one its lock is placed on; else 0.
pub(super) fn master_of(spec: &SimSpec, key: &str) -> usize {
    usize::from(spec.redis.route(key))
}

/// How many masters the engine runs `spec` on (1 with one Redis).
pub(super) fn masters(spec: &SimSpec) -> usize {
    usize::from(spec.redis.master_count())
}

/// Several masters on a Redis the engine did not start: refused, since
/// the engine starts the masters itself (and knows a cluster's slots from
/// the split it made); one url is one server.
pub(super) fn refusal(spec: &SimSpec, opts: &RealRedis) -> Option<SimError> {
    if !matches!(opts.target, RedisTarget::Url(_)) {
        return None;
    }
    let (shards, masters) = (spec.redis.shards, spec.redis.masters);
    if shards > 0 {
        return Some(not_spawned(shards));
    }
    (masters > 0).then(|| masters_not_spawned(masters))
}

/// The refusal of a cluster on a Redis the engine did not start.
pub(super) fn not_spawned(shards: u16) -> SimError {
    SimError::Unsupported {
        engine: "redis".to_owned(),
        what: format!(
            "[sim.redis] shards = {shards} on --redis redis://...: the engine starts the cluster's masters itself (it must know their slots); run it with --redis spawn"
        ),
    }
}

/// The refusal of independent masters on a Redis the engine did not
/// start.
pub(super) fn masters_not_spawned(masters: u16) -> SimError {
    SimError::Unsupported {
        engine: "redis".to_owned(),
        what: format!(
            "[sim.redis] masters = {masters} on --redis redis://...: the engine starts the independent masters itself (a url is one server); run it with --redis spawn"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::tests::{client, critical, spec, thread};

    /// Keys go to the master of their slot (`foo` is slot 12182, the
    /// third of three); outside a cluster everything is the primary's.
    #[test]
    fn keys_go_to_their_slot_s_master() {
        let mut s = spec(vec![client("A", vec![thread(0, critical(1_000))])]);
        assert_eq!((master_of(&s, "foo"), masters(&s)), (0, 1));
        s.redis.shards = 3;
        assert_eq!((master_of(&s, "foo"), masters(&s)), (2, 3));
        assert_eq!(master_of(&s, "redisson_lock__channel:{foo}"), 2);
        assert!(To::Every.reaches(1) && To::Master(1).reaches(1));
        assert!(!To::Master(0).reaches(1));
    }

    /// On independent masters a lock's key, its channel and its unlock
    /// latch go to the master its lock is placed on (unplaced: 0), and
    /// the clock jump's script goes to each master over its own locks.
    #[test]
    fn keys_go_to_their_lock_s_placed_master() {
        let on = |lock: &str| {
            let mut t = thread(0, critical(1_000));
            t.lock = lockcore::LockName::new(lock).expect("a name");
            t
        };
        let mut s = spec(vec![client("A", vec![on("a"), on("b"), on("foo")])]);
        s.redis.masters = 3;
        s.redis.placement = lockcore::Placement::new([("b".to_owned(), 1), ("foo".to_owned(), 2)]);
        assert_eq!(masters(&s), 3);
        assert_eq!((master_of(&s, "a"), master_of(&s, "b")), (0, 1));
        assert_eq!(master_of(&s, "redisson_lock__channel:{b}"), 1);
        assert_eq!(master_of(&s, "redisson_unlock_latch:{foo}:r1"), 2);
        let jumps = super::super::clock_jump::clock_jumps(&s, 10);
        let locks: Vec<(To, Vec<Bytes>)> = jumps
            .into_iter()
            .map(|(to, command)| (to, command[4..].to_vec()))
            .collect();
        let named = |l: &str| vec![Bytes::from(l.to_owned())];
        assert_eq!(
            locks,
            vec![
                (To::Master(0), named("a")),
                (To::Master(1), named("b")),
                (To::Master(2), named("foo")),
            ]
        );
    }

    /// Independent masters are started by the engine too: on a url they
    /// are refused by name.
    #[test]
    fn independent_masters_on_a_url_are_refused() {
        let mut s = spec(vec![client("A", vec![thread(0, critical(1_000))])]);
        s.redis.masters = 2;
        let url = RealRedis {
            target: RedisTarget::Url("redis://127.0.0.1:6379".to_owned()),
            time_scale: 10,
        };
        let Some(SimError::Unsupported { engine, what }) = refusal(&s, &url) else {
            panic!("independent masters on a url must be refused");
        };
        assert_eq!(engine, "redis");
        assert!(
            what.starts_with("[sim.redis] masters = 2 on --redis redis://"),
            "{what}"
        );
        let Err(SimError::Unsupported { what: played, .. }) = super::super::play(&s, &url) else {
            panic!("a run of independent masters on a url must be refused");
        };
        assert_eq!(played, what);
        let spawn = RealRedis {
            target: RedisTarget::Spawn,
            time_scale: 10,
        };
        assert!(refusal(&s, &spawn).is_none());
        s.redis.appendonly = true;
        let Err(SimError::Unsupported { what, .. }) = super::super::plan(&s) else {
            panic!("an AOF on several masters must be refused");
        };
        assert!(
            what.starts_with("[sim.redis] appendonly = true with"),
            "{what}"
        );
    }

    /// A cluster needs masters the engine starts: on a url it is refused
    /// by name before anything runs, with `spawn` it is run.
    #[test]
    fn a_cluster_on_a_url_is_refused() {
        let mut s = spec(vec![client("A", vec![thread(0, critical(1_000))])]);
        s.redis.shards = 2;
        let url = RealRedis {
            target: RedisTarget::Url("redis://127.0.0.1:6379".to_owned()),
            time_scale: 10,
        };
        let Some(SimError::Unsupported { engine, what }) = refusal(&s, &url) else {
            panic!("a cluster on a url must be refused");
        };
        assert_eq!(engine, "redis");
        assert!(
            what.starts_with("[sim.redis] shards = 2 on --redis redis://"),
            "{what}"
        );
        let spawn = RealRedis {
            target: RedisTarget::Spawn,
            time_scale: 10,
        };
        assert!(refusal(&s, &spawn).is_none());
        assert!(super::super::plan(&s).is_ok());
    }

    /// A 2-master cluster under 3.44.0 (batched renewal, one `EVAL` per
    /// slot): A holds "orders" (slot 105, master 0) and "payments" (slot
    /// 8507, master 1) with the watchdog for 14 s; B waits for both from
    /// 1 s. Master 1 is paused from 9.5 s to 11 s, over the renewal due
    /// at 10 s (held at most 2.5 s with Redis's lag in ending a pause,
    /// under the 3 s response timeout). Spec time, run ten times faster.
    /// `s` on a real cluster at a tenth of its time, which must break
    /// nothing: the run and its timeline.
    fn run_clean(s: &SimSpec) -> (crate::Run, String) {
        let opts = RealRedis {
            target: RedisTarget::Spawn,
            time_scale: 10,
        };
        let run = crate::run_real(s, &opts).unwrap_or_else(|e| {
            panic!("this test needs redis-server (apt-get install redis-server): {e}")
        });
        let text = run.history.to_string();
        assert!(run.violations.is_empty(), "{:?}\n{text}", run.violations);
        (run, text)
    }

    fn paused_cluster() -> SimSpec {
        serde_json::from_value(serde_json::json!({
            "seed": 3,
            "profile": "3.44.0",
            "horizon_ms": 20_000,
            "redis": { "shards": 2 },
            "clients": [
                { "name": "A", "threads": [
                    { "lock": "orders", "steps": [
                        { "step": "lock" }, { "step": "work", "ms": 14_000 },
                        { "step": "write" }, { "step": "unlock" } ] },
                    { "lock": "payments", "steps": [
                        { "step": "lock" }, { "step": "work", "ms": 14_000 },
                        { "step": "write" }, { "step": "unlock" } ] } ] },
                { "name": "B", "threads": [
                    { "start_ms": 1_000, "lock": "orders", "steps": [
                        { "step": "lock" }, { "step": "write" }, { "step": "unlock" } ] },
                    { "start_ms": 1_000, "lock": "payments", "steps": [
                        { "step": "lock" }, { "step": "write" }, { "step": "unlock" } ] } ] }
            ],
            "faults": [
                { "fault": "shard-pause", "shard": 1, "at_ms": 9_500, "duration_ms": 1_500 }
            ]
        }))
        .expect("a spec")
    }

    /// The cluster spec on a real 2-master Redis Cluster the engine starts:
    /// each lock's commands reach its own master (a wrong one would
    /// answer `MOVED`), the renewal at 10 s renews "orders" at once while
    /// "payments"'s, on the paused master, is answered only when the
    /// pause ends at 11 s; A unlocks both at 14 s and B, woken on each
    /// master, takes both. Nothing is violated. Needs `redis-server`.
    #[test]
    fn a_real_cluster_runs_locks_on_two_masters_and_pauses_one() {
        let (run, text) = run_clean(&paused_cluster());
        assert!(!text.contains("ERROR"), "a command failed (MOVED?)\n{text}");
        for who in ["A/t1", "A/t2", "B/t1", "B/t2"] {
            let acquired = format!("{who}     lock -> acquired");
            assert!(text.contains(&acquired), "{who} never acquires\n{text}");
        }
        // Orders's master answers at once; payments's holds the renewal
        // until its pause ends (Redis ends it in its cron, up to 100 ms
        // late: a second of spec time).
        let (sent, replied, reply) = renewal(&run.history, "orders");
        assert!(
            replied - sent < 500 && reply == "1",
            "orders renewed {sent}->{replied}\n{text}"
        );
        let (sent, replied, reply) = renewal(&run.history, "payments");
        let held = (9_500..11_000).contains(&sent) && (10_900..13_000).contains(&replied);
        assert!(
            held && reply == "1",
            "payments renewed {sent}->{replied} ({reply}), not held by the pause\n{text}"
        );
    }

    /// When A's first renewal of `lock` went out and when its reply came,
    /// in spec ms, and the reply.
    fn renewal(history: &crate::History, lock: &str) -> (u64, u64, String) {
        use crate::model::history::RecordKind;
        let text = history.to_string();
        let sent = history.records.iter().find_map(|r| match &r.kind {
            RecordKind::RenewSent {
                lock: l, request, ..
            } if l.as_str() == lock => Some((r.at.as_ms(), *request)),
            _ => None,
        });
        let Some((at, request)) = sent else {
            panic!("{lock} is never renewed\n{text}");
        };
        let replied = history.records.iter().find_map(|r| match &r.kind {
            RecordKind::RenewReply {
                request: q, reply, ..
            } if *q == request => Some((r.at.as_ms(), reply.clone())),
            _ => None,
        });
        match replied {
            Some((when, reply)) => (at, when, reply),
            None => panic!("{lock}'s renewal is never answered\n{text}"),
        }
    }

    /// The other Redis-side faults on the real 2-master cluster, each on
    /// the masters it names: `delete-key` deletes "payments" on master 1
    /// at 3 s; a 29 s `clock-jump` at 5 s runs its script on each master
    /// over its own locks (one `EVAL` naming both would be refused with
    /// `CROSSSLOT`), so "orders", with about 25 s left on master 0,
    /// expires; a `redis-pause` pauses both for a second; A's renewals at
    /// 10 s find both keys gone (`0`, not `MOVED`); the `redis-restart`
    /// at 16 s closes B's connections to both masters, and B subscribes
    /// again to its two channels. Needs `redis-server`.
    #[test]
    fn other_redis_faults_act_on_their_masters() {
        let mut s = paused_cluster();
        s.faults = serde_json::from_value(serde_json::json!([
            { "fault": "delete-key", "lock": "payments", "at_ms": 3_000 },
            { "fault": "clock-jump", "jump_ms": 29_000, "at_ms": 5_000 },
            { "fault": "redis-pause", "at_ms": 7_000, "duration_ms": 1_000 },
            { "fault": "redis-restart", "at_ms": 16_000 }
        ]))
        .expect("faults");
        let (run, text) = run_clean(&s);
        assert!(!text.contains("MOVED"), "{text}");
        let at = |what: &str| {
            let line = text.lines().find(|l| l.contains(what));
            let secs = line.and_then(|l| l.split_whitespace().next());
            let secs = secs.and_then(|t| t.trim_end_matches('s').parse::<f64>().ok());
            secs.unwrap_or_else(|| panic!("no '{what}'\n{text}"))
        };
        assert!(
            (3.0..3.5).contains(&at("payments free (deleted)")),
            "{text}"
        );
        assert!((5.0..5.5).contains(&at("orders free (expired)")), "{text}");
        let (sent, replied, reply) = renewal(&run.history, "orders");
        assert!(sent >= 10_000 && replied < 11_000 && reply == "0", "{text}");
        assert!(
            text.contains("renewal of payments stopped: not-held"),
            "{text}"
        );
        for lock in ["orders", "payments"] {
            let channel = format!("redisson_lock__channel:{{{lock}}}");
            let again = format!("B        reconnect: subscribing to {channel} again");
            assert!(at(&again) >= 16.0, "{text}");
        }
    }
}
