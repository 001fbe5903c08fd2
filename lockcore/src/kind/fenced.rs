//! `RFencedLock` (`RedissonFencedLock`, Redisson 3.19.0+, #4684, commit
//! `cd0401b9c`): `RLock` with a fencing token. Not locksim's own `fenced`
//! profile (the `fencing` switch), which is a design beyond Redisson.
//!
//! Keys (REDISSON-FAMILY.md §3): the hash K as `RLock`'s, and the string
//! `redisson_lock_token:{K}`, which every successful acquire `INCR`s,
//! re-entries included. Nothing in Redisson ever gives that key a TTL
//! (#6510, open upstream: 25 million of them in one production database).
//!
//! - `lock()`, `tryLock()`, `tryLock(wait, lease)` and their async forms
//!   run `RLock`'s Java paths (retry wrapper, NoSync rollback, latch,
//!   watchdog) with an overridden acquire script that takes the token but
//!   does not return it.
//! - `lockAndGetToken` / `tryLockAndGetToken` ([`crate::Call::TryLockAndGetToken`])
//!   send a script of their own that answers `{-1, token}` or
//!   `{PTTL, -1}`, from an async loop of their own (`tryLockAndGetTokenAsync`)
//!   that no retry wrapper and no NoSync rollback wrap.
//! - `getToken()` ([`crate::Call::GetToken`]) is a plain `GET` of the token
//!   key: the last token handed out, not necessarily the caller's.
//! - Unlock, force unlock and renewal are `RLock`'s (the class overrides
//!   none of them).

use bytes::Bytes;

use super::rlock::RLockType;
use super::{KindInfo, LockType, Words};
use crate::Switch;
use crate::machine::{Command, LockWords, command};
use crate::release::SwitchReads;
use crate::script::LockScript;

/// `RedissonFencedLock`.
pub(crate) struct FencedLock;

/// `tokenName`: `prefixName("redisson_lock_token", K)`, that is
/// `redisson_lock_token:{K}`, or `redisson_lock_token:K` when K already
/// has a hash tag (`{K}` is [`LockWords::prefix`]).
pub(crate) fn token_key(lock: &LockWords) -> Bytes {
    const PREFIX: &[u8] = b"redisson_lock_token:";
    let mut key = Vec::with_capacity(PREFIX.len() + lock.prefix.len());
    key.extend_from_slice(PREFIX);
    key.extend_from_slice(&lock.prefix);
    Bytes::from(key)
}

impl LockType for FencedLock {
    const INFO: KindInfo = KindInfo {
        name: "fenced-lock",
        class: "RedissonFencedLock",
        channel_prefix: "redisson_lock__channel",
        hash_field_suffix: "",
    };

    fn acquire(w: &Words<'_>) -> Command {
        let keys = [w.lock.key.clone(), token_key(w.lock)];
        let args = [w.lease.clone(), w.thread_field.clone()];
        command::eval(LockScript::FencedAcquire, keys, args)
    }

    fn acquire_token(w: &Words<'_>) -> Option<Command> {
        let keys = [w.lock.key.clone(), token_key(w.lock)];
        let args = [w.lease.clone(), w.thread_field.clone()];
        Some(command::eval(LockScript::FencedAcquireToken, keys, args))
    }

    fn token_key(lock: &LockWords) -> Option<Bytes> {
        Some(token_key(lock))
    }

    // The class overrides none of these: `RLock`'s, as `rlock.rs` has them.
    fn unlock(w: &Words<'_>, latch: Option<(&str, Bytes)>) -> Command {
        RLockType::unlock(w, latch)
    }

    fn force_unlock(w: &Words<'_>) -> Command {
        RLockType::force_unlock(w)
    }

    fn renew(w: &Words<'_>) -> Command {
        RLockType::renew(w)
    }

