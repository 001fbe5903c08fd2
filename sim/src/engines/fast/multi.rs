//! A multi-lock thread on the fast engine: its call goes to lockcore's
//! `call_multi`, and the multi-lock's own calls on its locks are the
//! thread's, with beliefs per lock (`engines::parts`).

use lockcore::{Call, CallOutcome, LockError, LockName, ThreadId};

use crate::engines::fast::world::World;
use crate::model::history::{RecordKind, ReleaseCause};

impl World<'_> {
    /// Starts `call` of multi-lock thread `t`; whether it had a
    /// multi-lock (else the caller makes a plain call).
    pub(crate) fn call_multi(&mut self, c: usize, t: usize, call: &Call) -> bool {
        let Some(multi) = self.procs[c].threads[t].multi.clone() else {
            return false;
        };
        let who = self.procs[c].who(t);
        self.record(RecordKind::MultiCall {
            who: who.clone(),
            multi: (*multi).clone(),
            call: call.clone(),
        });
        for record in self.procs[c].threads[t].parts.multi_call(&who, call) {
            self.record(record);
        }
        let now = self.local_now(c);
        let thread = ThreadId(t as u64 + 1);
        if let Err(e) = (self.procs[c].machine).call_multi(now, thread, &multi, call.clone()) {
            self.returned(c, t, Err(e));
        }
        true
    }

    /// The multi-lock of thread `t` calls `call` on `lock`.
    pub(crate) fn constituent(&mut self, c: usize, t: usize, lock: LockName, call: Call) {
        if t >= self.procs[c].threads.len() {
            return;
        }
        let who = self.procs[c].who(t);
        for record in self.procs[c].threads[t].parts.call(&who, lock, call) {
            self.record(record);
        }
    }

    /// The multi-lock's call on `lock` answered.
    pub(crate) fn constituent_returned(
        &mut self,
        c: usize,
        t: usize,
        lock: LockName,
        result: Result<CallOutcome, LockError>,
    ) {
        if t >= self.procs[c].threads.len() {
            return;
        }
        let (who, watchdog_ms) = (self.procs[c].who(t), self.procs[c].watchdog_ms);
        let parts = &mut self.procs[c].threads[t].parts;
        for record in parts.returned(&who, lock, &result, watchdog_ms) {
            self.record(record);
        }
    }

    /// Thread `t` no longer believes it holds `lock`.
    pub(crate) fn release_part(
        &mut self,
        c: usize,
        t: usize,
        lock: &LockName,
        cause: ReleaseCause,
    ) {
        let who = self.procs[c].who(t);
        if let Some(record) = self.procs[c].threads[t].parts.release(&who, lock, cause) {
            self.record(record);
        }
    }

    /// Thread `t` no longer believes it holds any lock (a crash).
    pub(crate) fn release_parts(&mut self, c: usize, t: usize, cause: ReleaseCause) {
        let who = self.procs[c].who(t);
        for record in self.procs[c].threads[t].parts.release_all(&who, cause) {
            self.record(record);
        }
    }
}
