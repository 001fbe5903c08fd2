//! `unlock-latch` (Redisson 3.24.0, #4871).
//!
//! Before 3.24 an unlock whose reply came after the response timeout was
//! resent; the first copy had already released the lock, so the resend
//! found it gone and the owner got "attempt to unlock lock, not locked by
//! current thread". 3.24 gives every unlock call a request id and a latch
//! key `redisson_unlock_latch:{K}:<id>` that the script sets to its result
//! (TTL `(timeout + retryInterval) × retryAttempts`); a resend with the
//! same id finds the latch and returns the stored result. Once the script
//! has answered the client deletes the latch (`DEL`, fire and forget). From
//! 3.37 (`no-lock-resend`) the unlock is no longer resent, so a late reply
//! gives a timeout error instead.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "unlock-latch",
    since: Some(Version::new(3, 24, 0)),
    upstream: "#4871",
    summary: "each unlock call stores its result in a latch key, so a resent unlock replays it instead of finding the lock gone",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::Harness;
    use crate::{Call, CallOutcome, Purpose, ThreadId};
    use crate::Value;
use crate::script::LockScript;


    /// The unlock goes out with its latch; its resend carries the same
    /// latch; the replayed 1 is a released unlock, then the latch is
    /// deleted.
    #[test]
    fn from_3_24_0_a_resent_unlock_replays_the_latch() {
        let mut h = Harness::retrying("3.24.0");
        h.show_cleanup = true;
        h.acquire(ThreadId(1), "l");
        h.call(ThreadId(1), "l", Call::Unlock).unwrap();
        let (_, first) = h.expect_send();
        assert_eq!(first[1], LockScript::UnlockLatched.text());
        assert_eq!(first[2], "3");
        // The id: the uuid's first 16 hex digits ("uuid-a": d, a), padded,
        // then the unlock's number, as Redisson's 32 hex digits.
        assert_eq!(
            first[5],
            "redisson_unlock_latch:{l}:00000000000000da0000000000000001"
        );
        assert_eq!(&first[6..], ["0", "30000", "uuid-a:1", "PUBLISH", "150"]);
        h.advance(150);
        let (resend, again) = h.expect_send();
        assert_eq!(again, first);
        h.reply(resend, Value::Int(1));
        let (del, purpose, command) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::Cleanup);
        assert_eq!(command, ["DEL", first[5].as_str()]);
        let (_, result) = h.until_return(ThreadId(1));
        assert_eq!(result, Ok(CallOutcome::Unlocked { released: true }));
        h.reply(del, Value::Int(1));
        h.expect_quiet();
    }

    #[test]
    fn before_3_24_0_the_unlock_has_no_latch() {
        let mut h = Harness::retrying("3.23.4");
        h.acquire(ThreadId(1), "l");
        h.call(ThreadId(1), "l", Call::Unlock).unwrap();
        assert_eq!(h.expect_send().1[1], LockScript::UnlockPublishArg.text());
    }
}
