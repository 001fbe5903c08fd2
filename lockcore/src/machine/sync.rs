//! The `WAIT` after a lock script, and what its count decides.
//!
//! With replicas (a master-slave or sentinel config, never a single
//! server), every lock script (acquire, unlock, renewal, force-unlock)
//! goes out from 3.16.7 (`lock-waits-for-replicas`, #3994, commit
//! e2b3973c3) as a batch: the script, then `WAIT <replicas>
//! <slavesSyncTimeout>` on the same connection. The batch's timeout is
//! the response timeout plus the sync timeout, and the script's caller is
//! answered only once the `WAIT` has answered: if it counted fewer
//! replicas than the client knows of, the script (which ran on the
//! primary) fails with "Only X of Y slaves were synced"; from 3.17.5
//! (`no-synced-replicas-only`, commit 12af11867) only when it counted
//! none: "None of slaves were synced". A renewal that fails so is a failed
//! renewal, with whatever the release does then; an acquire that fails so
//! leaves the key to the thread that was told it failed (#4822) until
//! 3.20.0's rollback.
//!
//! Both commands go out on the client's one command connection, so a
//! `WAIT` that blocks holds back what the client sends after it; Redisson
//! runs a batch on a connection of its pool. The replica count is the
//! configured one ([`Config::replicas`](crate::Config::replicas)) before
//! 3.18.1, and from it `INFO`'s `connected_slaves`, read before the
//! script and cached from 3.27.0 (see `replica_count`); a count of 0
//! sends the script without `WAIT`.

use bytes::Bytes;

use super::probe::SyncWith;
use super::request::{Kind, Pending};
use super::{LockClient, Output, Purpose};
use crate::{LockName, RequestId, Switch, TransportError, Value};

/// A lock script's `WAIT`, and the two replies as they come.
#[derive(Debug, Clone)]
pub(super) struct Sync {
    /// The `WAIT`'s request.
    wait: RequestId,
    /// The script's reply, once it came.
    reply: Option<Value>,
    /// How many replicas the `WAIT` counted, once it answered.
    synced: Option<i64>,
    /// The script's error, held while its `WAIT` is still to answer (a
    /// replica's `READONLY`, `replica_wait`).
    error: Option<TransportError>,
    /// How many replicas the `WAIT` asks for (`replica_count`).
    asked: u32,
}

impl LockClient {
    /// Whether a command of `kind` goes out with a `WAIT` after it.
    pub(super) fn waits_for_replicas(&self, kind: &Kind) -> bool {
        // A cluster client goes through the batch path with no replica
        // known too (`info-outside-single-server`).
        (self.config.replicas > 0
            || (self.config.cluster_shards > 0
                && self.switches.has(Switch::InfoOutsideSingleServer)))
            && self.switches.has(Switch::LockWaitsForReplicas)
            && matches!(
                kind,
                Kind::Command {
                    purpose: Purpose::Acquire
                        | Purpose::Unlock
                        | Purpose::Renew
                        | Purpose::ForceUnlock
                        | Purpose::AcquireFailed,
                    ..
                }
            )
    }

    /// Sends the `WAIT` (or, 3.46+ with AOF, the `WAITAOF 1`) that
    /// follows script request `script`.
    pub(super) fn send_wait(
        &mut self,
        script: RequestId,
        (lock, shard): (LockName, crate::Shard),
        with: SyncWith,
        asked: u32,
    ) -> Sync {
        let wait = RequestId(self.next_request);
        self.next_request += 1;
        let replicas = Bytes::from(asked.to_string());
        let timeout = Bytes::from(self.config.slaves_sync_timeout.0.to_string());
        let command: super::Command = if with == SyncWith::WaitAof {
            // numlocal 1: the primary's own fsync too.
            [
                Bytes::from_static(b"WAITAOF"),
                Bytes::from_static(b"1"),
                replicas,
                timeout,
            ]
            .into()
        } else {
            [Bytes::from_static(b"WAIT"), replicas, timeout].into()
        };
        self.push(Output::Send {
            request: wait,
            purpose: Purpose::Sync,
            shard,
            lock,
            command,
            attempt: 0,
            staged: false,
        });
        self.syncs.insert(wait, script);
        Sync {
            wait,
            reply: None,
            synced: None,
            error: None,
            asked,
        }
    }

