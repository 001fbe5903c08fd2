//! `combined-acquire-script` (Redisson 3.19.0, commit 8c39beaa5).
//!
//! Commit 8c39beaa5 ("refactoring", first in 3.19.0) merged the two
//! branches of the acquire script. The effect on Redis is the same; the
//! text differs, which matters to anyone matching scripts by SHA. Releases
//! 3.12.3 to 3.18.x sent a third text (`hincrby` in the first branch,
//! #2551); locksim sends the older text for them, with the same effect.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "combined-acquire-script",
    since: Some(Version::new(3, 19, 0)),
    upstream: "commit 8c39beaa5",
    summary: "the acquire script tests 'exists or hexists' in one branch (wire text only; same effect)",
    // Not a fix: the wire text only; the effect is the same.
    fixes: false,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, ThreadId};
    use crate::script::LockScript;

    fn script(version: &str) -> String {
        let mut h = Harness::short(release(version));
        h.call(ThreadId(1), "l", Call::Lock { lease: None }).unwrap();
        h.expect_send().1[1].clone()
    }

    #[test]
    fn from_3_19_0_the_acquire_script_has_one_branch() {
        assert_eq!(script("3.18.0"), LockScript::AcquireLegacy.text());
        assert_eq!(script("3.19.0"), LockScript::Acquire.text());
    }
}
