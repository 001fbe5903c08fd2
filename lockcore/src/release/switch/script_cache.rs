//! `script-cache` (Redisson 3.46.0, #5507, commit b380d911e).
//!
//! `useScriptCache` (there since 3.9.0, #1676) became `true` by default in
//! 3.46.0. With it, `CommandAsyncService.evalAsync` sends a script as
//! `EVALSHA <sha1 of its text>`; when Redis answers `NOSCRIPT` (a fresh
//! or restarted Redis, whose script cache is empty), it sends `SCRIPT LOAD
//! <text>` and, once that answered, the same `EVALSHA` again; a failed
//! `SCRIPT LOAD` fails the command with its error. It remembers nothing:
//! every command starts with `EVALSHA` (read at tags redisson-3.46.0,
//! `CommandAsyncService.java:536-617`, and redisson-4.7.0, `:578-659`).
//! Every lock script goes this way on a single server. A timed-out
//! `EVALSHA` is resent as `EVALSHA`.
//!
//! Where the client sees replicas, `syncedEval` runs the script in a
//! batch followed by `WAIT`. A batch does not take the path above
//! (`CommandBatchService.isEvalCacheActive()` is false), but its
//! `loadScripts` (there since before 3.46.0, live once the option is on)
//! rewrites every `EVAL` of the batch to `EVALSHA`, first sending
//! `SCRIPT LOAD` for the scripts that `ServiceManager`'s static
//! per-address set (`SCRIPT_SHA_CACHE`) does not hold, and adding them
//! once loaded; the set forgets an address when its connection drops
//! (`onDisconnect`). The machine's `batch_script` does the same. A
//! batch's `NOSCRIPT` therefore comes only from a node that lost a script
//! without the client seeing it go, or a resend that reached another node
//! than its load (a failover), and until 3.48.0 (commit 32df429bd,
//! "NOSCRIPT error is thrown after failover by RLock methods",
//! `batch-noscript-reloads`) it failed the lock call; from 3.48.0 the
//! call loads the script and runs `syncedEval` again. Read at tags
//! redisson-3.47.0 and redisson-4.7.0, `CommandBatchService.java:495-531`
//! and `CommandAsyncService.syncedEval`.
//!
//! The effect on the lock is time: after every Redis restart, each lock
//! command a client sends first costs two more round trips; with
//! replicas, the first batch of each script after each lost connection
//! costs one (its `SCRIPT LOAD`).

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "script-cache",
    since: Some(Version::new(3, 46, 0)),
    upstream: "#5507",
    summary: "lock scripts go as EVALSHA; a NOSCRIPT (an empty script cache, after a Redis restart) costs a SCRIPT LOAD and a second EVALSHA",
    // Not a fix: the wire, and the time a command takes after a restart.
    fixes: false,
};

#[cfg(test)]
mod tests {
    use crate::Value;
    use crate::machine::harness::{Harness, release};
    use crate::script::LockScript;
    use crate::{Call, CallOutcome, Purpose, ThreadId};

    const T1: ThreadId = ThreadId(1);

    /// 3.45.1 sends the acquire as `EVAL`; 3.46.0 as `EVALSHA` with the
    /// text's SHA1 and the same keys and arguments.
    #[test]
    fn from_3_46_0_scripts_go_by_sha() {
        let mut h = Harness::short(release("3.45.1"));
        h.call(T1, "l", Call::Lock { lease: None }).unwrap();
        let (_, eval) = h.expect_send();
        assert_eq!(eval[0], "EVAL");
        assert_eq!(eval[1], LockScript::Acquire.text());

        let mut h = Harness::short(release("3.46.0"));
        h.call(T1, "l", Call::Lock { lease: None }).unwrap();
        let (_, evalsha) = h.expect_send();
        assert_eq!(evalsha[0], "EVALSHA");
        assert_eq!(evalsha[1], LockScript::Acquire.sha1());
        assert_eq!(evalsha[2..], eval[2..]);
    }

