//! `redisson-batched`: one renewal chain per client (Redisson 3.44+).
//!
//! When the first watchdog lock registers, a single timer T/3 ahead; when it
//! fires, one renewal per held watchdog lock (in lock-name order) goes out
//! together; when all have answered (or failed), the next round is set T/3
//! later if any entry remains. A 0 drops that lock's entry; an error is
//! logged and the entry kept, so the next round retries it.

use tracing::warn;

use super::step::Continuation;
use super::watchdog::Chain;
use super::{Event, LockClient, TimerKind};
use crate::{LockError, LockName, Millis, Switch, ThreadId};

impl LockClient {
    pub(super) fn batched_schedule(&mut self, now: Millis, lock: &LockName, thread: ThreadId) {
        let queueing = self.queueing();
        self.watchdog
            .entries
            .entry(lock.clone())
            .or_default()
            .add(thread, queueing);
        if self.watchdog.chain == Chain::Idle {
            self.start_next_round(now);
        }
    }

    fn start_next_round(&mut self, now: Millis) {
        let at = now.plus(self.config.renewal_interval());
        let timer = self.set_timer(at, TimerKind::BatchRound);
        self.watchdog.chain = Chain::Waiting(timer);
    }

    pub(super) fn on_batch_timer(&mut self, now: Millis) {
        // Every release pauses here, so that turning the fix on changes
        // only what a missing entry does, not when the round goes out.
        self.watchdog.chain = Chain::Reading;
        let locks = self.watchdog.entries.keys().cloned().collect();
        self.pause_callback(now, Continuation::Round(locks));
    }

    /// The round looks up the entries of `locks`, the keys it read, and
    /// renews each entry's first thread. An entry gone since (unlocked
    /// meanwhile) is skipped from 3.45.1; before, the lookup threw and
    /// the chain stopped (#6472).
    pub(super) fn batched_round(&mut self, now: Millis, locks: Vec<LockName>) {
        if self.watchdog.chain != Chain::Reading {
            // The map emptied while the round was paused: the chain
            // stopped, and a lock taken since started a chain of its own.
            return;
        }
        let mut targets: Vec<(LockName, ThreadId, bool)> = Vec::with_capacity(locks.len());
        for lock in locks {
            let Some(entry) = self.watchdog.entries.get(&lock) else {
                if self.switches.has(Switch::RoundSkipsRemovedLock) {
                    continue;
                }
                warn!(lock = %lock, "renewal round threw NullPointerException; no lock of this client is renewed again");
                self.watchdog.chain = Chain::Broken;
                // The entries stay in the map, but nothing renews them.
                let held: Vec<LockName> = self.watchdog.entries.keys().cloned().collect();
                for lock in held {
                    self.event(Event::RenewalStopped {
                        lock,
                        reason: "round-threw".to_owned(),
                    });
                }
                return;
            };
            if let Some(thread) = entry.first_thread() {
                targets.push((lock, thread, entry.holds(thread)));
            }
        }
        if targets.is_empty() {
            self.watchdog.chain = Chain::Idle;
            return;
        }
        self.watchdog.chain = Chain::Round(targets.len());
        for (lock, thread, holds) in targets {
            if holds {
                self.send_renew(now, lock, thread);
            } else {
                // A stale head (`thread-queue`): `LockEntry.getLockName`
                // has forgotten it and returns null, which Redisson's
                // `CommandEncoder` sends as an empty argument (3.45.1).
                self.send_renew_as(now, lock, thread, bytes::Bytes::new());
            }
        }
    }

