//! The multi-lock's test helpers: what each of its switches' tests
//! measures, and the tests of the algorithm itself.

use super::acquire::Wait;
use super::harness::{Harness, release};
use super::{CallKind, Output};
use crate::{
    Call, CallOutcome, Config, LockError, LockName, Millis, MultiKind, MultiLock, Purpose,
    ThreadId, TransportError, Value,
};

const T1: ThreadId = ThreadId(1);

/// A multi-lock of `kind` over `names`.
pub(crate) fn multi(kind: MultiKind, names: &[&str]) -> MultiLock {
    let locks = names.iter().map(|n| LockName::new(*n).unwrap()).collect();
    MultiLock::new(kind, locks).unwrap()
}

/// A client of `version` whose commands time out after 100 ms, never
/// resent.
fn short(version: &str) -> Harness {
    let config = Config::builder()
        .release(release(version))
        .response_timeout(100)
        .retry_attempts(0)
        .build()
        .unwrap();
    Harness::with_config(config)
}

impl Harness {
    /// `call` of T1 on `multi`, answered or not.
    pub(crate) fn call_multi(&mut self, multi: &MultiLock, call: Call) -> Result<(), LockError> {
        let result = self.m.call_multi(self.now, T1, multi, call);
        self.pump();
        result
    }

    /// The wait of T1's constituent acquire in flight (`None`: once).
    fn constituent_wait(&self) -> Option<u64> {
        match &self.m.call_of(T1)?.kind {
            CallKind::Acquire(a) => match a.wait {
                Wait::For(ms) => Some(ms.0),
                _ => None,
            },
            _ => None,
        }
    }

    /// The next send, which must be of `purpose`, and its first key.
    fn expect_on(&mut self, purpose: Purpose) -> (crate::RequestId, String) {
        match self.next() {
            Some(Output::Send {
                request,
                purpose: p,
                lock,
                ..
            }) if p == purpose => (request, lock.to_string()),
            other => panic!("expected a {purpose:?} send, got {other:?}"),
        }
    }
}

/// The wait a red lock of three gives its first lock in `tryLock(wait)`.
pub(crate) fn red_lock_wait_of_first(version: &str, wait: u64) -> Option<u64> {
    let mut h = Harness::new(release(version));
    let red = multi(MultiKind::Red, &["a", "b", "c"]);
    let call = Call::TryLock {
        wait: Some(Millis(wait)),
        lease: None,
    };
    h.call_multi(&red, call).unwrap();
    h.constituent_wait()
}

/// `tryLock(5 s)` of a multi-lock over `a` and `b` whose first acquire
/// fails with `error`: whether `a` is unlocked before it is tried again.
fn unlocks_after(version: &str, error: TransportError) -> bool {
    let mut h = short(version);
    let m = multi(MultiKind::Multi, &["a", "b"]);
    let call = Call::TryLock {
        wait: Some(Millis(5_000)),
        lease: None,
    };
    h.call_multi(&m, call).unwrap();
    let (acquire, _) = h.expect_on(Purpose::Acquire);
    h.fail(acquire, error);
    match h.next() {
        Some(Output::Send {
            purpose: Purpose::Unlock,
            lock,
            ..
        }) => lock.as_str() == "a",
        Some(Output::Send {
            purpose: Purpose::Acquire,
            lock,
            ..
        }) if lock.as_str() == "a" => false,
        other => panic!("expected an unlock or the acquire again, got {other:?}"),
    }
}

/// [`unlocks_after`] a response timeout.
pub(crate) fn unlocks_after_timeout(version: &str) -> bool {
    unlocks_after(version, TransportError::Timeout)
}

/// [`unlocks_after`] a closed connection.
pub(crate) fn unlocks_after_closed_connection(version: &str) -> bool {
    unlocks_after(version, TransportError::Connection("closed".into()))
}

