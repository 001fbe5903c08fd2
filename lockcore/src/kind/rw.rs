//! What the read lock and the write lock of `RReadWriteLock` share: the
//! channel, the messages, the releases the machine models them under.

use bytes::Bytes;

use crate::Switch;
use crate::machine::command::{PUBLISH, UNLOCK_MESSAGE};
use crate::release::SwitchReads;

/// `redisson_rwlock:{K}`, shared by the read and the write lock.
pub(super) const CHANNEL_PREFIX: &str = "redisson_rwlock";

/// `LockPubSub.READ_UNLOCK_MESSAGE`: every waiter's latch is released and
/// every listener runs.
pub(crate) const READ_UNLOCK_MESSAGE: &str = "1";

/// The message a read unlock publishes (`UNLOCK_MESSAGE`, one waiter).
pub(super) fn unlock_message() -> Bytes {
    Bytes::from_static(UNLOCK_MESSAGE.as_bytes())
}

/// `getPublishCommand()` on a single Redis.
pub(super) fn publish() -> Bytes {
    Bytes::from_static(PUBLISH)
}

/// Why the release's read or write lock is not modelled, if it is not:
/// locksim's fencing tokens are an `RLock` design.
pub(super) fn unmodelled(switches: &SwitchReads, _watchdog: bool) -> Option<&'static str> {
    if switches.has(Switch::Fencing) {
        return Some("fencing tokens cover RLock only; use a Redisson release");
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::machine::Output;
    use crate::machine::harness::{Harness, release};
    use crate::{Call, CallOutcome, LockKind, LockName, Millis, Purpose, ThreadId, Value};

    const T1: ThreadId = ThreadId(1);
    const T2: ThreadId = ThreadId(2);

    /// One release per renewal era the machine models the read-write lock
    /// in (per-thread timers, per-lock timers, the batched chain; the
    /// `fenced` profile refuses it). RedissonReadLock and RedissonWriteLock
    /// override no acquire method at any tag (2.x to 4.7.0): `lockAsync`
    /// and `tryLockAsync` are RedissonLock's, over their own
    /// `tryLockInnerAsync` and channel.
    const ERAS: [&str; 3] = ["3.8.0", "3.23.5", "4.7.0"];

    /// Thread 2's `call` on `kind`'s object of `l` while thread 1 holds the
    /// write lock: every command and subscription it makes until the
    /// unlock message lets it in; or, with `interrupt`, whether an
    /// interrupt during its second attempt ended the call.
    fn waits(version: &str, kind: LockKind, call: Call, interrupt: bool) -> (Vec<String>, bool) {
        let mut h = Harness::short(release(version));
        h.acquire_kind(T1, "l", LockKind::Write);
        h.call_kind(T2, "l", kind, call).unwrap();
        let mut seen = Vec::new();
        let (attempt, command) = h.expect_send_of(Purpose::Acquire);
        seen.push(command.join(" "));
        h.reply(attempt, Value::Int(2_000));
        match h.next() {
            Some(Output::Subscribe {
                request, channel, ..
            }) => {
                seen.push(format!("SUBSCRIBE {channel}"));
                h.reply(request, Value::Int(1));
            }
            other => panic!("expected a Subscribe, got {other:?}"),
        }
        let (attempt, command) = h.expect_send_of(Purpose::Acquire);
        seen.push(command.join(" "));
        if interrupt {
            return (seen, h.m.interrupt(h.now, T2));
        }
        h.reply(attempt, Value::Int(2_000));
        let channel = LockName::of_kind("l", kind).unwrap().channel().to_owned();
        h.m.on_message(h.now, &channel, b"0");
        let (attempt, command) = h.expect_send_of(Purpose::Acquire);
        seen.push(command.join(" "));
        h.reply(attempt, Value::Nil);
        let (_, result) = h.until_return(T2);
        assert_eq!(result, Ok(CallOutcome::Acquired { token: None }));
        (seen, false)
    }

    /// Under each era, `lockAsync` and `tryLockAsync(wait, lease)` of
    /// `kind` send what `lock` and `tryLock` send, which is not `RLock`'s
    /// script; and they wait by a listener: an interrupt ends the blocking
    /// call's attempt (`RedisException`), never the async one.
    fn async_is_rlocks_machine_with_the_scripts_of(kind: LockKind) {
        let lease = Some(Millis(5_000));
        let forms = [
            (Call::Lock { lease: None }, Call::LockAsync { lease: None }),
            (
                Call::TryLock {
                    wait: Some(Millis(10_000)),
                    lease,
                },
                Call::TryLockAsync {
                    wait: Some(Millis(10_000)),
                    lease,
                },
            ),
        ];
        for version in ERAS {
            for (blocking, listening) in &forms {
                let (sync, _) = waits(version, kind, blocking.clone(), false);
                let (in_async, _) = waits(version, kind, listening.clone(), false);
                assert_eq!(in_async, sync, "{version} {kind} {listening:?}");
                let (rlock, _) = waits(version, LockKind::Lock, listening.clone(), false);
                assert_ne!(in_async[0], rlock[0], "{version} {kind}");
                assert!(waits(version, kind, blocking.clone(), true).1, "{version}");
                assert!(
                    !waits(version, kind, listening.clone(), true).1,
                    "{version}"
                );
            }
        }
    }

    #[test]
    fn the_read_locks_async_acquire_is_rlocks_with_the_read_scripts() {
        async_is_rlocks_machine_with_the_scripts_of(LockKind::Read);
    }

    #[test]
    fn the_write_locks_async_acquire_is_rlocks_with_the_write_scripts() {
        async_is_rlocks_machine_with_the_scripts_of(LockKind::Write);
    }
}
