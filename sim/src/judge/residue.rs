//! Residue: what a run leaves in Redis that no invariant forbids but that
//! a user pays for, reported apart from the violations (it breaks no
//! safety or liveness promise, so it is no finding's cause and no
//! defect's).
//!
//! The one kind so far: the token key `redisson_lock_token:{K}` of
//! Redisson's `RFencedLock`. Every acquire the fenced lock's scripts
//! answer as taken `INCR`s it, and nothing in Redisson (3.19.0 to 4.7.0)
//! ever gives it a TTL or deletes it but `RFencedLock.delete()`: one key
//! per lock name for ever (#6510, open upstream: 25 million such keys in
//! one production database). The judge reads it from the history: the
//! last change of K's holder or count that an acquire made (the `INCR`
//! ran in the same script), unless Redis lost its data after it (a
//! restart without persistence, a failover, which the history records as
//! such).

use lockcore::{LockKind, LockName, Purpose, VecMap};
use serde::{Deserialize, Serialize};

use crate::model::history::{RecordKind, ServerCause};
use crate::{History, SimTime};

/// The upstream issue that reports the fenced lock's token keys.
pub const TOKEN_KEY_ISSUE: &str = "#6510";

/// A key a run left in Redis without a TTL, and the upstream issue that
/// reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Residue {
    /// The key, as Redis names it.
    pub key: String,
    /// The lock it belongs to.
    pub lock: LockName,
    /// The upstream issue (open: no release fixes it).
    pub upstream: String,
    /// When the key last changed (its last `INCR`).
    pub at: SimTime,
    /// The history record of that change.
    pub event: usize,
}

impl std::fmt::Display for Residue {
    /// `redisson_lock_token:{l} left without a TTL (last INCR at 1.2s,
    /// event 7; #6510, open upstream)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} left without a TTL (last INCR at {}, event {}; {}, open upstream)",
            self.key, self.at, self.event, self.upstream
        )
    }
}

/// The fenced locks' token keys `history` leaves behind, by lock. Redis's
/// view of a key ([`RecordKind::Server`]) names the key alone, so the
/// keys that are fenced locks are those a thread called a fenced lock on.
pub(crate) fn residue(history: &History) -> Vec<Residue> {
    let mut fenced: VecMap<&str, &LockName> = VecMap::new();
    for r in &history.records {
        if let RecordKind::Call { lock, .. } = &r.kind
            && lock.kind() == LockKind::Fenced
        {
            fenced.insert(lock.as_str(), lock);
        }
    }
    let mut last: VecMap<&str, Option<(usize, SimTime)>> = VecMap::new();
    for (i, r) in history.records.iter().enumerate() {
        let RecordKind::Server {
            lock,
            holder,
            cause,
            ..
        } = &r.kind
        else {
            continue;
        };
        let key = lock.as_str();
        if fenced.get(&key).is_none() {
            continue;
        }
        match cause {
            ServerCause::Command {
                purpose: Purpose::Acquire,
                ..
            } if holder.is_some() => {
                last.insert(key, Some((i, r.at)));
            }
            ServerCause::Restart | ServerCause::Failover => {
                last.insert(key, None);
            }
            _ => {}
        }
    }
    last.iter()
        .filter_map(|(key, seen)| {
            let (event, at) = (*seen)?;
            let lock = *fenced.get(key)?;
            Some(Residue {
                key: token_key(lock),
                lock: lock.clone(),
                upstream: TOKEN_KEY_ISSUE.to_owned(),
                at,
                event,
            })
        })
        .collect()
}

/// `redisson_lock_token:{K}` (K unchanged when it has a hash tag).
fn token_key(lock: &LockName) -> String {
    let name = lock.as_str();
    if name.contains('{') {
        format!("redisson_lock_token:{name}")
    } else {
        format!("redisson_lock_token:{{{name}}}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::check::sample::{Sample, proc, who};
    use crate::model::history::Who;

    fn server(lock: &LockName, holder: Option<Who>, cause: ServerCause) -> RecordKind {
        RecordKind::Server {
            lock: lock.clone(),
            count: i64::from(holder.is_some()),
            holder,
            shared: false,
            ttl_ms: 30_000,
            cause,
        }
    }

    fn call(lock: &LockName) -> RecordKind {
        RecordKind::Call {
            who: who("A", 1),
            lock: lock.clone(),
            call: lockcore::Call::Lock { lease: None },
        }
    }

    fn acquired() -> ServerCause {
        ServerCause::Command {
            by: proc("A"),
            purpose: Purpose::Acquire,
        }
    }

    /// A fenced lock taken and released leaves its token key; an `RLock`
    /// leaves nothing.
    #[test]
    fn a_fenced_acquire_leaves_its_token_key() {
        let fenced = LockName::of_kind("l", LockKind::Fenced).unwrap();
        let plain = LockName::new("p").unwrap();
        let unlocked = ServerCause::Command {
            by: proc("A"),
            purpose: Purpose::Unlock,
        };
        let key = LockName::new("l").unwrap();
        let h = Sample::new(5)
            .at(0, call(&fenced))
            .at(10, server(&key, Some(who("A", 1)), acquired()))
            .at(20, server(&plain, Some(who("A", 2)), acquired()))
            .at(30, server(&key, None, unlocked))
            .build();
        let left = residue(&h);
        assert_eq!(left.len(), 1, "{left:?}");
        assert_eq!(left[0].key, "redisson_lock_token:{l}");
        assert_eq!(left[0].event, 1);
        assert_eq!(left[0].upstream, "#6510");
    }

    /// A Redis restart without persistence after the last acquire took the
    /// key with it: nothing is left.
    #[test]
    fn a_restart_after_the_last_acquire_leaves_nothing() {
        let fenced = LockName::of_kind("l", LockKind::Fenced).unwrap();
        let key = LockName::new("l").unwrap();
        let h = Sample::new(5)
            .at(0, call(&fenced))
            .at(10, server(&key, Some(who("A", 1)), acquired()))
            .at(20, server(&key, None, ServerCause::Restart))
            .build();
        assert!(residue(&h).is_empty());
    }
}
