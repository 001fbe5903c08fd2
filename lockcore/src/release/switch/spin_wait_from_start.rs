//! `spin-wait-from-start` (Redisson 3.22.1, #5002, PR #5099, commit
//! 295dec1a2).
//!
//! `RedissonSpinLock.tryLockAsync(wait, lease)` took a new start time
//! before each attempt and subtracted only that attempt's round trip from
//! the wait, so the back-off's sleeps were never counted: with the lock
//! held by another and 1 ms round trips, a 100 ms wait lasted about 100
//! attempts, most of them 128 ms apart (over 12 s). 3.22.1 measures the
//! wait from the call's start (`System.currentTimeMillis() - startTime >=
//! waitTime`). The blocking `tryLock` counted the sleeps before and after.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "spin-wait-from-start",
    since: Some(Version::new(3, 22, 1)),
    upstream: "#5002",
    summary: "a spin lock's tryLockAsync(wait) measures the wait from the call's start, not by its round trips alone (before: it waited far longer than asked)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{BackOff, Call, CallOutcome, Config, LockKind, Millis, Purpose, ThreadId, Value};

    const T1: ThreadId = ThreadId(1);

    /// `tryLockAsync(wait 200)` under a constant 64 ms back-off against a
    /// holder that never lets go, each attempt answered 10 ms after it is
    /// sent: when the call gives up, by release.
    fn gives_up_at(version: &str) -> u64 {
        let config = Config::builder()
            .release(release(version))
            .spin_back_off(BackOff::Constant)
            .build()
            .unwrap();
        let mut h = Harness::with_config(config);
        let call = Call::TryLockAsync {
            wait: Some(Millis(200)),
            lease: None,
        };
        h.call_kind(T1, "l", LockKind::Spin, call).unwrap();
        loop {
            let req = h.expect(Purpose::Acquire);
            h.advance(10);
            h.reply(req, Value::Int(30_000));
            if let Some(outcome) = h.returned(T1) {
                assert_eq!(outcome, Ok(CallOutcome::NotAcquired));
                return h.now.0;
            }
            h.advance(64);
        }
    }

    /// #5002: under 3.22.0 only the 10 ms round trips count, so the call
    /// gives up after 20 attempts (1 416 ms); under 3.22.1 after the
    /// first attempt that answers past 200 ms (232 ms).
    #[test]
    fn issue_5002_async_wait_counts_the_sleeps_from_3_22_1() {
        assert_eq!(gives_up_at("3.22.0"), 19 * 74 + 10);
        assert_eq!(gives_up_at("3.22.1"), 3 * 74 + 10);
    }
}
