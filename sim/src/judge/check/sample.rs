//! Hand-built histories for the checkers' tests.

use lockcore::{Call, LockName, Millis};

use crate::model::history::{
    Meta, Outcome, Proc, Record, RecordKind, ReleaseCause, ServerCause, Who,
};
use crate::{DEFAULT_LOCK, History, SimTime};

pub(crate) fn who(client: &str, thread: u64) -> Who {
    Who {
        client: client.into(),
        life: 0,
        thread,
    }
}

pub(crate) fn proc(client: &str) -> Proc {
    Proc {
        client: client.into(),
        life: 0,
    }
}

pub(crate) fn lock() -> LockName {
    LockName::new(DEFAULT_LOCK).expect("non-empty")
}

/// Builds a history one record at a time, times in ms.
pub(crate) struct Sample {
    h: History,
}

impl Sample {
    pub(crate) fn new(max_latency_ms: u64) -> Sample {
        Sample {
            h: History {
                meta: Meta {
                    seed: 0,
                    horizon: SimTime::from_ms(120_000),
                    max_latency_ms,
                    max_timer_tick_ms: 0,
                    clients: vec!["A".into(), "B".into()],
                    retries: None,
                    acquire_once_ms: None,
                    probe: None,
                    script_load_ms: Vec::new(),
                },
                records: Vec::new(),
            },
        }
    }

    pub(crate) fn at(mut self, ms: u64, kind: RecordKind) -> Sample {
        self.h.records.push(Record {
            at: SimTime::from_ms(ms),
            kind,
        });
        self
    }

    pub(crate) fn hold(self, ms: u64, w: Who, lease_ms: u64, token: Option<u64>) -> Sample {
        self.at(
            ms,
            RecordKind::Hold {
                who: w,
                lock: lock(),
                token,
                lease_ms,
                watchdog: true,
            },
        )
    }

    /// A watchdog hold of `lock` (any object).
    pub(crate) fn hold_on(self, ms: u64, w: Who, lock: LockName) -> Sample {
        self.at(
            ms,
            RecordKind::Hold {
                who: w,
                lock,
                token: None,
                lease_ms: 30_000,
                watchdog: true,
            },
        )
    }

    /// `w` lets go of `lock` (any object).
    pub(crate) fn release_on(self, ms: u64, w: Who, lock: LockName, cause: ReleaseCause) -> Sample {
        self.at(
            ms,
            RecordKind::Release {
                who: w,
                lock,
                cause,
            },
        )
    }

    pub(crate) fn release(self, ms: u64, w: Who, cause: ReleaseCause) -> Sample {
        self.at(
            ms,
            RecordKind::Release {
                who: w,
                lock: lock(),
                cause,
            },
        )
    }

    pub(crate) fn server(self, ms: u64, holder: Option<Who>) -> Sample {
        self.server_in(ms, holder, false)
    }

    /// A read-write lock's key held in `read` mode (`shared`) or not.
    pub(crate) fn server_in(self, ms: u64, holder: Option<Who>, shared: bool) -> Sample {
        let count = i64::from(holder.is_some());
        self.at(
            ms,
            RecordKind::Server {
                lock: lock(),
                holder,
                count,
                shared,
                ttl_ms: 30_000,
                cause: ServerCause::Expiry,
            },
        )
    }

    /// A call on `lock()`'s object of `kind`.
    pub(crate) fn call_on(self, ms: u64, w: Who, kind: lockcore::LockKind, call: Call) -> Sample {
        self.at(
            ms,
            RecordKind::Call {
                who: w,
                lock: lock().with_kind(kind),
                call,
            },
        )
    }

    /// `w`'s timed wait loop began (its first attempt found the lock
    /// held): lockcore's `WaitBegan`.
    pub(crate) fn waits(self, ms: u64, w: &Who) -> Sample {
        let event = lockcore::Event::WaitBegan {
            lock: lock(),
            thread: lockcore::ThreadId(w.thread),
        };
        self.at(
            ms,
            RecordKind::Lock {
                process: w.process(),
                event,
            },
        )
    }

    pub(crate) fn call(self, ms: u64, w: Who, call: Call) -> Sample {
        self.at(
            ms,
            RecordKind::Call {
                who: w,
                lock: lock(),
                call,
            },
        )
    }

    pub(crate) fn ret(self, ms: u64, w: Who, call: Call, outcome: Outcome) -> Sample {
        self.at(
            ms,
            RecordKind::Return {
                who: w,
                lock: lock(),
                call,
                outcome,
            },
        )
    }

    pub(crate) fn write(self, ms: u64, w: Who, token: Option<u64>, accepted: bool) -> Sample {
        self.at(
            ms,
            RecordKind::Write {
                who: w,
                lock: lock(),
                token,
                accepted,
            },
        )
    }

    pub(crate) fn renew(self, ms: u64, client: &str) -> Sample {
        self.at(
            ms,
            RecordKind::RenewSent {
                process: proc(client),
                lock: lock(),
                request: ms,
                retry: false,
                staged: false,
            },
        )
    }

    pub(crate) fn build(self) -> History {
        self.h
    }
}

/// `lock()` with the watchdog.
pub(crate) fn lock_call() -> Call {
    Call::Lock { lease: None }
}

/// `tryLock(wait)`.
pub(crate) fn try_wait(ms: u64) -> Call {
    Call::TryLock {
        wait: Some(Millis(ms)),
        lease: None,
    }
}
