//! `delete-key`: someone other than the lock deletes (or evicts) its key.

use lockcore::LockName;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Invalid, Kind, Strike};

/// The lock's key is deleted by another Redis client (a `DEL`, a
/// `FLUSHDB`, an eviction under `maxmemory`): no unlock message is
/// published, so waiters sleep on the TTL they last read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteKey {
    /// When.
    pub at_ms: u64,
    /// The lock whose key goes.
    #[serde(default = "default_lock")]
    #[schemars(with = "String", length(min = 1))]
    pub lock: LockName,
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
        format!("delete key {}", self.lock)
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.delete_key(s, &self.lock);
    }
}

pub(crate) fn generate(_r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::DeleteKey(DeleteKey {
        at_ms: d.at_ms,
        lock: default_lock(),
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
