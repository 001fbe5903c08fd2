//! Fencing safety: the resource never accepts a write whose token is lower
//! than one it already accepted.

use std::collections::BTreeMap;

use lockcore::LockName;

use crate::judge::check::work::Count;
use crate::model::history::{RecordKind, Who};
use crate::{History, Invariant, Violation};

/// Judges accepted writes by their tokens, per lock. A write whose token is
/// lower than the highest accepted so far is stale. So is a write that
/// reuses the highest token from another writer: the token no longer names
/// one acquisition (the counter was lost, as in a Redis restart without
/// persistence), so the resource cannot tell the stale holder from the
/// fresh one. Writes without a token are all accepted and not judged: only
/// mutual-exclusion can catch those overlaps. The checker reads the
/// history rather than trusting the resource's own verdicts.
pub(crate) fn check(history: &History, work: &impl Count) -> Vec<Violation> {
    let mut highest: BTreeMap<&LockName, (u64, usize, &Who)> = BTreeMap::new();
    let mut found = Vec::new();
    for (i, r) in work.records(history) {
        let RecordKind::Write {
            who,
            lock,
            token: Some(token),
            accepted: true,
        } = &r.kind
        else {
            continue;
        };
        match highest.get(lock) {
            Some(&(top, j, other)) if *token < top || (*token == top && other != who) => {
                let what = if *token < top {
                    format!("token {token} after token {top}")
                } else {
                    format!("token {token} again, already used by {other}")
                };
                found.push(Violation::new(
                    Invariant::Fencing,
                    r.at,
                    [who.client.clone(), other.client.clone()],
                    format!("resource accepted a stale write from {who}: {what}"),
                    vec![j, i],
                ));
            }
            Some(&(top, ..)) if *token == top => {}
            _ => {
                highest.insert(lock, (*token, i, who));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::check::sample::{Sample, who};
    use crate::judge::check::work::Work;

    /// A stale holder (A, lease expired, still believing) writes without a
    /// token after the new holder B wrote: the resource takes it, but
    /// fencing has nothing to judge (that overlap is mutual-exclusion's).
    #[test]
    fn writes_without_token_are_not_judged() {
        let h = Sample::new(5)
            .hold(10, who("A", 1), 100, None)
            .hold(200, who("B", 1), 100, None)
            .write(210, who("B", 1), None, true)
            .write(220, who("A", 1), None, true)
            .build();
        assert!(check(&h, &Work::default()).is_empty());
    }

    /// A resource that accepts a lower token after a higher one broke
    /// fencing: the stale holder's write went through.
    #[test]
    fn lower_token_accepted_fails() {
        let h = Sample::new(5)
            .hold(10, who("A", 1), 100, Some(1))
            .hold(200, who("B", 1), 100, Some(2))
            .write(210, who("B", 1), Some(2), true)
            .write(220, who("A", 1), Some(1), true)
            .build();
        let v = check(&h, &Work::default());
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].events, vec![2, 3]);
    }

    /// With tokens the same interleaving is safe when the resource rejects
    /// A's lower token.
    #[test]
    fn stale_write_rejected_by_token_passes() {
        let h = Sample::new(5)
            .hold(10, who("A", 1), 100, Some(1))
            .hold(200, who("B", 1), 100, Some(2))
            .write(210, who("B", 1), Some(2), true)
            .write(220, who("A", 1), Some(1), false)
            .build();
        assert!(check(&h, &Work::default()).is_empty());
    }

    /// A token counter lost in a Redis restart hands token 1 out twice: the
    /// second holder's writes and the first's are indistinguishable, and
    /// the resource accepting both is a fencing failure.
    #[test]
    fn reused_token_from_another_writer_fails() {
        let h = Sample::new(5)
            .hold(10, who("B", 1), 100, Some(1))
            .hold(200, who("A", 1), 100, Some(1))
            .write(210, who("A", 1), Some(1), true)
            .write(220, who("B", 1), Some(1), true)
            .build();
        let v = check(&h, &Work::default());
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].events, vec![2, 3]);
    }

    /// One holder writing several times with its token, then a newer holder
    /// with a higher one: every write is in order.
    #[test]
    fn writes_in_token_order_pass() {
        let h = Sample::new(5)
            .hold(10, who("A", 1), 100, Some(1))
            .write(11, who("A", 1), Some(1), true)
            .write(12, who("A", 1), Some(1), true)
            .hold(20, who("B", 1), 100, Some(2))
            .write(21, who("B", 1), Some(2), true)
            .build();
        assert!(check(&h, &Work::default()).is_empty());
    }
}
