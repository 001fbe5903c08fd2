//! `listener-rechecks-latch` (Redisson 3.28.0, #5761, commit 2b6f2fda7).
//!
//! "RLock, RFencedLock, RReadWriteLock miss unlock messages and wait a
//! defined timeout before a next attempt or hang". `lockAsync` and
//! `tryLockAsync` wait for a held lock by a listener on the lock's entry:
//! after an attempt found the lock held and `latch.tryAcquire()` found no
//! permit, the callback registers the listener with `addListener`. The
//! unlock message's handler (`LockPubSub.onMessage`, on the pub/sub
//! connection's Netty thread) runs the first listener and releases a
//! permit. A message handled between the callback's `tryAcquire` and its
//! `addListener` found no listener: its permit waited for nobody, and the
//! call slept the holder's TTL (or, for a key without one, for ever) with
//! the lock free. 3.28.0's `addListener` takes such a permit right after
//! registering and runs the listener. locksim pauses the callback there
//! ([`Output::Step`](crate::Output::Step)) so a driver can interleave.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "listener-rechecks-latch",
    since: Some(Version::new(3, 28, 0)),
    upstream: "#5761",
    summary: "an async waiter (lockAsync, tryLockAsync) takes a permit left by an unlock message after it registered its listener (before: a message handled just before the registration was lost, and the waiter slept the holder's TTL with the lock free)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, CallOutcome, Millis, Output, Purpose, ThreadId, Value};

    const T1: ThreadId = ThreadId(1);
    const T2: ThreadId = ThreadId(2);

    /// t1 holds; t2's `call` finds it held (TTL 2 000 ms), subscribes,
    /// finds it held again, and pauses before registering its listener;
    /// t1's unlock message arrives; the callback goes on. The time of
    /// t2's next attempt, in ms from the message.
    fn next_attempt_after_message(version: &str, call: Call) -> u64 {
        let mut h = Harness::short(release(version));
        h.m.interleave(true);
        h.hold_steps = true;
        h.acquire(T1, "l");
        h.call(T2, "l", call).unwrap();
        let attempt = h.held_then_subscribed(2_000);
        h.reply(attempt, Value::Int(2_000));
        let paused = h.take_steps();
        assert_eq!(paused.len(), 1, "the registration pauses");
        let message_at = h.now;
        h.message("l", "0");
        h.resume(paused[0]);
        // t1's renewals go on meanwhile.
        let attempt = loop {
            match h.next() {
                Some(Output::Send {
                    request,
                    purpose: Purpose::Acquire,
                    ..
                }) => break request,
                Some(Output::Send {
                    request,
                    purpose: Purpose::Renew,
                    ..
                }) => h.reply(request, Value::Int(1)),
                Some(_) => {}
                None => {
                    let at = h.next_timer_at().expect("t2 waits with a timer");
                    h.advance_to(at);
                }
            }
        };
        let waited = h.now.minus(message_at).0;
        h.reply(attempt, Value::Nil);
        assert_eq!(
            h.until_return(T2).1,
            Ok(CallOutcome::Acquired { token: None })
        );
        waited
    }

    #[test]
    fn before_3_28_0_a_message_before_the_listener_is_lost() {
        let lock = Call::LockAsync { lease: None };
        assert_eq!(next_attempt_after_message("3.27.1", lock.clone()), 2_000);
        assert_eq!(next_attempt_after_message("3.28.0", lock), 0);
        let try_lock = Call::TryLockAsync {
            wait: Some(Millis(10_000)),
            lease: None,
        };
        assert_eq!(
            next_attempt_after_message("3.27.1", try_lock.clone()),
            2_000
        );
        assert_eq!(next_attempt_after_message("4.7.0", try_lock), 0);
    }

    /// The blocking `lock()` waits on the latch's semaphore, which keeps
    /// the permit: no release loses the message, and nothing pauses.
    #[test]
    fn a_blocking_waiter_never_loses_the_message() {
        let mut h = Harness::short(release("3.27.1"));
        h.m.interleave(true);
        h.hold_steps = true;
        h.acquire(T1, "l");
        h.call(T2, "l", Call::Lock { lease: None }).unwrap();
        let attempt = h.held_then_subscribed(2_000);
        h.reply(attempt, Value::Int(2_000));
        assert!(h.take_steps().is_empty());
        h.message("l", "0");
        h.expect(Purpose::Acquire);
    }

    /// A message that finds the listener registered runs it at once, in
    /// every release; and an interrupt does not reach an async call.
    #[test]
    fn a_registered_listener_is_run_and_ignores_interrupts() {
        let mut h = Harness::short(release("3.27.1"));
        h.acquire(T1, "l");
        h.call(T2, "l", Call::LockAsync { lease: None }).unwrap();
        let attempt = h.held_then_subscribed(2_000);
        h.reply(attempt, Value::Int(2_000));
        h.m.interrupt(h.now, T2);
        assert!(h.m.is_busy(T2), "an interrupt ended an async call");
        h.advance(100);
        h.message("l", "0");
        h.expect(Purpose::Acquire);
    }
}
