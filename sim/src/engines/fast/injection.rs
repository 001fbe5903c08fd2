//! Faults striking the world: pauses, starvation, crashes, restarts and
//! Redis's own faults. (Network faults are rules of the [`crate::engines::fast::network`].)

use lockcore::LockClient;

use crate::engines::fast::process::Thread;
use crate::engines::fast::world::{Ev, World};
use crate::model::history::{Phase, RecordKind};
use crate::model::rng;

impl World<'_> {
    /// CPU starvation: a timer or wake-up of a starved client that falls
    /// due in the window runs late by a delay drawn from the fault's own
    /// stream. Returns the event when it runs now.
    pub(crate) fn starve(&mut self, c: u32, ev: Ev) -> Option<Ev> {
        let late = match &ev {
            Ev::ThreadStart { late, .. } | Ev::Wake { late, .. } | Ev::Timer { late, .. } => *late,
            _ => return Some(ev),
        };
        if late || !self.windows.delays_timers(c as usize) {
            return Some(ev);
        }
        let covering = self.windows.covering(c as usize, self.now.as_ms());
        let hit = covering.iter().find_map(|&i| {
            let (min, max) = self.spec.faults.0.get(i)?.kind().timer_delay()?;
            Some((i, min, max))
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
            Ev::Timer {
                c,
                life,
                timer,
                version,
                ..
            } => Ev::Timer {
                c,
                life,
                timer,
                version,
                late: true,
            },
            other => other,
        };
        self.queue.push(self.now.plus_us(delay), ev);
        None
    }

    /// A fault window opens or closes.
    pub(crate) fn fault(&mut self, i: usize, phase: Phase) {
        // The spec outlives the world: its fault is borrowed, and cloned
        // only into the record.
        let spec = self.spec;
        let fault = &spec.faults.0[i];
        if fault.kind().recorded() {
            self.record(RecordKind::Fault {
                fault: fault.clone(),
                phase,
            });
        }
        crate::model::fault::effect::act(spec, i, phase == Phase::Begin, self);
    }

    /// A client process dies: beliefs end, timers and connections go.
    pub(crate) fn crash_client(&mut self, c: usize) {
        if !self.procs[c].alive {
            return;
        }
        for t in 0..self.procs[c].threads.len() {
            self.release_belief(c, t, crate::model::history::ReleaseCause::Crash);
        }
        let p = &mut self.procs[c];
        p.alive = false;
        p.deferred.clear();
        p.timers.clear();
        p.renewals.clear();
        p.scans.clear();
        let (process, life) = (p.proc(), p.life);
        self.record(RecordKind::Crash { process });
        for redis in &mut self.redis {
            redis.server.disconnect((c as u32, life));
        }
    }

    /// A crashed process comes back as a new client and starts its scripts again.
    pub(crate) fn restart_client(&mut self, c: usize) {
        if self.procs[c].alive {
            return;
        }
        let uuid = rng::uuid(&mut self.uuid_rng);
        let p = &mut self.procs[c];
        p.life += 1;
        p.alive = true;
        self.switches_read = self.switches_read.union(p.machine.switches_read());
        self.reached = self.reached.union(p.machine.reached());
        p.machine = LockClient::new(uuid.clone(), p.machine.config().clone());
        // A restart inside an `interleave` window interleaves too.
        p.machine.interleave(p.interleave.is_some());
        p.threads = p.threads.iter().map(Thread::restarted).collect();
        self.start_process(c as u32, uuid);
    }
}

#[cfg(test)]
mod tests {
    use crate::model::history::RecordKind;
    use crate::run::tests::{
        client, critical, holder_changes, never_unlock, records, renewals, spec, thread,
    };
    use crate::{Fault, FaultPlan, SimTime, run};

    /// A stop-the-world pause of the holder (document 002: a GC pause
    /// longer than the lease): no renewal is sent during the pause, so the
    /// key expires inside it; renewals resume after it. A run where paused
    /// code still ran would show renewals inside the window.
    #[test]
    fn pause_stops_renewals() {
        let mut s = spec(vec![client("A", vec![thread(0, never_unlock())])]);
        s.watchdog_timeout_ms = 3_000;
        s.faults = FaultPlan(vec![Fault::Pause(crate::model::fault::Pause {
            client: "A".into(),
            at_ms: 1_500,
            duration_ms: 6_000,
        })]);
        s.horizon_ms = 12_000;
        let h = run(&s).expect("valid").history;
        let r = renewals(&h);
        assert!(r.iter().any(|t| *t < SimTime::from_ms(1_500)), "{h}");
        assert!(
            !r.iter()
                .any(|t| *t > SimTime::from_ms(1_500) && *t < SimTime::from_ms(7_500)),
            "renewal during the pause:\n{h}"
        );
        assert!(r.iter().any(|t| *t >= SimTime::from_ms(7_500)), "{h}");
        let freed = holder_changes(&h)
            .into_iter()
            .find(|(_, who)| who.is_none())
            .expect("the key expired");
        assert!(
            freed.0 > SimTime::from_ms(1_500) && freed.0 < SimTime::from_ms(7_500),
            "{h}"
        );
    }

