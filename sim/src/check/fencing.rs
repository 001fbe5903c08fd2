//! Fencing safety: the resource never takes a write from an older holder
//! after it took one from a newer holder.

use std::collections::BTreeMap;

use lockcore::LockName;

use crate::history::{RecordKind, Who};
use crate::{History, Invariant, Violation};

/// Each [`RecordKind::Hold`] opens an acquisition, numbered in the order
/// they happen. An accepted write belongs to its writer's open acquisition;
/// accepting a write of an older acquisition after one of a newer
/// acquisition means a stale holder overwrote fresher data. With fencing
/// tokens the resource refuses such writes, so only token-less writes
/// (the Redisson profiles) can break this. Writes by a thread that holds
/// nothing are not the lock's business and are ignored.
pub(crate) fn check(history: &History) -> Vec<Violation> {
    let mut next_epoch = 0u64;
    let mut open: BTreeMap<(&Who, &LockName), u64> = BTreeMap::new();
    let mut newest: BTreeMap<&LockName, (u64, usize, &Who)> = BTreeMap::new();
    let mut found = Vec::new();
    for (i, r) in history.iter() {
        match &r.kind {
            RecordKind::Hold { who, lock, .. } => {
                next_epoch += 1;
                open.insert((who, lock), next_epoch);
            }
            RecordKind::Release { who, lock, .. } => {
                open.remove(&(who, lock));
            }
            RecordKind::Write {
                who,
                lock,
                token,
                accepted: true,
            } => {
                let Some(&epoch) = open.get(&(who, lock)) else {
                    continue;
                };
                match newest.get(lock) {
                    Some(&(top, j, other)) if epoch < top => {
                        let token = token.map_or("no token".to_owned(), |t| format!("token {t}"));
                        found.push(Violation::new(
                            Invariant::Fencing,
                            r.at,
                            [who.client.clone(), other.client.clone()],
                            format!(
                                "resource accepted a stale write ({token}) from {who} after a write from newer holder {other}"
                            ),
                            vec![j, i],
                        ));
                    }
                    _ => {
                        newest.insert(lock, (epoch, i, who));
                    }
                }
            }
            _ => {}
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::sample::{Sample, who};
    use crate::history::ReleaseCause;

    /// A stale holder (A, lease expired, still believing) writes without a
    /// token after the new holder B wrote: the resource takes it, which is
    /// the corruption fencing exists to prevent.
    #[test]
    fn stale_write_without_token_fails() {
        let h = Sample::new(5)
            .hold(10, who("A", 1), 100, None)
            .hold(200, who("B", 1), 100, None)
            .write(210, who("B", 1), None, true)
            .write(220, who("A", 1), None, true)
            .build();
        let v = check(&h);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].events, vec![2, 3]);
    }

    /// With tokens the same interleaving is safe: the resource rejects A's
    /// lower token, so nothing stale is accepted.
    #[test]
    fn stale_write_rejected_by_token_passes() {
        let h = Sample::new(5)
            .hold(10, who("A", 1), 100, Some(1))
            .hold(200, who("B", 1), 100, Some(2))
            .write(210, who("B", 1), Some(2), true)
            .write(220, who("A", 1), Some(1), false)
            .build();
        assert!(check(&h).is_empty());
    }

    /// Writes in acquisition order pass, even across many holders.
    #[test]
    fn writes_in_order_pass() {
        let h = Sample::new(5)
            .hold(10, who("A", 1), 100, None)
            .write(11, who("A", 1), None, true)
            .release(12, who("A", 1), ReleaseCause::Unlock)
            .hold(20, who("B", 1), 100, None)
            .write(21, who("B", 1), None, true)
            .build();
        assert!(check(&h).is_empty());
    }
}
