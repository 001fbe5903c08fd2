//! `fencing` (locksim's own; no Redisson release has it).
//!
//! Every acquisition returns a fencing token that grows per lock name, the
//! holder gets a lease-lost signal when the lock is gone or its lease
//! deadline passes unrenewed, and renewal retries after errors until the
//! lease would really have ended. With it the renewal bookkeeping is the
//! per-lock chain of `expiration-entry` with fenced reply handling,
//! whatever `batched-renewal` says: the `fenced` profile is the newest
//! release plus this switch.

use super::SwitchInfo;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "fencing",
    since: None,
    upstream: "locksim",
    summary: "fencing tokens, a lease-lost signal and renewal retried until the lease would really end (not in any Redisson release)",
    // Not a fix: locksim's own design, in no release.
    fixes: false,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, ThreadId};
    use crate::script::LockScript;

    /// `fenced` is the newest release plus this switch, and the switch
    /// works on any release (by SHA where the release uses its script
    /// cache, 3.46+).
    #[test]
    fn fencing_sends_the_fenced_script_on_any_release() {
        let fenced = LockScript::AcquireFenced;
        for (r, script) in [
            ("fenced", fenced.sha1()),
            ("4.7.0 +fencing", fenced.sha1()),
            ("3.23.4 +fencing", fenced.text()),
        ] {
            let mut h = Harness::short(release(r));
            h.call(ThreadId(1), "l", Call::Lock { lease: None }).unwrap();
            assert_eq!(h.expect_send().1[1], script, "{r}");
        }
    }
}
