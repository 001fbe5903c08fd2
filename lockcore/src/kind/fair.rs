//! `RFairLock` (`RedissonFairLock`): `RLock`'s hash, renewal and waiting
//! loop, with a queue of waiters that grants the lock in arrival order.
//!
//! Keys (REDISSON-FAMILY.md §2.1): the hash K as `RLock`'s; the list
//! `redisson_lock_queue:{K}` of waiting `<uuid>:<tid>`s and the sorted set
//! `redisson_lock_timeout:{K}` of their deadlines, in the calling client's
//! `System.currentTimeMillis()` (so a client's clock moves every deadline
//! it writes). Neither key has a TTL. Each waiter subscribes to a channel
//! of its own, `redisson_lock__channel:{K}:<uuid>:<tid>`; an unlock
//! publishes to the queue head's channel alone, and the others wake on
//! their timers.
//!
//! A waiter's deadline is the deadline of the thread before it (or K's
//! PTTL) plus the thread wait time: `tryLock`'s wait, or
//! [`THREAD_WAIT_MS`]. The acquire purges heads whose deadline passed;
//! a `tryLock(wait)` that gives up removes its own entries
//! (`acquireFailedAsync`), and from 4.7.0 also when an attempt inside its
//! wait loop times out (`trylock-timeout-false`, #5019).
//!
//! Modelled from 3.8.0 (the release `redisson-legacy` names; the same
//! scripts since 3.7.5), each era's scripts by their text at its tags
//! (`script_fair_legacy`, `script_fair`): the enqueue from the queue's
//! head and its drift up to 3.11.0 (`fair-enqueue-from-last`, #2099), the
//! fixed 5 000 ms thread wait up to 3.13.2 (`fair-wait-from-try-lock`,
//! #2883), the purge that fails on a head without a score up to 3.30.x
//! (`fair-purge-checks-score`, #4153), a queued waiter told its own
//! deadline up to 3.31.x (`fair-wait-reply-pttl`, #4705), and the enqueue
//! that checks the last thread's score from 3.45.0
//! (`fair-enqueue-checks-score`, PR #6434). Releases before 3.8.0 are
//! refused.

use bytes::Bytes;

use super::{KindInfo, LockType, Waits, Words};
use crate::machine::command::{self, PUBLISH, UNLOCK_MESSAGE};
use crate::machine::{Command, LockWords};
use crate::release::SwitchReads;
use crate::script::LockScript;
use crate::{Switch, Version};

/// `RedissonFairLock`.
pub(crate) struct FairLock;

/// `threadWaitTime` up to 3.13.2: a constant (3.8.0 to 3.11.0), then the
/// constructor's default (3.11.1 to 3.13.2); every call's deadlines add it.
pub(crate) const THREAD_WAIT_LEGACY_MS: u64 = 5_000;

/// `threadWaitTime`'s default since 3.13.3 (`60000*5`, #2883), and
/// `Config.fairLockWaitTimeout`'s since 3.46.0: what a waiter adds to the
/// deadline before it when the call gives no wait of its own.
pub(crate) const THREAD_WAIT_MS: u64 = 300_000;

/// `prefixName(prefix, K)`: `prefix:{K}`, or `prefix:K` when K already
/// has a hash tag (`{K}` is [`LockWords::prefix`]).
fn prefixed(prefix: &str, lock: &LockWords) -> Bytes {
    let mut key = Vec::with_capacity(prefix.len() + lock.prefix.len() + 1);
    key.extend_from_slice(prefix.as_bytes());
    key.push(b':');
    key.extend_from_slice(&lock.prefix);
    Bytes::from(key)
}

/// `threadsQueueName`: `redisson_lock_queue:{K}`.
pub(crate) fn queue_key(lock: &LockWords) -> Bytes {
    prefixed("redisson_lock_queue", lock)
}

/// `timeoutSetName`: `redisson_lock_timeout:{K}`.
pub(crate) fn timeout_key(lock: &LockWords) -> Bytes {
    prefixed("redisson_lock_timeout", lock)
}

