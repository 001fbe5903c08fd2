//! A multi-lock thread's beliefs, kept per lock by every engine alike.
//!
//! lockcore tells its driver each call the multi-lock makes on one of its
//! locks, and each answer ([`lockcore::Output::Constituent`],
//! [`lockcore::Output::ConstituentReturn`]). They are the thread's own
//! `RLock` calls, recorded as such, and a Java thread's beliefs follow
//! them: it holds a lock from the `tryLock` that answered true to its
//! call of that lock's unlock.

use lockcore::{Call, CallOutcome, LockError, LockName, VecMap};

use crate::engines::fast::driver::outcome_of;
use crate::model::history::{RecordKind, ReleaseCause, Who};

/// One multi-lock thread's holds and calls in flight, by lock.
#[derive(Debug, Default)]
pub(crate) struct Parts {
    holds: VecMap<LockName, u32>,
    calls: VecMap<LockName, Call>,
}

impl Parts {
    /// The multi-lock of `who` calls `call` on `lock`: the records it
    /// makes (an unlock of the last hold lets the lock go first).
    pub(crate) fn call(&mut self, who: &Who, lock: LockName, call: Call) -> Vec<RecordKind> {
        let mut records = Vec::with_capacity(2);
        if call == Call::Unlock {
            match self.holds.get_mut(&lock) {
                Some(holds) if *holds > 1 => *holds -= 1,
                Some(_) => records.extend(self.release(who, &lock, ReleaseCause::Unlock)),
                None => {}
            }
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