/// Whether `tryLock(-1, 5 s)` of a multi-lock is refused.
pub(crate) fn try_lock_lease_refused(version: &str) -> bool {
    let mut h = Harness::new(release(version));
    let m = multi(MultiKind::Multi, &["a"]);
    let call = Call::TryLock {
        wait: None,
        lease: Some(Millis(5_000)),
    };
    matches!(h.call_multi(&m, call), Err(LockError::Unmodelled(_)))
}

/// `tryLock(1 s, 5 s)` of a multi-lock over `a`: the words of the
/// expire it sends once `a` is taken.
pub(crate) fn expire_words(version: &str) -> Vec<String> {
    let mut h = Harness::new(release(version));
    let m = multi(MultiKind::Multi, &["a"]);
    let call = Call::TryLock {
        wait: Some(Millis(1_000)),
        lease: Some(Millis(5_000)),
    };
    h.call_multi(&m, call).unwrap();
    let (acquire, words) = h.expect_send();
    // Each lock is taken for twice the wait.
    assert_eq!(words[words.len() - 2], "2000", "{words:?}");
    h.reply(acquire, Value::Nil);
    let (expire, words) = h.expect_send();
    h.reply(expire, Value::Int(1));
    assert_eq!(h.expect_acquired_multi(), Ok(()));
    words
}

impl Harness {
    /// The multi-lock call's answer must be `Acquired`.
    fn expect_acquired_multi(&mut self) -> Result<(), LockError> {
        match self.expect_return(T1)? {
            CallOutcome::Acquired { .. } => Ok(()),
            other => panic!("expected acquired, got {other:?}"),
        }
    }
}

/// `lock(lease)` of a multi-lock over `a` and `b`, `a` failing every
/// time: the wait of each of `rounds` rounds.
pub(crate) fn round_waits(version: &str, lease: u64, rounds: usize) -> Vec<u64> {
    let mut h = Harness::new(release(version));
    let m = multi(MultiKind::Multi, &["a", "b"]);
    h.call_multi(
        &m,
        Call::Lock {
            lease: Some(Millis(lease)),
        },
    )
    .unwrap();
    let mut waits = Vec::new();
    for _ in 0..rounds {
        let wait = h.constituent_wait().expect("a timed constituent");
        waits.push(wait);
        let (acquire, _) = h.expect_on(Purpose::Acquire);
        // The round's wait is spent when `a` fails.
        h.now = h.now.plus(Millis(wait));
        h.fail(acquire, TransportError::Redis("ERR boom".into()));
    }
    waits
}

