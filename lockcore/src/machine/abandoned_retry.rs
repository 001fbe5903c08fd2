//! An interrupted thread's acquire that synced too few replicas: rolled
//! back and tried again all the same (3.20.1+).
//!
//! Redisson's rollback (`handleNoSync`) hangs on the acquire script's own
//! stage inside `tryAcquireAsync`, and the retry wrapper
//! (`ServiceManager.execute`) on the stage that rollback returns. An
//! interrupt cancels only the wrapper's result (`CommandAsyncService.get`
//! calls `future.cancel(true)`), which `execute` never looks at before
//! it tries again: it counts the attempt, draws its pause and calls
//! `tryAcquireAsync` anew (redisson-4.7.0, `ServiceManager.java:618-645`,
//! `RedissonLock.java` `tryAcquireAsync`). So the abandoned acquire is
//! rolled back by the thread's unlock script, and then sent again up to
//! `retryAttempts` times for a thread that gave up; a try that syncs
//! takes the lock and its `thenApply` arms the watchdog, as an abandoned
//! acquire's late success does (#5358, #7272).
//!
//! The same holds for a call interrupted between its rollback and its
//! next try: the rollback's reply and the pause go on without it.
//! `RFencedLock`'s token methods have neither the rollback nor the
//! wrapper, the spin lock the rollback only; 3.20.0's cancel reaches the
//! script's own future, so nothing of this runs there.

use super::acquire::Phase;
use super::interrupt::Abandoned;
use super::request::Owner;
use super::{LockClient, Purpose, TimerKind};
use crate::{Millis, Switch, TimerId};

impl LockClient {
    /// The abandoned acquire's `WAIT` synced too few replicas: its
    /// rollback goes out where the release has one and recognises the
    /// failure. Returns whether it did.
    pub(super) fn abandoned_not_synced(&mut self, now: Millis, abandoned: &Abandoned) -> bool {
        self.reach(super::Sometimes::AcquireNotSynced);
        if abandoned.token
            || !self.switches.has(Switch::NoSyncRollback)
            || !self.no_sync_recognised()
        {
            return false;
        }
        let lock = abandoned.lock.clone();
        self.event(super::Event::AcquireRolledBack {
            lock: lock.clone(),
            thread: abandoned.thread,
        });
        let (command, _) = self.unlock_command(now, abandoned.thread, &lock, None);
        let owner = Owner::AbandonedRollback(abandoned.clone());
        self.send(now, lock, Purpose::Unlock, command, owner);
        true
    }

    /// The abandoned acquire's rollback answered (however): the acquire
    /// goes again after a pause, where the release retries and tries are
    /// left.
    pub(super) fn on_abandoned_rollback_reply(&mut self, now: Millis, abandoned: Abandoned) {
        let mut abandoned = abandoned;
        if !abandoned.lock.kind().acquire_retried()
            || !self.switches.has(Switch::NoSyncRetry)
            || !self.no_sync_recognised()
            || abandoned.tries >= self.config.retry_attempts
        {
            return;
        }
        abandoned.tries += 1;
        let at = now.plus(self.retry_pause(abandoned.tries));
        let id = self.park(abandoned);
        self.set_timer(at, TimerKind::AbandonedRetry(id));
    }

    /// The pause is over: the abandoned acquire goes again, its reply
    /// to its callback.
    pub(super) fn on_abandoned_retry(&mut self, now: Millis, id: u64) {
        let Some(abandoned) = self.abandoned.remove(&id) else {
            return;
        };
        let lock = abandoned.lock.clone();
        let command = self.acquire_command(
            now,
            (&lock, abandoned.thread),
            abandoned.lease,
            (abandoned.waits, abandoned.token),
        );
        self.send(
            now,
            lock,
            Purpose::Acquire,
            command,
            Owner::Abandoned(abandoned),
        );
    }

    /// Interrupted while its rollback is out: the rollback's reply goes
    /// to the abandoned acquire.
    pub(super) fn abandon_rollback(&mut self, abandoned: Abandoned) {
        let thread = abandoned.thread;
        let mine = |owner: &Owner| matches!(owner, Owner::Rollback(t, _) if *t == thread);
        let owners = (self.requests.values_mut().map(|p| &mut p.owner))
            .chain(self.retrying.values_mut().map(|p| &mut p.owner))
            .chain(self.probes.values_mut().map(|p| &mut p.held.owner))
            .chain(self.asking.values_mut().map(|held| &mut held.owner))
            .chain(self.loading.values_mut().map(|held| &mut held.owner));
        for owner in owners.map(Owner::innermost) {
            if mine(owner) {
                *owner = Owner::AbandonedRollback(abandoned.clone());
            }
        }
    }

