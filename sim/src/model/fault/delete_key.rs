//! `delete-key`: someone other than the lock deletes (or evicts) its key,
//! or one of the keys its Redisson object keeps beside it.

use lockcore::LockName;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Invalid, Kind, Strike};

/// The lock's key is deleted by another Redis client (a `DEL`, a
/// `FLUSHDB`, an eviction under `maxmemory`): no unlock message is
/// published, so waiters sleep on the TTL they last read. With `key`, one
/// of the fair lock's own keys goes instead: an eviction under an
/// `allkeys-*` policy takes any key, and Redisson gives the fair lock's
/// queue and timeout set no TTL, so they are the keys that stay in memory
/// longest (#4153, #5989 and #2513 report fair-lock scripts failing on a
/// queued thread without a deadline).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteKey {
    /// When.
    pub at_ms: u64,
    /// The lock whose key goes.
    #[serde(default = "default_lock")]
    #[schemars(with = "String", length(min = 1))]
    pub lock: LockName,
    /// Which of the lock's keys goes.
    #[serde(default, skip_serializing_if = "LockKey::is_lock")]
    pub key: LockKey,
}

/// A key of a lock's Redisson object that a `delete-key` can take.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum LockKey {
    /// The lock's own key K (its hash).
    #[default]
    Lock,
    /// `redisson_lock_queue:{K}`: the fair lock's list of waiters.
    Queue,
    /// `redisson_lock_timeout:{K}`: the fair lock's waiters' deadlines.
    TimeoutSet,
}

impl LockKey {
    /// The fair lock's keys a delete can take, in the order explore
    /// draws from them.
    pub const FAIR: [LockKey; 3] = [LockKey::Lock, LockKey::Queue, LockKey::TimeoutSet];

    fn is_lock(&self) -> bool {
        *self == LockKey::Lock
    }

    /// The key's name in Redis for `lock` (Redisson's `prefixName`: the
    /// lock's name in braces, or as it is when it has a hash tag).
    pub fn name(self, lock: &LockName) -> String {
        let braced = crate::model::leftover::braced(lock);
        match self {
            LockKey::Lock => lock.as_str().to_owned(),
            LockKey::Queue => format!("redisson_lock_queue:{braced}"),
            LockKey::TimeoutSet => format!("redisson_lock_timeout:{braced}"),
        }
    }
}

fn default_lock() -> LockName {
    LockName::new(crate::DEFAULT_LOCK).unwrap_or_else(|_| unreachable!())
}

impl Kind for DeleteKey {
    fn at_ms(&self) -> u64 {
        self.at_ms
    }

    fn end_ms(&self) -> Option<u64> {
        None
    }

    fn check(&self, _horizon_ms: u64) -> Result<(), Invalid> {
        let name = self.lock.as_str();
        if name.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err((
                "lock",
                format!("lock name {name:?} must not contain spaces or control characters"),
            ));
        }
        Ok(())
    }

    fn text(&self) -> String {
        format!("delete key {}", self.key.name(&self.lock))
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.delete_key(s, &self.lock, &self.key.name(&self.lock));
    }
}

pub(crate) fn generate(_r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::DeleteKey(DeleteKey {
        at_ms: d.at_ms,
        lock: default_lock(),
        key: LockKey::Lock,
    })
}

#[cfg(test)]
mod tests {
    use crate::model::history::{RecordKind, ServerCause};
    use crate::run::tests::{client, never_unlock, spec, thread};
    use crate::{Fault, FaultPlan, Invariant, run};

    use super::*;

    /// The holder's key is deleted at 5 s: Redis shows the lock free
    /// (deleted), the watchdog's next renewal finds nothing, and B, which
    /// was not woken (no unlock message), takes the lock while A still
    /// believes it holds it.
    #[test]
    fn deleting_the_key_frees_the_lock_without_a_message() {
        let mut s = spec(vec![
            client("A", vec![thread(0, never_unlock())]),
            client("B", vec![thread(1_000, never_unlock())]),
        ]);
        s.horizon_ms = 40_000;
        s.faults = FaultPlan(vec![Fault::DeleteKey(DeleteKey {
            at_ms: 5_000,
            lock: default_lock(),
            key: LockKey::Lock,
        })]);
        let r = run(&s).expect("valid");
        let h = &r.history;
        assert!(
            h.records.iter().any(|rec| matches!(
                &rec.kind,
                RecordKind::Server {
                    holder: None,
                    cause: ServerCause::Deleted,
                    ..
                }
            ) && rec.at == crate::SimTime::from_ms(5_000)),
            "{h}"
        );
        assert!(
            h.to_string().contains("redisson:lock free (deleted)"),
            "{h}"
        );
        assert!(
            r.violations
                .iter()
                .any(|v| v.invariant == Invariant::MutualExclusion),
            "{h}"
        );
    }
}
