//! What a lock's object leaves in Redis for good: the keys of Redisson's
//! lock family beside the lock's hash that live without a TTL when the
//! run ends (the fair lock's queue `redisson_lock_queue:{K}` and timeout
//! set `redisson_lock_timeout:{K}`, which Redisson never gives one; a
//! reader's `{K}:<id>:rwlock_timeout...` key or an unlock latch, which
//! normally expire). A key with a TTL is judged gone: the run's end is
//! taken as past the last TTL. Every engine reads them the same way, with
//! one script ([`LEFTOVERS`]), and records each as a
//! [`RecordKind::Leftover`] at the horizon, so a history shows them only
//! when there are some.

use bytes::Bytes;
use lockcore::{LockKind, LockName, Value};
use serde::{Deserialize, Serialize};

use crate::SimSpec;
use crate::model::history::{RecordKind, Who};

/// Which family key is left.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LeftoverKind {
    /// `redisson_lock_queue:{K}`: the fair lock's list of waiters.
    Queue,
    /// `redisson_lock_timeout:{K}`: the fair lock's waiters' deadlines.
    TimeoutSet,
    /// `{K}:<uuid>:<tid>:rwlock_timeout`: a reader's own timeout.
    ReaderTimeout,
    /// `redisson_unlock_latch:{K}:<request>`: an unlock's latch (3.24+).
    UnlockLatch,
}

impl LeftoverKind {
    /// The words a finding names it by.
    pub fn words(self) -> &'static str {
        match self {
            LeftoverKind::Queue => "queue",
            LeftoverKind::TimeoutSet => "timeout set",
            LeftoverKind::ReaderTimeout => "reader timeout key",
            LeftoverKind::UnlockLatch => "unlock latch",
        }
    }
}

/// Lists every key matching one of `ARGV`'s patterns that has no TTL,
/// with its entries (a list's or a sorted set's members; none for the
/// others): `{{key, {member, ...}}, ...}`. Read-only.
pub(crate) const LEFTOVERS: &str = "local out = {} \
    for _, pattern in ipairs(ARGV) do \
      for _, key in ipairs(redis.call('keys', pattern)) do \
        if redis.call('pttl', key) == -1 then \
          local t = redis.call('type', key)['ok'] \
          local members = {} \
          if t == 'list' then members = redis.call('lrange', key, 0, -1) \
          elseif t == 'zset' then members = redis.call('zrange', key, 0, -1) end \
          table.insert(out, {key, members}) \
        end \
      end \
    end \
    return out";

/// `{K}` (or K when it has a hash tag): the family's keys' part for `lock`.
pub(crate) fn braced(lock: &LockName) -> String {
    match lock.as_str() {
        name if name.contains('{') => name.to_owned(),
        name => format!("{{{name}}}"),
    }
}

/// `text` with `KEYS`'s glob characters escaped.
fn glob_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The spec's locks (their `RLock` names), in order.
fn locks(spec: &SimSpec) -> Vec<LockName> {
    let set: std::collections::BTreeSet<LockName> = spec
        .clients
        .iter()
        .flat_map(|c| &c.threads)
        .map(|t| t.lock.with_kind(LockKind::Lock))
        .collect();
    set.into_iter().collect()
}

/// The key patterns of every family key of `lock`, with their kinds.
fn patterns(lock: &LockName) -> [(String, LeftoverKind); 4] {
    let b = glob_escaped(&braced(lock));
    [
        (format!("redisson_lock_queue:{b}"), LeftoverKind::Queue),
        (
            format!("redisson_lock_timeout:{b}"),
            LeftoverKind::TimeoutSet,
        ),
        (
            format!("{b}:*:rwlock_timeout*"),
            LeftoverKind::ReaderTimeout,
        ),
        (
            format!("redisson_unlock_latch:{b}:*"),
            LeftoverKind::UnlockLatch,
        ),
    ]
}