    /// Interrupted in the pause before its next try: the try goes on
    /// without it, at the same time.
    pub(super) fn abandon_pause(&mut self, timer: TimerId, abandoned: Abandoned) {
        if !self.timers.contains_key(&timer) {
            return;
        }
        let thread = abandoned.thread;
        let id = self.park(abandoned);
        self.timers.insert(timer, TimerKind::AbandonedRetry(id));
        // The call's end must not cancel the timer it no longer owns.
        if let Some((_, acquiring)) = self.acquiring(thread) {
            acquiring.phase = Phase::Attempting;
        }
    }

    /// Keeps `abandoned` until its next try; its key.
    fn park(&mut self, abandoned: Abandoned) -> u64 {
        let id = self.next_abandoned;
        self.next_abandoned += 1;
        self.abandoned.insert(id, abandoned);
        id
    }
}

#[cfg(test)]
mod tests {
    use crate::machine::harness::Harness;
    use crate::{Call, LockError, Output, Purpose, RequestId, ThreadId, Value};

    const T1: ThreadId = ThreadId(1);

    /// `lockInterruptibly()` with a replica; its first acquire and the
    /// acquire's `WAIT`.
    fn interruptible(release: &str) -> (Harness, (RequestId, RequestId)) {
        let mut h = Harness::with_replicas(release, 1);
        h.call(T1, "l", Call::LockInterruptibly { lease: None })
            .unwrap();
        let tried = h.next_try().expect("the first acquire");
        (h, tried)
    }

    /// The acquire ran and its `WAIT` synced none: its rollback goes out
    /// and answers.
    fn not_synced(h: &mut Harness, (acquire, wait): (RequestId, RequestId)) {
        h.reply(acquire, Value::Nil);
        h.reply(wait, Value::Int(0));
        h.expect_rolled_back(T1);
        let (unlock, _) = h.expect_send();
        let (unlock_wait, _) = h.expect_send();
        h.reply(unlock, Value::Int(1));
        h.reply(unlock_wait, Value::Int(0));
    }

    impl Harness {
        /// The next output, if any, is an acquire and its `WAIT`.
        fn next_try(&mut self) -> Option<(RequestId, RequestId)> {
            let acquire = match self.next() {
                None => return None,
                Some(Output::Send {
                    request,
                    purpose: Purpose::Acquire,
                    ..
                }) => request,
                other => panic!("expected an acquire, got {other:?}"),
            };
            let (wait, purpose, _) = self.expect_send_purpose();
            assert_eq!(purpose, Purpose::Sync);
            Some((acquire, wait))
        }
    }

    /// 3.20.1+: the thread is interrupted while its acquire is out; the
    /// acquire takes the lock on Redis but syncs no replica. Redisson
    /// rolls it back and, its retry wrapper blind to the cancel, sends it
    /// again; a try that syncs arms the watchdog of a thread that gave
    /// up. 3.20.0's cancel reaches the script's own future: nothing.
    #[test]
    fn an_abandoned_acquire_is_rolled_back_and_tried_again() {
        let (mut h, first) = interruptible("3.20.1");
        assert!(h.m.interrupt(h.now, T1));
        assert_eq!(h.expect_return(T1), Err(LockError::Interrupted));
        not_synced(&mut h, first);
        h.advance(1_500);
        let (again, wait) = h.next_try().expect("the retry");
        h.reply(again, Value::Nil);
        h.reply(wait, Value::Int(1));
        h.advance(20_000);
        assert!(h.sends().contains(&Purpose::Renew));

        let (mut h, (acquire, wait)) = interruptible("3.20.0");
        assert!(h.m.interrupt(h.now, T1));
        assert_eq!(h.expect_return(T1), Err(LockError::Interrupted));
        h.reply(acquire, Value::Nil);
        h.reply(wait, Value::Int(0));
        h.advance(20_000);
        assert_eq!(h.sends(), []);
    }

    /// Interrupted between its rollback and its next try, the call ends
    /// but the try goes at its time; the tries stay bounded: the first
    /// attempt and `retryAttempts` more (3 in 3.20.1).
    #[test]
    fn an_interrupt_in_the_pause_leaves_the_tries_to_run() {
        let (mut h, first) = interruptible("3.20.1");
        not_synced(&mut h, first);
        assert!(h.m.interrupt(h.now, T1));
        assert_eq!(h.expect_return(T1), Err(LockError::Interrupted));
        let mut tries = 1;
        loop {
            h.advance(1_500);
            let Some(tried) = h.next_try() else {
                break;
            };
            tries += 1;
            not_synced(&mut h, tried);
        }
        assert_eq!(tries, 4);
    }
}
