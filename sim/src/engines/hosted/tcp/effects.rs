//! The fault verbs as the turmoil engine carries them out: on its hosts
//! (crash, bounce), its links (turmoil's latency, each connection's
//! delayed reading end), its Redis (the engine, its clock, its replicas)
//! and the client processes' slots.

use std::time::Duration;

use bytes::Bytes;
use lockcore::LockName;

use super::{BOOT_MS, Loop, REDIS, recorder};
use crate::Direction;
use crate::engines::hosted::delay::Delay;
use crate::model::fault::{Effects, LinkRule, Strike};
use crate::model::history::ServerCause;

impl Effects for Loop<'_, '_> {
    slot_verbs!();

    fn crash(&mut self, s: &Strike) {
        let mut slot = self.slots[s.client].borrow_mut();
        if slot.alive {
            slot.alive = false;
            recorder::lock(self.recorder).crash(s.client);
            self.sim.crash(slot.host.as_str());
        }
    }

    fn restart(&mut self, s: &Strike) {
        let mut slot = self.slots[s.client].borrow_mut();
        if !slot.alive {
            slot.alive = true;
            slot.life += 1;
            let host = slot.host.clone();
            drop(slot);
            self.sim.bounce(host.as_str());
        }
    }

    fn link(&mut self, s: &Strike, rule: LinkRule, on: bool) {
        let slot = self.slots[s.client].borrow();
        match rule {
            LinkRule::Delay(direction, ms) => {
                let delay = match direction {
                    Direction::Down => &slot.replies,
                    Direction::Up => &slot.requests,
                };
                one_way(delay, s.i, ms, on);
            }
            // Turmoil's own hold would deliver at the heal; TCP delivers
            // at its next retransmission, which each connection's reading
            // end times (`DelayedStream`).
            LinkRule::Retransmit => {
                for delay in [&slot.replies, &slot.requests] {
                    if on {
                        let heal = BOOT_MS + s.end_ms.unwrap_or(s.at.as_ms());
                        delay.partition(s.i, Duration::from_millis(heal));
                    } else {
                        delay.heal(s.i);
                    }
                }
            }
            LinkRule::Latency(range) => {
                let max = if on {
                    range.max_ms
                } else {
                    self.spec.latency.max_ms
                };
                let host = slot.host.clone();
                drop(slot);
                let max = Duration::from_millis(max);
                self.sim
                    .set_link_max_message_latency(host.as_str(), REDIS, max);
            }
            // `action::plan` refused it: TCP loses no message and goes on.
            LinkRule::DropChance(_) | LinkRule::None => {}
        }
    }

    fn jump_redis_clock(&mut self, _s: &Strike, ms: i64) {
        self.redis_clock_jumps(ms);
    }

    fn delete_key(&mut self, _s: &Strike, lock: &LockName, key: &str) {
        let recorder = self.recorder;
        self.shared.with_engine(|engine| {
            let conn = engine.connect();
            let del = vec![
                Bytes::from_static(b"DEL"),
                Bytes::copy_from_slice(key.as_bytes()),
            ];
            let _ = engine.execute(conn, del);
            engine.disconnect(conn);
            let mut rec = recorder::lock(recorder);
            let view = recorder::turmoil_view(engine, lock, rec.now(), rec.redis_offset_ms);
            rec.observe(lock, view, false, false, ServerCause::Deleted, None);
        });
    }

    fn pause_redis(&mut self, _s: &Strike, on: bool, _duration_ms: u64, _shard: Option<u16>) {
        if on {
            self.redis_gate.close()
        } else {
            self.redis_gate.open()
        }
    }

    fn restart_redis(&mut self, _s: &Strike, _shard: Option<u16>) {
        // During a switchover the clients first reach the new primary:
        // that is the Redis that restarts.
        self.follow_new_primary();
        self.redis_stops();
        self.redis_starts(false);
    }

    fn redis_down(&mut self, _s: &Strike, on: bool, keep_data: bool) {
        if on {
            self.follow_new_primary();
            self.redis_down += 1;
            self.redis_stops();
        } else {
            self.redis_down = self.redis_down.saturating_sub(1);
            self.redis_starts(keep_data);
        }
    }

    /// One primary: a master's own failover is refused before the run
    /// (`Verb::FailOverShard`).
    fn fail_over(&mut self, _s: &Strike, on: bool, replica: Option<u32>, _shard: Option<u16>) {
        if on {
            // During a switchover the clients first reach the promoted
            // replica: that is the primary that fails.
            self.follow_new_primary();
            self.primary_fails()
        } else {
            self.promote(replica)
        }
    }

    fn stall_replication(&mut self, _s: &Strike, on: bool, replica: Option<u32>) {
        let now = self.now();
        self.replicas.stall(now, on, replica.map(|r| r as usize));
    }

    fn replica_link(&mut self, _s: &Strike, replica: u32, up: bool) {
        let now = self.now();
        let replicas = &mut self.replicas;
        self.shared.with_engine(|e| {
            replicas.link(now, replica as usize, up, e);
        });
    }

    fn switch_over(&mut self, _s: &Strike, on: bool, replica: Option<u32>) {
        if on {
            self.demote_primary(replica)
        } else {
            self.follow_new_primary()
        }
    }

    /// No cluster: refused before the run (`Verb::MigrateSlot`).
    fn migrate_slot(&mut self, _s: &Strike, _lock: &LockName, _to: u16, _on: bool) {}
}

/// A one-way delay window of `delay_ms` opens (`on`) or closes.
fn one_way(delay: &Delay, i: usize, delay_ms: u64, on: bool) {
    if on {
        delay.open(i, Duration::from_millis(delay_ms));
    } else {
        delay.close(i);
    }
}