/// The wait the scripts add to a deadline: from 3.13.3 `tryLock`'s wait
/// when it has one (3.17.1+: only when > 0; the machine refuses a zero
/// wait, so both rules agree on every modelled call), else the client's
/// `threadWaitTime` ([`fair_thread_wait`] unless set); before, that for
/// every call.
fn wait_ms(w: &Words<'_>) -> u64 {
    let from_try_lock = w.switches.has(Switch::FairWaitFromTryLock);
    match (from_try_lock, w.waits) {
        (true, Waits::For(wait)) => wait.0,
        _ => w
            .thread_wait
            .map_or_else(|| era_thread_wait(from_try_lock), |m| m.0),
    }
}

/// The release's `threadWaitTime`: [`THREAD_WAIT_LEGACY_MS`] up to
/// 3.13.2, [`THREAD_WAIT_MS`] from 3.13.3 (`fair-wait-from-try-lock`).
fn era_thread_wait(from_try_lock: bool) -> u64 {
    if from_try_lock {
        THREAD_WAIT_MS
    } else {
        THREAD_WAIT_LEGACY_MS
    }
}

/// A release's fair-lock `threadWaitTime`, which a client may set
/// ([`Config::fair_lock_wait_timeout`](crate::Config::fair_lock_wait_timeout)):
/// 5 000 ms up to 3.13.2, 300 000 ms from 3.13.3 (#2883).
pub fn fair_thread_wait(release: crate::Release) -> crate::Millis {
    crate::Millis(era_thread_wait(release.has(Switch::FairWaitFromTryLock)))
}

fn wait_arg(w: &Words<'_>) -> Bytes {
    Bytes::from(wait_ms(w).to_string())
}

fn clock(w: &Words<'_>) -> Bytes {
    Bytes::from(w.now.0.to_string())
}

impl LockType for FairLock {
    const INFO: KindInfo = KindInfo {
        name: "fair",
        class: "RedissonFairLock",
        channel_prefix: "redisson_lock__channel",
        hash_field_suffix: "",
    };

    fn acquire(w: &Words<'_>) -> Command {
        let keys = [w.lock.key.clone(), queue_key(w.lock), timeout_key(w.lock)];
        let (lease, field) = (w.lease.clone(), w.thread_field.clone());
        let from_last = w.switches.has(Switch::FairEnqueueFromLast);
        if w.waits == Waits::Once {
            // `tryLock()`: `EVAL_NULL_BOOLEAN`, never queues; the wait
            // argument came with 3.11.1's decrement.
            if !from_last {
                let args = [lease, field, clock(w)];
                return command::eval(LockScript::FairTryAcquireLegacy, keys, args);
            }
            let script = if w.switches.has(Switch::FairPurgeChecksScore) {
                LockScript::FairTryAcquire
            } else {
                LockScript::FairTryAcquireUncheckedPurge
            };
            return command::eval(script, keys, [lease, field, clock(w), wait_arg(w)]);
        }
        if !from_last {
            // `currentTime + threadWaitTime`, then `currentTime`.
            let deadline = Bytes::from((w.now.0 + wait_ms(w)).to_string());
            let args = [lease, field, deadline, clock(w)];
            return command::eval(LockScript::FairAcquireFromHead, keys, args);
        }
        // The reply's fix is asked first: no Redisson text answers the
        // PTTL with the old purge, and 3.32.0's brings both, so adding
        // #4705's fix to an older release shows what it removes.
        let script = if !w.switches.has(Switch::FairWaitReplyPttl) {
            if w.switches.has(Switch::FairPurgeChecksScore) {
                LockScript::FairAcquireOwnDeadline
            } else {
                LockScript::FairAcquireUncheckedPurge
            }
        } else if w.switches.has(Switch::FairEnqueueChecksScore) {
            LockScript::FairAcquire
        } else {
            LockScript::FairAcquireUnscoredLast
        };
        command::eval(script, keys, [lease, field, wait_arg(w), clock(w)])
    }

