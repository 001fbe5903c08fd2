//! `batch-noscript-reloads` (Redisson 3.48.0, commit 32df429bd, "Fixed -
//! NOSCRIPT error is thrown after failover by RLock methods"; no issue).
//!
//! From 3.46.0 a synced lock script's batch goes as `EVALSHA`, loaded
//! first only where the client's per-address set says it is missing
//! (`CommandBatchService.loadScripts`, see the machine's `batch_script`);
//! a batch resent to another node, or a node whose cache was flushed
//! without the client losing its connection, answers `NOSCRIPT`. Up to
//! 3.47.0 that fails the lock call: `lock()`, `tryLock()` and `unlock()`
//! throw `RedisException: NOSCRIPT No matching script. Please use EVAL.`
//! (`CommandAsyncService.syncedEval` at redisson-3.47.0, `:1134-1136`),
//! and an unlock so failed still cancels renewal. 3.48.0 decodes it as
//! `RedisNoScriptException` (`CommandDecoder.java:425-427`) and
//! `syncedEval` loads the script on the key's current primary and runs
//! itself again (`:1137-1160`; 4.7.0 `:1205-1216`).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "batch-noscript-reloads",
    since: Some(Version::new(3, 48, 0)),
    upstream: "commit 32df429bd",
    summary: "a synced lock script's batch answered NOSCRIPT loads the script and runs the synced eval again, where the call failed",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::Value;
    use crate::machine::harness::{Harness, release};
    use crate::script::LockScript;
    use crate::{Call, CallOutcome, Purpose, ThreadId};

    const T1: ThreadId = ThreadId(1);
    const NOSCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";

    fn replicated(version: &str) -> Harness {
        let config = crate::Config::builder()
            .release(release(version))
            .replicas(1)
            .build()
            .unwrap();
        let mut h = Harness::with_config(config);
        h.show_batch_loads = true;
        h
    }

    /// The acquire's batch: its `SCRIPT LOAD`, answered, then the
    /// `EVALSHA` (returned) and its `WAIT`.
    fn acquire_batch(h: &mut Harness) -> crate::RequestId {
        h.call(T1, "l", Call::Lock { lease: None }).unwrap();
        h.probed();
        let (load, purpose, command) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::BatchLoad);
        assert_eq!(command, ["SCRIPT", "LOAD", LockScript::Acquire.text()]);
        h.expect_quiet();
        h.reply(load, Value::bulk(LockScript::Acquire.sha1()));
        let (script, purpose, command) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::Acquire);
        assert_eq!(command[..2], ["EVALSHA", LockScript::Acquire.sha1()]);
        let (wait, purpose, _) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::Sync);
        h.reply(wait, Value::Int(1));
        script
    }

    /// 3.47.0: a batch's `NOSCRIPT` is the call's error, with no load.
    #[test]
    fn before_3_48_0_the_call_fails() {
        let mut h = replicated("3.47.0");
        let script = acquire_batch(&mut h);
        h.reply(script, Value::Error(NOSCRIPT.into()));
        let error = format!("{:?}", h.expect_return(T1));
        assert!(error.contains("NOSCRIPT"), "{error}");
        h.expect_quiet();
    }

    /// 3.48.0: `SCRIPT LOAD`, then the synced eval again from its `EVAL`:
    /// the client still holds the script loaded, so the batch goes as
    /// `EVALSHA` at once, with a new `WAIT`, and its reply is the call's.
    #[test]
    fn from_3_48_0_the_script_is_loaded_and_the_batch_runs_again() {
        let mut h = replicated("3.48.0");
        let script = acquire_batch(&mut h);
        h.reply(script, Value::Error(NOSCRIPT.into()));
        let (load, purpose, command) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::ScriptLoad);
        assert_eq!(command, ["SCRIPT", "LOAD", LockScript::Acquire.text()]);
        h.expect_quiet();
        h.reply(load, Value::bulk(LockScript::Acquire.sha1()));
        let (again, purpose, command) = h.expect_send_purpose();
        assert_eq!((purpose, &command[0][..]), (Purpose::Acquire, "EVALSHA"));
        let (wait, purpose, _) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::Sync);
        h.reply(wait, Value::Int(1));
        h.reply(again, Value::Nil);
        assert!(matches!(
            h.expect_return(T1),
            Ok(CallOutcome::Acquired { .. })
        ));
    }

    /// A lost connection empties the set: the next batch loads again.
    #[test]
    fn a_lost_connection_forgets_the_loaded_scripts() {
        let mut h = replicated("4.7.0");
        let script = acquire_batch(&mut h);
        h.reply(script, Value::Nil);
        let _ = h.expect_return(T1);
        h.m.on_connection_lost(h.now);
        h.call(T1, "l", Call::Unlock).unwrap();
        let (_, purpose, command) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::BatchLoad);
        assert_eq!(command[2], LockScript::UnlockLatched.text());
    }
}
