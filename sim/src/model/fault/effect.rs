//! What a fault does, as verbs every engine carries out.
//!
//! A fault kind says once, in [`Effects`]'s verbs, what happens when its
//! window opens and closes ([`super::Kind::begin`], [`super::Kind::end`]);
//! its link rule and timer delay become the window verbs [`Effects::link`]
//! and [`Effects::starve`]. Each engine implements the verbs its own way:
//! the fast engine on its world, turmoil on its hosts and links, the
//! real-Redis engine through its proxies and control connection. An engine
//! that cannot express a verb says so, and a fault
//! that needs it is refused by name before anything runs ([`refusal`]),
//! never skipped. Which verbs a fault needs is found by carrying it out
//! on a recorder ([`verbs`]), so no list of kinds is kept by hand.

use lockcore::LockName;

use super::{Fault, LinkRule};
use crate::{SimSpec, SimTime};

/// Where and when a fault strikes, as the engine resolved it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Strike {
    /// The fault's place in the plan (its random stream, its window's key).
    pub i: usize,
    /// The index of the client it hits (0 for a kind that hits Redis).
    pub client: usize,
    /// The instant: the window's start on `begin`, its end on `end`.
    pub at: SimTime,
    /// When the window closes, if it is one (a partition's heal).
    pub end_ms: Option<u64>,
}

/// One thing a fault can do to the world, described for an engine's
/// refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verb {
    /// Stop a client's code (stop-the-world), or resume it.
    PauseClient,
    /// Make a client's timers and wake-ups late by a drawn delay.
    Starve,
    /// Let a client's lock callbacks interleave.
    Interleave,
    /// `Thread.interrupt()` one of a client's threads.
    Interrupt,
    /// Kill a client process.
    Crash,
    /// Bring a crashed client back as a new process.
    Restart,
    /// Hold a link's messages until TCP's retransmission after the heal.
    HoldLink,
    /// Lose a link's messages with a probability.
    DropMessages,
    /// Give a link another latency range.
    SetLatency,
    /// Delay one direction of a link.
    DelayLink,
    /// Step a client's wall clock.
    StepClock,
    /// Change the rate of a client's clock.
    DriftClock,
    /// Jump Redis's clock.
    JumpRedisClock,
    /// Delete a lock's key behind the lock's back.
    DeleteKey,
    /// Stop Redis executing commands, or let it go on.
    PauseRedis,
    /// Stop one master of a cluster executing commands, or let it go on.
    PauseShard,
    /// Restart Redis without persistence.
    RestartRedis,
    /// Restart one master without persistence.
    RestartShard,
    /// Take Redis down (connections refused), or bring it back.
    RedisDown,
    /// Fail the primary, or promote a replica.
    FailOver,
    /// Fail one master of several, or promote one of its replicas.
    FailOverShard,
    /// Stall replication to the replicas, or let it flow.
    StallReplication,
    /// Demote the primary with its connections open, or move the clients
    /// to the promoted replica.
    SwitchOver,
    /// Take one replica's link to the primary down, or bring it back.
    ReplicaLink,
    /// Start moving a slot to another master of a cluster, or finish.
    MigrateSlot,
}

impl Verb {
    /// The verb in words, for an engine's refusal.
    pub fn words(self) -> &'static str {
        match self {
            Verb::PauseClient => "pause a client",
            Verb::Starve => "starve a client of CPU",
            Verb::Interleave => "interleave a client's callbacks",
            Verb::Interrupt => "interrupt a thread",
            Verb::Crash => "crash a client",
            Verb::Restart => "restart a client",
            Verb::HoldLink => "hold a link's messages",
            Verb::DropMessages => "drop messages at random",
            Verb::SetLatency => "change a link's latency",
            Verb::DelayLink => "delay one direction of a link",
            Verb::StepClock => "step a client's clock",
            Verb::DriftClock => "change a client's clock rate",
            Verb::JumpRedisClock => "jump Redis's clock",
            Verb::DeleteKey => "delete a key",
            Verb::PauseRedis => "pause Redis",
            Verb::PauseShard => "pause one master of several",
            Verb::RestartRedis => "restart Redis",
            Verb::RestartShard => "restart one master of several",
            Verb::RedisDown => "take Redis down",
            Verb::FailOver => "fail Redis over to a replica",
            Verb::FailOverShard => "fail one master of several over to its replica",
            Verb::StallReplication => "stall replication",
            Verb::SwitchOver => "demote the primary to a replica with its connections open",
            Verb::ReplicaLink => "take a replica's link down",
            Verb::MigrateSlot => "migrate a slot to another master",
        }
    }

    /// Whether it acts on Redis's replicas (a deployment without any
    /// cannot carry it out).
    pub fn on_replicas(self) -> bool {
        matches!(
            self,
            Verb::FailOver
                | Verb::FailOverShard
                | Verb::StallReplication
                | Verb::SwitchOver
                | Verb::ReplicaLink
        )
    }
}

