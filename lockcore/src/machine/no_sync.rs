//! What an acquire or an unlock does when its `WAIT` counted no replica
//! (see `sync`): the script ran on the primary, but the call failed.
//!
//! - Before 3.20.0 the error reaches the caller; an acquire that did take
//!   the lock leaves the key to a thread told it failed (#4822: "RLock can
//!   only be obtained by single redisson node").
//! - 3.20.0 (`no-sync-rollback`, commit ec2e41ab3): the acquire is rolled
//!   back first, by the thread's unlock script (itself followed by a
//!   `WAIT`), whatever that answers.
//! - 3.20.1 (`no-sync-retry`, commit 65320f76f): the acquire (after its
//!   rollback) and the unlock are tried again, `retryInterval` apart, up
//!   to `retryAttempts` times. Each unlock attempt cancels renewal. Until
//!   3.52.0 a retried unlock draws a new latch id (3.24+), so it misses
//!   the latch its first attempt left, runs the script again and finds the
//!   lock gone: "not locked by current thread" (#6651).
//! - 3.25.0 to 3.46.x (`no-sync-message-lengthened`, commit 279cb9b3c):
//!   the failure's text grew a hint while the rollback and the retry
//!   still compared it with the old text, so neither runs and the caller
//!   gets the error as before 3.20.0. 3.47.0 (`no-synced-slaves-exception`,
//!   commit f2b6ad849) matches it by type again.
//! - 3.52.0 (`no-sync-keeps-request-id`, commit 7337c86d1): the retried
//!   unlock keeps its latch id, and the latch answers it.

use super::acquire::Phase;
use super::request::Owner;
use super::{CallKind, Caller, LockClient, Purpose, TimerKind};
use crate::{LockError, Millis, Switch, ThreadId, TransportError, Value};

/// Whether `reply` is a lock script's "too few replicas" failure.
pub(super) fn no_sync(reply: &Result<Value, TransportError>) -> bool {
    matches!(reply, Err(TransportError::NoSyncedReplicas(_)))
}

impl LockClient {
    /// Whether the rollback and the retry recognise the failure: by its
    /// exact text until 3.46.x, which from 3.25.0 is no longer the text
    /// raised; by its type from 3.47.0.
    pub(super) fn no_sync_recognised(&self) -> bool {
        !self.switches.has(Switch::NoSyncMessageLengthened)
            || self.switches.has(Switch::NoSyncedSlavesException)
    }

    /// An acquire that failed for its `WAIT`: rolled back (3.20.0+), or
    /// `false` when the caller gets the error as it is.
    pub(super) fn acquire_not_synced(
        &mut self,
        now: Millis,
        thread: ThreadId,
        error: &TransportError,
    ) -> bool {
        self.reach(super::Sometimes::AcquireNotSynced);
        if !self.switches.has(Switch::NoSyncRollback) || !self.no_sync_recognised() {
            return false;
        }
        let Some((lock, acquiring)) = self.acquiring(thread) else {
            return false;
        };
        acquiring.phase = Phase::RollingBack;
        let lock = lock.clone();
        self.event(super::Event::AcquireRolledBack {
            lock: lock.clone(),
            thread,
        });
        let (command, _) = self.unlock_command(now, thread, &lock, None);
        let owner = Owner::Rollback(thread, error.clone());
        self.send(now, lock, Purpose::Unlock, command, owner);
        true
    }

    /// The rollback answered (however): the acquire is tried again
    /// (3.20.1+, attempts left), or the call fails with the acquire's
    /// error.
    pub(super) fn on_rollback_reply(
        &mut self,
        now: Millis,
        thread: ThreadId,
        error: TransportError,
    ) {
        let Some((lock, acquiring)) = self.acquiring(thread) else {
            return;
        };
        if acquiring.phase != Phase::RollingBack {
            return;
        }
        // The spin lock's acquire has the rollback (`handleNoSync`) but
        // no retry wrapper: the caller gets the error.
        if !lock.kind().acquire_retried() {
            self.finish(thread, Err(LockError::Transport(error)));
            return;
        }
        let caller = Caller::new(thread, lock.clone());
        match self.no_sync_pause(now, &caller) {
            Some(timer) => {
                if let Some((_, acquiring)) = self.acquiring(thread) {
                    acquiring.phase = Phase::NoSyncPause { timer };
                }
            }
            None => self.finish(thread, Err(LockError::Transport(error))),
        }
    }

    /// An unlock that failed for its `WAIT`, after its renewal was
    /// cancelled: `true` when it will be tried again (3.20.1+).
    pub(super) fn unlock_not_synced(&mut self, now: Millis, caller: &Caller) -> bool {
        self.no_sync_pause(now, caller).is_some()
    }

    /// Sets the timer of the next try of `caller`'s call, if the release
    /// retries and attempts are left.
    fn no_sync_pause(&mut self, now: Millis, caller: &Caller) -> Option<crate::TimerId> {
        if !self.switches.has(Switch::NoSyncRetry) || !self.no_sync_recognised() {
            return None;
        }
        let tries = self.no_sync_tries.entry(caller.clone()).or_default();
        if *tries >= self.config.retry_attempts {
            return None;
        }
        *tries += 1;
        // `ServiceManager.execute` counts the attempt, then draws its
        // pause: the first is `calcDelay(1)`.
        let attempt = *tries;
        let at = now.plus(self.retry_pause(attempt));
        Some(self.set_timer(at, TimerKind::NoSyncRetry(caller.clone())))
    }

    /// The pause is over: the acquire or the unlock goes out again.
    pub(super) fn on_no_sync_retry(&mut self, now: Millis, caller: Caller) {
        let thread = caller.thread;
        let Some(state) = self.calls.get(&caller) else {
            return;
        };
        let lock = state.lock.clone();
        match &state.kind {
            CallKind::Acquire(acquiring)
                if matches!(acquiring.phase, Phase::NoSyncPause { .. }) =>
            {
                self.attempt(now, thread)
            }
            CallKind::Unlock(latch) => {
                let keep = latch
                    .clone()
                    .filter(|_| self.switches.has(Switch::NoSyncKeepsRequestId));
                let (command, latch) = self.unlock_command(now, thread, &lock, keep);
                if let Some(state) = self.calls.get_mut(&caller) {
                    state.kind = CallKind::Unlock(latch);
                }
                self.send(now, lock, Purpose::Unlock, command, Owner::Call(caller));
            }
            _ => {}
        }
    }
}