    fn unmodelled(switches: &SwitchReads, _: bool) -> Option<&'static str> {
        if switches.has(Switch::Fencing) {
            return Some(
                "RFencedLock under locksim's own fenced profile; use a Redisson release (3.19.0 or later)",
            );
        }
        if !switches.has(Switch::FencedLock) {
            return Some(
                "RFencedLock before Redisson 3.19.0, which added it (#4684); use 3.19.0 or later",
            );
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::script::LockScript;
    use crate::{Call, CallOutcome, FencingToken, LockError, LockKind, Millis, Purpose};
    use crate::{ThreadId, TransportError, Value};

    const T1: ThreadId = ThreadId(1);
    const F: LockKind = LockKind::Fenced;

    /// `lock()` sends the overridden script with the token key as
    /// `KEYS[2]` (RedissonFencedLock.tryLockInnerAsync at redisson-4.7.0),
    /// and its nil answers acquired with no token: `lock()` returns none.
    #[test]
    fn lock_sends_the_token_key_and_returns_no_token() {
        let mut h = Harness::new(release("4.7.0"));
        h.call_kind(T1, "l", F, Call::Lock { lease: None }).unwrap();
        let (req, command) = h.expect_send();
        assert_eq!(command[1], LockScript::FencedAcquire.sha1());
        assert_eq!(
            &command[2..],
            ["2", "l", "redisson_lock_token:{l}", "30000", "uuid-a:1"]
        );
        h.reply(req, Value::Nil);
        assert_eq!(
            h.expect_return(T1),
            Ok(CallOutcome::Acquired { token: None })
        );
    }

    /// `tryLockAndGetToken(wait, lease)` sends the token script and
    /// returns the token of its `{-1, token}` reply.
    #[test]
    fn try_lock_and_get_token_returns_the_token() {
        let mut h = Harness::new(release("4.7.0"));
        let call = Call::TryLockAndGetToken {
            wait: Some(Millis(1_000)),
            lease: Some(Millis(700)),
        };
        h.call_kind(T1, "l", F, call).unwrap();
        let (req, command) = h.expect_send();
        assert_eq!(command[1], LockScript::FencedAcquireToken.sha1());
        assert_eq!(
            &command[3..],
            ["l", "redisson_lock_token:{l}", "700", "uuid-a:1"]
        );
        h.reply(req, Value::Array(vec![Value::Int(-1), Value::Int(7)]));
        assert_eq!(
            h.expect_return(T1),
            Ok(CallOutcome::Acquired {
                token: Some(FencingToken(7))
            })
        );
    }

    /// A held lock answers `{PTTL, -1}`: the token call waits (subscribes)
    /// and, its wait spent, answers not acquired (Java's null).
    #[test]
    fn a_held_lock_makes_the_token_call_wait_then_give_up() {
        let mut h = Harness::new(release("4.7.0"));
        let call = Call::TryLockAndGetToken {
            wait: Some(Millis(1_000)),
            lease: None,
        };
        h.call_kind(T1, "l", F, call).unwrap();
        let req = h.expect(Purpose::Acquire);
        h.reply(req, Value::Array(vec![Value::Int(20_000), Value::Int(-1)]));
        let subscribe = h.expect_subscribe();
        h.reply(subscribe, Value::Int(1));
        let second = h.expect(Purpose::Acquire);
        h.reply(
            second,
            Value::Array(vec![Value::Int(20_000), Value::Int(-1)]),
        );
        h.advance(1_000);
        let _ = h.expect_unsubscribe();
        assert_eq!(h.expect_return(T1), Ok(CallOutcome::NotAcquired));
    }

    /// The token path is not wrapped by the NoSync rollback or retry
    /// (REDISSON-FAMILY.md §6.3): a `WAIT` that synced no replica fails
    /// the call at once, with nothing sent to roll it back, where `lock()`
    /// on the same release (4.7.0) would roll back and retry.
    #[test]
    fn the_token_path_has_no_rollback() {
        let mut h = Harness::new(release("4.7.0"));
        let call = Call::TryLockAndGetToken {
            wait: None,
            lease: None,
        };
        h.call_kind(T1, "l", F, call).unwrap();
        let req = h.expect(Purpose::Acquire);
        let error = TransportError::NoSyncedReplicas("None of slaves were synced".into());
        h.fail(req, error.clone());
        assert_eq!(h.expect_return(T1), Err(LockError::Transport(error)));
        h.expect_quiet();
    }

    /// `getToken()` is a `GET` of the token key; nil reads as 0
    /// (`GET_LONG`'s `LongReplayConvertor`).
    #[test]
    fn get_token_reads_the_key() {
        let mut h = Harness::new(release("4.7.0"));
        h.call_kind(T1, "l", F, Call::GetToken).unwrap();
        let (req, command) = h.expect_send();
        assert_eq!(command, ["GET", "redisson_lock_token:{l}"]);
        h.reply(req, Value::Nil);
        assert_eq!(h.expect_return(T1), Ok(CallOutcome::Count(0)));
    }

    /// Before 3.19.0 the class does not exist: refused with the reason;
    /// and the token methods are refused on every other kind.
    #[test]
    fn refused_before_3_19_0_and_on_other_kinds() {
        let mut h = Harness::new(release("3.18.1"));
        let refused = h.call_kind(T1, "l", F, Call::Lock { lease: None });
        assert!(
            matches!(&refused, Err(LockError::Unmodelled(t)) if t.contains("3.19.0")),
            "{refused:?}"
        );
        let mut h = Harness::new(release("4.7.0"));
        let call = Call::TryLockAndGetToken {
            wait: None,
            lease: None,
        };
        assert_eq!(
            h.call_kind(T1, "l", LockKind::Lock, call),
            Err(LockError::NoTokenMethods("RedissonLock"))
        );
        h.expect_quiet();
    }
}
