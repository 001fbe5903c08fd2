//! The fault verbs as the fast engine carries them out, on its world.
//!
//! Link rules and timer delays are read from the plan when a message is
//! sent or a timer falls due (`windows`, `network`), so their verbs do
//! nothing here: the window's edges change nothing the world keeps.

use lockcore::LockName;

use crate::engines::fast::world::World;
use crate::model::fault::{Effects, LinkRule, Strike};
use crate::model::history::ServerCause;

impl Effects for World<'_> {
    fn pause_client(&mut self, s: &Strike, on: bool) {
        let p = &mut self.procs[s.client];
        if on {
            p.paused += 1;
            return;
        }
        p.paused = p.paused.saturating_sub(1);
        if p.paused == 0 {
            // Everything that fell due during the pause runs now, in its
            // original order.
            let deferred = std::mem::take(&mut p.deferred);
            for ev in deferred {
                self.handle(ev);
            }
        }
    }

    fn starve(&mut self, _s: &Strike, _range_ms: Option<(u64, u64)>) {}

    fn interleave(&mut self, s: &Strike, range_ms: Option<(u64, u64)>) {
        let p = &mut self.procs[s.client];
        match range_ms {
            Some((min, max)) => {
                p.interleave = Some((s.i, min, max));
                p.machine.interleave(true);
            }
            None if p.interleave.is_some_and(|(j, ..)| j == s.i) => {
                p.interleave = None;
                p.machine.interleave(false);
            }
            None => {}
        }
    }

    fn interrupt(&mut self, s: &Strike, thread: usize, after_call_ms: Option<u64>) {
        match after_call_ms {
            Some(after) => self.procs[s.client].threads[thread].interrupt_after = Some(after),
            None => World::interrupt(self, s.client, thread),
        }
    }

    fn crash(&mut self, s: &Strike) {
        self.crash_client(s.client);
    }

    fn restart(&mut self, s: &Strike) {
        self.restart_client(s.client);
    }

    fn link(&mut self, _s: &Strike, _rule: LinkRule, _on: bool) {}

    fn step_clock(&mut self, s: &Strike, ms: i64) {
        let now = self.now;
        self.procs[s.client].clock.step(now, ms);
    }

    fn drift_clock(&mut self, s: &Strike, ppm: i64) {
        let now = self.now;
        self.procs[s.client].clock.drift(now, ppm);
        self.rearm_timers(s.client);
    }

    fn jump_redis_clock(&mut self, _s: &Strike, ms: i64) {
        // Every master of a cluster: the hosts' clock.
        for redis in &mut self.redis {
            redis.server.jump(ms);
        }
        // Every key's expiry instant moved: watch them all afresh, and
        // record the keys the jump expired before any command touches
        // them (fenced seed 55127: an unlock queued behind a `WAIT` the
        // jump timed out found its key expired, and was recorded as what
        // freed it, so its honest "not locked" looked false).
        self.observe_all(ServerCause::Expiry);
        // A jump forward can pass a blocked `WAIT`'s deadline: Redis times
        // it out at once, not when its next command or the old deadline
        // comes (explored seed 57594, 4.7.0: the next command was another
        // client's, and the timed-out replies it carried were lost).
        for shard in 0..self.redis.len() as u16 {
            crate::engines::fast::execution::redis_tick(self, shard);
        }
    }

    fn delete_key(&mut self, _s: &Strike, lock: &LockName, key: &str) {
        // A family key beside the lock (its queue, a reader's timeout)
        // carries the lock's name in braces: the lock's slot.
        let shard = self.shard_of(lock.as_str());
        let resp = self.redis[usize::from(shard)].server.delete(self.now, key);
        // Any command lets Redis time out its blocked clients first.
        crate::engines::fast::execution::deliver(self, shard, resp.deliveries);
        self.replicate();
        self.observe(lock, ServerCause::Deleted);
    }

    fn pause_redis(&mut self, _s: &Strike, on: bool, _duration_ms: u64, shard: Option<u16>) {
        let masters = match shard {
            Some(k) => usize::from(k)..usize::from(k) + 1,
            None => 0..self.redis.len(),
        };
        for m in masters {
            let redis = &mut self.redis[m];
            if on {
                redis.paused += 1;
                continue;
            }
            redis.paused = redis.paused.saturating_sub(1);
            if redis.paused == 0 {
                let waiting = std::mem::take(&mut redis.waiting);
                for (c, life, generation, msg) in waiting {
                    self.at_server(c, life, generation, msg);
                }
            }
        }
    }

    fn migrate_slot(&mut self, _s: &Strike, lock: &LockName, to: u16, on: bool) {
        if on {
            self.start_slot_move(lock, to);
        } else {
            self.end_slot_move(lock);
        }
    }

    fn restart_redis(&mut self, _s: &Strike, shard: Option<u16>) {
        if let Some(k) = shard {
            let k = usize::from(k);
            self.close_connections_of(k..k + 1);
            self.restart_masters(k..k + 1);
            return;
        }
        // During a switchover the clients first reach the new primary:
        // that is the Redis that restarts.
        self.follow_new_primary();
        self.close_connections();
        World::restart_redis(self);
    }

    fn redis_down(&mut self, _s: &Strike, on: bool, keep_data: bool) {
        // A cluster's every master.
        if on {
            self.follow_new_primary();
            for redis in &mut self.redis {
                redis.down += 1;
            }
            self.close_connections();
            for redis in &mut self.redis {
                redis.server.drop_connections();
            }
            return;
        }
        for redis in &mut self.redis {
            redis.down = redis.down.saturating_sub(1);
        }
        if self.redis[0].down == 0 && !keep_data {
            World::restart_redis(self);
        }
    }

    fn fail_over(&mut self, _s: &Strike, on: bool, replica: Option<u32>, shard: Option<u16>) {
        let k = shard.unwrap_or(0);
        let m = usize::from(k);
        if on {
            // During a switchover the clients first reach the promoted
            // replica: that is the primary that fails (a switchover needs
            // one master).
            self.follow_new_primary();
            self.redis[m].down += 1;
            self.close_connections_of(m..m + 1);
            self.redis[m].server.drop_connections();
            self.primary_fails(k);
        } else {
            self.redis[m].down = self.redis[m].down.saturating_sub(1);
            self.promote(k, replica.map(|r| r as usize));
        }
    }

    fn stall_replication(&mut self, _s: &Strike, on: bool, replica: Option<u32>) {
        World::stall_replication(self, on, replica.map(|r| r as usize));
    }

    fn replica_link(&mut self, _s: &Strike, replica: u32, up: bool) {
        World::replica_link(self, replica as usize, up);
    }

    fn switch_over(&mut self, _s: &Strike, on: bool, replica: Option<u32>) {
        if on {
            self.demote_primary(replica.map(|r| r as usize));
        } else {
            self.follow_new_primary();
        }
    }
}
