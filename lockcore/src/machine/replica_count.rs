//! How many replicas a synced lock script's `WAIT` asks for, release by
//! release (`CommandAsyncService.syncedEval` at the tags).
//!
//! - Before 3.18.1: the replicas the client knows
//!   ([`Config::replicas`](crate::Config::replicas)).
//! - 3.18.1 (`replica-count-from-info`, #4621, commit 95ec3ee70): `INFO
//!   REPLICATION` before every synced script, its `connected_slaves`
//!   line; so a replica that is down is not waited for, and with none
//!   connected the script goes without `WAIT`.
//! - 3.27.0 (`replica-count-cached`, #5614, commit 0ee5155b5): the count
//!   is kept per client (`MasterSlaveEntry.availableSlaves`) and `INFO` is
//!   sent only while it is unknown; it is forgotten when a `WAIT` counts
//!   fewer replicas than it asked for. A count that is too low stays: a
//!   replica that came back is never waited for (#6518). A count of 0
//!   stays for good in every release since: with 0 no `WAIT` is sent
//!   (`CommandBatchService`, `getSyncSlaves() > 0`), so nothing ever
//!   counts differently, and a client whose first synced script ran while
//!   no replica was connected never waits for replicas again.
//! - 3.46.0 (`replica-count-reset-on-more`, #6518, commit 67cc43151): a
//!   `WAIT` that counts more than it asked for forgets the count too. The
//!   probe's commit (4de934766, `wait-probe`) asks `INFO ALL` instead, for
//!   `aof_enabled` too, which is read and kept with the count
//!   (`MasterSlaveEntry.setAofEnabled` at tag redisson-4.7.0): a failover
//!   to a replica whose AOF differs is seen only once the count is
//!   forgotten and `INFO` asked again.
//!
//! `INFO` is a stage of the script's chained future, like the probe
//! before it: the script waits in this module's table and goes out once
//! `INFO` has answered; an `INFO` that fails fails the script's call.
//! A retried script keeps the count its batch was built with.

use bytes::Bytes;

use super::request::{Held, Kind, Owner, Tries};
use super::{LockClient, Purpose};
use crate::{Millis, RequestId, Switch, TransportError, Value};

impl LockClient {
    /// The count a synced script's batch asks for without asking `INFO`:
    /// `None` when `INFO` must be asked first.
    pub(super) fn known_replicas(&self) -> Option<u32> {
        if !self.switches.has(Switch::ReplicaCountFromInfo) {
            return Some(self.config.replicas);
        }
        if self.switches.has(Switch::ReplicaCountCached) {
            self.replica_count
        } else {
            None
        }
    }

    /// Sends `INFO`; `held` goes out once it has answered.
    pub(super) fn send_info(&mut self, now: Millis, held: Held) -> RequestId {
        let id = self.next_probe;
        self.next_probe += 1;
        let lock = held.lock.clone();
        self.asking.insert(id, held);
        let section: &'static [u8] = if self.switches.has(Switch::WaitProbe) {
            b"ALL"
        } else {
            b"REPLICATION"
        };
        let command: super::Command = [Bytes::from_static(b"INFO"), Bytes::from_static(section)]
            .into_iter()
            .collect();
        let kind = Kind::Command {
            purpose: Purpose::Info,
            command,
        };
        self.transmit(now, kind, lock, Owner::Info(id), Tries::default())
    }

    /// `INFO`'s reply: the script waiting on it goes out with the count,
    /// or its call fails with `INFO`'s error.
    pub(super) fn on_info_reply(
        &mut self,
        now: Millis,
        id: u64,
        reply: Result<Value, TransportError>,
        sent_at: Millis,
    ) {
        let Some(held) = self.asking.remove(&id) else {
            return;
        };
        let (count, aof) = match reply {
            Ok(value) => (connected_slaves(&value), aof_enabled(&value)),
            Err(e) => return self.deliver(now, held.owner, Err(e), sent_at),
        };
        // `INFO REPLICATION` (before 3.46.0) has no `aof_enabled`, and
        // nothing before 3.46.0 reads it.
        self.aof_read = aof && self.switches.has(Switch::WaitProbe);
        if self.switches.has(Switch::ReplicaCountCached) {
            self.replica_count = Some(count);
        }
        if self.replicas_read.replace(count) != Some(count) {
            self.event(super::Event::ReplicasCounted { connected: count });
        }
        let tries = Tries {
            replicas: Some(count),
            staged: true,
            ..held.tries
        };
        self.transmit(now, held.kind, held.lock, held.owner, tries);
    }

    /// What a batch's `WAIT`, which asked for `asked` and counted
    /// `synced`, does to the cached count (3.27.0+).
    pub(super) fn recount(&mut self, asked: u32, synced: i64) {
        if !self.switches.has(Switch::ReplicaCountCached) {
            return;
        }
        let asked = i64::from(asked);
        if synced < asked {
            self.replica_count = None;
        } else if synced > asked {
            if self.switches.has(Switch::ReplicaCountResetOnMore) {
                self.replica_count = None;
            } else {
                self.reach(super::Sometimes::ReplicaCountKeptLow);
            }
        }
    }
}

