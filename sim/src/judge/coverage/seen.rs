//! The coverage points a history shows: one pass over its records, with
//! who believes they hold what and what Redis holds, in ordered maps.

use std::collections::{BTreeMap, BTreeSet};

use lockcore::{Call, LockName};

use super::{Coverage, Point};
use crate::History;
use crate::model::fault::Fault;
use crate::model::history::{
    Direction, Outcome, Phase, Proc, RecordKind, ReleaseCause, ServerCause, Who,
};
use crate::model::spec::SimSpec;

/// What the pass knows so far.
#[derive(Default)]
struct Seen {
    /// The threads that believe they hold each lock.
    believers: BTreeMap<LockName, BTreeSet<Who>>,
    /// The locks Redis holds (a key exists).
    held: BTreeSet<LockName>,
    /// The locks each process has unlocked at least once.
    unlocked: BTreeSet<(Proc, LockName)>,
    points: Coverage,
}

impl Seen {
    fn reach(&mut self, point: Point) {
        self.points = self.points.with(point);
    }

    /// Whether a thread of `process` believes it holds `lock`.
    fn process_holds(&self, process: &Proc, lock: &LockName) -> bool {
        self.believers
            .get(lock)
            .is_some_and(|b| b.iter().any(|w| w.process() == *process))
    }

    /// Whether any thread of client `client` believes it holds a lock.
    fn client_holds(&self, client: &str) -> bool {
        self.believers
            .values()
            .flatten()
            .any(|w| &*w.client == client)
    }

    fn hold(&mut self, who: &Who, lock: &LockName) {
        let believers = self.believers.entry(lock.clone()).or_default();
        believers.insert(who.clone());
        if believers.len() > 1 {
            self.reach(Point::TwoBelievers);
        }
        let process = who.process();
        let locks = self
            .believers
            .values()
            .filter(|b| b.iter().any(|w| w.process() == process))
            .count();
        if locks > 1 {
            self.reach(Point::TwoLocksHeld);
        }
    }

    fn release(&mut self, who: &Who, lock: &LockName, cause: ReleaseCause) {
        if let Some(b) = self.believers.get_mut(lock) {
            b.remove(who);
        }
        match cause {
            ReleaseCause::Crash => self.reach(Point::CrashWhileHolding),
            ReleaseCause::Unlock => {
                self.unlocked.insert((who.process(), lock.clone()));
            }
            ReleaseCause::LeaseLost => {}
        }
    }

    /// Redis's view of `lock` changed: `holds` is whether a key exists now.
    fn server(&mut self, lock: &LockName, holds: bool, cause: &ServerCause) {
        let was = self.held.contains(lock);
        if was && !holds {
            match cause {
                ServerCause::Failover => self.reach(Point::FailoverLostLock),
                ServerCause::Restart => self.reach(Point::RestartLostLock),
                ServerCause::Deleted => self.reach(Point::KeyDeletedWhileHeld),
                ServerCause::Expiry if self.believers.get(lock).is_some_and(|b| !b.is_empty()) => {
                    self.reach(Point::ExpiredWhileBelieved)
                }
                _ => {}
            }
        }
        if holds {
            self.held.insert(lock.clone());
        } else {
            self.held.remove(lock);
        }
    }

    fn fault_begins(&mut self, spec: &SimSpec, fault: &Fault) {
        if let Fault::Pause(p) = fault
            && p.duration_ms > watchdog_ms(spec, &p.client)
            && self.client_holds(&p.client)
        {
            self.reach(Point::PauseBeyondWatchdog);
        }
    }
}

/// The client's `lockWatchdogTimeout`, in ms.
fn watchdog_ms(spec: &SimSpec, client: &str) -> u64 {
    spec.clients
        .iter()
        .find(|c| c.name == client)
        .and_then(|c| c.watchdog_timeout_ms)
        .unwrap_or(spec.watchdog_timeout_ms)
}

/// `lock`'s points with those `history` shows.
pub(super) fn reached_in(spec: &SimSpec, history: &History, lock: Coverage) -> Coverage {
    let mut s = Seen {
        points: lock,
        ..Seen::default()
    };
    for record in &history.records {
        match &record.kind {
            RecordKind::Hold { who, lock, .. } => s.hold(who, lock),
            RecordKind::Release { who, lock, cause } => s.release(who, lock, *cause),
            RecordKind::Return {
                who,
                lock,
                call,
                outcome,
            } => match (call, outcome) {
                (_, Outcome::Acquired { .. })
                    if s.believers.get(lock).is_some_and(|b| b.contains(who)) =>
                {
                    s.reach(Point::ReentrantHold)
                }
                (_, Outcome::NotAcquired) => s.reach(Point::TryLockGaveUp),
                (Call::Unlock, Outcome::Error { .. }) => s.reach(Point::UnlockErrorReturned),
                _ => {}
            },
            RecordKind::Server {
                lock,
                holder,
                cause,
                ..
            } => s.server(lock, holder.is_some(), cause),
            RecordKind::RenewSent {
                process,
                lock,
                retry,
                ..
            } => {
                if *retry {
                    s.reach(Point::RenewalResent);
                }
                if !s.process_holds(process, lock)
                    && s.unlocked.contains(&(process.clone(), lock.clone()))
                {
                    s.reach(Point::RenewalAfterUnlock);
                }
            }
            RecordKind::Lock { event, .. } => match event {
                lockcore::Event::Resubscribing { .. } => s.reach(Point::Resubscribed),
                lockcore::Event::LeaseLost { .. } => s.reach(Point::LeaseLostSignalled),
                _ => {}
            },
            RecordKind::Deliver { .. } => s.reach(Point::WokenByMessage),
            RecordKind::Drop {
                direction: Direction::Down,
                ..
            } => s.reach(Point::ReplyDropped),
            RecordKind::Held { .. } => s.reach(Point::MessageHeld),
            RecordKind::Write {
                accepted: false, ..
            } => s.reach(Point::LateWriteRejected),
            RecordKind::Fault {
                fault,
                phase: Phase::Begin,
            } => s.fault_begins(spec, fault),
            _ => {}
        }
    }
    s.points
}
