//! Renewals as the history records them: a renewal command renews the
//! locks its script names (one, or a chunk of them from 3.44), and each
//! lock gets its own `RenewSent` and `RenewReply` record, on every engine.

use bytes::Bytes;
use lockcore::{LockName, Purpose, RequestId};

use crate::history::{Proc, RecordKind};

/// Whether `purpose` is a renewal (recorded with its reply).
pub(crate) fn is_renewal(purpose: Purpose) -> bool {
    purpose == Purpose::Renew
}

/// The locks a renewal renews: its script's keys, one for the per-lock
/// script, a chunk of them for the batched round of 3.44+ (`lock`, the key
/// it is routed by, if the command says none).
pub(crate) fn renewal_locks(lock: &LockName, command: &[Bytes]) -> Vec<LockName> {
    let keys = command
        .get(2)
        .and_then(|n| std::str::from_utf8(n).ok()?.parse::<usize>().ok())
        .unwrap_or(0);
    // The per-lock script renews the call's own lock: its name is at hand.
    if keys == 1
        && command
            .get(3)
            .is_some_and(|k| k.as_ref() == lock.as_str().as_bytes())
    {
        return vec![lock.clone()];
    }
    let locks: Vec<LockName> = command
        .iter()
        .skip(3)
        .take(keys)
        .filter_map(|key| LockName::new(String::from_utf8_lossy(key)).ok())
        .collect();
    if locks.is_empty() {
        vec![lock.clone()]
    } else {
        locks
    }
}

/// What each of `locks` renewal locks was answered: the batched round's
/// list has one number per lock; any other reply (the per-lock script's
/// number, an error) stands for all of them.
pub(crate) fn renewal_replies(reply: &lockcore::Value, locks: usize) -> Vec<String> {
    match reply {
        lockcore::Value::Array(items) if locks > 1 || items.len() == locks => {
            let mut texts: Vec<String> = items
                .iter()
                .take(locks)
                .map(crate::driver::value_text)
                .collect();
            // Redisson's decoder takes a missing entry as "not renewed".
            texts.resize(locks, "0".to_owned());
            texts
        }
        other => vec![crate::driver::value_text(other); locks],
    }
}

/// The `RenewSent` record of each of `locks`, sent as `request` (a resend
/// when `attempt` > 0).
pub(crate) fn sent(
    process: &Proc,
    locks: &[LockName],
    request: RequestId,
    attempt: u32,
) -> Vec<RecordKind> {
    locks
        .iter()
        .map(|lock| RecordKind::RenewSent {
            process: process.clone(),
            lock: lock.clone(),
            request: request.0,
            retry: attempt > 0,
        })
        .collect()
}

/// The `RenewReply` record of each of `locks`, with its reply.
pub(crate) fn replied(
    process: &Proc,
    locks: Vec<LockName>,
    request: RequestId,
    replies: Vec<String>,
) -> Vec<RecordKind> {
    locks
        .into_iter()
        .zip(replies)
        .map(|(lock, reply)| RecordKind::RenewReply {
            process: process.clone(),
            lock,
            request: request.0,
            reply,
        })
        .collect()
}
