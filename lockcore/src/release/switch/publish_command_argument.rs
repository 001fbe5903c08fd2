//! `publish-command-argument` (Redisson 3.22.0, #5047, commit 823c786a1).
//!
//! For sharded pub/sub, commit 823c786a1 (first in 3.22.0) stopped writing
//! `'publish'` into the unlock and force-unlock scripts: the command comes
//! as an argument (`getSubscribeService().getPublishCommand()`, `PUBLISH`
//! unless a cluster supports `SPUBLISH`), `ARGV[4]` of the unlock script
//! and `ARGV[2]` of force unlock. The effect on a single Redis is the same;
//! the texts and arguments differ, which matters to anyone matching
//! scripts by SHA or reading `MONITOR`. The 3.24.0 latched unlock
//! (`unlock-latch`) was written with the argument from the start.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "publish-command-argument",
    since: Some(Version::new(3, 22, 0)),
    upstream: "#5047",
    summary: "unlock and force unlock publish with the command passed as an argument (PUBLISH) rather than written in the script (wire text only; same effect)",
    // Not a fix: the wire text only; the effect is the same.
    fixes: false,
};

#[cfg(test)]
mod tests {
    use crate::Value;
    use crate::machine::harness::{Harness, release};
    use crate::script::LockScript;
    use crate::{Call, ThreadId};

    const T1: ThreadId = ThreadId(1);

    /// The unlock a `version` client sends for a held lock: the script
    /// text and its arguments after the keys.
    fn unlock(version: &str) -> (String, Vec<String>) {
        let mut h = Harness::short(release(version));
        h.acquire(T1, "l");
        h.call(T1, "l", Call::Unlock).unwrap();
        let (_, command) = h.expect_send();
        (command[1].clone(), command[3..].to_vec())
    }

    /// What `forceUnlock` sends.
    fn force_unlock(version: &str) -> (String, Vec<String>) {
        let mut h = Harness::short(release(version));
        h.call(T1, "l", Call::ForceUnlock).unwrap();
        let (request, command) = h.expect_send();
        h.reply(request, Value::Int(0));
        (command[1].clone(), command[3..].to_vec())
    }

    /// 3.21: `'publish'` in the script, three arguments; 3.22: the
    /// command as `ARGV[4]`; 3.24: the latched script keeps it.
    #[test]
    fn from_3_22_0_unlock_passes_the_publish_command() {
        let (text, args) = unlock("3.21.3");
        assert_eq!(text, LockScript::Unlock.text());
        assert_eq!(args, ["l", "redisson_lock__channel:{l}", "0", "3000", "uuid-a:1"]);
        let (text, args) = unlock("3.22.0");
        assert_eq!(text, LockScript::UnlockPublishArg.text());
        assert_eq!(&args[2..], ["0", "3000", "uuid-a:1", "PUBLISH"]);
        let (text, args) = unlock("3.24.0");
        assert_eq!(text, LockScript::UnlockLatched.text());
        assert_eq!(args[6], "PUBLISH");
    }

    #[test]
    fn from_3_22_0_force_unlock_passes_the_publish_command() {
        let (text, args) = force_unlock("3.21.3");
        assert_eq!(text, LockScript::ForceUnlock.text());
        assert_eq!(args, ["l", "redisson_lock__channel:{l}", "0"]);
        let (text, args) = force_unlock("3.45.1");
        assert_eq!(text, LockScript::ForceUnlockPublishArg.text());
        assert_eq!(args, ["l", "redisson_lock__channel:{l}", "0", "PUBLISH"]);
    }
}