    fn unlock(w: &Words<'_>, latch: Option<(&str, Bytes)>) -> Command {
        let message = Bytes::from_static(UNLOCK_MESSAGE.as_bytes());
        let [k, queue, timeouts] = [w.lock.key.clone(), queue_key(w.lock), timeout_key(w.lock)];
        let keys = [k, queue, timeouts, w.lock.channel.clone()];
        let (lease, field) = (w.lease.clone(), w.thread_field.clone());
        if !w.switches.has(Switch::PublishCommandArgument) {
            let args = [message, lease, field, clock(w)];
            return command::eval(LockScript::FairUnlockLegacy, keys, args);
        }
        let publish = Bytes::from_static(PUBLISH);
        let Some((latch, ttl)) = latch else {
            // 3.22.0 to 3.23.x: the publish command, no latch yet.
            let args = [message, lease, field, clock(w), publish];
            return command::eval(LockScript::FairUnlockPublishArg, keys, args);
        };
        let [k, queue, timeouts, channel] = keys;
        let latch = Bytes::copy_from_slice(latch.as_bytes());
        let keys = [k, queue, timeouts, channel, latch];
        let args = [message, lease, field, clock(w), publish, ttl];
        let script = if w.switches.has(Switch::FairPurgeChecksScore) {
            LockScript::FairUnlock
        } else {
            LockScript::FairUnlockLatchedUncheckedPurge
        };
        command::eval(script, keys, args)
    }

    fn force_unlock(w: &Words<'_>) -> Command {
        let keys = [
            w.lock.key.clone(),
            queue_key(w.lock),
            timeout_key(w.lock),
            w.lock.channel.clone(),
        ];
        let message = Bytes::from_static(UNLOCK_MESSAGE.as_bytes());
        if !w.switches.has(Switch::PublishCommandArgument) {
            let args = [message, clock(w)];
            return command::eval(LockScript::FairForceUnlockLegacy, keys, args);
        }
        let script = if w.switches.has(Switch::FairPurgeChecksScore) {
            LockScript::FairForceUnlock
        } else {
            LockScript::FairForceUnlockPublishArg
        };
        let args = [message, clock(w), Bytes::from_static(PUBLISH)];
        command::eval(script, keys, args)
    }

    fn renew(w: &Words<'_>) -> Command {
        command::renew(w.lock, w.lease.clone(), w.thread_field.clone())
    }

    fn acquire_failed(w: &Words<'_>) -> Option<Command> {
        let keys = [queue_key(w.lock), timeout_key(w.lock)];
        let args = [w.thread_field.clone(), wait_arg(w)];
        let script = if w.switches.has(Switch::FairEnqueueFromLast) {
            LockScript::FairAcquireFailed
        } else {
            LockScript::FairAcquireFailedHead
        };
        Some(command::eval(script, keys, args))
    }

    fn waits_on_own_channel() -> bool {
        true
    }

    fn oldest() -> Option<(Version, &'static str)> {
        Some((
            Version::new(3, 8, 0),
            "the fair lock before Redisson 3.8.0 (older scripts: #757, #1104); use 3.8.0 or later",
        ))
    }

    fn unmodelled(switches: &SwitchReads, _: bool) -> Option<&'static str> {
        if switches.has(Switch::Fencing) {
            return Some("fencing tokens cover RLock only; use a Redisson release");
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, CallOutcome, LockKind, Millis, Output, Purpose, ThreadId, Value};

    const T1: ThreadId = ThreadId(1);

    fn fair(version: &str) -> Harness {
        Harness::new(release(version))
    }

    /// `lock()`'s acquire sends the queue and timeout-set keys, the lease,
    /// the thread, the 300 000 ms thread wait and the client's clock, in
    /// Redisson's order (RedissonFairLock.tryLockInnerAsync, `EVAL_LONG`).
    #[test]
    fn lock_sends_queue_keys_wait_and_clock() {
        let mut h = fair("4.7.0");
        h.advance(1_234);
        h.call_kind(T1, "l", LockKind::Fair, Call::Lock { lease: None })
            .unwrap();
        let (_, command) = h.expect_send();
        assert_eq!(
            &command[2..],
            [
                "3",
                "l",
                "redisson_lock_queue:{l}",
                "redisson_lock_timeout:{l}",
                "30000",
                "uuid-a:1",
                "300000",
                "1234"
            ]
        );
    }

