//! The fault verbs as the real-Redis engine carries them out: network
//! verbs in each client's loopback proxy, Redis's through the proxies
//! (closing connections, refusing new ones) and commands on locksim's
//! control connection, which are collected here and sent in order once the
//! verbs have run, each to the masters it names (see `cluster`). The
//! replication verbs act on the servers (see `nodes`); a promotion, which
//! takes round trips, is left for the driver too. Every duration is
//! divided by the time scale.

use bytes::Bytes;
use lockcore::LockName;

use super::clock_jump::clock_jumps;
use super::cluster::{Routed, To, master_of};
use super::nodes::Nodes;
use super::{ClientHost, Faults, Named, lose_everything, start, words};
use crate::engines::hosted::process::Slots;
use crate::engines::hosted::recorder::{self, Shared};
use crate::model::fault::{Effects, LinkRule, Strike};
use crate::{Direction, SimSpec, SimTime};

/// One fault's verbs on the real engine, with the commands they leave
/// for the control connection.
pub(super) struct RealEffects<'a> {
    pub(super) spec: &'a SimSpec,
    pub(super) scale: u64,
    pub(super) faults: &'a Faults<'a>,
    pub(super) recorder: &'a Shared,
    pub(super) slots: &'a Slots,
    pub(super) hosts: &'a [ClientHost<Named>],
    /// What to send on the control connections, in order, and where.
    pub(super) commands: Vec<Routed>,
    /// The promotion to carry out once the verbs have run.
    pub(super) promotion: Option<Promotion>,
}

/// A replica's promotion, as a switchover or a failover asks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Promotion {
    /// The replica (from 0), or Sentinel's pick.
    pub(super) replica: Option<u32>,
    /// A switchover: the live old primary becomes its replica, and the
    /// clients stay on it. A failover: the old primary's process starts
    /// again as its replica, and the clients move to it.
    pub(super) switchover: bool,
    /// When (spec time): a key the promoted replica lacks is recorded
    /// lost then.
    pub(super) at: SimTime,
}

impl<'a> RealEffects<'a> {
    fn scaled(&self, ms: u64) -> u64 {
        ms / self.scale
    }

    /// The primary and its replicas: the one master outside a cluster,
    /// where alone the replication verbs run (a cluster has no replicas).
    fn nodes(&self) -> &'a Nodes<'a> {
        &self.faults.masters[0]
    }

    /// `commands`, to every master.
    fn on_every_master(&mut self, commands: impl IntoIterator<Item = Vec<Bytes>>) {
        self.commands
            .extend(commands.into_iter().map(|c| (To::Every, c)));
    }
}

