//! A synced lock script's batch as `EVALSHA` (3.46+, `script-cache`),
//! and what a `NOSCRIPT` in the batch does (`batch-noscript-reloads`).
//!
//! Redisson's `CommandBatchService.loadScripts` rewrites each `EVAL` of a
//! batch to `EVALSHA` once per `executeAsync`, first sending `SCRIPT LOAD`
//! (a batch of its own, no `WAIT`, with the usual retries) for each
//! script that `ServiceManager`'s per-address set does not hold, and
//! adding them once loaded. A batch that fails its load fails with the
//! load's error; its resends reuse the rewritten words and never look at
//! the set again. The set forgets an address when a connection to it
//! closes (`onDisconnect`), and nothing else: not a failover, not a
//! `NOSCRIPT`, not time (read at tags redisson-3.47.0 and 4.7.0,
//! `CommandBatchService.java:495-531`, `ServiceManager.java:539-549`).
//! locksim's client keeps the set per master it reaches (one outside a
//! cluster and independent masters), and empties it when its
//! connections are lost (every master's: the machine has one
//! connection-loss input; a master's own loss would forget less).
//!
//! A batch meets `NOSCRIPT` only where a node lacks a script the client
//! believes loaded there, or a resend reaches another node than its
//! load did: a batch in flight across a failover, resent to the promoted
//! replica, whose cache Redis 7 left empty (`SCRIPT LOAD` is not
//! replicated from 7.0), or a `SCRIPT FLUSH` the client never saw.
//! Before 3.48.0 the lock call fails with the `NOSCRIPT` error; from
//! 3.48.0 (commit 32df429bd) it loads the script on the current primary
//! and runs the whole synced eval again: a new batch, a new look at the
//! set, a new `WAIT`.

use bytes::Bytes;

use super::request::{Held, Kind, Owner, Pending, Tries};
use super::{LockClient, Purpose};
use crate::script::LockScript;
use crate::{Millis, RequestId, Switch, TransportError, Value};

/// Where a synced lock script stands before its batch goes out.
pub(super) enum Batch {
    /// Ready to go: as `EVALSHA` once loaded.
    Ready(Held),
    /// Its `SCRIPT LOAD` went first, as this request.
    Loading(RequestId),
}

impl LockClient {
    /// The batch form of synced script `kind`: as it is before 3.46.0 or
    /// once rewritten; `EVALSHA` when this client loaded it; otherwise
    /// its `SCRIPT LOAD` goes out and the script waits for it.
    pub(super) fn batch_form(&mut self, now: Millis, held: Held) -> Batch {
        let Some(script) = self.cached_form(&held.kind) else {
            return Batch::Ready(held);
        };
        let node = self.route_of(&held.lock, held.tries);
        if self.batch_scripts.contains(&(node, script)) {
            let mut held = held;
            held.tries.batched = true;
            held.kind = self.sha_form(held.kind);
            return Batch::Ready(held);
        }
        let id = self.next_load;
        self.next_load += 1;
        let lock = held.lock.clone();
        // The load goes where the batch goes.
        let tries = Tries {
            redirect: held.tries.redirect,
            ..Tries::default()
        };
        self.loading.insert(id, held);
        let kind = Kind::Command {
            purpose: Purpose::BatchLoad,
            command: load_command(script),
        };
        Batch::Loading(self.transmit(now, kind, lock, Owner::BatchLoad(id, script), tries))
    }

    /// Whether `kind`'s batch goes out only after a `SCRIPT LOAD` of its
    /// own (3.46+, a lock script this client has not loaded).
    pub(super) fn loads_first(&self, kind: &Kind, node: crate::Shard) -> bool {
        self.cached_form(kind)
            .is_some_and(|script| !self.batch_scripts.contains(&(node, script)))
    }

    /// The lock script `kind` runs, when its batch sends it as `EVALSHA`
    /// (3.46+, `script-cache`).
    fn cached_form(&self, kind: &Kind) -> Option<LockScript> {
        let script = match kind {
            Kind::Command { command, .. } => match &**command {
                [name, text, ..] if name.as_ref() == b"EVAL" => LockScript::from_text(text),
                _ => None,
            },
            Kind::Subscribe { .. } => None,
        };
        script.filter(|_| self.switches.has(Switch::ScriptCache))
    }

