//! A multi-lock thread's beliefs, kept per lock by every engine alike.
//!
//! lockcore tells its driver each call the multi-lock makes on one of its
//! locks, and each answer ([`lockcore::Output::Constituent`],
//! [`lockcore::Output::ConstituentReturn`]). They are the thread's own
//! `RLock` calls, recorded as such, and a Java thread's beliefs follow
//! them: it holds a lock from the `tryLock` that answered true to its
//! call of that lock's unlock, and the application's own `unlock()` of
//! the multi-lock lets go of one hold of each at once (from 3.27.2 it
//! stops at the first lock whose unlock throws, and the ones after it
//! stay held on Redis, which the oracle then sees).

use lockcore::{Call, CallOutcome, LockError, LockName, VecMap};

use crate::engines::fast::driver::outcome_of;
use crate::model::history::{RecordKind, ReleaseCause, Who};

/// One multi-lock thread's holds and calls in flight, by lock.
#[derive(Debug, Default)]
pub(crate) struct Parts {
    holds: VecMap<LockName, u32>,
    calls: VecMap<LockName, Call>,
    /// Whether the application's `unlock()` of the multi-lock is in
    /// flight: its calls on the locks change no belief (it did).
    unlocking: bool,
    /// The holds the multi-lock's acquire in flight took and has not
    /// given back: if the acquire fails (`lock()` throws when a taken
    /// lock's expiry fails), the application holds none of them.
    taken: Vec<LockName>,
}

impl Parts {
    /// The multi-lock of `who` calls `call` on `lock`: the records it
    /// makes (an unlock of the last hold lets the lock go first).
    pub(crate) fn call(&mut self, who: &Who, lock: LockName, call: Call) -> Vec<RecordKind> {
        let mut records = Vec::with_capacity(2);
        if call == Call::Unlock && !self.unlocking {
            if let Some(i) = self.taken.iter().position(|l| *l == lock) {
                self.taken.swap_remove(i);
            }
            records.extend(self.let_go(who, &lock));
        }
        self.calls.insert(lock.clone(), call.clone());
        records.push(RecordKind::Call {
            who: who.clone(),
            lock,
            call,
        });
        records
    }

    /// The call on `lock` answered `result`: its return, and a hold when
    /// a first acquire answered true.
    pub(crate) fn returned(
        &mut self,
        who: &Who,
        lock: LockName,
        result: &Result<CallOutcome, LockError>,
        watchdog_ms: u64,
    ) -> Vec<RecordKind> {
        let Some(call) = self.calls.remove(&lock) else {
            return Vec::new();
        };
        let mut records = vec![RecordKind::Return {
            who: who.clone(),
            lock: lock.clone(),
            call: call.clone(),
            outcome: outcome_of(result),
        }];
        if let (true, Ok(CallOutcome::Acquired { token })) = (call.is_acquire(), result) {
            self.taken.push(lock.clone());
            let holds = self.holds.get_or_default(lock.clone());
            *holds += 1;
            if *holds == 1 {
                records.push(RecordKind::hold(
                    who.clone(),
                    lock,
                    &call,
                    *token,
                    watchdog_ms,
                ));
            }
        }
        records
    }

    /// The application calls `call` of the multi-lock: an `unlock()`
    /// lets go of one hold of each lock (the releases it records); its
    /// answer ends that ([`Self::answered`]).
    pub(crate) fn multi_call(&mut self, who: &Who, call: &Call) -> Vec<RecordKind> {
        if *call != Call::Unlock {
            return Vec::new();
        }
        self.unlocking = true;
        let locks: Vec<LockName> = self.holds.keys().cloned().collect();
        (locks.iter())
            .filter_map(|lock| self.let_go(who, lock))
            .collect()
    }

