//! With several masters (a cluster, or independent ones), which faults can explain a violation: those on the
//! master that serves its lock, on a client, or on every master. A pause
//! of another master may still be why the lock misbehaved (a renewal
//! round that waits on it), but that is the lock's doing: the fault did
//! nothing to this lock's key or to the commands that reach it.

use super::violated_lock;
use crate::{History, SimSpec, Violation};

/// `spec` without the faults on masters other than the violated lock's,
/// and the plan place of each fault kept; `None` when none is left out.
pub(super) fn narrowed(
    spec: &SimSpec,
    history: &History,
    v: &Violation,
) -> Option<(SimSpec, Vec<usize>)> {
    if !spec.redis.has_masters() || spec.faults.0.iter().all(|f| f.shard().is_none()) {
        return None;
    }
    let lock = violated_lock(history, v)?;
    let served_by = spec.redis.route(lock.as_str());
    let kept: Vec<usize> = (0..spec.faults.0.len())
        .filter(|&i| spec.faults.0[i].shard().is_none_or(|s| s == served_by))
        .collect();
    if kept.len() == spec.faults.0.len() {
        return None;
    }
    let mut narrow = spec.clone();
    narrow.faults.0 = kept.iter().map(|&i| spec.faults.0[i].clone()).collect();
    Some((narrow, kept))
}