impl Effects for RealEffects<'_> {
    slot_verbs!();

    fn crash(&mut self, s: &Strike) {
        let mut slot = self.slots[s.client].borrow_mut();
        if slot.alive {
            slot.alive = false;
            slot.tasks.drain(..).for_each(|t| t.abort());
            recorder::lock(self.recorder).crash(s.client);
        }
    }

    fn restart(&mut self, s: &Strike) {
        {
            let mut slot = self.slots[s.client].borrow_mut();
            if slot.alive {
                return;
            }
            slot.alive = true;
            slot.life += 1;
        }
        start(&self.hosts[s.client], self.slots);
    }

    fn link(&mut self, s: &Strike, rule: LinkRule, on: bool) {
        let link = &self.faults.links[s.client];
        match rule {
            LinkRule::Retransmit => {
                for rules in [&link.up, &link.down] {
                    if on {
                        rules.held.close()
                    } else {
                        rules.held.open()
                    }
                }
            }
            LinkRule::Latency(range) => {
                let delay = on.then(|| (self.scaled(range.min_ms), self.scaled(range.max_ms)));
                *link.up.delay.borrow_mut() = delay;
                *link.down.delay.borrow_mut() = delay;
            }
            LinkRule::Delay(direction, ms) => {
                let delay = on.then(|| (self.scaled(ms), self.scaled(ms)));
                let rules = match direction {
                    Direction::Down => &link.down,
                    Direction::Up => &link.up,
                };
                *rules.delay.borrow_mut() = delay;
            }
            // `action::plan` refused it: TCP loses no message and goes on.
            LinkRule::DropChance(_) | LinkRule::None => {}
        }
    }

    fn jump_redis_clock(&mut self, _s: &Strike, ms: i64) {
        let jump = ms / i64::try_from(self.scale).unwrap_or(1);
        self.commands.extend(clock_jumps(self.spec, jump));
    }

    fn delete_key(&mut self, _s: &Strike, _lock: &LockName, key: &str) {
        let to = To::Master(master_of(self.spec, key));
        self.commands.push((to, words(&["DEL", key])));
    }

    // Redis ends the pause by itself: CLIENT UNPAUSE would wait behind it.
    // Every master (`redis-pause`), or one (`shard-pause`).
    fn pause_redis(&mut self, _s: &Strike, on: bool, duration_ms: u64, shard: Option<u16>) {
        if on {
            let ms = self.scaled(duration_ms).max(1).to_string();
            let to = shard.map_or(To::Every, |k| To::Master(usize::from(k)));
            self.commands
                .push((to, words(&["CLIENT", "PAUSE", &ms, "ALL"])));
        }
    }

    // A real Redis is not stopped (it may not be ours): the proxies close
    // every client's connections and refuse new ones while it is "down",
    // and FLUSHALL loses the keys a restart without persistence loses. A
    // cluster restarts, or goes down, whole (`redis-restart`).
    //
    // `shard-restart` does the same to one master: its proxies close their
    // connections (commands in flight to it get no reply, its
    // subscriptions are gone) and it loses its keys and scripts; the
    // other masters' connections and keys stay. Its process is not killed
    // and started again: a cluster node restarted keeps its slots only
    // through its nodes.conf, and rejoins only after gossip, which takes
    // real seconds the scaled run does not have (the clients would meet
    // `CLUSTERDOWN` or `MOVED` meanwhile, which no engine models). Flushing
    // it in place leaves the node in the cluster with its slots, as a
    // restart that kept nodes.conf ends, and is the same for a standalone
    // master.
    fn restart_redis(&mut self, _s: &Strike, shard: Option<u16>) {
        let Some(k) = shard.map(usize::from) else {
            self.faults.masters.iter().for_each(|m| m.outage.cut());
            self.on_every_master(lose_everything());
            return;
        };
        if let Some(master) = self.faults.masters.get(k) {
            master.outage.cut();
            let lost = lose_everything().into_iter().map(|c| (To::Master(k), c));
            self.commands.extend(lost);
        }
    }

    fn redis_down(&mut self, _s: &Strike, on: bool, keep_data: bool) {
        for outage in self.faults.masters.iter().map(|m| &m.outage) {
            if on {
                outage.down.set(outage.down.get() + 1);
                outage.cut();
            } else {
                outage.down.set(outage.down.get().saturating_sub(1));
            }
        }
        if !on && !keep_data {
            self.on_every_master(lose_everything());
        }
    }

    /// Redis's one primary: a master's own failover is refused before
    /// the run (`Verb::FailOverShard`).
    fn fail_over(&mut self, s: &Strike, on: bool, replica: Option<u32>, _shard: Option<u16>) {
        let nodes = self.nodes();
        if on {
            // During a switchover the clients first reach the promoted
            // replica: that is the primary that fails.
            nodes.follow_primary();
            nodes.kill_primary();
        } else {
            self.promotion = Some(Promotion {
                replica,
                switchover: false,
                at: s.at,
            });
        }
    }

    fn stall_replication(&mut self, s: &Strike, on: bool, replica: Option<u32>) {
        let replica = replica.map(|r| r as usize);
        self.nodes().stall(s.i, on, replica);
    }

    fn replica_link(&mut self, _s: &Strike, replica: u32, up: bool) {
        self.nodes().replica_link(replica as usize, up);
    }

    fn switch_over(&mut self, s: &Strike, on: bool, replica: Option<u32>) {
        let nodes = self.nodes();
        if !on {
            nodes.follow_primary();
        } else if !nodes.primary_down.get() && nodes.outage.down.get() == 0 {
            // With no live primary there is nothing to demote.
            self.promotion = Some(Promotion {
                replica,
                switchover: true,
                at: s.at,
            });
        }
    }

    /// Refused before the run (`Verb::MigrateSlot`).
    fn migrate_slot(&mut self, _s: &Strike, _lock: &LockName, _to: u16, _on: bool) {}
}
