//! Faults: timed events that break the world on purpose. They are data, so a
//! plan can be printed, saved, shrunk and replayed.
//!
//! Each kind is one module that owns everything about it: its serde data,
//! its validation, when its events fall, its effect on the world, its
//! timeline text, its link rule or timer delay, and how the swarm draws
//! one. [`Fault`] only dispatches. A new kind is its own file plus one line
//! in the `faults!` registration below (append it: the swarm picks kinds
//! by their place in the list).

/// The `client`, `at_ms` and `end_ms` of a kind that hits one client for
/// a window: its fields `client`, `at_ms` and `duration_ms`.
macro_rules! client_window {
    () => {
        fn client(&self) -> Option<&str> {
            Some(&self.client)
        }

        fn at_ms(&self) -> u64 {
            self.at_ms
        }

        fn end_ms(&self) -> Option<u64> {
            super::window_end(self.at_ms, self.duration_ms)
        }
    };
}

/// The `at_ms` and `end_ms` of a kind that hits Redis for a window: its
/// fields `at_ms` and `duration_ms`.
macro_rules! redis_window {
    () => {
        fn at_ms(&self) -> u64 {
            self.at_ms
        }

        fn end_ms(&self) -> Option<u64> {
            super::window_end(self.at_ms, self.duration_ms)
        }
    };
}

mod clock_drift;
mod clock_jump;
mod clock_skew;
mod crash;
mod delay;
/// The generator of `delay-replies` (the registration names one module per kind).
mod delay_replies {
    pub use super::delay::DelayReplies;
    pub(crate) use super::delay::generate_replies as generate;
}
/// The generator of `delay-requests`.
mod delay_requests {
    pub use super::delay::DelayRequests;
    pub(crate) use super::delay::generate_requests as generate;
}
mod delete_key;
mod drop_rate;
pub(crate) mod effect;
#[cfg(test)]
mod example;
pub(crate) mod failover;
mod interleave;
mod interrupt;
mod latency;
mod partition;
mod pause;
mod redis_down;
mod redis_pause;
mod redis_restart;
mod replica_down;
mod replication_drop;
mod shard_failover;
mod shard_pause;
mod shard_restart;
mod slot_migration;
mod starve;
mod switchover;

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::{LatencyRange, SimSpec};

pub use clock_drift::ClockDrift;
pub use clock_jump::ClockJump;
pub use clock_skew::ClockSkew;
pub use crash::Crash;
pub use delay::{DelayReplies, DelayRequests};
pub use delete_key::{DeleteKey, LockKey};
pub use drop_rate::DropRate;
pub(crate) use effect::{Effects, Strike};
pub use effect::{Verb, verbs};
pub use failover::Failover;
pub use interleave::Interleave;
pub use interrupt::Interrupt;
pub use latency::Latency;
pub use partition::Partition;
pub use pause::Pause;
pub use redis_down::RedisDown;
pub use redis_pause::RedisPause;
pub use redis_restart::RedisRestart;
pub use replica_down::ReplicaDown;
pub use replication_drop::ReplicationDrop;
pub use shard_failover::ShardFailover;
pub use shard_pause::ShardPause;
pub use shard_restart::ShardRestart;
pub use slot_migration::SlotMigration;
pub use starve::Starve;
pub use switchover::Switchover;

/// A list of timed faults. Order does not matter; times do.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct FaultPlan(#[schemars(length(max = crate::MAX_FAULTS))] pub Vec<Fault>);

/// A field a kind refuses, and why (with the accepted range).
pub(crate) type Invalid = (&'static str, String);

/// What a fault does to a message on its client's link while it covers
/// the send time. Rules run in plan order: latency first, then drops.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum LinkRule {
    /// Nothing.
    None,
    /// The latency is drawn from this range instead.
    Latency(LatencyRange),
    /// The link is partitioned until the window ends: the message waits
    /// for TCP's retransmission after the heal (`crate::model::retransmission`).
    Retransmit,
    /// The message is lost with this probability (drawn from the
    /// fault's own stream).
    DropChance(f64),
    /// Messages in this direction arrive this many ms later.
    Delay(crate::Direction, u64),
}

