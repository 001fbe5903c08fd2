//! Which of several independent masters serves a lock.
//!
//! A `RedissonRedLock` (or a `RedissonMultiLock`) is most often built over
//! locks of several `RedissonClient`s, each connected to a Redis of its
//! own (`redisson1.getLock("a")`, `redisson2.getLock("b")`, ...): the
//! masters share nothing, and a majority of them holding the lock is the
//! red lock's whole claim. A locksim client with `masters` set stands for
//! those instances in one JVM: each lock is served by the master its
//! [`Placement`] names, each master is reached as a single server, and
//! from 3.44.0 each instance's watchdog renews its own locks on a chain
//! of its own. The instances' ids are one id here: their keys are on
//! different servers, so nothing can tell.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{Shard, shard_of};

/// The master of each lock, by its name (a read and a write lock on one
/// key are on one master); a lock not named is on master 0.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Placement(BTreeMap<String, u16>);

impl Placement {
    /// Locks on the masters they are paired with.
    pub fn new(placed: impl IntoIterator<Item = (String, u16)>) -> Placement {
        Placement(placed.into_iter().collect())
    }

    /// Whether every lock is on master 0.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The named locks and their masters, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u16)> {
        self.0.iter().map(|(name, &m)| (name.as_str(), m))
    }

    /// The master that serves `name`, a lock's key or a channel or key
    /// made from it. Names on independent masters have no brace
    /// (`Config` refuses one placed with a brace), so a name with one is
    /// made from the lock between its first braces (`prefixName`,
    /// `suffixName`); a name without is a lock.
    pub fn master_of(&self, name: &str) -> Shard {
        let lock = match name.split_once('{') {
            Some((_, rest)) => rest.split_once('}').map_or(rest, |(tag, _)| tag),
            None => name,
        };
        Shard(self.0.get(lock).copied().unwrap_or(0))
    }
}

/// The master a command on `name` goes to: in a cluster of `shards`
/// masters the one serving its slot ([`shard_of`]), else the one
/// `placement` names (0 with a single server).
pub fn route(shards: u16, placement: &Placement, name: &str) -> Shard {
    if shards > 0 {
        return shard_of(shards, name);
    }
    placement.master_of(name)
}

#[cfg(test)]
mod tests {
    use super::{Placement, route};
    use crate::{LockKind, LockName, Shard};

    fn placed() -> Placement {
        Placement::new([("b".to_owned(), 1), ("c".to_owned(), 2)])
    }

    /// A lock's key, its channels and every key made from it go to the
    /// lock's master.
    #[test]
    fn every_key_of_a_lock_goes_to_its_master() {
        let p = placed();
        for kind in [LockKind::Lock, LockKind::Fair, LockKind::Write] {
            let b = LockName::new("b").unwrap().with_kind(kind);
            assert_eq!(p.master_of(b.as_str()), Shard(1));
            assert_eq!(p.master_of(b.channel()), Shard(1), "{}", b.channel());
            assert_eq!(p.master_of(&b.suffixed("x:1:rwlock_timeout")), Shard(1));
        }
        assert_eq!(p.master_of("redisson_lock__channel:{c}"), Shard(2));
        assert_eq!(p.master_of("a"), Shard(0));
        assert_eq!(p.master_of("redisson_lock__channel:{a}"), Shard(0));
    }

    /// A cluster routes by slot whatever the placement says.
    #[test]
    fn a_cluster_routes_by_slot() {
        assert_eq!(route(3, &placed(), "foo"), Shard(2));
        assert_eq!(route(0, &placed(), "foo"), Shard(0));
        assert_eq!(route(0, &placed(), "c"), Shard(2));
    }

    fn instances(text: &str) -> crate::machine::harness::Harness {
        use crate::machine::harness::{Harness, release};
        let config = crate::Config::builder()
            .release(release(text))
            .watchdog_timeout(3_000)
            .masters(3, placed())
            .build()
            .unwrap();
        let mut h = Harness::with_config(config);
        for (t, name) in [(1, "a"), (2, "b"), (3, "c")] {
            h.acquire(crate::ThreadId(t), name);
        }
        h
    }

    /// Every command goes to its lock's master, and from 3.44.0 each
    /// instance renews its own locks on a chain of its own: a master that
    /// does not answer holds its instance's round alone (one chain over
    /// all three would wait on it, as a cluster client's does).
    #[test]
    fn each_instance_renews_its_own_locks() {
        use crate::{Output, TransportError, Value};
        for release in ["3.43.0", "3.44.0", "4.7.0"] {
            let mut h = instances(release);
            h.advance(1_000);
            let mut sent = Vec::new();
            while let Some(Output::Send {
                shard,
                request,
                command,
                ..
            }) = h.next()
            {
                let text = format!("{command:?}");
                let lock = ["a", "b", "c"]
                    .into_iter()
                    .find(|l| text.contains(&format!("\"{l}\"")));
                sent.push((shard, lock.map(str::to_owned), request));
            }
            let mut routed: Vec<(u16, String)> = sent
                .iter()
                .map(|(s, l, _)| (s.0, l.clone().unwrap_or_default()))
                .collect();
            routed.sort();
            let want = [(0, "a"), (1, "b"), (2, "c")].map(|(m, l)| (m, l.to_owned()));
            assert_eq!(routed, want, "{release}");
            // Master 2 fails; the others answer and renew on.
            for (shard, _, request) in sent {
                if shard == Shard(2) {
                    h.fail(request, TransportError::Connection("refused".into()));
                } else {
                    let renewed = match release {
                        "3.43.0" => Value::Int(1),
                        _ => Value::Array(vec![Value::Int(1)]),
                    };
                    h.reply(request, renewed);
                }
            }
            while h.next().is_some() {}
            h.advance(1_000);
            let mut again = Vec::new();
            while let Some(out) = h.next() {
                if let Output::Send { shard, .. } = out {
                    again.push(shard.0);
                }
            }
            again.sort();
            // Before 3.44.0 each lock's own timer: an error stops that
            // lock's renewal; from 3.44.0 the failed instance retries next
            // round.
            let want: &[u16] = if release == "3.43.0" {
                &[0, 1]
            } else {
                &[0, 1, 2]
            };
            assert_eq!(again, want, "{release}");
        }
    }
}
