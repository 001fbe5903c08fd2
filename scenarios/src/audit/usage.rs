//! How the application uses the lock (`--usage FILE`), and the explored
//! runs tailored to it.
//!
//! ```toml
//! # Every key may be left out.
//! calls = ["lock", "try-lock"]  # the acquire calls it makes
//! lease_ms = 10000              # the lease it passes; none: the watchdog
//! wait_ms = 5000                # its tryLock wait; none: one attempt
//! work_ms = 2000                # its longest critical section
//! ```
//!
//! Without a file the audit keeps the explorer's own mix of calls, leases
//! and work. With one, every acquire of a generated run becomes one of
//! the listed calls (the nearest form: a `tryLock` stays a try where it
//! may), with the file's lease and wait, and every work step is cut to
//! `work_ms`. The liveness probe that follows the faults is the
//! harness's, and keeps its own `lock()`.

use serde::{Deserialize, Serialize};
use sim::{SimSpec, Step, steps};

use crate::{InputError, Location};

/// An acquire call, by its scenario step name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Acquire {
    /// `lock()`.
    Lock,
    /// `lockInterruptibly()`.
    LockInterruptibly,
    /// `tryLock(...)`.
    TryLock,
    /// `lockAsync()`.
    LockAsync,
    /// `tryLockAsync(...)`.
    TryLockAsync,
}

impl Acquire {
    /// The forms nearest to this one, itself first: a blocking acquire
    /// stays blocking, a try stays a try, the async API stays async,
    /// where the listed calls allow.
    fn nearest(self) -> [Acquire; 5] {
        use Acquire::*;
        match self {
            Lock => [Lock, LockInterruptibly, LockAsync, TryLock, TryLockAsync],
            LockInterruptibly => [LockInterruptibly, Lock, LockAsync, TryLock, TryLockAsync],
            TryLock => [TryLock, TryLockAsync, Lock, LockInterruptibly, LockAsync],
            LockAsync => [LockAsync, Lock, LockInterruptibly, TryLockAsync, TryLock],
            TryLockAsync => [TryLockAsync, TryLock, LockAsync, Lock, LockInterruptibly],
        }
    }

    /// The step's form, if it acquires.
    fn of(step: &Step) -> Option<Acquire> {
        Some(match step {
            Step::Lock(_) => Acquire::Lock,
            Step::LockInterruptibly(_) => Acquire::LockInterruptibly,
            Step::TryLock(_) => Acquire::TryLock,
            Step::LockAsync(_) => Acquire::LockAsync,
            Step::TryLockAsync(_) => Acquire::TryLockAsync,
            _ => return None,
        })
    }

    /// Its scenario step name: `try-lock`.
    pub fn name(self) -> &'static str {
        match self {
            Acquire::Lock => "lock",
            Acquire::LockInterruptibly => "lock-interruptibly",
            Acquire::TryLock => "try-lock",
            Acquire::LockAsync => "lock-async",
            Acquire::TryLockAsync => "try-lock-async",
        }
    }

    /// The step of this form.
    fn step(self, wait_ms: Option<u64>, lease_ms: Option<u64>) -> Step {
        match self {
            Acquire::Lock => Step::Lock(steps::Lock { lease_ms }),
            Acquire::LockInterruptibly => {
                Step::LockInterruptibly(steps::LockInterruptibly { lease_ms })
            }
            Acquire::TryLock => Step::TryLock(steps::TryLock { wait_ms, lease_ms }),
            Acquire::LockAsync => Step::LockAsync(steps::LockAsync { lease_ms }),
            Acquire::TryLockAsync => Step::TryLockAsync(steps::TryLockAsync { wait_ms, lease_ms }),
        }
    }

    /// Whether it is a `tryLock` form (it takes a wait).
    fn tries(self) -> bool {
        matches!(self, Acquire::TryLock | Acquire::TryLockAsync)
    }
}

/// The usage file, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// The acquire calls the application makes; none listed: all of them.
    #[serde(default)]
    pub calls: Vec<Acquire>,
    /// The lease it passes, in ms; none: the watchdog.
    #[serde(default)]
    pub lease_ms: Option<u64>,
    /// The wait of its `tryLock` calls, in ms; none: one attempt.
    #[serde(default)]
    pub wait_ms: Option<u64>,
    /// Its longest critical section, in ms.
    #[serde(default)]
    pub work_ms: Option<u64>,
}

