//! The PCT arm's schedule: a few change points in the order of a
//! client's callbacks, with a depth bound.
//!
//! PCT (Burckhardt et al., "A Randomized Scheduler with Probabilistic
//! Guarantees of Finding Bugs", as P and Coyote use it) finds a bug of
//! depth `d` (one that needs `d` ordering constraints) with probability
//! about `1/(n·k^(d-1))` by running threads at random priorities and
//! lowering the running one's at `d - 1` change points drawn among the
//! run's `k` steps, rather than perturbing every step a little. Here the
//! steps that can be reordered are a client's lock callbacks at the
//! points where Redisson's can interleave (the `interleave` fault's), and
//! the timers and replies due meanwhile. A change point is a short
//! `interleave` window at one of the scripted lock calls of a thread
//! (where its callbacks run: the call, its reply, the unlock's cancel):
//! every callback that reaches an interleave point inside it is deferred
//! by one fixed delay, so it runs after everything else due within that
//! delay, as a thread at the lowest priority would; outside the windows
//! callbacks run in Redisson's usual order. A seed draws its depth
//! (`1..=`[`MAX_DEPTH`]) and its change points from `Stream::Pct`, so
//! every other draw of the seed stays as the uniform swarm drew it, and
//! every engine carries the windows out as it carries any `interleave`.

use rand::RngExt;

use crate::model::fault::Interleave;
use crate::model::rng::{self, Stream};
use crate::{Fault, SimSpec, Step, steps};

/// The depth bound: at most this many change points a seed.
pub const MAX_DEPTH: u32 = 3;

/// The longest a change point's window lasts (ms): about one callback of
/// the client's, not a stretch of its run.
pub const MAX_WINDOW_MS: u64 = 100;

/// Adds `spec`'s change points to its plan (before the liveness phase,
/// which must start after them). A window the plan cannot take is left
/// out, as the swarm leaves out a strike.
pub(crate) fn add_change_points(spec: &mut SimSpec) {
    let calls = scripted_calls(spec);
    if calls.is_empty() {
        return;
    }
    let mut r = rng::stream(spec.seed, Stream::Pct);
    let depth = r.random_range(1..=MAX_DEPTH);
    for _ in 0..depth {
        let (client, call_ms) = calls[r.random_range(0..calls.len())];
        let delay_ms = r.random_range(50..=300);
        let fault = Fault::Interleave(Interleave {
            client: spec.clients[client].name.clone(),
            at_ms: (call_ms + r.random_range(0..=250)).saturating_sub(50),
            duration_ms: r.random_range(1..=MAX_WINDOW_MS),
            min_delay_ms: delay_ms,
            max_delay_ms: delay_ms,
        });
        spec.faults.0.push(fault);
        if crate::model::validate::validate_last_fault(spec).is_err() {
            spec.faults.0.pop();
        }
    }
}

/// When each thread's script calls the lock (acquires and unlocks, each
/// round of a repeat), by client index, in ms from the start as its
/// sleeps and work add up (a wait for the lock moves the real call later).
fn scripted_calls(spec: &SimSpec) -> Vec<(usize, u64)> {
    let mut calls = Vec::new();
    for (c, client) in spec.clients.iter().enumerate() {
        for thread in &client.threads {
            let mut at = thread.start_ms;
            instants(&thread.steps, &mut at, &mut |ms| calls.push((c, ms)));
        }
    }
    calls.retain(|(_, ms)| *ms < spec.horizon_ms);
    calls
}

/// Walks `steps` from `at`, telling `call` each lock call's instant.
fn instants(steps: &[Step], at: &mut u64, call: &mut impl FnMut(u64)) {
    for step in steps {
        match step {
            Step::Sleep(steps::Sleep { ms }) | Step::Work(steps::Work { ms }) => {
                *at = at.saturating_add(*ms);
            }
            Step::Repeat(steps::Repeat { times, steps }) => {
                for _ in 0..*times {
                    instants(steps, at, call);
                }
            }
            s if s.is_acquire() || matches!(s, Step::Unlock(_)) => call(*at),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Strategy, Workload, generate_with};

    /// A PCT seed is the uniform seed plus at most [`MAX_DEPTH`] short
    /// windows of one fixed delay each; the rest of the scenario is the
    /// uniform swarm's, and the spec is valid.
    #[test]
    fn pct_adds_at_most_depth_short_windows_to_the_uniform_seed() {
        let pct = Workload {
            strategy: Strategy::Pct,
            ..Workload::default()
        };
        let mut added = 0;
        for seed in 0..200 {
            let uniform = generate_with(seed, None, Workload::default());
            let spec = generate_with(seed, None, pct);
            assert_eq!(crate::model::validate::validate_spec(&spec), Ok(()));
            assert_eq!(
                spec.clients[..spec.clients.len() - 1],
                uniform.clients[..uniform.clients.len() - 1]
            );
            let extra: Vec<&Fault> = spec
                .faults
                .0
                .iter()
                .filter(|f| !uniform.faults.0.contains(f))
                .collect();
            assert!(extra.len() <= MAX_DEPTH as usize, "seed {seed}: {extra:?}");
            for f in &extra {
                let Fault::Interleave(i) = f else {
                    panic!("seed {seed}: {f:?}")
                };
                assert!(i.duration_ms <= MAX_WINDOW_MS);
                assert_eq!(i.min_delay_ms, i.max_delay_ms);
            }
            added += extra.len();
        }
        assert!(added > 200, "{added} change points in 200 seeds");
    }
}