    /// The batch's `SCRIPT LOAD` answered: the client now holds the
    /// script loaded and the batch goes out, or its call fails with the
    /// load's error.
    pub(super) fn on_batch_loaded(
        &mut self,
        now: Millis,
        (id, script): (u64, LockScript),
        reply: Result<Value, TransportError>,
        sent_at: Millis,
    ) {
        let Some(held) = self.loading.remove(&id) else {
            return;
        };
        if let Err(e) = reply {
            return self.deliver(now, held.owner, Err(e), sent_at);
        }
        let node = self.route_of(&held.lock, held.tries);
        self.batch_scripts.insert((node, script));
        let mut tries = held.tries;
        tries.staged = true;
        self.transmit(now, held.kind, held.lock, held.owner, tries);
    }

    /// The client's connections closed: its set forgets the address.
    pub(super) fn forget_batch_scripts(&mut self) {
        self.batch_scripts.clear();
    }

    /// `NOSCRIPT` answered a batch's `EVALSHA` of `script`: before 3.48.0
    /// the call fails with it; from 3.48.0 the script is loaded (the set
    /// untouched) and the synced eval runs again from its `EVAL`.
    pub(super) fn batch_noscript(
        &mut self,
        now: Millis,
        pending: Pending,
        reply: Result<Value, TransportError>,
        script: LockScript,
    ) {
        self.reach(super::Sometimes::BatchNoScript);
        if !self.switches.has(Switch::BatchNoscriptReloads) {
            let sent_at = pending.sent_at;
            return self.deliver(now, pending.owner, reply, sent_at);
        }
        let kind = eval_form(pending.kind.clone(), script);
        let mut pending = pending;
        pending.tries.bare = false;
        self.reload(now, pending, kind, script);
    }
}

/// `SCRIPT LOAD <text>`.
pub(super) fn load_command(script: LockScript) -> super::Command {
    [
        Bytes::from_static(b"SCRIPT"),
        Bytes::from_static(b"LOAD"),
        Bytes::from_static(script.text().as_bytes()),
    ]
    .into()
}

/// `kind`'s `EVALSHA` as the `EVAL` it was rewritten from.
fn eval_form(kind: Kind, script: LockScript) -> Kind {
    let Kind::Command { purpose, command } = kind else {
        return kind;
    };
    let command = [
        Bytes::from_static(b"EVAL"),
        Bytes::from_static(script.text().as_bytes()),
    ]
    .into_iter()
    .chain(command.iter().skip(2).cloned())
    .collect();
    Kind::Command { purpose, command }
}

/// The lock script of a batch's `NOSCRIPT`, if `reply` is one for a
/// batch's `EVALSHA`.
pub(super) fn batch_noscript_of(
    pending: &Pending,
    reply: &Result<Value, TransportError>,
) -> Option<LockScript> {
    if !pending.tries.batched {
        return None;
    }
    LockClient::noscript(pending, reply)
}

#[cfg(test)]
mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::{Call, Config, Purpose, ThreadId, Value};

    /// 4.7.0 batches load their script on each master they go to
    /// (`ServiceManager`'s set is per address): in a cluster whose
    /// masters have a replica each, the acquire of "orders" (master 0)
    /// and of "inventory" (master 2) each load it first. With one set
    /// per client the second went as `EVALSHA` to a master that had
    /// not loaded it (3.46.0 seed 366: after a restart lost every
    /// master's scripts, unlocks on another master failed with
    /// `NOSCRIPT`).
    #[test]
    fn a_batch_loads_its_script_on_each_master() {
        let config = Config::builder()
            .release(release("4.7.0"))
            .cluster_shards(3)
            .replicas(1)
            .build()
            .unwrap();
        let mut h = Harness::with_config(config);
        for (t, name) in [(1, "orders"), (2, "inventory")] {
            h.call(
                ThreadId(t),
                name,
                Call::TryLock {
                    wait: None,
                    lease: None,
                },
            )
            .unwrap();
            if t == 1 {
                h.probed();
            }
            let acquire = h.expect(Purpose::Acquire);
            let wait = h.expect(Purpose::Sync);
            h.reply(acquire, Value::Nil);
            h.reply(wait, Value::Int(1));
            h.expect_acquired(ThreadId(t));
        }
        assert_eq!(h.batch_loads.len(), 2, "{:?}", h.batch_loads);
    }
}