/// The verbs, each carried out by every engine its own way. A verb's
/// `on` is `true` when the window opens, `false` when it closes.
pub trait Effects {
    /// A stop-the-world pause of the client begins or ends.
    fn pause_client(&mut self, s: &Strike, on: bool);

    /// The client's timers and wake-ups run late by a delay drawn from
    /// `range_ms` (or, `None`, no longer).
    fn starve(&mut self, s: &Strike, range_ms: Option<(u64, u64)>);

    /// The client's lock callbacks interleave, each waiting a delay drawn
    /// from `range_ms` (or, `None`, no longer).
    fn interleave(&mut self, s: &Strike, range_ms: Option<(u64, u64)>);

    /// Thread `thread` (from 0) is interrupted now, or `after_call_ms`
    /// into its next acquiring call.
    fn interrupt(&mut self, s: &Strike, thread: usize, after_call_ms: Option<u64>);

    /// The client process dies.
    fn crash(&mut self, s: &Strike);

    /// The crashed client comes back as a new process.
    fn restart(&mut self, s: &Strike);

    /// The client's link takes `rule` for the window (or, `on` false,
    /// drops it).
    fn link(&mut self, s: &Strike, rule: LinkRule, on: bool);

    /// The client's wall clock steps by `ms`.
    fn step_clock(&mut self, s: &Strike, ms: i64);

    /// The client's clock gains `ppm` microseconds a second more.
    fn drift_clock(&mut self, s: &Strike, ppm: i64);

    /// Redis's clock jumps by `ms`.
    fn jump_redis_clock(&mut self, s: &Strike, ms: i64);

    /// Someone deletes `key`, one of `lock`'s keys (its own, or a family
    /// key beside it).
    fn delete_key(&mut self, s: &Strike, lock: &LockName, key: &str);

    /// Redis stops executing commands for `duration_ms` (or goes on):
    /// every master, or in a cluster master `shard` alone.
    fn pause_redis(&mut self, s: &Strike, on: bool, duration_ms: u64, shard: Option<u16>);

    /// Redis restarts without persistence: every master, or master
    /// `shard` alone.
    fn restart_redis(&mut self, s: &Strike, shard: Option<u16>);

    /// Redis goes down, or comes back (with its data if `keep_data`).
    fn redis_down(&mut self, s: &Strike, on: bool, keep_data: bool);

    /// The primary fails (`on`), or a replica is promoted (`replica`, or
    /// the freshest): Redis's one primary, or master `shard` of several
    /// alone.
    fn fail_over(&mut self, s: &Strike, on: bool, replica: Option<u32>, shard: Option<u16>);

    /// Replication to every replica (or to `replica` alone) stalls, or
    /// flows again.
    fn stall_replication(&mut self, s: &Strike, on: bool, replica: Option<u32>);

    /// Replica `replica`'s link to the primary goes down (`up` false), or
    /// comes back and catches up (a partial resync).
    fn replica_link(&mut self, s: &Strike, replica: u32, up: bool);

    /// Replica `replica` (or the freshest) is promoted and the primary
    /// becomes its replica, the clients still connected to it (`on`); or
    /// the clients move to the new primary. Nothing while Redis is down or
    /// failing over; a failover, restart or outage that begins during it
    /// first moves the clients, and strikes the new primary.
    fn switch_over(&mut self, s: &Strike, on: bool, replica: Option<u32>);

    /// The slot of `lock` starts moving to master `to` (`on`: `IMPORTING`
    /// there, `MIGRATING` on its master), or its keys move and the slot
    /// is `to`'s.
    fn migrate_slot(&mut self, s: &Strike, lock: &LockName, to: u16, on: bool);
}

impl LinkRule {
    /// The verb that carries the rule out, if it does anything.
    pub(crate) fn verb(self) -> Option<Verb> {
        match self {
            LinkRule::None => None,
            LinkRule::Latency(_) => Some(Verb::SetLatency),
            LinkRule::Retransmit => Some(Verb::HoldLink),
            LinkRule::DropChance(_) => Some(Verb::DropMessages),
            LinkRule::Delay(..) => Some(Verb::DelayLink),
        }
    }
}

/// Carries out fault `i` of `spec` on `fx` as its window opens
/// (`begin`) or closes: its link rule and timer delay first, then its own
/// verbs.
#[inline]
pub(crate) fn act(spec: &SimSpec, i: usize, begin: bool, fx: &mut dyn Effects) {
    let fault = &spec.faults.0[i];
    strike(fault, i, client_of(spec, fault), begin, fx);
}

