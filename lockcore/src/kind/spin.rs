//! `RSpinLock` (`RedissonSpinLock`, 3.15.0, PR #3364): `RLock`'s hash and
//! renewal without pub/sub.
//!
//! REDISSON-FAMILY.md §4. The hash K is `RLock`'s, but the scripts are the
//! spin lock's own (`script_spin.rs`): its acquire is `RLock`'s old
//! two-branch one, and neither its unlock nor its force unlock publishes.
//! A waiter never subscribes: it sleeps its back-off ([`crate::BackOff`],
//! a fresh policy per acquire call) and attempts again (`machine/spin.rs`).
//! The renewal is `RedissonBaseLock`'s, the same as `RLock`'s. The acquire
//! is not inside the 3.20.1 retry wrapper (it goes through
//! `syncedEval`/`syncedEvalNoRetry` with `handleNoSync`'s rollback only);
//! the unlock is `RedissonBaseLock.unlockAsync`, wrapped like `RLock`'s.
//!
//! Releases before 3.15.0 have no spin lock (`spin-lock`) and refuse it.

use bytes::Bytes;

use super::{KindInfo, LockType, Words};
use crate::Switch;
use crate::machine::{Command, command};
use crate::release::SwitchReads;
use crate::script::LockScript;

/// `RedissonSpinLock`.
pub(crate) struct SpinLock;

impl LockType for SpinLock {
    const INFO: KindInfo = KindInfo {
        name: "spin",
        class: "RedissonSpinLock",
        // `RedissonBaseLock.getChannelName`; the spin lock never uses it.
        channel_prefix: "redisson_lock__channel",
        hash_field_suffix: "",
    };

    fn acquire(w: &Words<'_>) -> Command {
        let args = [w.lease.clone(), w.thread_field.clone()];
        command::eval(LockScript::SpinAcquire, [w.lock.key.clone()], args)
    }

    fn unlock(w: &Words<'_>, latch: Option<(&str, Bytes)>) -> Command {
        let (lease, field) = (w.lease.clone(), w.thread_field.clone());
        match latch {
            Some((latch, ttl)) => {
                let keys = [w.lock.key.clone(), Bytes::copy_from_slice(latch.as_bytes())];
                command::eval(LockScript::SpinUnlockLatched, keys, [lease, field, ttl])
            }
            None => command::eval(LockScript::SpinUnlock, [w.lock.key.clone()], [lease, field]),
        }
    }

    fn force_unlock(w: &Words<'_>) -> Command {
        command::eval(LockScript::SpinForceUnlock, [w.lock.key.clone()], [])
    }

    fn renew(w: &Words<'_>) -> Command {
        command::renew(w.lock, w.lease.clone(), w.thread_field.clone())
    }

    fn polls() -> bool {
        true
    }

    fn acquire_retried() -> bool {
        false
    }

    fn unmodelled(switches: &SwitchReads, _: bool) -> Option<&'static str> {
        if switches.has(Switch::Fencing) {
            return Some("fencing tokens cover RLock only; use a Redisson release");
        }
        if !switches.has(Switch::SpinLock) {
            return Some(
                "the spin lock before Redisson 3.15.0 (added by PR #3364); use 3.15.0 or later",
            );
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, LockKind, Purpose, ThreadId, Value};

    const T1: ThreadId = ThreadId(1);

    /// The acquire sends the spin lock's own script with K, the lease and
    /// the thread (`tryLockInnerAsync`), and a release without the spin
    /// lock refuses it with the reason, sending nothing.
    #[test]
    fn acquire_is_the_spin_script_and_3_14_refuses() {
        let mut h = Harness::new(release("3.14.1"));
        let refused = h.call_kind(T1, "l", LockKind::Spin, Call::Lock { lease: None });
        assert!(
            matches!(&refused, Err(crate::LockError::Unmodelled(t)) if t.contains("3.15.0")),
            "{refused:?}"
        );
        h.expect_quiet();
        let mut h = Harness::new(release("3.15.0"));
        h.call_kind(T1, "l", LockKind::Spin, Call::Lock { lease: None })
            .unwrap();
        let (req, command) = h.expect_send();
        assert_eq!(command[1], crate::script_spin::SPIN_ACQUIRE);
        assert_eq!(&command[2..], ["1", "l", "30000", "uuid-a:1"]);
        h.reply(req, Value::Nil);
        h.expect_acquired(T1);
    }

    /// Unlock and force unlock publish nothing and name no channel: before
    /// 3.24.0 the unlock has one key, from 3.24.0 K and the call's latch.
    #[test]
    fn unlock_names_no_channel_by_release() {
        for (version, keys) in [("3.23.3", "1"), ("3.24.0", "2")] {
            let mut h = Harness::new(release(version));
            h.call_kind(T1, "l", LockKind::Spin, Call::Lock { lease: None })
                .unwrap();
            let req = h.expect(Purpose::Acquire);
            h.reply(req, Value::Nil);
            h.expect_acquired(T1);
            h.call_kind(T1, "l", LockKind::Spin, Call::Unlock).unwrap();
            let (_, command) = h.expect_send();
            assert_eq!(command[2], keys, "{version}: {command:?}");
            assert!(
                command.iter().all(|w| !w.contains("channel")),
                "{version}: {command:?}"
            );
            let mut h = Harness::new(release(version));
            h.call_kind(ThreadId(2), "l", LockKind::Spin, Call::ForceUnlock)
                .unwrap();
            let (_, command) = h.expect_send();
            assert_eq!(&command[2..], ["1", "l"], "{version}");
        }
    }
}
