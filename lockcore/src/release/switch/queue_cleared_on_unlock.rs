//! `queue-cleared-on-unlock` (Redisson 3.46.0, #6144, commit a98cd54a1).
//!
//! "Fixed - Watchdog fails to renew on reentry locks #6144": a thread's
//! last unlock removes every place it has in `LockEntry`'s queue
//! (`threadsQueue.removeIf(v -> v == threadId)`), so a re-entrant holder
//! leaves no stale head behind (see `thread-queue`).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "queue-cleared-on-unlock",
    since: Some(Version::new(3, 46, 0)),
    upstream: "#6144",
    summary: "a thread's last unlock removes all its places in the renewal entry's queue, so a re-entrant holder leaves no stale head",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use super::super::thread_queue::tests::renewals_after_reentrant_hold;

    /// From 3.46.0 thread 2 is renewed every round, as before 3.37.
    #[test]
    fn from_3_46_0_a_sibling_after_a_reentrant_hold_is_renewed() {
        assert_eq!(renewals_after_reentrant_hold("3.46.0"), vec!["uuid-a:2"; 4]);
        assert_eq!(renewals_after_reentrant_hold("4.7.0"), vec!["uuid-a:2"; 4]);
    }
}
