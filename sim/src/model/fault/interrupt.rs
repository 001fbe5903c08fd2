//! `interrupt`: another thread calls `Thread.interrupt()` on one of a
//! client's threads (a request cancelled by its framework, an executor
//! shut down with `shutdownNow`, a `Future.cancel(true)`).

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Invalid, Kind, Strike};
use crate::SimSpec;

/// Thread `thread` (1-based, as timelines write `A/t1`) of `client` is
/// interrupted at `at_ms`, or, with `after_call_ms`, that long after the
/// start of its first acquiring call at or after `at_ms` (a framework
/// that cancels a request a moment after it began: the likeliest way to
/// catch an acquire on the wire). Its `lock-interruptibly` or `try-lock` ends with
/// an interrupt wherever it waits, a `lock` only during a round trip (as
/// in Redisson); the acquire script it already sent still runs on Redis,
/// and what the late reply does depends on the release (lockcore's
/// `interrupt-cancels-acquire`). A thread working, sleeping or between
/// calls is not affected: locksim does not keep Java's interrupt flag for
/// a later call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Interrupt {
    /// The client.
    pub client: String,
    /// The thread, from 1.
    #[schemars(range(min = 1, max = crate::MAX_THREADS))]
    pub thread: u32,
    /// When (or from when, with `after_call_ms`).
    pub at_ms: u64,
    /// Interrupt this long into the thread's next acquiring call instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = crate::MAX_DELAY_MS))]
    pub after_call_ms: Option<u64>,
}

impl Kind for Interrupt {
    fn client(&self) -> Option<&str> {
        Some(&self.client)
    }

    fn at_ms(&self) -> u64 {
        self.at_ms
    }

    fn end_ms(&self) -> Option<u64> {
        None
    }

    fn check(&self, _horizon_ms: u64) -> Result<(), Invalid> {
        match self.after_call_ms {
            Some(d) => super::range("after_call_ms", 0, d),
            None => Ok(()),
        }
    }

    fn check_plan(&self, _i: usize, spec: &SimSpec) -> Result<(), Invalid> {
        let threads = spec
            .clients
            .iter()
            .find(|c| c.name == self.client)
            .map_or(0, |c| c.threads.len());
        if self.thread == 0 || self.thread as usize > threads {
            return Err((
                "thread",
                format!(
                    "client {} has thread(s) 1 to {threads}; got {}",
                    self.client, self.thread
                ),
            ));
        }
        Ok(())
    }

    fn text(&self) -> String {
        match self.after_call_ms {
            Some(d) => format!(
                "interrupt {}/t{} {d}ms into its next acquire",
                self.client, self.thread
            ),
            None => format!("interrupt {}/t{}", self.client, self.thread),
        }
    }

    fn excuses(&self) -> bool {
        false
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.interrupt(s, self.thread as usize - 1, self.after_call_ms);
    }
}

pub(crate) fn generate(r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::Interrupt(Interrupt {
        client: d.client,
        thread: r.random_range(1..=d.threads.max(1)),
        at_ms: d.at_ms,
        after_call_ms: r.random_bool(0.75).then(|| r.random_range(0..=6)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::tests::{client, spec, thread};
    use crate::steps;
    use crate::{FaultPlan, Invariant, Step, run};

    /// A's `lockInterruptibly()` is interrupted 1 ms after it sends its
    /// acquire (latency 2-4 ms, so the script runs on Redis after); B
    /// then wants the lock. Returns the invariants broken.
    fn interrupted_run(release: &str, thread_no: u32) -> Result<Vec<Invariant>, String> {
        let interrupt = Interrupt {
            client: "A".into(),
            thread: thread_no,
            at_ms: 1,
            after_call_ms: None,
        };
        run_with(release, 0, interrupt)
    }

    /// The same, A's thread starting at `start_ms`.
    fn run_with(
        release: &str,
        start_ms: u64,
        interrupt: Interrupt,
    ) -> Result<Vec<Invariant>, String> {
        let mut s = spec(vec![
            client(
                "A",
                vec![thread(
                    start_ms,
                    vec![
                        Step::LockInterruptibly(steps::LockInterruptibly { lease_ms: None }),
                        Step::Work(steps::Work { ms: 100 }),
                        Step::Unlock(steps::Unlock {}),
                    ],
                )],
            ),
            client(
                "B",
                vec![thread(
                    2_000,
                    vec![
                        Step::Lock(steps::Lock { lease_ms: None }),
                        Step::Unlock(steps::Unlock {}),
                    ],
                )],
            ),
        ]);
        s.profile = release.parse().unwrap();
        s.latency = crate::LatencyRange {
            min_ms: 2,
            max_ms: 4,
        };
        s.horizon_ms = 120_000;
        s.faults = FaultPlan(vec![Fault::Interrupt(interrupt)]);
        let r = run(&s).map_err(|e| e.to_string())?;
        Ok(r.violations.iter().map(|v| v.invariant).collect())
    }

    /// Redisson #2714 and its return in 3.20.1 (#5358): the acquire that
    /// ran after its thread gave up is renewed for ever under 3.16.2 and
    /// 4.7.0, so B never gets the lock; 3.16.3 and `fenced` (PR #7277's
    /// fix) let it go.
    #[test]
    fn an_interrupted_acquire_leaves_the_lock_behind_by_release() {
        for (release, stuck) in [
            ("3.16.2", true),
            ("3.16.3", false),
            ("3.20.1", true),
            ("4.7.0", true),
            ("fenced", false),
        ] {
            let broken = interrupted_run(release, 1).unwrap();
            assert_eq!(
                broken.contains(&Invariant::Liveness),
                stuck,
                "{release}: {broken:?}"
            );
        }
    }

    /// Armed at 0 ms, the interrupt waits for A's call at 1 500 ms and
    /// strikes 1 ms into it, while the acquire is on the wire.
    #[test]
    fn after_call_ms_strikes_the_next_acquire() {
        let armed = |after| Interrupt {
            client: "A".into(),
            thread: 1,
            at_ms: 0,
            after_call_ms: Some(after),
        };
        let broken = run_with("4.7.0", 1_500, armed(1)).unwrap();
        assert!(broken.contains(&Invariant::Liveness), "{broken:?}");
        // 50 ms in, A holds the lock and is working: nothing to interrupt.
        assert_eq!(run_with("4.7.0", 1_500, armed(50)).unwrap(), vec![]);
    }

    /// A thread the client does not have is refused, naming the range.
    #[test]
    fn an_unknown_thread_is_refused() {
        let err = interrupted_run("4.7.0", 2).unwrap_err();
        assert!(err.contains("thread(s) 1 to 1; got 2"), "{err}");
        let err = interrupted_run("4.7.0", 0).unwrap_err();
        assert!(err.contains("got 0"), "{err}");
    }
}