    /// A client's `threadWaitTime` (`fairLockWaitTimeout`) replaces the
    /// release's in the deadlines, in every era: the legacy scripts add it
    /// to every call's, the later ones to a call without a wait of its own.
    #[test]
    fn a_set_thread_wait_replaces_the_release_default() {
        for (version, default) in [("3.11.0", 5_000), ("4.7.0", 300_000)] {
            assert_eq!(super::fair_thread_wait(release(version)), Millis(default));
            let config = crate::Config::builder()
                .release(release(version))
                .fair_lock_wait_timeout(60_000)
                .build()
                .unwrap();
            let mut h = Harness::with_config(config);
            h.call_kind(T1, "l", LockKind::Fair, Call::Lock { lease: None })
                .unwrap();
            let (_, command) = h.expect_send();
            assert!(
                command.iter().any(|w| w == "60000"),
                "{version}: {command:?}"
            );
            assert!(
                !command.iter().any(|w| *w == default.to_string()),
                "{version}: {command:?}"
            );
        }
    }

    /// `tryLock()` sends the script that never queues, with the clock
    /// before the wait (`EVAL_NULL_BOOLEAN`'s argument order), and its 1
    /// (held) answers false with nothing else sent.
    #[test]
    fn try_lock_once_never_queues() {
        let mut h = fair("4.7.0");
        let once = Call::TryLock {
            wait: None,
            lease: Some(Millis(500)),
        };
        h.call_kind(T1, "l", LockKind::Fair, once).unwrap();
        let (req, command) = h.expect_send();
        assert_eq!(command[1], crate::script::LockScript::FairTryAcquire.sha1());
        assert_eq!(&command[6..], ["500", "uuid-a:1", "0", "300000"]);
        h.reply(req, Value::Int(1));
        assert_eq!(h.expect_return(T1), Ok(CallOutcome::NotAcquired));
        h.expect_quiet();
    }

    /// A waiter subscribes to its own channel, `<channel>:<uuid>:<tid>`,
    /// and the unlock message there wakes it.
    #[test]
    fn a_waiter_listens_on_its_own_channel() {
        let mut h = fair("4.7.0");
        h.call_kind(T1, "l", LockKind::Fair, Call::Lock { lease: None })
            .unwrap();
        let req = h.expect(Purpose::Acquire);
        h.reply(req, Value::Int(20_000));
        let channel = match h.next() {
            Some(Output::Subscribe {
                channel, request, ..
            }) => {
                h.reply(request, Value::Int(1));
                channel
            }
            other => panic!("expected a Subscribe, got {other:?}"),
        };
        assert_eq!(channel, "redisson_lock__channel:{l}:uuid-a:1");
        let req = h.expect(Purpose::Acquire);
        h.reply(req, Value::Int(20_000));
        h.expect_quiet();
        h.m.on_message(h.now, &channel, b"0");
        let req = h.expect(Purpose::Acquire);
        h.reply(req, Value::Nil);
        assert!(matches!(
            h.returned(T1),
            Some(Ok(CallOutcome::Acquired { .. }))
        ));
    }

    /// `tryLock(wait)` that runs out of time sends `acquireFailed` (the
    /// queue, the timeout set, the thread and its wait) and answers false
    /// only once it has: the thread leaves no entry behind.
    #[test]
    fn giving_up_removes_the_thread_from_the_queue() {
        let mut h = fair("4.6.0");
        let wait = Call::TryLock {
            wait: Some(Millis(2_000)),
            lease: None,
        };
        h.call_kind(T1, "l", LockKind::Fair, wait).unwrap();
        let second = h.held_then_subscribed(20_000);
        h.reply(second, Value::Int(20_000));
        h.advance(2_000);
        let (req, command) = h.expect_send_of(Purpose::AcquireFailed);
        assert_eq!(
            &command[2..],
            [
                "2",
                "redisson_lock_queue:{l}",
                "redisson_lock_timeout:{l}",
                "uuid-a:1",
                "2000"
            ]
        );
        h.expect_quiet();
        h.reply(req, Value::Nil);
        // Redisson unsubscribes in `finally`, after `acquireFailed`.
        let channel = h.expect_unsubscribe();
        assert_eq!(channel, "redisson_lock__channel:{l}:uuid-a:1");
        assert_eq!(h.expect_return(T1), Ok(CallOutcome::NotAcquired));
    }

