//! Faults striking the world: pauses, starvation, crashes, restarts and
//! Redis's own faults. (Network faults are rules of the [`crate::network`].)

use lockcore::{LockClient, LockName};

use crate::Fault;
use crate::history::{Phase, RecordKind, ServerCause};
use crate::process::Thread;
use crate::rng;
use crate::world::{Ev, World};

impl World<'_> {
    /// CPU starvation: a timer or wake-up of a starved client that falls
    /// due in the window runs late by a delay drawn from the fault's own
    /// stream. Returns the event when it runs now.
    pub(crate) fn starve(&mut self, c: u32, ev: Ev) -> Option<Ev> {
        let late = match &ev {
            Ev::ThreadStart { late, .. } | Ev::Wake { late, .. } | Ev::Timer { late, .. } => *late,
            _ => return Some(ev),
        };
        if late {
            return Some(ev);
        }
        let name = &self.procs[c as usize].name;
        let now_ms = self.now.as_ms();
        let hit = self
            .spec
            .faults
            .0
            .iter()
            .enumerate()
            .find_map(|(i, f)| match f {
                Fault::Starve {
                    client,
                    min_delay_ms,
                    max_delay_ms,
                    ..
                } if client == name && f.covers_ms(now_ms) => {
                    Some((i, *min_delay_ms, *max_delay_ms))
                }
                _ => None,
            });
        let Some((i, min, max)) = hit else {
            return Some(ev);
        };
        let delay = rng::between(&mut self.fault_rngs[i], min * 1_000, max * 1_000);
        let ev = match ev {
            Ev::ThreadStart { c, life, t, .. } => Ev::ThreadStart {
                c,
                life,
                t,
                late: true,
            },
            Ev::Wake { c, life, t, .. } => Ev::Wake {
                c,
                life,
                t,
                late: true,
            },
            Ev::Timer { c, life, timer, .. } => Ev::Timer {
                c,
                life,
                timer,
                late: true,
            },
            other => other,
        };
        self.queue.push(self.now.plus_us(delay), ev);
        None
    }

    /// A fault window opens or closes.
    pub(crate) fn fault(&mut self, i: usize, phase: Phase) {
        let fault = self.spec.faults.0[i].clone();
        self.record(RecordKind::Fault {
            fault: fault.clone(),
            phase,
        });
        match (&fault, phase) {
            (Fault::Pause { client, .. }, Phase::Begin) => {
                if let Some(c) = self.client_index(client) {
                    self.procs[c].paused += 1;
                }
            }
            (Fault::Pause { client, .. }, Phase::End) => {
                if let Some(c) = self.client_index(client) {
                    let p = &mut self.procs[c];
                    p.paused = p.paused.saturating_sub(1);
                    if p.paused == 0 {
                        // Everything that fell due during the pause runs now,
                        // in its original order.
                        let deferred = std::mem::take(&mut p.deferred);
                        for ev in deferred {
                            self.handle(ev);
                        }
                    }
                }
            }
            (Fault::RedisRestart { .. }, _) => {
                self.server.restart();
                self.watch.clear();
                self.redis_waiting.clear();
                let locks: Vec<LockName> = self.seen.keys().cloned().collect();
                for lock in locks {
                    self.observe(&lock, ServerCause::Restart);
                }
            }
            (Fault::RedisPause { .. }, Phase::Begin) => self.redis_paused += 1,
            (Fault::RedisPause { .. }, Phase::End) => {
                self.redis_paused = self.redis_paused.saturating_sub(1);
                if self.redis_paused == 0 {
                    let waiting = std::mem::take(&mut self.redis_waiting);
                    for (c, life, generation, msg) in waiting {
                        self.at_server(c, life, generation, msg);
                    }
                }
            }
            _ => {}
        }
    }

    /// A client process dies: beliefs end, timers and connections go.
    pub(crate) fn crash(&mut self, i: usize) {
        let Some(c) = self.fault_client(i) else {
            return;
        };
        if !self.procs[c].alive {
            return;
        }
        for t in 0..self.procs[c].threads.len() {
            self.release_belief(c, t, crate::history::ReleaseCause::Crash);
        }
        let p = &mut self.procs[c];
        p.alive = false;
        p.deferred.clear();
        p.timers.clear();
        p.renewals.clear();
        let (process, life) = (p.proc(), p.life);
        self.record(RecordKind::Crash { process });
        self.server.disconnect((c as u32, life));
    }

    /// A crashed process comes back as a new client and starts its scripts again.
    pub(crate) fn restart(&mut self, i: usize) {
        let Some(c) = self.fault_client(i) else {
            return;
        };
        if self.procs[c].alive {
            return;
        }
        let uuid = rng::uuid(&mut self.uuid_rng);
        let p = &mut self.procs[c];
        p.life += 1;
        p.alive = true;
        p.machine = LockClient::new(uuid.clone(), p.machine.config().clone());
        p.threads = p.threads.iter().map(Thread::restarted).collect();
        self.start_process(c as u32, uuid);
    }

    /// The index of the client fault `i` hits, if it hits one.
    fn fault_client(&self, i: usize) -> Option<usize> {
        self.spec.faults.0[i]
            .client()
            .and_then(|n| self.client_index(n))
    }
}
