//! Renewals as the history records them: a renewal command renews the
//! locks its script names (one, or a chunk of them from 3.44), and each
//! lock gets its own `RenewSent` and `RenewReply` record, on every engine.

use bytes::Bytes;
use lockcore::{LockName, Purpose, RequestId};
use smallvec::SmallVec;

use crate::model::history::{Proc, RecordKind};

/// The locks of one renewal: nearly always one (a chunk of them only for
/// 3.44+'s batched round), kept inline: a renewal is most of a run's
/// commands, and a list per renewal, made and dropped, was pure work.
pub(crate) type Locks = SmallVec<[LockName; 1]>;

/// What each lock of a renewal was answered, as [`Locks`].
pub(crate) type Replies = SmallVec<[String; 1]>;

/// Whether `purpose` is a renewal (recorded with its reply).
pub(crate) fn is_renewal(purpose: Purpose) -> bool {
    purpose == Purpose::Renew
}

/// The locks a renewal renews: its script's keys, one for the per-lock
/// script, a chunk of them for the batched round of 3.44+ (`lock`, the key
/// it is routed by, if the command says none).
pub(crate) fn renewal_locks(lock: &LockName, command: &[Bytes]) -> Locks {
    let keys = command
        .get(2)
        .and_then(|n| std::str::from_utf8(n).ok()?.parse::<usize>().ok())
        .unwrap_or(0);
    // The per-lock script renews the call's own lock: its name is at hand.
    let own = command
        .get(3)
        .is_some_and(|k| k.as_ref() == lock.as_str().as_bytes());
    if own && keys == 1 {
        return smallvec::smallvec![lock.clone()];
    }
    // The read lock's own script (3.8.1+, #1604) names K and the prefix
    // `{K}` of its readers' timeout keys: one lock, not a chunk of two.
    if own && keys == 2 && command.get(4).is_some_and(|k| is_braced(k, lock.as_str())) {
        return smallvec::smallvec![lock.clone()];
    }
    let locks: Locks = command
        .iter()
        .skip(3)
        .take(keys)
        .filter_map(|key| LockName::new(String::from_utf8_lossy(key)).ok())
        .collect();
    if locks.is_empty() {
        smallvec::smallvec![lock.clone()]
    } else {
        locks
    }
}

/// Whether `key` is `{name}`.
fn is_braced(key: &[u8], name: &str) -> bool {
    key.len() == name.len() + 2
        && key.first() == Some(&b'{')
        && key.last() == Some(&b'}')
        && &key[1..key.len() - 1] == name.as_bytes()
}

/// What each of `locks` renewal locks was answered: the batched round's
/// list has one number per lock; any other reply (the per-lock script's
/// number, an error) stands for all of them.
pub(crate) fn renewal_replies(reply: &lockcore::Value, locks: usize) -> Replies {
    match reply {
        lockcore::Value::Array(items) if locks > 1 || items.len() == locks => {
            let mut texts: Replies = items
                .iter()
                .take(locks)
                .map(crate::engines::fast::driver::value_text)
                .collect();
            // Redisson's decoder takes a missing entry as "not renewed".
            texts.resize(locks, "0".to_owned());
            texts
        }
        other => Replies::from_elem(crate::engines::fast::driver::value_text(other), locks),
    }
}

/// What each of `locks` renewal locks was answered when it failed with
/// `error` (no reply came).
pub(crate) fn renewal_failed(error: &dyn std::fmt::Display, locks: usize) -> Replies {
    Replies::from_elem(format!("ERROR {error}"), locks)
}

/// The `RenewSent` record of each of `locks`, sent as `request` (a resend
/// when `attempt` > 0; `staged` when it waited for its `INFO` first).
pub(crate) fn sent<'a>(
    process: &'a Proc,
    locks: &'a [LockName],
    request: RequestId,
    (attempt, staged): (u32, bool),
) -> impl Iterator<Item = RecordKind> + 'a {
    locks.iter().map(move |lock| RecordKind::RenewSent {
        process: process.clone(),
        lock: lock.clone(),
        request: request.0,
        retry: attempt > 0,
        staged,
    })
}

/// The `RenewReply` record of each of `locks`, with its reply.
pub(crate) fn replied(
    process: &Proc,
    locks: Locks,
    request: RequestId,
    replies: Replies,
) -> impl Iterator<Item = RecordKind> + '_ {
    locks
        .into_iter()
        .zip(replies)
        .map(move |(lock, reply)| RecordKind::RenewReply {
            process: process.clone(),
            lock,
            request: request.0,
            reply,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockcore::LockKind;

    fn eval(keys: &[&str]) -> Vec<Bytes> {
        let mut c = vec![Bytes::from("EVAL"), Bytes::from("script")];
        c.push(Bytes::from(keys.len().to_string()));
        c.extend(keys.iter().map(|k| Bytes::from(k.to_string())));
        c
    }

    /// The read lock's own renewal (3.8.1+, #1604) names its hash and the
    /// `{K}` prefix of its timeout keys: it renews the read lock alone,
    /// so renewal-after-unlock sees it (it once read as two `RLock`s,
    /// `K` and `{K}`); the batched round's chunk still reads as its locks.
    #[test]
    fn the_read_lock_renewal_renews_one_read_lock() {
        let read = LockName::of_kind("k", LockKind::Read).unwrap();
        let one = std::slice::from_ref(&read);
        assert_eq!(renewal_locks(&read, &eval(&["k", "{k}"])).to_vec(), one);
        assert_eq!(renewal_locks(&read, &eval(&["k"])).to_vec(), one);
        let plain = LockName::new("a").unwrap();
        let chunk = renewal_locks(&plain, &eval(&["a", "b"]));
        assert_eq!(chunk.to_vec(), [plain, LockName::new("b").unwrap()]);
    }
}