/// A kind's swarm generator: its own fields, drawn from `r`.
pub(crate) type Generator = fn(&mut ChaCha8Rng, Draw) -> Fault;

/// The draws the swarm makes for every fault before its kind's own.
pub(crate) struct Draw {
    /// The client it hits (kinds that hit Redis ignore it).
    pub(crate) client: String,
    /// How many threads that client runs.
    pub(crate) threads: u32,
    /// When it strikes.
    pub(crate) at_ms: u64,
    /// A window's length.
    pub(crate) duration_ms: u64,
}

/// What every kind provides. Only `at_ms`, `end_ms` and `text` are
/// required; the rest default to "does nothing".
pub(crate) trait Kind {
    /// The client it hits, if it hits one client.
    fn client(&self) -> Option<&str> {
        None
    }

    /// When it strikes, in virtual ms.
    fn at_ms(&self) -> u64;

    /// When its window ends (a crash ends at its restart, if any); `None`
    /// for an instant.
    fn end_ms(&self) -> Option<u64>;

    /// Until when it can still hold things up: its end, or later for a
    /// kind whose late timers fire after it (starvation).
    fn effect_end_ms(&self) -> Option<u64> {
        self.end_ms()
    }

    /// Its own fields' rules (the plan-wide ones, a known client and a
    /// time before the horizon, are checked for every kind).
    fn check(&self, _horizon_ms: u64) -> Result<(), Invalid> {
        Ok(())
    }

    /// Its rules that depend on the rest of the spec (Redis's replicas,
    /// the other faults); `i` is its place in the plan.
    fn check_plan(&self, _i: usize, _spec: &SimSpec) -> Result<(), Invalid> {
        Ok(())
    }

    /// The timeline's words for it: `pause A 5000ms`.
    fn text(&self) -> String;

    /// Its rule for messages on its client's link.
    fn link(&self) -> LinkRule {
        LinkRule::None
    }

    /// The range by which it makes its client's timers and wake-ups late.
    fn timer_delay(&self) -> Option<(u64, u64)> {
        None
    }

    /// How long it holds back the instant a lock can be free again (Redis
    /// holding commands, or its clock going back), for the checkers'
    /// bounds.
    fn free_delay_ms(&self) -> Option<u64> {
        None
    }

    /// Whether it can explain a broken invariant as beyond the lock's
    /// guarantee. An interrupt is the application's own act, which the
    /// lock promises to handle: what follows it is the lock's doing.
    fn excuses(&self) -> bool {
        true
    }

    /// Whether it acts on Redis's replicas (the swarm gives Redis some).
    fn needs_replicas(&self) -> bool {
        false
    }

    /// Whether it acts on one master of a cluster (the swarm makes Redis
    /// one).
    fn needs_cluster(&self) -> bool {
        false
    }

    /// The one master of a cluster it acts on (`None`: the client it
    /// hits, or every master): it explains nothing of a lock another
    /// master serves.
    fn shard(&self) -> Option<u16> {
        None
    }

    /// The lock whose slot alone it moves, and the master it moves to:
    /// it explains nothing of a lock of another slot.
    fn slot_move(&self) -> Option<(&lockcore::LockName, u16)> {
        None
    }

    /// Whether it can keep a client's command unanswered. A kind that acts
    /// on the replicas' links alone makes a `WAIT` answer (fewer synced),
    /// never go unanswered: the checkers do not excuse a missing reply by
    /// it.
    fn holds_replies(&self) -> bool {
        true
    }

    /// Whether it moves its client's clock (then every client's clock
    /// starts a day ahead, so a step back never reads below zero).
    fn moves_clock(&self) -> bool {
        false
    }