impl Usage {
    /// Parses a usage file; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Usage, InputError> {
        let usage: Usage =
            toml::from_str(text).map_err(|e| crate::location::malformed(text, origin, &e))?;
        let invalid = |field: &str, message: String| InputError::Invalid {
            origin: origin.to_owned(),
            location: Some(Location::of_path(text, field)),
            message,
        };
        for (field, ms, min) in [
            ("lease_ms", usage.lease_ms, 1),
            ("wait_ms", usage.wait_ms, 1),
            ("work_ms", usage.work_ms, 0),
        ] {
            if let Some(ms) = ms
                && !(min..=sim::MAX_HORIZON_MS).contains(&ms)
            {
                let max = sim::MAX_HORIZON_MS;
                let why = format!("must be between {min} and {max} ms (a day), got {ms}");
                return Err(invalid(field, why));
            }
        }
        Ok(usage)
    }
}

/// What the audit does to each explored run's scripts: nothing without a
/// usage file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Tailor(pub Option<Usage>);

impl Tailor {
    /// `spec`'s scripts as the application would run them (the probe
    /// client's aside).
    pub fn apply(&self, spec: &mut SimSpec) {
        let Some(usage) = &self.0 else { return };
        for c in spec.clients.iter_mut().filter(|c| c.name != sim::PROBE) {
            for t in &mut c.threads {
                tailor_steps(usage, &mut t.steps);
            }
        }
    }
}

fn tailor_steps(usage: &Usage, list: &mut [Step]) {
    for step in list {
        if let Step::Repeat(r) = step {
            tailor_steps(usage, &mut r.steps);
        } else if let Step::Work(w) = step {
            w.ms = usage.work_ms.map_or(w.ms, |most| w.ms.min(most));
        } else if let Some(form) = Acquire::of(step) {
            let form = form
                .nearest()
                .into_iter()
                .find(|f| usage.calls.is_empty() || usage.calls.contains(f))
                .unwrap_or(form);
            let wait_ms = form.tries().then_some(usage.wait_ms).flatten();
            *step = form.step(wait_ms, usage.lease_ms);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each acquire takes the nearest listed form with the file's lease
    /// and wait; work is cut to the longest critical section.
    #[test]
    fn scripts_take_the_listed_calls() {
        let usage = Usage {
            calls: vec![Acquire::TryLock],
            lease_ms: None,
            wait_ms: Some(5_000),
            work_ms: Some(100),
        };
        let mut list = vec![
            Step::Lock(steps::Lock {
                lease_ms: Some(9_000),
            }),
            Step::Repeat(steps::Repeat {
                times: 2,
                steps: vec![
                    Step::LockAsync(steps::LockAsync { lease_ms: None }),
                    Step::Work(steps::Work { ms: 700 }),
                ],
            }),
        ];
        tailor_steps(&usage, &mut list);
        let try_lock = Step::TryLock(steps::TryLock {
            wait_ms: Some(5_000),
            lease_ms: None,
        });
        assert_eq!(list[0], try_lock);
        let Step::Repeat(r) = &list[1] else {
            panic!("{list:?}")
        };
        assert_eq!(r.steps, vec![try_lock, Step::Work(steps::Work { ms: 100 })]);
    }

    /// A usage file names a call as its scenario step is named.
    #[test]
    fn each_call_is_named_as_its_step() {
        use Acquire::*;
        for a in [Lock, LockInterruptibly, TryLock, LockAsync, TryLockAsync] {
            assert_eq!(a.step(None, None).name(), a.name());
            assert_eq!(serde_json::to_value(a).expect("json"), a.name());
        }
    }

    /// A bad usage file names the key and its line.
    #[test]
    fn a_bad_usage_file_names_the_key() {
        let err = Usage::parse("calls = [\"grab\"]\n", "usage.toml").unwrap_err();
        assert!(err.to_string().contains("unknown variant `grab`"), "{err}");
        let err = Usage::parse("work_ms = 1\nlease_ms = 0\n", "usage.toml").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("line 2") && text.contains("lease_ms"),
            "{text}"
        );
    }
}
