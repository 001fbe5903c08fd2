//! `no-lock-resend` (Redisson 3.37.0, #6144).
//!
//! Since 3.37.0 the lock scripts go through `evalWriteSyncedNoRetryAsync`:
//! a response timeout fails the call instead of resending, so an acquire
//! can no longer run twice on the server (#1966's count of 2) and an unlock
//! resend can no longer find the lock gone. Renewals are still retried.
//! Redisson's fix reaches a single server's lock scripts only: outside
//! single-server mode a lock script goes as a batch, which `syncedEval`
//! runs with the batch's own retries whatever its `retry` says (read at
//! tags redisson-3.37.0 and 4.7.0), so a cluster's or a replicated
//! deployment's acquire that timed out is sent again. Not modelled yet:
//! here a timed-out batch is not resent (its refusals, `TRYAGAIN` and
//! `READONLY`, are: `attempts_of`).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "no-lock-resend",
    since: Some(Version::new(3, 37, 0)),
    upstream: "#6144",
    summary: "acquire and unlock are sent without command retry: a timed-out acquire or unlock fails at once",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::Harness;
    use crate::{Call, LockError, Purpose, ThreadId, TransportError};


    #[test]
    fn from_3_37_0_a_timed_out_acquire_fails_at_once() {
        let mut h = Harness::retrying("3.36.0");
        h.call(ThreadId(1), "l", Call::Lock { lease: None }).unwrap();
        assert_eq!(h.expect_attempt().1, Purpose::Acquire);
        h.advance(150);
        let (_, purpose, attempt) = h.expect_attempt();
        assert_eq!((purpose, attempt), (Purpose::Acquire, 1));

        let mut h = Harness::retrying("3.37.0");
        h.call(ThreadId(1), "l", Call::Lock { lease: None }).unwrap();
        assert_eq!(h.expect_attempt().1, Purpose::Acquire);
        h.advance(100);
        assert_eq!(
            h.until_return(ThreadId(1)).1,
            Err(LockError::Transport(TransportError::Timeout))
        );
    }

    /// Renewals are still resent.
    #[test]
    fn renewals_are_still_resent() {
        let mut h = Harness::retrying("3.37.0");
        h.acquire(ThreadId(1), "l");
        let _ = h.renewal_due();
        h.advance(150);
        let (_, purpose, attempt) = h.expect_attempt();
        assert_eq!((purpose, attempt), (Purpose::Renew, 1));
    }
}