    /// The multi-lock's call answered; `failed`: an acquire that did
    /// not take the multi-lock, whose holds the application lets go of
    /// (the releases it records).
    pub(crate) fn answered(&mut self, who: &Who, failed: bool) -> Vec<RecordKind> {
        self.unlocking = false;
        let taken = std::mem::take(&mut self.taken);
        if !failed {
            return Vec::new();
        }
        (taken.iter())
            .filter_map(|lock| self.let_go(who, lock))
            .collect()
    }

    /// One hold of `lock` less: the release when it was the last.
    fn let_go(&mut self, who: &Who, lock: &LockName) -> Option<RecordKind> {
        match self.holds.get_mut(lock) {
            Some(holds) if *holds > 1 => {
                *holds -= 1;
                None
            }
            _ => self.release(who, lock, ReleaseCause::Unlock),
        }
    }

    /// `who` no longer believes it holds `lock`.
    pub(crate) fn release(
        &mut self,
        who: &Who,
        lock: &LockName,
        cause: ReleaseCause,
    ) -> Option<RecordKind> {
        self.holds.remove(lock)?;
        Some(RecordKind::Release {
            who: who.clone(),
            lock: lock.clone(),
            cause,
        })
    }

    /// `who` no longer believes it holds any lock (a crash).
    pub(crate) fn release_all(&mut self, who: &Who, cause: ReleaseCause) -> Vec<RecordKind> {
        let locks: Vec<LockName> = self.holds.keys().cloned().collect();
        (locks.iter())
            .filter_map(|lock| self.release(who, lock, cause))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who() -> Who {
        Who {
            client: "A".into(),
            life: 0,
            thread: 1,
        }
    }

    fn kinds(records: &[RecordKind]) -> Vec<String> {
        records
            .iter()
            .map(|r| match r {
                RecordKind::Call { lock, .. } => format!("call {lock}"),
                RecordKind::Return { lock, .. } => format!("return {lock}"),
                RecordKind::Hold { lock, .. } => format!("hold {lock}"),
                RecordKind::Release { lock, .. } => format!("release {lock}"),
                other => format!("{other:?}"),
            })
            .collect()
    }

    /// Two holds of each lock (the multi-lock taken twice): the
    /// application's first `unlock()` lets go of one of each, its second
    /// of the last, before the multi-lock's own unlock calls, which then
    /// change no belief.
    #[test]
    fn the_applications_unlock_lets_go_at_its_call() {
        let (mut parts, w) = (Parts::default(), who());
        let lock = |n: &str| LockName::new(n).unwrap();
        let acquired = Ok(CallOutcome::Acquired { token: None });
        let take = Call::TryLock {
            wait: None,
            lease: None,
        };
        let mut got = Vec::new();
        for _ in 0..2 {
            for l in ["a", "b"] {
                got.extend(parts.call(&w, lock(l), take.clone()));
                got.extend(parts.returned(&w, lock(l), &acquired, 30_000));
            }
        }
        assert_eq!(
            kinds(&got),
            [
                "call a", "return a", "hold a", "call b", "return b", "hold b"
            ]
            .into_iter()
            .chain(["call a", "return a", "call b", "return b"])
            .collect::<Vec<_>>()
        );
        assert!(parts.answered(&w, false).is_empty());
        assert!(parts.multi_call(&w, &Call::Unlock).is_empty());
        assert!(parts.answered(&w, false).is_empty());
        let released = parts.multi_call(&w, &Call::Unlock);
        assert_eq!(kinds(&released), ["release a", "release b"]);
        // The multi-lock's unlock of `a` after the application's: no
        // second release.
        let unlocked = parts.call(&w, lock("a"), Call::Unlock);
        assert_eq!(kinds(&unlocked), ["call a"]);
        assert!(parts.answered(&w, false).is_empty());
        // An acquire that took `b` and then threw (a leased lock's expiry
        // failed): the application holds nothing.
        parts.call(&w, lock("b"), take.clone());
        parts.returned(&w, lock("b"), &acquired, 30_000);
        assert_eq!(kinds(&parts.answered(&w, true)), ["release b"]);
    }
}
