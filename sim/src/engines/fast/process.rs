//! A client process: one lockcore client, its threads, timers and state.

use std::rc::Rc;
use std::sync::Arc;

use lockcore::{
    Call, LockClient, LockName, Millis, MultiLock, RequestId, ThreadId, TimerId, VecMap,
};

use crate::engines::fast::clock::LocalClock;
use crate::engines::fast::world::Ev;
use crate::model::history::{Proc, Who};
use crate::model::script::{Cursor, Program};

/// One thread of a process.
#[derive(Debug)]
pub(crate) struct Thread {
    /// The lock its lock steps use.
    pub(crate) lock: LockName,
    /// When it starts, relative to its process's start, in ms.
    pub(crate) start_ms: u64,
    pub(crate) program: Rc<Program>,
    pub(crate) cursor: Cursor,
    /// The call it waits on, and where to go if it fails.
    pub(crate) pending: Option<(Call, usize)>,
    /// How many holds it believes it has on its lock (re-entrancy).
    pub(crate) holds: u32,
    /// The fencing token its last acquisition returned (`fenced`), kept
    /// until its own unlock: an application attaches the token it was
    /// given to its writes, even after the lock was lost behind its back.
    pub(crate) token: Option<u64>,
    /// Whether it waits for a work/sleep step to finish.
    pub(crate) sleeping: bool,
    /// An `interrupt` fault armed for its next acquiring call: this many
    /// ms after the call starts.
    pub(crate) interrupt_after: Option<u64>,
    pub(crate) done: bool,
    /// The multi-lock its lock steps call, when it has one; `holds` and
    /// `token` are then unused, and its beliefs are per lock.
    pub(crate) multi: Option<Rc<MultiLock>>,
    /// A multi-lock thread's beliefs, per lock.
    pub(crate) parts: crate::engines::parts::Parts,
}

impl Thread {
    pub(crate) fn new(lock: LockName, start_ms: u64, program: Rc<Program>) -> Thread {
        Thread {
            lock,
            start_ms,
            program,
            cursor: Cursor::default(),
            pending: None,
            holds: 0,
            token: None,
            sleeping: false,
            interrupt_after: None,
            done: false,
            multi: None,
            parts: Default::default(),
        }
    }

    /// The same thread, calling `multi` with its lock steps.
    pub(crate) fn with_multi(mut self, multi: Option<MultiLock>) -> Thread {
        self.multi = multi.map(Rc::new);
        self
    }

    /// The same thread, back at the start of its script.
    pub(crate) fn restarted(&self) -> Thread {
        let thread = Thread::new(self.lock.clone(), self.start_ms, self.program.clone());
        Thread {
            multi: self.multi.clone(),
            ..thread
        }
    }
}

/// One client process (across its lives: a restart replaces the machine
/// and resets the threads).
#[derive(Debug)]
pub(crate) struct Process {
    pub(crate) name: Arc<str>,
    pub(crate) life: u32,
    pub(crate) alive: bool,
    pub(crate) watchdog_ms: u64,
    pub(crate) machine: LockClient,
    pub(crate) threads: Vec<Thread>,
    /// Timers set and not yet fired or cancelled, with their deadlines
    /// on the process's clock.
    pub(crate) timers: VecMap<TimerId, Millis>,
    /// Its wall clock (true time unless a clock fault moves it); it
    /// survives a crash, as the machine's clock does.
    pub(crate) clock: LocalClock,
    /// Renewals sent and not answered, by request: their replies are
    /// recorded, late ones included.
    pub(crate) renewals: VecMap<RequestId, crate::engines::fast::renewal::Locks>,
    /// Topology scans (`CLUSTER NODES`) sent and not answered: what
    /// becomes of them is not recorded, as they concern no lock.
    pub(crate) scans: VecMap<RequestId, ()>,
    /// Open stop-the-world pauses (they may overlap).
    pub(crate) paused: u32,
    /// Events that fell due during a pause, in their original order.
    pub(crate) deferred: Vec<Ev>,
    /// The `interleave` fault whose window is open (its index) and its
    /// delay range.
    pub(crate) interleave: Option<(usize, u64, u64)>,
}

impl Process {
    pub(crate) fn proc(&self) -> Proc {
        Proc {
            client: self.name.clone(),
            life: self.life,
        }
    }

    pub(crate) fn who(&self, thread: usize) -> Who {
        Who {
            client: self.name.clone(),
            life: self.life,
            thread: thread as u64 + 1,
        }
    }
}

/// lockcore's id for thread index `t` (Redisson thread ids start at 1).
pub(crate) fn thread_id(t: usize) -> ThreadId {
    ThreadId(t as u64 + 1)
}