    /// CPU starvation delays a timer by the drawn amount: with a delay
    /// range of exactly 700 ms, the first renewal (due at 10 s) goes out
    /// 700 ms later than in the same run without the fault.
    #[test]
    fn starvation_makes_a_timer_late_by_the_drawn_delay() {
        let mut s = spec(vec![client("A", vec![thread(0, never_unlock())])]);
        s.horizon_ms = 11_000;
        let clean = renewals(&run(&s).expect("valid").history);
        s.faults = FaultPlan(vec![Fault::Starve(crate::model::fault::Starve {
            client: "A".into(),
            at_ms: 9_000,
            duration_ms: 2_000,
            min_delay_ms: 700,
            max_delay_ms: 700,
        })]);
        let starved = renewals(&run(&s).expect("valid").history);
        assert_eq!(clean.len(), 1);
        assert_eq!(starved, vec![clean[0].plus_ms(700)]);
    }

    /// A Redis restart without persistence loses the lock key at once; the
    /// holder's next renewal finds nothing and replies 0.
    #[test]
    fn redis_restart_loses_keys() {
        let mut s = spec(vec![client("A", vec![thread(0, never_unlock())])]);
        s.faults = FaultPlan(vec![Fault::RedisRestart(
            crate::model::fault::RedisRestart { at_ms: 5_000 },
        )]);
        s.horizon_ms = 12_000;
        let h = run(&s).expect("valid").history;
        assert_eq!(
            holder_changes(&h)[1],
            (SimTime::from_ms(5_000), None),
            "{h}"
        );
        assert!(
            h.to_string()
                .contains("5.000000s  redis    redisson:lock free (restart)"),
            "{h}"
        );
        let replies: Vec<_> = records(&h, |k| matches!(k, RecordKind::RenewReply { .. }))
            .map(|r| match &r.kind {
                RecordKind::RenewReply { reply, .. } => reply.clone(),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(replies, vec!["0".to_owned()], "{h}");
    }

    /// A Redis pause holds commands until it ends: an acquire sent during
    /// the pause executes exactly when the pause ends.
    #[test]
    fn redis_pause_delays_commands() {
        let mut s = spec(vec![client("A", vec![thread(1_000, critical(10))])]);
        s.faults = FaultPlan(vec![Fault::RedisPause(crate::model::fault::RedisPause {
            at_ms: 500,
            duration_ms: 2_500,
        })]);
        let h = run(&s).expect("valid").history;
        assert_eq!(
            holder_changes(&h)[0],
            (SimTime::from_ms(3_000), Some("A/t1".to_owned())),
            "{h}"
        );
    }

    /// A crashed holder's lock frees itself when its lease runs out
    /// (document 000: the watchdog dies with the process), and the
    /// restarted process is a new client (new uuid) that runs its script
    /// again and acquires the lock.
    #[test]
    fn crash_and_restart() {
        let mut s = spec(vec![client("A", vec![thread(0, critical(20_000))])]);
        s.faults = FaultPlan(vec![Fault::Crash(crate::model::fault::Crash {
            client: "A".into(),
            at_ms: 5_000,
            restart_after_ms: Some(1_000),
        })]);
        s.horizon_ms = 90_000;
        let r = run(&s).expect("valid");
        let h = &r.history;
        let uuids: Vec<_> = records(h, |k| matches!(k, RecordKind::Start { .. })).collect();
        assert_eq!(uuids.len(), 2);
        assert_ne!(uuids[0].kind, uuids[1].kind);
        let changes = holder_changes(h);
        assert_eq!(changes[0].1.as_deref(), Some("A/t1"));
        assert_eq!(changes[1].1, None, "{h}");
        // Freed by expiry: 30 s after the acquire, long after the crash.
        assert!(changes[1].0 >= SimTime::from_ms(30_000), "{h}");
        assert_eq!(changes[2].1.as_deref(), Some("A~1/t1"), "{h}");
        assert!(r.violations.is_empty(), "{:?}", r.violations);
    }
}
