//! `jvm-wait-probe` (Redisson 3.26.1, commit d91031f5a, #5586).
//!
//! From 3.26.1 to 3.45.x, `CommandAsyncService.syncedEval` sends `WAIT 0
//! 0` before a lock script that would wait for replicas while the static
//! `WAIT_SUPPORTED` is unset (one flag per JVM: per client process here;
//! lines 1034-1049 at redisson-3.45.1). No error sets it to true, and the
//! script goes out with `WAIT`. An error starting "ERR unknown command"
//! sets it to false for good, and this and every later script go bare.
//! Any other error fails the script's call and leaves the flag unset, so
//! the next script probes again: a demoted primary's "ERR WAIT cannot be
//! used with replica instances" does (3.45.1 retries it first, as any
//! command's, `replica-wait-retried`). 3.46.0's per-client probe of both
//! commands replaces it (`wait-probe`). It fixed #5586 on servers without
//! `WAIT` (ElastiCache Serverless), which locksim does not model: every
//! modelled Redis answers `WAIT 0 0`, so here it adds a round trip before
//! a client's first synced script and fixes nothing. See
//! `machine/probe.rs`.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "jvm-wait-probe",
    since: Some(Version::new(3, 26, 1)),
    upstream: "#5586",
    summary: "before the first synced lock script, probe WAIT 0 0: an unknown-command error sends scripts bare for good, another error fails the call",
    fixes: false,
};

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, Config, Purpose, ThreadId, Value};

    fn client(version: &str) -> Harness {
        let mut h = Harness::with_config(
            Config::builder()
                .release(release(version))
                .replicas(1)
                .build()
                .unwrap(),
        );
        h.call(ThreadId(1), "l", Call::TryLock { wait: None, lease: None }).unwrap();
        h
    }

    /// 3.26.0 sends the script with its `WAIT` at once; 3.26.1 probes
    /// `WAIT 0 0` first, then sends them; the second script probes no
    /// more.
    #[test]
    fn from_3_26_1_the_first_synced_script_probes_wait() {
        let mut h = client("3.26.0");
        let (_, purpose, _) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::Acquire);

        let mut h = client("3.26.1");
        let (probe, purpose, command) = h.expect_send_purpose();
        assert_eq!((purpose, command), (Purpose::Probe, vec!["WAIT".into(), "0".into(), "0".into()]));
        h.reply(probe, Value::Int(0));
        let (script, purpose, _) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::Acquire);
        assert_eq!(h.probe_readings, [(true, None)]);
        let (wait, purpose, command) = h.expect_send_purpose();
        assert_eq!((purpose, command), (Purpose::Sync, vec!["WAIT".into(), "1".into(), "1000".into()]));
        h.reply(script, Value::Nil);
        h.reply(wait, Value::Int(1));
        h.expect_return(ThreadId(1)).unwrap();
        h.call(ThreadId(2), "l2", Call::TryLock { wait: None, lease: None }).unwrap();
        assert_eq!(h.expect_send_purpose().1, Purpose::Acquire);
    }

    /// An unknown-command refusal sends this and every later script
    /// bare; any other error fails the call and the next script probes
    /// again.
    #[test]
    fn the_probe_error_decides_bare_or_failed() {
        let mut h = client("3.45.0");
        let (probe, _, _) = h.expect_send_purpose();
        h.reply(probe, Value::Error("ERR unknown command 'WAIT', with args beginning with: '0' '0' ".into()));
        let (script, purpose, _) = h.expect_send_purpose();
        assert_eq!(purpose, Purpose::Acquire);
        assert_eq!(h.probe_readings, [(false, None)]);
        h.reply(script, Value::Nil);
        h.expect_return(ThreadId(1)).unwrap();

        let mut h = client("3.45.0");
        let (probe, _, _) = h.expect_send_purpose();
        h.reply(probe, Value::Error("ERR max number of clients reached".into()));
        assert!(h.probe_readings.is_empty());
        assert!(h.expect_return(ThreadId(1)).is_err());
        h.call(ThreadId(2), "l2", Call::TryLock { wait: None, lease: None }).unwrap();
        assert_eq!(h.expect_send_purpose().1, Purpose::Probe);
    }
}