/// `connected_slaves` of an `INFO` reply, 0 when absent or unreadable
/// (Redisson's `getOrDefault("connected_slaves", "0")`).
fn connected_slaves(value: &Value) -> u32 {
    info_field(value, "connected_slaves:")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Whether an `INFO` reply says `aof_enabled:1` (Redisson's
/// `"1".equals(getOrDefault("aof_enabled", "0"))`).
fn aof_enabled(value: &Value) -> bool {
    info_field(value, "aof_enabled:").as_deref() == Some("1")
}

/// The value of the first line of an `INFO` reply that starts with
/// `prefix`.
fn info_field(value: &Value, prefix: &str) -> Option<String> {
    let text = match value {
        Value::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Simple(s) => s.clone(),
        _ => return None,
    };
    text.lines()
        .find_map(|line| line.trim_end().strip_prefix(prefix))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_is_read_from_the_replication_section() {
        let info = "# Replication\r\nrole:master\r\nconnected_slaves:2\r\nmaster_repl_offset:9\r\n";
        assert_eq!(
            connected_slaves(&Value::Bulk(info.as_bytes().to_vec().into())),
            2
        );
        assert_eq!(
            connected_slaves(&Value::Bulk(Bytes::from_static(b"# Server\r\n"))),
            0
        );
        assert_eq!(connected_slaves(&Value::Int(3)), 0);
    }

    /// `aof_enabled` is read from `INFO ALL`'s persistence section; only
    /// `1` is on, and a reply without it is off.
    #[test]
    fn the_aof_is_read_from_the_persistence_section() {
        let info = |t: &str| Value::Bulk(Bytes::from(t.to_owned()));
        assert!(aof_enabled(&info(
            "# Persistence\r\nloading:0\r\naof_enabled:1\r\n"
        )));
        assert!(!aof_enabled(&info("# Persistence\r\naof_enabled:0\r\n")));
        assert!(!aof_enabled(&info(
            "# Replication\r\nconnected_slaves:1\r\n"
        )));
        assert!(!aof_enabled(&Value::Int(1)));
    }

    /// A renewal that reads `INFO` first (3.18.1 to 3.26.x ask before
    /// every synced script) reports its stage as it goes, so a history
    /// dates its round from the `INFO`; from 3.27.0 the count is kept
    /// and the renewal goes at once, with no stage to report.
    #[test]
    fn a_renewal_behind_its_info_reports_its_stage() {
        use crate::machine::harness::Harness;
        use crate::{Call, CallOutcome, LockName, Purpose, ThreadId};
        // 3.26.1+ probes `WAIT` before the first synced script.
        for (version, probes, staged) in [("3.20.1", false, true), ("3.27.0", true, false)] {
            let mut h = Harness::with_replicas(version, 1);
            h.call(ThreadId(1), "l", Call::Lock { lease: None })
                .unwrap();
            if probes {
                h.probed();
            }
            let (acquire, _) = h.expect_send();
            let (wait, _) = h.expect_send();
            h.reply(acquire, Value::Nil);
            h.reply(wait, Value::Int(1));
            assert_eq!(
                h.expect_return(ThreadId(1)),
                Ok(CallOutcome::Acquired { token: None })
            );
            assert!(h.renewals_staged.is_empty(), "{version}");
            h.advance(10_500);
            let (_, purpose, _) = h.expect_send_purpose();
            assert_eq!(purpose, Purpose::Renew, "{version}");
            let expected: &[LockName] = if staged {
                &[LockName::new("l").unwrap()]
            } else {
                &[]
            };
            assert_eq!(h.renewals_staged, expected, "{version}");
        }
    }

    /// #6518's precondition: a `WAIT` that counts more replicas than the
    /// cached count asked for. 3.45.1 keeps the count (the place is
    /// noted), 3.46.0 forgets it and notes nothing.
    #[test]
    fn a_count_kept_below_the_replicas_that_synced_is_noted() {
        use crate::machine::harness::Harness;
        use crate::{Call, Sometimes, ThreadId};
        for (version, kept) in [("3.45.1", true), ("3.46.0", false)] {
            let mut h = Harness::with_replicas(version, 1);
            h.call(ThreadId(1), "l", Call::Lock { lease: None })
                .unwrap();
            h.probed();
            let (acquire, _) = h.expect_send();
            let (wait, _) = h.expect_send();
            h.reply(acquire, Value::Nil);
            h.reply(wait, Value::Int(2));
            h.expect_acquired(ThreadId(1));
            assert_eq!(
                h.m.reached().has(Sometimes::ReplicaCountKeptLow),
                kept,
                "{version}"
            );
        }
    }
}
