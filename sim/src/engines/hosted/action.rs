//! A fault plan as the hosted engines carry it out: what they do at which
//! ms, and which faults they refuse (those with a verb the engine cannot
//! carry out: see `fault::effect`).

use crate::model::fault::{Verb, effect};
use crate::{Fault, SimError, SimSpec};

/// What the engine's loop does at an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Fault `i`'s window opens (or, for an instant, it strikes).
    Begin(usize),
    /// Fault `i`'s window closes.
    End(usize),
}

/// The kinds turmoil carries out, and how, for messages and the README.
pub const TURMOIL_FAULTS: &str = "pause (the client's tasks and its lock freeze), starve \
     (the client's timers and wake-ups run late), interleave (its lock's callbacks wait at \
     their interleaving points), crash \
     (turmoil crash; restart: bounce), partition (what each connection's end reads in the \
     window, and behind it, is read at TCP's first retransmission after the heal), latency (the link's maximum latency), delay-replies and \
     delay-requests (what the client, or Redis, reads in the window is read that much later), \
     redis-pause (Redis reads \
     nothing), redis-restart and redis-down (the Redis host crashes, comes back with a \
     fresh engine or its keys; clients reconnect), clock-jump (Redis's clock), interrupt \
     (RLock::interrupt), delete-key, clock-skew and clock-drift (the client's wall clock \
     and timer oscillator, as on the fast engine), and failover and replication-drop (Redis's \
     replicas, as on the fast engine: the primary's host crashes and a replica's engine \
     serves in its place), switchover (the served engine becomes a replica of a promoted \
     one with its connections open; at the end the Redis host bounces and the promoted \
     engine serves), and replica-down (as on the fast engine: the primary counts the replica \
     out until its link is back)";

/// The kinds the real-Redis engine carries out, and how.
pub const REDIS_FAULTS: &str = "pause (the client's tasks and its lock freeze), starve \
     (the client's timers and wake-ups run late), interleave (its lock's callbacks wait at \
     their interleaving points), crash (its \
     tasks end, its connections close; restart: a new process), partition, latency, \
     delay-replies and delay-requests (in a loopback proxy between the client and Redis: a \
     partition holds what was sent until TCP's first retransmission after the heal), redis-pause \
     (CLIENT PAUSE ALL; with several masters, on every one), shard-pause (CLIENT PAUSE ALL on \
     the one master, of the real cluster or the independent masters the engine starts), \
     shard-restart (that master alone, as redis-restart: its proxies close their \
     connections, FLUSHALL and SCRIPT FLUSH on it; a cluster's node stays in the cluster \
     with its slots), redis-restart and redis-down (the \
     proxies close every connection and refuse new ones while Redis is down; FLUSHALL when \
     the keys are lost; with several masters, every one at once), interrupt \
     (RLock::interrupt), delete-key (DEL, on the key's master), clock-jump (a script shortens, or lengthens, the \
     remaining TTL of the locks' keys and unlock latches by the jump), clock-skew and \
     clock-drift (the client's wall clock and timer oscillator, as on the fast engine), and, \
     with replicas (real redis-server processes started by the engine), switchover (Sentinel's \
     SLAVEOF transactions promote a replica and demote the primary, closing its clients' \
     connections; at the end the proxies move to the new primary), failover (the primary's \
     process is killed; at the end a replica is promoted, the proxies move to it and the old \
     primary restarts as its replica), replication-drop (each replica replicates through a \
     loopback relay, which holds the stalled replicas' bytes both ways for the window) and \
     replica-down (REPLICAOF a port where nothing listens for the window, then the relay \
     again)";

/// Which engine's kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kinds {
    Turmoil,
    Redis,
}

impl Kinds {
    /// Whether the engine carries out `verb`. Neither drops messages at
    /// random (TCP does not lose a message and go on); both stall and
    /// promote replicas (the real engine, replica processes it starts);
    /// only the real engine runs several masters (a cluster, or
    /// independent ones).
    pub(crate) fn supports(self, verb: Verb) -> bool {
        match verb {
            Verb::DropMessages => false,
            // Turmoil runs one Redis host: no cluster, no independent
            // masters.
            Verb::PauseShard | Verb::RestartShard => self == Kinds::Redis,
            // Neither starts replicas for several masters (see `plan`).
            Verb::FailOverShard => false,
            // Not yet: the real cluster's `SETSLOT` and `MIGRATE`.
            Verb::MigrateSlot => false,
            _ => true,
        }
    }

    /// What the engine carries out, and how, in words.
    #[cfg(test)]
    fn words(self) -> &'static str {
        match self {
            Kinds::Turmoil => TURMOIL_FAULTS,
            Kinds::Redis => REDIS_FAULTS,
        }
    }

    /// The engine's name.
    fn engine(self) -> &'static str {
        match self {
            Kinds::Turmoil => "turmoil",
            Kinds::Redis => "redis",
        }
    }
}