/// The `EVAL` of [`LEFTOVERS`] for `spec`'s locks; `None` when every
/// thread takes an `RLock`, whose only family key, the unlock latch,
/// always has a TTL (so its runs read nothing and record as before).
pub(crate) fn command(spec: &SimSpec) -> Option<Vec<Bytes>> {
    let family = spec
        .clients
        .iter()
        .flat_map(|c| &c.threads)
        .any(|t| t.object().kind() != LockKind::Lock);
    if !family {
        return None;
    }
    let mut command = vec![
        Bytes::from_static(b"EVAL"),
        Bytes::from_static(LEFTOVERS.as_bytes()),
        Bytes::from_static(b"0"),
    ];
    for lock in locks(spec) {
        command.extend(patterns(&lock).map(|(p, _)| Bytes::from(p)));
    }
    Some(command)
}

/// Which lock and kind `key` is a family key of.
fn kind_of(key: &str, locks: &[LockName]) -> Option<(LockName, LeftoverKind)> {
    locks.iter().find_map(|lock| {
        let b = braced(lock);
        let kind = if key.strip_prefix("redisson_lock_queue:") == Some(&b) {
            LeftoverKind::Queue
        } else if key.strip_prefix("redisson_lock_timeout:") == Some(&b) {
            LeftoverKind::TimeoutSet
        } else if key
            .strip_prefix("redisson_unlock_latch:")
            .and_then(|k| k.strip_prefix(&b))
            .is_some_and(|k| k.starts_with(':'))
        {
            LeftoverKind::UnlockLatch
        } else if key
            .strip_prefix(&b)
            .is_some_and(|k| k.starts_with(':') && k.contains(":rwlock_timeout"))
        {
            LeftoverKind::ReaderTimeout
        } else {
            return None;
        };
        Some((lock.clone(), kind))
    })
}

/// The records [`LEFTOVERS`]'s `reply` makes, by key; `who` names a
/// member's thread (`<uuid>:<tid>`).
pub(crate) fn records(spec: &SimSpec, reply: &Value, who: impl Fn(&str) -> Who) -> Vec<RecordKind> {
    let Value::Array(keys) = reply else {
        return Vec::new();
    };
    let locks = locks(spec);
    let mut found: Vec<RecordKind> = keys
        .iter()
        .filter_map(|k| {
            let Value::Array(pair) = k else { return None };
            let [Value::Bulk(key), Value::Array(members)] = pair.as_slice() else {
                return None;
            };
            let key = lockcore::lossy_text(key).into_owned();
            let (lock, what) = kind_of(&key, &locks)?;
            let entries = members
                .iter()
                .filter_map(|m| match m {
                    Value::Bulk(b) => Some(who(&lockcore::lossy_text(b))),
                    _ => None,
                })
                .collect();
            Some(RecordKind::Leftover {
                lock,
                what,
                key,
                entries,
            })
        })
        .collect();
    found.sort_by(|a, b| leftover_key(a).cmp(leftover_key(b)));
    found.dedup();
    found
}

fn leftover_key(r: &RecordKind) -> &str {
    match r {
        RecordKind::Leftover { key, .. } => key,
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each family key is told by its name, for a plain name and one with
    /// a hash tag; a key of another lock or no family is none.
    #[test]
    fn family_keys_are_told_by_name() {
        let plain = LockName::new("l").unwrap();
        let tagged = LockName::new("{t}x").unwrap();
        let locks = [plain.clone(), tagged.clone()];
        let cases = [
            (
                "redisson_lock_queue:{l}",
                Some((&plain, LeftoverKind::Queue)),
            ),
            (
                "redisson_lock_timeout:{l}",
                Some((&plain, LeftoverKind::TimeoutSet)),
            ),
            (
                "{l}:uuid-a:1:rwlock_timeout:1",
                Some((&plain, LeftoverKind::ReaderTimeout)),
            ),
            (
                "redisson_unlock_latch:{l}:abc",
                Some((&plain, LeftoverKind::UnlockLatch)),
            ),
            (
                "redisson_lock_queue:{t}x",
                Some((&tagged, LeftoverKind::Queue)),
            ),
            ("redisson_lock_queue:{m}", None),
            ("l", None),
            ("redisson_rwlock:{l}", None),
        ];
        for (key, want) in cases {
            let got = kind_of(key, &locks);
            assert_eq!(got, want.map(|(l, k)| (l.clone(), k)), "{key}");
        }
        assert_eq!(glob_escaped("a*b[c]"), "a\\*b\\[c\\]");
    }
}