    /// Forgets the `WAIT` of a script request that is given up (timed
    /// out, cancelled): its late reply is ignored.
    pub(super) fn forget_sync(&mut self, pending: &Pending) {
        if let Some(sync) = &pending.sync {
            self.syncs.remove(&sync.wait);
        }
    }

    /// The `WAIT`'s reply for script request `script`: `Some` with what
    /// the script's caller gets once both replies are in (or the batch
    /// failed), `None` while the script's own reply is still to come or
    /// the script was given up.
    pub(super) fn wait_answered(
        &mut self,
        script: RequestId,
        reply: Result<Value, TransportError>,
    ) -> Option<Result<Value, TransportError>> {
        if matches!(reply, Err(TransportError::Redis(_))) && self.requests.contains_key(&script) {
            self.reach(super::Sometimes::SyncRefused);
        }
        let sync = self.requests.get_mut(&script)?.sync.as_mut()?;
        match reply {
            Ok(Value::Int(n)) => sync.synced = Some(n),
            // `WAITAOF`'s `[acklocal, ackreplicas]`: Redisson reads the
            // replicas' count.
            Ok(Value::Array(items)) if matches!(items.get(1), Some(Value::Int(_))) => {
                if let Some(Value::Int(n)) = items.get(1) {
                    sync.synced = Some(*n);
                }
            }
            // The batch failed: so does the script.
            Ok(other) => {
                let text = format!("unexpected WAIT reply {other:?}");
                return Some(Err(TransportError::Redis(text)));
            }
            // The batch fails with its first failed command's error from
            // 3.46.0 (`batch-first-error`): a script's refusal kept for
            // the `WAIT` wins over the `WAIT`'s own; before, the last's.
            Err(e) => {
                let first = sync
                    .error
                    .take()
                    .filter(|_| self.switches.has(Switch::BatchFirstError));
                return Some(Err(first.unwrap_or(e)));
            }
        }
        self.sync_done(script)
    }

    /// The script's own reply: `Some` with what its caller gets, `None`
    /// while its `WAIT` is still to answer.
    pub(super) fn script_answered(
        &mut self,
        request: RequestId,
        reply: Result<Value, TransportError>,
    ) -> Option<Result<Value, TransportError>> {
        let sync = self.requests.get_mut(&request)?.sync.as_mut()?;
        match reply {
            Ok(value) => {
                sync.reply = Some(value);
                self.sync_done(request)
            }
            // The batch's answer is its WAIT's: an error of the WAIT's
            // replaces the script's (`replica_wait`).
            Err(e) if Self::script_error_awaits_wait(&e) && sync.synced.is_none() => {
                sync.error = Some(e);
                None
            }
            // The batch failed: the caller gets the script's error now.
            Err(e) => {
                let wait = sync.wait;
                self.syncs.remove(&wait);
                Some(Err(e))
            }
        }
    }

    /// The "none synced" failure's text: 3.25.0 added a hint
    /// (`no-sync-message-lengthened`, commit 279cb9b3c).
    fn no_sync_text(&self) -> &'static str {
        if self.switches.has(Switch::NoSyncMessageLengthened) {
            "None of slaves were synced. Try to increase slavesSyncTimeout setting or set checkLockSyncedSlaves = false."
        } else {
            "None of slaves were synced"
        }
    }

    /// Once both replies are in: the script's, or the release's complaint
    /// about too few replicas.
    fn sync_done(&mut self, script: RequestId) -> Option<Result<Value, TransportError>> {
        let sync = self.requests.get(&script)?.sync.as_ref()?;
        if let (Some(e), Some(_)) = (&sync.error, sync.synced) {
            return Some(Err(e.clone()));
        }
        let (Some(reply), Some(synced)) = (sync.reply.clone(), sync.synced) else {
            return None;
        };
        let asked = sync.asked;
        // The batch succeeded: its count is what the cache learns from.
        self.recount(asked, synced);
        let replicas = i64::from(asked);
        let failed = if self.switches.has(Switch::NoSyncedReplicasOnly) {
            (synced == 0).then(|| self.no_sync_text().to_owned())
        } else {
            (synced < replicas).then(|| format!("Only {synced} of {replicas} slaves were synced"))
        };
        Some(match failed {
            Some(text) => Err(TransportError::NoSyncedReplicas(text)),
            None => Ok(reply),
        })
    }
}