/// Carries out `fault`, fault `i` hitting client `client`.
#[inline]
fn strike(fault: &Fault, i: usize, client: usize, begin: bool, fx: &mut dyn Effects) {
    let kind = fault.kind();
    let (at_ms, end_ms) = (kind.at_ms(), kind.end_ms());
    let at = match (begin, end_ms) {
        (false, Some(end)) => end,
        _ => at_ms,
    };
    let strike = Strike {
        i,
        client,
        at: SimTime::from_ms(at),
        end_ms,
    };
    let rule = kind.link();
    if rule.verb().is_some() {
        fx.link(&strike, rule, begin);
    }
    if let Some(range) = kind.timer_delay() {
        fx.starve(&strike, begin.then_some(range));
    }
    if begin {
        kind.begin(fx, &strike);
    } else {
        kind.end(fx, &strike);
    }
}

/// The index of the client `fault` hits (validation made sure it names
/// one), or 0.
pub(crate) fn client_of(spec: &SimSpec, fault: &Fault) -> usize {
    let Some(name) = fault.client() else {
        return 0;
    };
    spec.clients
        .iter()
        .position(|c| c.name == name)
        .unwrap_or_default()
}

/// The verbs `fault` uses, found by carrying it out on a recorder.
pub fn verbs(fault: &Fault) -> Vec<Verb> {
    let mut probe = Probe(Vec::new());
    strike(fault, 0, 0, true, &mut probe);
    strike(fault, 0, 0, false, &mut probe);
    probe.0.sort();
    probe.0.dedup();
    probe.0
}

/// The first fault of `spec` with a verb the engine cannot carry out
/// (`supports` says which it can), as the refusal's words (the error
/// names the engine): `faults[1] (drop A 5ms (p=0.5)): it cannot drop
/// messages at random; run it on the fast engine`.
pub(crate) fn refusal(spec: &SimSpec, supports: impl Fn(Verb) -> bool) -> Option<String> {
    spec.faults.0.iter().enumerate().find_map(|(i, fault)| {
        let verb = verbs(fault).into_iter().find(|v| !supports(*v))?;
        Some(format!(
            "faults[{i}] ({}): it cannot {}; run it on the fast engine",
            fault.text(),
            verb.words()
        ))
    })
}

/// An engine that carries out nothing and writes down what it was asked.
struct Probe(Vec<Verb>);

impl Effects for Probe {
    fn pause_client(&mut self, _: &Strike, _: bool) {
        self.0.push(Verb::PauseClient);
    }
    fn starve(&mut self, _: &Strike, _: Option<(u64, u64)>) {
        self.0.push(Verb::Starve);
    }
    fn interleave(&mut self, _: &Strike, _: Option<(u64, u64)>) {
        self.0.push(Verb::Interleave);
    }
    fn interrupt(&mut self, _: &Strike, _: usize, _: Option<u64>) {
        self.0.push(Verb::Interrupt);
    }
    fn crash(&mut self, _: &Strike) {
        self.0.push(Verb::Crash);
    }
    fn restart(&mut self, _: &Strike) {
        self.0.push(Verb::Restart);
    }
    fn link(&mut self, _: &Strike, rule: LinkRule, _: bool) {
        self.0.extend(rule.verb());
    }
    fn step_clock(&mut self, _: &Strike, _: i64) {
        self.0.push(Verb::StepClock);
    }
    fn drift_clock(&mut self, _: &Strike, _: i64) {
        self.0.push(Verb::DriftClock);
    }
    fn jump_redis_clock(&mut self, _: &Strike, _: i64) {
        self.0.push(Verb::JumpRedisClock);
    }
    fn delete_key(&mut self, _: &Strike, _: &LockName, _: &str) {
        self.0.push(Verb::DeleteKey);
    }
    fn pause_redis(&mut self, _: &Strike, _: bool, _: u64, shard: Option<u16>) {
        self.0.push(match shard {
            None => Verb::PauseRedis,
            Some(_) => Verb::PauseShard,
        });
    }
    fn restart_redis(&mut self, _: &Strike, shard: Option<u16>) {
        self.0.push(match shard {
            None => Verb::RestartRedis,
            Some(_) => Verb::RestartShard,
        });
    }
    fn redis_down(&mut self, _: &Strike, _: bool, _: bool) {
        self.0.push(Verb::RedisDown);
    }
    fn fail_over(&mut self, _: &Strike, _: bool, _: Option<u32>, shard: Option<u16>) {
        self.0.push(match shard {
            None => Verb::FailOver,
            Some(_) => Verb::FailOverShard,
        });
    }
    fn stall_replication(&mut self, _: &Strike, _: bool, _: Option<u32>) {
        self.0.push(Verb::StallReplication);
    }
    fn switch_over(&mut self, _: &Strike, _: bool, _: Option<u32>) {
        self.0.push(Verb::SwitchOver);
    }
    fn replica_link(&mut self, _: &Strike, _: u32, _: bool) {
        self.0.push(Verb::ReplicaLink);
    }
    fn migrate_slot(&mut self, _: &Strike, _: &LockName, _: u16, _: bool) {
        self.0.push(Verb::MigrateSlot);
    }
}