    pub(super) fn batched_renewed(
        &mut self,
        now: Millis,
        lock: LockName,
        thread: ThreadId,
        parsed: Result<bool, LockError>,
    ) {
        match parsed {
            Ok(true) => self.event(Event::Renewed { lock }),
            // `LockTask.renew`: `cancelExpirationRenewal(key, threadId)`
            // takes one hold of the renewed thread off the entry; the entry
            // goes only when no thread is left (3.44.0, #6303).
            // A stale head (`thread-queue`) has no count to take: the
            // entry stays, and every round renews it in vain (#6144).
            Ok(false) => {
                let queueing = self.queueing();
                let empty = self
                    .watchdog
                    .entries
                    .get_mut(&lock)
                    .is_some_and(|entry| entry.remove(thread, queueing));
                if empty {
                    self.remove_entry(&lock, "not-held");
                }
            }
            Err(e) => {
                warn!(lock = %lock, error = %e, "renewal failed; the next round retries");
            }
        }
        if let Chain::Round(outstanding) = self.watchdog.chain {
            let outstanding = outstanding.saturating_sub(1);
            if outstanding > 0 {
                self.watchdog.chain = Chain::Round(outstanding);
            } else if self.watchdog.entries.is_empty() {
                self.watchdog.chain = Chain::Idle;
            } else {
                self.start_next_round(now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::harness::Harness;
    use crate::Value;
    use crate::{Call, Era, Event, LockName, Millis, Purpose, ThreadId, TransportError};

    fn name(s: &str) -> LockName {
        LockName::new(s).unwrap()
    }

    /// Redisson 3.44+: one chain per client. Two watchdog locks get one
    /// timer; each round renews both in lock-name order; an error on one
    /// lock keeps its entry and the next round renews it again (where
    /// `redisson` would have stopped for good).
    #[test]
    fn one_chain_renews_all_and_survives_errors() {
        let mut h = Harness::short(Era::RedissonBatched);
        h.acquire(ThreadId(2), "b");
        h.acquire(ThreadId(1), "a");
        assert_eq!(h.timers.len(), 1, "one chain timer: {:?}", h.timers);
        h.advance(1_000);
        let (ra, ca) = h.expect_send();
        let (rb, cb) = h.expect_send();
        assert_eq!(&ca[3..], ["a", "3000", "uuid-a:1"]);
        assert_eq!(&cb[3..], ["b", "3000", "uuid-a:2"]);
        h.fail(ra, TransportError::Connection("blip".into()));
        h.expect_quiet();
        assert_eq!(
            h.timers.len(),
            1,
            "only b's response timeout: no round before all answered"
        );
        h.reply(rb, Value::Int(1));
        assert_eq!(h.expect_event(), Event::Renewed { lock: name("b") });
        assert_eq!(h.next_timer_at(), Some(Millis(2_000)));
        let ra = h.renewal_due();
        let rb = h.expect(Purpose::Renew);
        h.reply(ra, Value::Int(1));
        h.reply(rb, Value::Int(0));
        assert_eq!(h.expect_event(), Event::Renewed { lock: name("a") });
        assert_eq!(
            h.expect_event(),
            Event::RenewalStopped {
                lock: name("b"),
                reason: "not-held".into()
            }
        );
        let ra = h.renewal_due();
        h.expect_quiet();
        h.reply(ra, Value::Int(1));
        let _ = h.expect_event();
    }

    /// Generated seed 39 (sim, `redisson-batched`): a round's renewal times
    /// out, the lock is unlocked while the resend waits, and the resend
    /// still goes out after the unlock returned. That is Redisson's
    /// behaviour (unlock removes the lock from the chain's set and cancels
    /// no command in flight; the command layer resends a timed-out command
    /// on its own), so the resend says it is attempt 1 of a renewal first
    /// sent while the lock was held. What must not happen, and would show
    /// here as a further Send, is the chain renewing the removed lock: its
    /// reply (0) removes nothing and reports nothing, and no round follows.
    #[test]
    fn resend_after_unlock_is_the_last_renewal() {
        let config = crate::Config::builder()
            .era(Era::RedissonBatched)
            .watchdog_timeout(3_000)
            .response_timeout(100)
            .retry_attempts(1)
            .retry_interval(50)
            .build()
            .unwrap();
        let mut h = Harness::with_config(config);
        h.acquire(ThreadId(1), "a");
        h.advance(1_000);
        let (_, purpose, attempt) = h.expect_attempt();
        assert_eq!((purpose, attempt), (Purpose::Renew, 0));
        h.advance(100);
        h.expect_quiet();
        h.call(ThreadId(1), "a", Call::Unlock).unwrap();
        let unlock = h.expect(Purpose::Unlock);
        h.reply(unlock, Value::Int(1));
        assert_eq!(
            h.expect_event(),
            Event::RenewalStopped {
                lock: name("a"),
                reason: "unlocked".into()
            }
        );
        h.expect_return(ThreadId(1)).unwrap();
        h.advance(50);
        let (resend, purpose, attempt) = h.expect_attempt();
        assert_eq!((purpose, attempt), (Purpose::Renew, 1));
        h.reply(resend, Value::Int(0));
        h.expect_quiet();
        assert!(h.timers.is_empty(), "timers left: {:?}", h.timers);
        h.advance(10_000);
        h.expect_quiet();
    }

    /// The chain stops when the last watchdog lock is unlocked: its timer
    /// is cancelled and nothing more is sent.
    #[test]
    fn chain_stops_when_no_entry_remains() {
        let mut h = Harness::short(Era::RedissonBatched);
        h.acquire(ThreadId(1), "a");
        h.call(ThreadId(1), "a", Call::Unlock).unwrap();
        let req = h.expect(Purpose::Unlock);
        h.reply(req, Value::Int(1));
        assert!(matches!(h.expect_event(), Event::RenewalStopped { .. }));
        h.expect_return(ThreadId(1)).unwrap();
        assert!(h.timers.is_empty());
        h.advance(10_000);
        h.expect_quiet();
        // A new lock starts a new chain.
        h.acquire(ThreadId(1), "a");
        assert_eq!(h.next_timer_at(), Some(Millis(11_000)));
    }

    /// #6472: t1 holds "a", t2 holds "b" on one client; the round reads
    /// both keys and pauses (before 3.45.1); t2's unlock of "b" answers
    /// meanwhile and its cancel removes the entry; then the round goes
    /// on. The harness, and the renewals answered so far.
    fn race(version: &str) -> (Harness, usize) {
        let mut h = Harness::short(super::super::harness::release(version));
        h.m.interleave(true);
        h.hold_steps = true;
        h.acquire(ThreadId(1), "a");
        h.acquire(ThreadId(2), "b");
        h.advance(1_000);
        let paused = h.take_steps();
        assert_eq!(paused.len(), 1, "the round pauses once");
        let renewals = renew_all(&mut h);
        unlock_now(&mut h, ThreadId(2), "b");
        // The unlock's cancel (paused too before 4.4.0) runs first.
        for step in h.take_steps().into_iter().chain(paused) {
            h.resume(step);
        }
        assert!(matches!(h.returned(ThreadId(2)), Some(Ok(_))));
        (h, renewals)
    }

    /// `thread` unlocks `lock` and Redis answers; its cancel pauses
    /// (before 4.4.0), and the unlock answers once it has gone on.
    fn unlock_now(h: &mut Harness, thread: ThreadId, lock: &str) {
        h.call(thread, lock, Call::Unlock).unwrap();
        let unlock = h.expect(Purpose::Unlock);
        h.reply(unlock, Value::Int(1));
    }

    /// Answers 1 to every renewal sent so far: how many.
    fn renew_all(h: &mut Harness) -> usize {
        let mut renewals = 0;
        while let Some(output) = h.next() {
            if let crate::Output::Send {
                request,
                purpose: Purpose::Renew,
                ..
            } = output
            {
                renewals += 1;
                h.reply(request, Value::Int(1));
            }
        }
        renewals
    }

    /// The round of 3.45.0 finds "b" gone and throws: it renews nothing,
    /// now or later, though t1 still holds "a". 3.45.1 skips "b" and
    /// renews "a" every round.
    #[test]
    fn before_3_45_1_an_unlock_during_the_round_stops_every_renewal() {
        let renewals_of_a = |version| {
            let (mut h, mut renewals) = race(version);
            for _ in 0..5 {
                renewals += renew_all(&mut h);
                h.advance(1_000);
                for step in h.take_steps() {
                    h.resume(step);
                }
            }
            renewals
        };
        assert_eq!(renewals_of_a("3.45.0"), 0);
        assert_eq!(renewals_of_a("3.44.0"), 0);
        assert!(renewals_of_a("3.45.1") >= 5);
    }

    /// The chain a round broke starts again once the map has emptied:
    /// t1 unlocks "a" too, and a new lock is renewed.
    #[test]
    fn a_broken_chain_restarts_when_the_map_empties() {
        let (mut h, _) = race("3.45.0");
        assert!(!h.sends().contains(&Purpose::Renew));
        assert!(!h.has_timers(), "no round is set");
        unlock_now(&mut h, ThreadId(1), "a");
        for step in h.take_steps() {
            h.resume(step);
        }
        let _ = h.sends();
        h.m.interleave(false);
        h.acquire(ThreadId(1), "c");
        h.advance(1_000);
        assert!(h.sends().contains(&Purpose::Renew));
    }
}