    /// The unlock and force unlock publish through the head's channel:
    /// they send the lock's channel as `KEYS[4]`, with the message, the
    /// clock and `PUBLISH`.
    #[test]
    fn unlock_names_the_channel_prefix_and_the_clock() {
        let mut h = fair("4.7.0");
        h.acquire_kind(T1, "l", LockKind::Fair);
        h.advance(7);
        h.call_kind(T1, "l", LockKind::Fair, Call::Unlock).unwrap();
        let (_, command) = h.expect_send_of(Purpose::Unlock);
        assert_eq!(command[1], crate::script::LockScript::FairUnlock.sha1());
        assert_eq!(
            &command[3..7],
            [
                "l",
                "redisson_lock_queue:{l}",
                "redisson_lock_timeout:{l}",
                "redisson_lock__channel:{l}"
            ]
        );
        assert_eq!(&command[8..11], ["0", "30000", "uuid-a:1"]);
        assert_eq!(command[12], "PUBLISH");
    }

    /// Before 3.8.0 (and 2.12.x, which runs 3.7.x) the fair lock is
    /// refused with the reason, nothing sent; 3.8.0 and 2.13.0 send its
    /// acquire, and `LockKind::refusal` agrees with the machine.
    #[test]
    fn the_fair_lock_is_modelled_from_3_8_0() {
        for version in ["3.7.5", "2.12.2", "3.0.0"] {
            let mut h = fair(version);
            let refused = h.call_kind(T1, "l", LockKind::Fair, Call::Lock { lease: None });
            assert!(
                matches!(&refused, Err(crate::LockError::Unmodelled(text)) if text.contains("3.8.0")),
                "{version}: {refused:?}"
            );
            h.expect_quiet();
            assert!(LockKind::Fair.refusal(release(version), true).is_some());
        }
        for version in ["3.8.0", "2.13.0"] {
            let mut h = fair(version);
            h.call_kind(T1, "l", LockKind::Fair, Call::Lock { lease: None })
                .unwrap();
            assert_eq!(h.expect_send().1[2], "3", "{version}");
            assert_eq!(LockKind::Fair.refusal(release(version), true), None);
        }
    }

    /// Each era's unlock and force unlock: 3.8.0 (four keys, no publish
    /// command), 3.22.0 (the publish command), 3.24.0 (the latch key and
    /// its TTL), each with its own script.
    #[test]
    fn unlock_and_force_unlock_by_era() {
        use crate::script::LockScript as S;
        for (version, unlock, force, keys) in [
            ("3.8.0", S::FairUnlockLegacy, S::FairForceUnlockLegacy, "4"),
            (
                "3.22.0",
                S::FairUnlockPublishArg,
                S::FairForceUnlockPublishArg,
                "4",
            ),
            (
                "3.24.0",
                S::FairUnlockLatchedUncheckedPurge,
                S::FairForceUnlockPublishArg,
                "5",
            ),
            ("3.31.0", S::FairUnlock, S::FairForceUnlock, "5"),
        ] {
            let mut h = fair(version);
            h.acquire_kind(T1, "l", LockKind::Fair);
            h.call_kind(T1, "l", LockKind::Fair, Call::Unlock).unwrap();
            let (_, command) = h.expect_send_of(Purpose::Unlock);
            assert_eq!(
                (command[1].as_str(), command[2].as_str()),
                (unlock.text(), keys)
            );
            let publish = command.iter().filter(|w| *w == "PUBLISH").count();
            assert_eq!(publish, usize::from(version != "3.8.0"), "{version}");
            let mut h = fair(version);
            h.call_kind(T1, "l", LockKind::Fair, Call::ForceUnlock)
                .unwrap();
            let (_, command) = h.expect_send();
            assert_eq!(command[1], force.text(), "{version}");
        }
    }
}
