//! `read-lock-renewal` (Redisson 3.8.1, #1604, commit 387dd9307).
//!
//! Up to 3.8.0 `RedissonReadLock` inherited `RLock`'s renewal script: the
//! watchdog kept the hash K alive while the reader's field existed, but
//! never touched the reader's `{K}:<uuid>:<tid>:rwlock_timeout:<n>` keys.
//! They expired after the acquire's lease (the watchdog timeout), and the
//! next read unlock, which sets K's TTL to the longest timeout key left,
//! found none alive and deleted K, although other watchdog readers still
//! believed they held it; a writer could then take the lock beside them.
//! 3.8.1 gives the read lock its own renewal script (read at tag
//! redisson-3.8.1, `RedissonReadLock.renewExpirationAsync`): if the
//! caller's field exists, PEXPIRE K and, when the hash has more than one
//! field, every timeout key of every numeric field.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "read-lock-renewal",
    since: Some(Version::new(3, 8, 1)),
    upstream: "#1604",
    summary: "the watchdog renews a read lock's per-reader timeout keys, not only its hash",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::Harness;
    use crate::script::LockScript;
    use crate::{Purpose, ThreadId};

    fn renewal_script(release: &str) -> String {
        let mut h = Harness::new(crate::machine::harness::release(release));
        h.acquire_kind(ThreadId(1), "l", crate::LockKind::Read);
        h.advance(10_000);
        let (_, command) = h.expect_send_of(Purpose::Renew);
        command[1].clone()
    }

    /// 3.8.0 renews a read lock with `RLock`'s script (K alone); 3.8.1
    /// with the read lock's own, which extends the timeout keys.
    #[test]
    fn the_read_lock_renews_its_timeout_keys_from_3_8_1() {
        assert_eq!(renewal_script("3.8.0"), LockScript::Renew.text());
        assert_eq!(renewal_script("3.8.1"), LockScript::ReadRenew.text());
    }
}