/// Whether the engine of `kinds` carries out `fault`: every verb of it,
/// and, for a kind that acts on one master of a cluster, a cluster
/// (turmoil has none).
pub(crate) fn takes(kinds: Kinds, fault: &Fault) -> bool {
    effect::verbs(fault).into_iter().all(|v| kinds.supports(v))
        && !(kinds == Kinds::Turmoil && fault.kind().needs_cluster())
}

/// The first fault of a kind that needs a cluster, by its place, when the
/// engine has none (turmoil).
fn cluster_refusal(spec: &SimSpec, kinds: Kinds) -> Option<String> {
    if kinds != Kinds::Turmoil {
        return None;
    }
    let (i, fault) = (spec.faults.0.iter().enumerate()).find(|(_, f)| f.kind().needs_cluster())?;
    Some(format!(
        "faults[{i}] ({}): it acts on one master of several (a Redis Cluster or independent masters), which the turmoil engine does not simulate; run it on the fast engine, or on the redis engine with --redis spawn",
        fault.text()
    ))
}

/// The plan's actions in time order (ties in plan order), or the first
/// fault with a verb the engine of `kinds` cannot carry out.
pub(crate) fn plan(spec: &SimSpec, kinds: Kinds) -> Result<Vec<(u64, Action)>, SimError> {
    let refused = effect::refusal(spec, |v| kinds.supports(v));
    if let Some(what) = refused.or_else(|| cluster_refusal(spec, kinds)) {
        return Err(SimError::Unsupported {
            engine: kinds.engine().to_owned(),
            what,
        });
    }
    // Issue #49: the real engine starts a real cluster, or standalone
    // masters; turmoil's world has one Redis host.
    let several = match (spec.redis.shards, spec.redis.masters) {
        (0, 0) => None,
        (0, n) => Some(("masters", n, "independent masters", "")),
        (n, _) => Some(("shards", n, "a Redis Cluster", " (a real cluster)")),
    };
    if let (Some((field, n, what, real)), Kinds::Turmoil) = (several, kinds) {
        return Err(SimError::Unsupported {
            engine: kinds.engine().to_owned(),
            what: format!(
                "[sim.redis] {field} = {n}: the turmoil engine simulates one Redis host, not {what}; run it on the fast engine, or on the redis engine with --redis spawn{real}"
            ),
        });
    }
    if let Some((field, n, what, _)) = several
        && spec.redis.replicas > 0
    {
        // A real cluster's replicas follow their masters through the
        // cluster bus and fail over by its gossip, over real seconds the
        // scaled run does not have; independent masters' replicas are
        // not started yet.
        return Err(SimError::Unsupported {
            engine: kinds.engine().to_owned(),
            what: format!(
                "[sim.redis] replicas = {} with {field} = {n}: the {} engine runs {what} without replicas; run it on the fast engine",
                spec.redis.replicas,
                kinds.engine()
            ),
        });
    }
    if !spec.reseeds.is_empty() {
        return Err(SimError::Unsupported {
            engine: kinds.engine().to_owned(),
            what: "reseeds (a branch of an explored run): run it on the fast engine".to_owned(),
        });
    }
    let mut actions = Vec::new();
    for (i, fault) in spec.faults.0.iter().enumerate() {
        actions.push((fault.at_ms(), Action::Begin(i)));
        if let Some(end) = fault.end_ms() {
            actions.push((end, Action::End(i)));
        }
    }
    // Stable: actions at one instant keep the plan's order.
    actions.sort_by_key(|(at, _)| *at);
    Ok(actions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::tests::{client, critical, spec, thread};
    use crate::{FaultPlan, faults};

    /// A kind turmoil cannot express is refused with its place and name,
    /// before anything runs.
    #[test]
    fn unsupported_kinds_are_refused_by_name() {
        let mut s = spec(vec![client("A", vec![thread(0, critical(1_000))])]);
        s.faults = FaultPlan(vec![
            Fault::Pause(faults::Pause {
                client: "A".into(),
                at_ms: 10,
                duration_ms: 5,
            }),
            Fault::DropRate(faults::DropRate {
                client: "A".into(),
                at_ms: 10,
                duration_ms: 5,
                probability: 0.5,
            }),
        ]);
        let error = plan(&s, Kinds::Turmoil).unwrap_err().to_string();
        assert!(error.contains("faults[1] (drop"), "{error}");
        assert!(error.contains("fast engine"), "{error}");
    }

    /// Both engines jump Redis's clock: turmoil moves its own Redis's, a
    /// real Redis's keys have their remaining TTLs moved.
    #[test]
    fn both_engines_jump_redis_clock() {
        let jump = Fault::ClockJump(faults::ClockJump {
            at_ms: 10,
            jump_ms: 5,
        });
        assert!(takes(Kinds::Turmoil, &jump));
        assert!(takes(Kinds::Redis, &jump));
        let restart = Fault::RedisRestart(faults::RedisRestart { at_ms: 10 });
        assert!(takes(Kinds::Turmoil, &restart) && takes(Kinds::Redis, &restart));
    }

    /// A failover needs replicas: turmoil's fake-redis has them, and the
    /// real engine starts real replica processes.
    #[test]
    fn both_engines_fail_over() {
        let failover = Fault::Failover(faults::Failover {
            at_ms: 10,
            duration_ms: 5,
            replica: None,
        });
        assert!(takes(Kinds::Turmoil, &failover));
        assert!(takes(Kinds::Redis, &failover));
    }

    /// A cluster, or independent masters and a restart of one, run on
    /// the real engine (real servers it starts) and are refused by
    /// turmoil, whose world has one Redis host, with a message that says
    /// where they run.
    #[test]
    fn only_turmoil_refuses_a_cluster() {
        let mut s = spec(vec![client("A", vec![thread(0, critical(1_000))])]);
        s.redis.shards = 2;
        assert!(plan(&s, Kinds::Redis).is_ok());
        let error = plan(&s, Kinds::Turmoil).unwrap_err().to_string();
        assert!(error.contains("[sim.redis] shards = 2"), "{error}");
        assert!(error.contains("--redis spawn"), "{error}");
        s.redis.shards = 0;
        s.redis.masters = 2;
        let error = plan(&s, Kinds::Turmoil).unwrap_err().to_string();
        assert!(error.contains("[sim.redis] masters = 2"), "{error}");
        s.faults = FaultPlan(vec![Fault::ShardRestart(faults::ShardRestart {
            shard: 1,
            at_ms: 10,
        })]);
        assert!(plan(&s, Kinds::Redis).is_ok());
        let error = plan(&s, Kinds::Turmoil).unwrap_err().to_string();
        assert!(error.contains("faults[0] (shard 1 restart)"), "{error}");
    }

    /// Windows give a begin and an end, a crash its crash and its restart,
    /// all in time order.
    #[test]
    fn actions_in_time_order() {
        let mut s = spec(vec![client("A", vec![thread(0, critical(1_000))])]);
        s.faults = FaultPlan(vec![
            Fault::Crash(faults::Crash {
                client: "A".into(),
                at_ms: 50,
                restart_after_ms: Some(10),
            }),
            Fault::Pause(faults::Pause {
                client: "A".into(),
                at_ms: 10,
                duration_ms: 45,
            }),
        ]);
        assert_eq!(
            plan(&s, Kinds::Turmoil).unwrap(),
            vec![
                (10, Action::Begin(1)),
                (50, Action::Begin(0)),
                (55, Action::End(1)),
                (60, Action::End(0)),
            ]
        );
    }

    /// Whether `words` lists the kind `name`: as an item (`name (how)`,
    /// `name and`, `name,`), not inside another name or a sentence.
    fn lists(words: &str, name: &str) -> bool {
        words.match_indices(name).any(|(at, _)| {
            let before = words[..at].chars().next_back();
            let after = &words[at + name.len()..];
            !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
                && [" (", " and ", ","].iter().any(|s| after.starts_with(s))
        })
    }

    /// Every registered kind does something, and each hosted engine
    /// either carries it out, listing it in its words (the report and the
    /// docs print them; sim's own test kinds are not listed), or refuses
    /// it by its place and text before anything runs. A kind whose verbs
    /// an engine lacks cannot be skipped: `Effects` has no default verbs.
    #[test]
    fn every_kind_is_carried_out_or_refused_by_name() {
        use crate::model::fault::{GENERATORS, TEST_GENERATORS};
        use rand::SeedableRng;
        for (i, (variant, generate)) in GENERATORS.iter().chain(TEST_GENERATORS).enumerate() {
            let draw = crate::model::fault::Draw {
                client: "A".into(),
                threads: 1,
                at_ms: 10,
                duration_ms: 5,
            };
            let fault = generate(&mut rand_chacha::ChaCha8Rng::seed_from_u64(1), draw);
            assert!(!effect::verbs(&fault).is_empty(), "{variant} does nothing");
            let json = serde_json::to_value(&fault).expect("serde data");
            let name = json["fault"].as_str().expect("tagged").to_owned();
            let documented = i < GENERATORS.len();
            for kinds in [Kinds::Turmoil, Kinds::Redis] {
                let listed = lists(kinds.words(), &name);
                let mut s = spec(vec![client("A", vec![thread(0, critical(1_000))])]);
                s.redis.replicas = 1;
                s.faults = FaultPlan(vec![fault.clone()]);
                if takes(kinds, &fault) {
                    assert!(listed || !documented, "{kinds:?}'s words miss {name}");
                } else {
                    assert!(!listed, "{kinds:?}'s words list {name}, which it refuses");
                    let error = plan(&s, kinds).unwrap_err().to_string();
                    let place = format!("faults[0] ({})", fault.text());
                    assert!(error.contains(&place), "{error}");
                }
            }
        }
        assert!(lists(TURMOIL_FAULTS, "pause") && !lists(TURMOIL_FAULTS, "freeze"));
        assert!(lists(REDIS_FAULTS, "failover") && lists(REDIS_FAULTS, "partition"));
        assert!(!lists(REDIS_FAULTS, "drop-rate"));
    }
}
