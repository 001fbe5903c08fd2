//! `read-acquire-keeps-ttl` (Redisson 3.11.1, #2144, commit 25914b000).
//!
//! Up to 3.11.0 a read acquire that joined other readers set K's TTL to
//! its own lease: a reader with a short lease shortened K under a reader
//! with a longer one, so K could expire while the longer reader still
//! held it. From 3.11.1 the script sets K's TTL to the larger of its
//! PTTL and the lease (read at tags redisson-3.11.0 and redisson-3.11.1).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "read-acquire-keeps-ttl",
    since: Some(Version::new(3, 11, 1)),
    upstream: "#2144",
    summary: "a joining reader keeps the read lock's longer TTL instead of setting its own lease",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::Harness;
    use crate::script::LockScript;
    use crate::{Call, LockKind, Millis, ThreadId};

    fn acquire_script(release: &str) -> String {
        let mut h = Harness::new(crate::machine::harness::release(release));
        let call = Call::Lock {
            lease: Some(Millis(100)),
        };
        h.call_kind(ThreadId(1), "l", LockKind::Read, call).unwrap();
        h.expect_send().1[1].clone()
    }

    #[test]
    fn a_reader_keeps_the_longer_ttl_from_3_11_1() {
        assert_eq!(
            acquire_script("3.11.0"),
            LockScript::ReadAcquireFixedLease.text()
        );
        assert_eq!(acquire_script("3.11.1"), LockScript::ReadAcquire.text());
    }
}