    /// Whether the timeline shows its window's edges as fault records (a
    /// crash shows as the process's own records instead).
    fn recorded(&self) -> bool {
        true
    }

    /// Its effect when its window opens (or it strikes), in verbs.
    fn begin(&self, _fx: &mut dyn Effects, _s: &Strike) {}

    /// Its effect when its window closes, in verbs.
    fn end(&self, _fx: &mut dyn Effects, _s: &Strike) {}
}

/// Declares the kinds: the `Fault` enum (serde tag `fault`, kebab-case
/// names), its dispatch, the swarm's table of generators and
/// `sim::faults`. Kinds after `@tests` exist in sim's own tests alone
/// (`example`, the recipe's worked case): never drawn, never exported.
macro_rules! faults {
    (
        $($(#[$doc:meta])* $variant:ident($module:ident::$ty:ident),)*
        @tests $($(#[$tdoc:meta])* $tvariant:ident($tmodule:ident::$tty:ident),)*
    ) => {
        /// One fault. Clients are named as in their [`crate::ClientSpec`];
        /// times and durations are in virtual ms.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
        #[serde(rename_all = "kebab-case", tag = "fault")]
        pub enum Fault {
            $($(#[$doc])* $variant($ty),)*
            $(#[cfg(test)] $(#[$tdoc])* $tvariant($tmodule::$tty),)*
        }

        impl Fault {
            pub(crate) fn kind(&self) -> &dyn Kind {
                match self {
                    $(Fault::$variant(k) => k,)*
                    $(#[cfg(test)] Fault::$tvariant(k) => k,)*
                }
            }

            /// Its kind's name in [`GENERATORS`].
            pub(crate) fn registered_name(&self) -> &'static str {
                match self {
                    $(Fault::$variant(_) => stringify!($variant),)*
                    $(#[cfg(test)] Fault::$tvariant(_) => stringify!($tvariant),)*
                }
            }
        }

        /// Each kind's name and generator, in registration order. The
        /// classic swarm draws among the first [`SWARM_KINDS`] from its own
        /// stream; the every-kind swarm gives each kind a stream named
        /// after it.
        pub(crate) const GENERATORS: &[(&str, Generator)] =
            &[$((stringify!($variant), $module::generate),)*];

        /// The kinds of sim's own tests, with their generators: the
        /// registry's checks cover them too.
        #[cfg(test)]
        pub(crate) const TEST_GENERATORS: &[(&str, Generator)] =
            &[$((stringify!($tvariant), $tmodule::generate),)*];

        /// The data of each fault kind, one struct per kind ([`Fault`]'s
        /// variants), as `sim::faults` exports them.
        pub mod kinds {
            $(pub use super::$module::$ty;)*
        }
    };
}

faults! {
    /// The process dies; with `restart_after_ms` it comes back as a new
    /// client and runs its scripts again.
    Crash(crash::Crash),
    /// A stop-the-world pause of one client.
    Pause(pause::Pause),
    /// CPU starvation: the client's timers and wake-ups run late.
    Starve(starve::Starve),
    /// Every message between the client and Redis is dropped.
    Partition(partition::Partition),
    /// Each message between the client and Redis is dropped with a probability.
    DropRate(drop_rate::DropRate),
    /// The client's link gets another latency range.
    Latency(latency::Latency),
    /// Redis restarts without persistence.
    RedisRestart(redis_restart::RedisRestart),
    /// Redis executes no command for a while.
    RedisPause(redis_pause::RedisPause),
    /// Redis's replies to one client arrive late: a command runs, but its
    /// reply may come after the client's timeout.
    DelayReplies(delay_replies::DelayReplies),
    /// One client's requests reach Redis late.
    DelayRequests(delay_requests::DelayRequests),
    /// Someone other than the lock deletes (or evicts) its key.
    DeleteKey(delete_key::DeleteKey),
    /// Redis is down (connections refused), then back empty or with its data.
    RedisDown(redis_down::RedisDown),
    /// Redis's clock jumps forward or back.
    ClockJump(clock_jump::ClockJump),
    /// A client's wall clock is set ahead or behind for a window.
    ClockSkew(clock_skew::ClockSkew),
    /// A client's clock (and so its timers) runs fast or slow for a window.
    ClockDrift(clock_drift::ClockDrift),
    /// Replication from the primary to its replicas stalls for a window.
    ReplicationDrop(replication_drop::ReplicationDrop),
    /// The primary fails; a replica is promoted with what it had received.
    Failover(failover::Failover),
    /// A thread's call in flight is interrupted (`Thread.interrupt()`).
    Interrupt(interrupt::Interrupt),
    /// A client's callbacks run on several threads and can interleave.
    Interleave(interleave::Interleave),
    /// Sentinel demotes the live primary; clients reach the new one later.
    Switchover(switchover::Switchover),
    /// One replica's link to the primary is down, then it resyncs.
    ReplicaDown(replica_down::ReplicaDown),
    /// One master (of a cluster, or of independent ones) executes no
    /// command for a while.
    ShardPause(shard_pause::ShardPause),
    /// One master restarts without persistence.
    ShardRestart(shard_restart::ShardRestart),
    /// One master fails and one of its replicas is promoted in its place.
    ShardFailover(shard_failover::ShardFailover),
    /// A lock's slot moves to another master of the cluster.
    SlotMigration(slot_migration::SlotMigration),
    @tests
    /// The extension recipe's worked example: a client and Redis stall
    /// together (`example.rs`).
    Freeze(example::Freeze),
}

impl Fault {
    /// The client it hits, if it hits one client.
    pub fn client(&self) -> Option<&str> {
        self.kind().client()
    }

    /// When it strikes, in virtual ms.
    pub fn at_ms(&self) -> u64 {
        self.kind().at_ms()
    }

    /// When a windowed fault ends (a crash ends at its restart, if any);
    /// `None` for a fault that is an instant.
    pub fn end_ms(&self) -> Option<u64> {
        self.kind().end_ms()
    }

    /// Until when it can still hold things up: its window's end, or later
    /// when timers it delayed fire after it (starvation).
    pub fn effect_end_ms(&self) -> Option<u64> {
        self.kind().effect_end_ms()
    }

    /// Whether the window `[at, end)` covers `ms` (instants cover nothing).
    pub fn covers_ms(&self, ms: u64) -> bool {
        match self.end_ms() {
            Some(end) => self.at_ms() <= ms && ms < end,
            None => false,
        }
    }

    /// The timeline's words for it: `pause A 5000ms`, `redis restart`.
    pub fn text(&self) -> String {
        self.kind().text()
    }

    /// The one master of a cluster it acts on, if it acts on one alone.
    pub fn shard(&self) -> Option<u16> {
        self.kind().shard()
    }

    /// The lock whose slot alone it moves, and the master it moves to.
    pub fn slot_move(&self) -> Option<(&lockcore::LockName, u16)> {
        self.kind().slot_move()
    }

    /// Whether it restarts Redis, or one of its masters, without
    /// persistence (`redis-restart`, `shard-restart`): the keys, latches
    /// and scripts there are lost.
    pub fn restarts_redis(&self) -> bool {
        matches!(self, Fault::RedisRestart(_) | Fault::ShardRestart(_))
    }

    /// Whether it promotes a replica in a primary's place (`failover`,
    /// `switchover`, `shard-failover`): the writes the replica had not
    /// received, and the primary's latches and scripts, are lost.
    pub fn promotes_replica(&self) -> bool {
        matches!(
            self,
            Fault::Failover(_) | Fault::Switchover(_) | Fault::ShardFailover(_)
        )
    }
}

/// How many kinds, in registration order, the classic swarm draws from.
pub(crate) const SWARM_KINDS: usize = 8;

/// A window's `end`, saturating.
fn window_end(at_ms: u64, duration_ms: u64) -> Option<u64> {
    Some(at_ms.saturating_add(duration_ms))
}

/// The rule for kinds that act on the replicas of Redis's one primary:
/// Redis has some, and one master (several masters' replicas are failed
/// over one master at a time, by `shard-failover`).
pub(crate) fn needs_replicas(spec: &SimSpec, what: &str) -> Result<(), Invalid> {
    has_replicas(spec, what)?;
    if spec.redis.has_masters() {
        return Err((
            "fault",
            format!(
                "{what}, but Redis has several masters, each with replicas of its own: name one with shard-failover"
            ),
        ));
    }
    Ok(())
}

/// Redis has replicas (`what` says why a kind needs them).
fn has_replicas(spec: &SimSpec, what: &str) -> Result<(), Invalid> {
    if spec.redis.replicas == 0 {
        return Err((
            "fault",
            format!("{what}, but Redis has none (give `replicas = 1` or more under `[sim.redis]`)"),
        ));
    }
    Ok(())
}

/// The rules of a fault that promotes a replica (`failover`,
/// `switchover`, or `shard-failover` of master `shard`): Redis has
/// replicas (`what` says why it needs them), the one named exists, and
/// the promotion, `duration_ms` after `at_ms`, comes before the horizon
/// (`late(end, horizon)` says what then goes wrong).
pub(crate) fn check_promotion(
    spec: &SimSpec,
    (shard, replica): (Option<u16>, Option<u32>),
    (at_ms, duration_ms): (u64, u64),
    what: &str,
    late: impl Fn(u64, u64) -> String,
) -> Result<(), Invalid> {
    match shard {
        None => needs_replicas(spec, what)?,
        Some(k) => {
            shard_pause::check_master(what, k, spec)?;
            has_replicas(spec, what)?;
        }
    }
    let replicas = spec.redis.replicas;
    if let Some(r) = replica
        && r >= replicas
    {
        return Err((
            "replica",
            format!("Redis has {replicas} replica(s), numbered from 0; got {r}"),
        ));
    }
    let end = at_ms.saturating_add(duration_ms);
    if end >= spec.horizon_ms {
        return Err(("duration_ms", late(end, spec.horizon_ms)));
    }
    Ok(())
}

/// The replica a promoting fault names, in its one-line text.
pub(crate) fn promoted(replica: Option<u32>) -> String {
    match replica {
        Some(r) => format!("replica {r}"),
        None => "the most up-to-date replica".to_owned(),
    }
}

/// The rule that windows of one kind (`is_kind`) must not overlap: fault
/// `i`'s window `at_ms..end_ms` against every earlier one of its kind.
pub(crate) fn no_overlap(
    i: usize,
    at_ms: u64,
    end_ms: u64,
    spec: &SimSpec,
    what: &str,
    is_kind: impl Fn(&Fault) -> bool,
) -> Result<(), Invalid> {
    for (j, other) in spec.faults.0.iter().enumerate().take(i) {
        let other_end = other.end_ms().unwrap_or(other.at_ms());
        if is_kind(other) && other.at_ms() < end_ms && at_ms < other_end {
            return Err((
                "at_ms",
                format!(
                    "overlaps {what} faults[{j}] ({}..{other_end} ms): one {what} must end before the next begins",
                    other.at_ms()
                ),
            ));
        }
    }
    Ok(())
}

/// The rule for a `min..=max` range of ms fields (delays and latencies).
pub(crate) fn range(field: &'static str, min: u64, max: u64) -> Result<(), Invalid> {
    if min > max {
        return Err((field, format!("min {min} ms is greater than max {max} ms")));
    }
    if max > crate::MAX_DELAY_MS {
        return Err((
            field,
            format!(
                "max {max} ms is more than an hour ({} ms)",
                crate::MAX_DELAY_MS
            ),
        ));
    }
    Ok(())
}