    /// `NOSCRIPT`: `SCRIPT LOAD` of the text, then the same `EVALSHA`
    /// again, whose reply is the call's. A client that gave up at the
    /// `NOSCRIPT`, or resent `EVAL`, fails the assertions.
    #[test]
    fn noscript_loads_the_script_and_sends_it_again() {
        let mut h = Harness::short(release("4.7.0"));
        h.call(T1, "l", Call::Lock { lease: None }).unwrap();
        let (first, evalsha) = h.expect_send();
        h.reply(first, Value::Error("NOSCRIPT No matching script.".into()));
        let (load, purpose, command) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::ScriptLoad);
        assert_eq!(command, ["SCRIPT", "LOAD", LockScript::Acquire.text()]);
        h.expect_quiet();
        h.reply(load, Value::bulk(LockScript::Acquire.sha1()));
        let (again, purpose, command) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::Acquire);
        assert_eq!(command, evalsha);
        h.reply(again, Value::Nil);
        assert!(matches!(
            h.expect_return(T1),
            Ok(CallOutcome::Acquired { .. })
        ));
    }

    /// The `EVALSHA` after the load is the same renewal sent again: an
    /// observer sees attempt 1 (so a renewal sent before an unlock and
    /// answered `NOSCRIPT` after it is a resend, not the watchdog renewing
    /// an unlocked lock), and a timeout resends it as attempt 2.
    #[test]
    fn the_send_after_the_load_is_a_resend() {
        let mut h = Harness::retrying("4.7.0");
        h.acquire(T1, "l");
        let renew = h.renewal_due();
        h.reply(renew, Value::Error("NOSCRIPT No matching script.".into()));
        let load = h.expect(Purpose::ScriptLoad);
        h.reply(load, Value::bulk(LockScript::RenewBatch.sha1()));
        let (_, purpose, attempt) = h.expect_attempt();
        assert_eq!((purpose, attempt), (Purpose::Renew, 1));
        h.advance(150);
        let (_, purpose, attempt) = h.expect_attempt();
        assert_eq!((purpose, attempt), (Purpose::Renew, 2));
    }

    /// A `SCRIPT LOAD` that fails fails the call with its error.
    #[test]
    fn a_failed_load_fails_the_call() {
        let mut h = Harness::short(release("4.7.0"));
        h.call(T1, "l", Call::IsLocked).unwrap();
        let (query, _) = h.expect_send();
        h.reply(query, Value::Int(0));
        let _ = h.expect_return(T1);
        h.call(T1, "l", Call::ForceUnlock).unwrap();
        let (first, _) = h.expect_send();
        h.reply(first, Value::Error("NOSCRIPT No matching script.".into()));
        let (load, _) = h.expect_send();
        h.reply(load, Value::Error("ERR boom".into()));
        assert!(h.expect_return(T1).is_err());
        h.expect_quiet();
    }

    /// With replicas the script goes in a batch with `WAIT`, as `EVALSHA`
    /// after the batch's own `SCRIPT LOAD`; the client's second batch of
    /// that script loads nothing. A client that sent `EVAL`, or loaded
    /// each time, fails the assertions.
    #[test]
    fn with_replicas_the_batch_loads_then_sends_evalsha() {
        let config = crate::Config::builder()
            .release(release("4.7.0"))
            .replicas(1)
            .build()
            .unwrap();
        let mut h = Harness::with_config(config);
        h.call(T1, "l", Call::Lock { lease: Some(crate::Millis(10_000)) })
            .unwrap();
        h.probed();
        let (first, command) = h.expect_send();
        assert_eq!(command[..2], ["EVALSHA", LockScript::Acquire.sha1()]);
        assert_eq!(h.batch_loads, [LockScript::Acquire.sha1()]);
        let (wait, _) = h.expect_send();
        h.reply(wait, Value::Int(1));
        h.reply(first, Value::Nil);
        let _ = h.expect_return(T1);
        h.call(T1, "l", Call::Lock { lease: Some(crate::Millis(10_000)) })
            .unwrap();
        let (_, command) = h.expect_send();
        assert_eq!(command[0], "EVALSHA");
        assert_eq!(h.batch_loads.len(), 1);
    }
}
