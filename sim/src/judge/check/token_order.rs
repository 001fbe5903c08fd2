//! Token order: Redisson's `RFencedLock` hands out tokens that grow. A
//! thread whose token call began after another acquisition of the same
//! lock had returned its token must get a greater one: the script `INCR`s
//! `redisson_lock_token:{K}` on every success, so the later `INCR` ran
//! after the earlier one. A violation means the counter went back (Redis
//! lost it: a restart without persistence, a failover to a replica that
//! had not seen the `INCR`s), and a resource that checks tokens would
//! take the later holder for a stale one, or the stale one for current.
//! Only the token methods' answers are judged (`lock()` returns none);
//! locksim's own `fenced` profile is the `fencing` invariant's.

use lockcore::{Call, LockKind, LockName, VecMap};

use crate::judge::check::work::Count;
use crate::model::history::{Outcome, RecordKind, Who};
use crate::{History, Invariant, Violation};

/// A token a lock returned: the token, its record, and to whom.
type Returned<'h> = (u64, usize, &'h Who);

/// One pass: the highest token each lock has returned so far, and for
/// each thread in a token call, that highest as its call began.
pub(crate) fn check(history: &History, work: &impl Count) -> Vec<Violation> {
    let mut highest: VecMap<&LockName, Returned<'_>> = VecMap::new();
    let mut before: VecMap<(&Who, &LockName), Option<Returned<'_>>> = VecMap::new();
    let mut found = Vec::new();
    for (i, r) in work.records(history) {
        match &r.kind {
            RecordKind::Call { who, lock, call } if token_call(lock, call) => {
                before.insert((who, lock), highest.get(&lock).copied());
            }
            RecordKind::Return {
                who,
                lock,
                call,
                outcome: Outcome::Acquired { token: Some(token) },
            } if token_call(lock, call) => {
                if let Some(Some((top, j, other))) = before.remove(&(who, lock))
                    && *token <= top
                {
                    found.push(Violation::new(
                        Invariant::TokenOrder,
                        r.at,
                        [who.client.clone(), other.client.clone()],
                        format!(
                            "{who} got token {token} on {lock} after {other} had got token {top}"
                        ),
                        vec![j, i],
                    ));
                }
                if highest.get(&lock).is_none_or(|&(top, ..)| *token > top) {
                    highest.insert(lock, (*token, i, who));
                }
            }
            _ => {}
        }
    }
    found
}

/// Whether `call` on `lock` is one of `RFencedLock`'s token methods.
fn token_call(lock: &LockName, call: &Call) -> bool {
    lock.kind() == LockKind::Fenced && matches!(call, Call::TryLockAndGetToken { .. })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::check::sample::{Sample, who};
    use crate::judge::check::work::Work;

    fn fenced() -> LockName {
        LockName::of_kind("l", LockKind::Fenced).unwrap()
    }

    const TOKEN: Call = Call::TryLockAndGetToken {
        wait: None,
        lease: None,
    };

    fn sample(second_call_ms: u64, first: u64, second: u64) -> History {
        let (a, b) = (who("A", 1), who("B", 1));
        let ret = |w: &Who, t: u64| RecordKind::Return {
            who: w.clone(),
            lock: fenced(),
            call: TOKEN,
            outcome: Outcome::Acquired { token: Some(t) },
        };
        let call = |w: &Who| RecordKind::Call {
            who: w.clone(),
            lock: fenced(),
            call: TOKEN,
        };
        let s = Sample::new(5).at(0, call(&a));
        let s = if second_call_ms < 10 {
            s.at(second_call_ms, call(&b)).at(10, ret(&a, first))
        } else {
            s.at(10, ret(&a, first)).at(second_call_ms, call(&b))
        };
        s.at(100, ret(&b, second)).build()
    }

    /// B asks after A got token 5 and gets 6: in order.
    #[test]
    fn a_later_greater_token_passes() {
        assert!(check(&sample(20, 5, 6), &Work::default()).is_empty());
    }

    /// B asks after A got token 5 and gets 1 (the counter was lost): the
    /// order broke, with both answers as its events.
    #[test]
    fn a_later_smaller_token_fails() {
        let v = check(&sample(20, 5, 1), &Work::default());
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].events, vec![1, 3]);
        assert_eq!(v[0].invariant, Invariant::TokenOrder);
    }

    /// B asked before A's answer came back: the two `INCR`s may have run
    /// in either order, so a smaller token is no violation.
    #[test]
    fn overlapping_calls_are_not_judged() {
        assert!(check(&sample(5, 5, 1), &Work::default()).is_empty());
    }
}
