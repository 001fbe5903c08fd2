//! A thread's multi-lock: `multi = { kind = "red-lock", locks = ["a",
//! "b", "c"] }` on a thread makes its `lock`, `lock-interruptibly`,
//! `try-lock` and `unlock` steps calls of Redisson's `RedissonMultiLock`
//! or `RedissonRedLock` over those locks (lockcore's
//! [`LockClient::call_multi`](lockcore::LockClient::call_multi)). Each
//! lock is an `RLock` of its own key; the multi-lock's own calls to them
//! are recorded as the thread's calls, and its beliefs are per lock.

use lockcore::{Call, LockName, MultiKind, MultiLock};
use serde::{Deserialize, Serialize};

use crate::model::step::Step;

/// How many locks a multi-lock may name.
pub const MAX_MULTI_LOCKS: usize = 8;

/// A thread's multi-lock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MultiSpec {
    /// `multi-lock` (`getMultiLock`: every lock) or `red-lock`
    /// (`RedissonRedLock`: a majority).
    #[schemars(with = "MultiKindName")]
    pub kind: MultiKind,
    /// Its locks, in the order its acquire takes them.
    #[schemars(with = "Vec<String>", length(min = 1, max = MAX_MULTI_LOCKS))]
    pub locks: Vec<LockName>,
}

/// The schema's words for [`MultiSpec::kind`].
#[derive(schemars::JsonSchema)]
#[allow(dead_code)]
enum MultiKindName {
    /// `RedissonMultiLock`.
    #[serde(rename = "multi-lock")]
    MultiLock,
    /// `RedissonRedLock`.
    #[serde(rename = "red-lock")]
    RedLock,
}

impl MultiSpec {
    /// The multi-lock object (validation refused what it would refuse).
    pub fn multi_lock(&self) -> Option<MultiLock> {
        MultiLock::new(self.kind, self.locks.clone()).ok()
    }

    /// What is wrong with it, for a thread running `steps`: no lock or
    /// too many, a name twice or with spaces, and a step a multi-lock has
    /// no form of.
    pub(crate) fn check(&self, steps: &[Step]) -> Result<(), (&'static str, String)> {
        if self.locks.is_empty() || self.locks.len() > MAX_MULTI_LOCKS {
            let n = self.locks.len();
            return Err((
                "locks",
                format!("a multi-lock names 1 to {MAX_MULTI_LOCKS} locks, got {n}"),
            ));
        }
        if let Some(lock) = self.locks.iter().find(|l| {
            l.as_str()
                .chars()
                .any(|ch| ch.is_whitespace() || ch.is_control())
        }) {
            return Err((
                "locks",
                format!(
                    "lock name {:?} must not contain spaces or control characters",
                    lock.as_str()
                ),
            ));
        }
        if let Err(error) = MultiLock::new(self.kind, self.locks.clone()) {
            return Err(("locks", error.to_string()));
        }
        match steps_without_form(steps) {
            Some(name) => Err((
                "steps",
                format!(
                    "a {} thread runs lock, lock-interruptibly, try-lock (blocking, RLock), unlock, work, sleep and repeat steps; `{name}` has no form on it",
                    self.kind.name()
                ),
            )),
            None => Ok(()),
        }
    }
}

/// The first step (its name) a multi-lock thread cannot run.
fn steps_without_form(steps: &[Step]) -> Option<&'static str> {
    for step in steps {
        let kind = step.kind();
        let fits = match kind.call() {
            Some(call) => {
                fits(&call) && kind.object().is_none_or(|o| o == lockcore::LockKind::Lock)
            }
            None => !matches!(step, Step::Write(_)),
        };
        if !fits {
            return Some(step.name());
        }
        if let Some(name) = steps_without_form(step.body()) {
            return Some(name);
        }
    }
    None
}

/// Whether a multi-lock has `call` (lockcore's `call_multi`).
fn fits(call: &Call) -> bool {
    matches!(
        call,
        Call::Lock { .. } | Call::LockInterruptibly { .. } | Call::TryLock { .. } | Call::Unlock
    )
}
