//! Hosted engines: the spec run by the code a user ships.
//!
//! Each client process is lockcore's async client ([`lockcore::RedissonClient`]
//! over [`lockcore::RespTransport`]) whose threads' scripts drive the async
//! API ([`lockcore::RLock::call`]); it speaks RESP to a Redis. Two engines:
//!
//! - `tcp` (`crate::run_turmoil`): every process and Redis (fake-redis's real
//!   RESP server) is a turmoil host on simulated TCP, in simulated time;
//!   deterministic.
//! - `real` (`crate::run_real`): the processes run on a tokio runtime in real
//!   time against a real `redis-server`, the spec sped up by a time scale;
//!   not deterministic.
//!
//! Both gather the history the fast engine records (lockcore's
//! [`lockcore::Tracer`] on each client; Redis observed through fake-redis's
//! command hook, or through `MONITOR` replayed on a shadow fake-redis) and
//! hand it to the same checkers and oracle (`crate::run`).
//!
//! - `bare`: the bare turmoil program the turmoil engine is benchmarked
//!   against.
//! - `action`: the fault plan as actions, and the kinds each engine refuses.
//! - `gate`: pausing a process's code or Redis's reading.
//! - `recorder`: the history's records, from every source.
//! - `process`: one client process (connect, threads, pause gate).
//! - `local_time`: a client's wall clock, for `clock-skew` and
//!   `clock-drift`.
//! - `thread`: one thread's script over the async API.
//! - `monitor`: reading a real Redis's `MONITOR` onto a shadow.
//! - `spawn`: a `redis-server` started for a run.
//! - `proxy`: the loopback proxy that injects network faults against a
//!   real Redis.

/// The verbs both hosted engines carry out alike, on the client's
/// process (its `Slot`, in `self.slots`), inside an `impl Effects`.
macro_rules! slot_verbs {
    () => {
        fn pause_client(&mut self, s: &Strike, on: bool) {
            self.slots[s.client].borrow().pause(on);
        }

        fn starve(&mut self, s: &Strike, range_ms: Option<(u64, u64)>) {
            self.slots[s.client].borrow().starve(s.i, range_ms);
        }

        fn interleave(&mut self, s: &Strike, range_ms: Option<(u64, u64)>) {
            self.slots[s.client].borrow().interleave(s.i, range_ms);
        }

        fn interrupt(&mut self, s: &Strike, thread: usize, after_call_ms: Option<u64>) {
            self.slots[s.client]
                .borrow()
                .interrupt(thread, after_call_ms);
        }

        fn step_clock(&mut self, s: &Strike, ms: i64) {
            self.slots[s.client].borrow().step_clock(s.at, ms);
        }

        fn drift_clock(&mut self, s: &Strike, ppm: i64) {
            self.slots[s.client].borrow().drift_clock(s.at, ppm);
        }
    };
}

mod action;
mod bare;
mod delay;
mod gate;
mod lateness;
mod local_time;
mod monitor;
mod process;
mod proxy;
mod real;
mod recorder;
mod spawn;
mod tcp;
mod thread;

pub(crate) use action::{Kinds, plan, takes};
pub use action::{REDIS_FAULTS, TURMOIL_FAULTS};
pub use bare::{BareRun, run_turmoil_bare};
pub(crate) use real::play as play_real;
pub(crate) use real::refusal as real_refusal;
pub use real::{REAL_DELAY_MS, RealRedis, RedisTarget};
pub(crate) use tcp::play as play_turmoil;