/// `unlock()` of a multi-lock over three locks whose first unlock fails:
/// how many unlocks were sent by its answer.
pub(crate) fn unlock_sends(version: &str) -> usize {
    let mut h = Harness::new(release(version));
    let m = multi(MultiKind::Multi, &["a", "b", "c"]);
    h.call_multi(&m, Call::Unlock).unwrap();
    let mut sent = Vec::new();
    loop {
        match h.next() {
            Some(Output::Send {
                request,
                purpose: Purpose::Unlock,
                ..
            }) => sent.push(request),
            Some(Output::Return { result, .. }) => {
                assert!(result.is_err(), "{result:?}");
                return sent.len();
            }
            Some(_) => {}
            None => {
                let first = sent[0];
                h.fail(first, TransportError::Redis("ERR boom".into()));
                for &other in &sent[1..] {
                    h.reply(other, Value::Int(1));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both free: taken in order, one `Return` for the whole call.
    #[test]
    fn a_multi_lock_takes_its_locks_in_order() {
        let mut h = Harness::new(release("4.7.0"));
        let m = multi(MultiKind::Multi, &["a", "b"]);
        h.call_multi(&m, Call::Lock { lease: None }).unwrap();
        let (first, lock) = h.expect_on(Purpose::Acquire);
        assert_eq!(lock, "a");
        assert_eq!(h.constituent_wait(), Some(3_000));
        h.reply(first, Value::Nil);
        let (second, lock) = h.expect_on(Purpose::Acquire);
        assert_eq!(lock, "b");
        h.reply(second, Value::Nil);
        assert_eq!(h.expect_acquired_multi(), Ok(()));
        assert_eq!(h.m.hold_count(T1, &LockName::new("a").unwrap()), 1);
        assert_eq!(h.m.hold_count(T1, &LockName::new("b").unwrap()), 1);
        assert!(!h.m.is_busy(T1));
    }

    /// `tryLock()` with `b` held elsewhere: `a` is unlocked, false.
    #[test]
    fn a_failed_try_lock_unlocks_what_it_took() {
        let mut h = Harness::new(release("4.7.0"));
        let m = multi(MultiKind::Multi, &["a", "b"]);
        let once = Call::TryLock {
            wait: None,
            lease: None,
        };
        h.call_multi(&m, once).unwrap();
        let (first, _) = h.expect_on(Purpose::Acquire);
        h.reply(first, Value::Nil);
        let (second, _) = h.expect_on(Purpose::Acquire);
        h.reply(second, Value::Int(20_000));
        let (unlock, lock) = h.expect_on(Purpose::Unlock);
        assert_eq!(lock, "a");
        assert!(h.m.is_busy(T1), "answered before its unlocks did");
        h.reply(unlock, Value::Int(1));
        assert_eq!(h.until_return(T1).1, Ok(CallOutcome::NotAcquired));
        // The driver is told each constituent call and its answer.
        assert_eq!(
            h.constituents,
            [
                "call a try-lock",
                "answer a acquired",
                "call b try-lock",
                "answer b not-acquired",
                "call a unlock",
                "answer a unlocked",
            ]
        );
    }

    /// A red lock of three holds with two: the third's failure is its
    /// minority.
    #[test]
    fn a_red_lock_holds_with_a_majority() {
        let mut h = Harness::new(release("4.7.0"));
        let red = multi(MultiKind::Red, &["a", "b", "c"]);
        let once = Call::TryLock {
            wait: None,
            lease: None,
        };
        h.call_multi(&red, once).unwrap();
        for answer in [Value::Nil, Value::Int(20_000), Value::Nil] {
            let (request, _) = h.expect_on(Purpose::Acquire);
            h.reply(request, answer);
        }
        assert_eq!(h.expect_acquired_multi(), Ok(()));
    }

    /// The wait runs out between locks: what was taken is unlocked.
    #[test]
    fn a_spent_wait_unlocks_and_answers_false() {
        let mut h = Harness::new(release("4.7.0"));
        let m = multi(MultiKind::Multi, &["a", "b"]);
        let call = Call::TryLock {
            wait: Some(Millis(500)),
            lease: None,
        };
        h.call_multi(&m, call).unwrap();
        let (first, _) = h.expect_on(Purpose::Acquire);
        h.now = h.now.plus(Millis(500));
        h.reply(first, Value::Nil);
        let (unlock, lock) = h.expect_on(Purpose::Unlock);
        assert_eq!(lock, "a");
        h.reply(unlock, Value::Int(1));
        assert_eq!(h.until_return(T1).1, Ok(CallOutcome::NotAcquired));
    }

    /// A thread in a multi-lock call is busy; an empty or repeated
    /// multi-lock and the calls not modelled are refused.
    #[test]
    fn misuse_is_refused() {
        let mut h = Harness::new(release("4.7.0"));
        let m = multi(MultiKind::Multi, &["a", "b"]);
        let forced = h.call_multi(&m, Call::ForceUnlock);
        assert!(
            matches!(forced, Err(LockError::Unmodelled(_))),
            "{forced:?}"
        );
        h.call_multi(&m, Call::Lock { lease: None }).unwrap();
        let busy = h.call(T1, "c", Call::Lock { lease: None });
        assert_eq!(busy, Err(LockError::ThreadBusy(T1)));
        let again = h.call_multi(&m, Call::Lock { lease: None });
        assert_eq!(again, Err(LockError::ThreadBusy(T1)));
    }
}
