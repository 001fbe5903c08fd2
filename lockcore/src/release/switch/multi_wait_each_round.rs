//! `multi-wait-each-round` (Redisson 3.17.0, #4050, commit 52843b106).
//!
//! A multi-lock's `lock(lease)` / `lockInterruptibly(lease)` loops
//! `tryLock(waitTime, lease)` with a wait drawn from the lease: from
//! 3.17.0 a new draw every round, and no 2 000 ms floor. Before, the wait
//! was drawn once for the whole call (at least 2 000 ms), so two threads
//! that drew the same wait could fail each other's rounds in step for
//! ever (#4050 reports a deadlock).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "multi-wait-each-round",
    since: Some(Version::new(3, 17, 0)),
    upstream: "#4050 (commit 52843b106)",
    summary: "a multi-lock's lock(lease) draws its tryLock wait every round (before: once per call, at least 2 000 ms)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::multi_harness::round_waits;

    /// `lock(lease 6 000)` over two locks, the first held elsewhere: the
    /// waits of three rounds.
    #[test]
    fn the_wait_is_drawn_every_round_from_3_17_0() {
        let before = round_waits("3.16.7", 6_000, 3);
        assert!(before.iter().all(|w| *w == before[0]), "{before:?}");
        assert!((3_000..6_000).contains(&before[0]), "{before:?}");
        let after = round_waits("3.17.0", 6_000, 3);
        assert!(after.iter().all(|w| (3_000..6_000).contains(w)), "{after:?}");
        assert!(after.iter().any(|w| *w != after[0]), "{after:?}");
        assert_eq!(round_waits("3.16.7", 1_000, 1), [2_000]);
        assert!(round_waits("3.17.0", 1_000, 1)[0] < 1_000);
    }
}
