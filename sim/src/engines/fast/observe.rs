//! Observing Redis's view of a lock after every command, at its key's
//! expiry and on restarts: what the history's `Server` records come from.
//! The [`Observer`] is the fast engine's recorder: the records so far and
//! what recording them needs.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use lockcore::{LockKind, LockName, Purpose};

use crate::SimTime;
use crate::engines::fast::server::{KeyView, ViewStamp};
use crate::engines::fast::world::{Ev, World};
use crate::model::history::{Record, RecordKind, ServerCause, Who};

/// Redis's last observed view of one lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Seen {
    holder: Option<Who>,
    count: i64,
    shared: bool,
    /// The hash field `holder` was named from: the same field names the
    /// same thread (uuids are registered before their process sends
    /// anything), so an unchanged field is not named again.
    field: Option<Bytes>,
}

/// What the fast engine has recorded of a run, and what recording needs.
#[derive(Debug)]
pub(crate) struct Observer {
    /// The history so far.
    records: Vec<Record>,
    /// Redis's last recorded view of each lock.
    seen: BTreeMap<LockName, Seen>,
    /// The one expiry observation that counts per lock; older ones (the
    /// key was renewed since) are ignored when they fall due.
    watch: BTreeMap<LockName, SimTime>,
    /// Which process life owns each uuid (to name hash fields).
    uuids: BTreeMap<String, (Arc<str>, u32)>,
    /// The lock key read last, and what it was read under.
    last_read: Option<LastRead>,
    /// Whether an unchanged key's reading is reused (off in a test that
    /// proves it records the same).
    reuse_reads: bool,
    /// How many readings were reused.
    #[cfg(test)]
    reused: u64,
}

/// A lock key's last reading: under the same [`ViewStamp`] and before the
/// key's expiry, reading it again gives the same view, which records
/// nothing (the last observation recorded it, or it was no change).
/// Most commands after which a lock is observed write nothing (a renewal
/// of a lock held elsewhere, a `WAIT`, a failed acquire): this skips the
/// read and the comparison for them.
#[derive(Debug)]
struct LastRead {
    lock: LockName,
    stamp: ViewStamp,
    expires_ms: Option<u64>,
}

impl Observer {
    pub(crate) fn new() -> Self {
        Observer {
            records: Vec::with_capacity(256),
            seen: BTreeMap::new(),
            watch: BTreeMap::new(),
            uuids: BTreeMap::new(),
            last_read: None,
            reuse_reads: true,
            #[cfg(test)]
            reused: 0,
        }
    }

    /// Records `kind` at `at`.
    pub(crate) fn record(&mut self, at: SimTime, kind: RecordKind) {
        self.records.push(Record { at, kind });
    }

    /// `uuid` is the identity of life `life` of process `name` from now on.
    pub(crate) fn register(&mut self, uuid: String, name: Arc<str>, life: u32) {
        self.uuids.insert(uuid, (name, life));
    }

    /// Whether the expiry of `lock` watched for `at` still counts; it is
    /// no longer watched.
    pub(crate) fn expiry_due(&mut self, lock: &LockName, at: SimTime) -> bool {
        let due = self.watch.get(lock) == Some(&at);
        if due {
            self.watch.remove(lock);
        }
        due
    }

    /// The records, once the run has ended.
    pub(crate) fn into_records(self) -> Vec<Record> {
        self.records
    }
}

impl World<'_> {
    /// The family keys Redis keeps without a TTL at the horizon (see
    /// `model/leftover.rs`), read on a connection of their own.
    pub(crate) fn record_leftovers(&mut self) {
        let Some(command) = crate::model::leftover::command(self.spec) else {
            return;
        };
        // In a cluster, each master holds its own slots' keys.
        for m in 0..self.redis.len() {
            self.redis[m].server.set_time(self.now);
            let engine = self.redis[m].server.primary_mut();
            let conn = engine.connect();
            let reply = engine.execute(conn, &command).replies.into_iter().next();
            engine.disconnect(conn);
            let reply = reply.map_or(
                lockcore::Value::Nil,
                crate::engines::fast::inprocess::lock_value,
            );
            let uuids = &self.obs.uuids;
            let found =
                crate::model::leftover::records(self.spec, &reply, |f| who_of_field(uuids, f));
            for kind in found {
                self.obs.record(self.now, kind);
            }
        }
    }

    /// Redis's whole view changed (a restart, a failover, a clock jump):
    /// every expiry is watched afresh and every lock seen so far is
    /// observed again, with `cause`.
    pub(crate) fn observe_all(&mut self, cause: ServerCause) {
        self.obs.watch.clear();
        let locks: Vec<LockName> = self.obs.seen.keys().cloned().collect();
        for lock in locks {
            self.observe(&lock, cause.clone());
        }
    }

    /// Records Redis's view of `lock` when it changed, and watches for the
    /// key's expiry so the instant it frees itself is recorded too.
    ///
    /// A key that vanished after a command that deletes nothing (an
    /// acquire or renewal arriving at the very instant of expiry) is
    /// recorded as expired: that is what freed it.
    pub(crate) fn observe(&mut self, lock: &LockName, cause: ServerCause) {
        let deletes = matches!(
            cause,
            ServerCause::Command {
                purpose: Purpose::Unlock | Purpose::ForceUnlock,
                ..
            }
        );
        let command = matches!(cause, ServerCause::Command { .. });
        self.observe_with(lock, command, deletes, |_| cause);
    }

    /// [`World::observe`] after a command of client `c`: its process is
    /// named only when a change is recorded, not after every command.
    /// `since` is the primary's keyspace version before the command ran:
    /// an unlock that found its key past its TTL, which Redis dropped on
    /// expiry as the unlock touched it, freed nothing (4.7.0 seed 63343:
    /// a renewal behind a `WAIT` had moved the TTL unobserved).
    pub(crate) fn observe_command(
        &mut self,
        lock: &LockName,
        c: u32,
        purpose: Purpose,
        since: u64,
    ) {
        let key = lock.with_kind(LockKind::Lock);
        let deletes = matches!(purpose, Purpose::Unlock | Purpose::ForceUnlock)
            && !self
                .master_of(key.as_str())
                .server
                .expired_since(key.as_str(), since);
        self.observe_with(lock, true, deletes, |w| ServerCause::Command {
            by: w.procs[c as usize].proc(),
            purpose,
        });
    }

    fn observe_with(
        &mut self,
        lock: &LockName,
        command: bool,
        deletes: bool,
        cause: impl FnOnce(&Self) -> ServerCause,
    ) {
        // Redis holds one key for every object of a lock: its view is the
        // key's, whichever object's command it follows.
        let key = lock.with_kind(LockKind::Lock);
        let lock = &key;
        let stamp = self.master_of(lock.as_str()).server.stamp();
        if let Some(last) = &self.obs.last_read
            && self.obs.reuse_reads
            && last.stamp == stamp
            && last.lock == *lock
            && last.expires_ms.is_none_or(|e| self.now.as_ms() < e)
        {
            let expires_ms = last.expires_ms;
            #[cfg(test)]
            {
                self.obs.reused += 1;
            }
            self.watch_expiry(lock, expires_ms);
            return;
        }
        let KeyView {
            first,
            shared,
            pttl,
            expires_ms,
        } = {
            let now = self.now;
            self.master_of(lock.as_str())
                .server
                .view(now, lock.as_str())
        };
        let change = Change {
            first,
            shared,
            pttl,
            command,
            deletes,
        };
        if !change.same_as(self.obs.seen.get(lock)) {
            self.record_change(lock, change, cause);
        }
        self.obs.last_read = Some(LastRead {
            lock: lock.clone(),
            stamp,
            expires_ms,
        });
        self.watch_expiry(lock, expires_ms);
    }

    /// Records a changed view of `lock` (unless the holder it names and
    /// the count are as last recorded) and remembers it.
    fn record_change(
        &mut self,
        lock: &LockName,
        change: Change,
        cause: impl FnOnce(&Self) -> ServerCause,
    ) {
        let cause = cause(self);
        let obs = &mut self.obs;
        let uuids = &obs.uuids;
        if let Some(kind) = change.apply(&mut obs.seen, lock, |f| who_of_field(uuids, f), cause) {
            obs.record(self.now, kind);
        }
    }

    /// Watches the instant `lock`'s key frees itself (the latest expiry
    /// observed is the one that counts).
    fn watch_expiry(&mut self, lock: &LockName, expires_ms: Option<u64>) {
        if let Some(expires_ms) = expires_ms {
            let at = SimTime::from_ms(expires_ms).max(self.now);
            match self.obs.watch.get_mut(lock) {
                Some(watched) if *watched == at => return,
                Some(watched) => *watched = at,
                None => {
                    self.obs.watch.insert(lock.clone(), at);
                }
            }
            let generation = self.master_of(lock.as_str()).server.generation;
            self.queue.push(
                at,
                Ev::Observe {
                    lock: lock.clone(),
                    generation,
                },
            );
        }
    }
}

/// Names the thread of a hash field `<uuid>:<thread>`, by the processes'
/// uuids (an unknown uuid names itself).
pub(crate) fn who_of_field(uuids: &BTreeMap<String, (Arc<str>, u32)>, field: &str) -> Who {
    // A write lock's field is `<uuid>:<thread>:write`.
    let field = field.strip_suffix(":write").unwrap_or(field);
    let (uuid, thread) = field.rsplit_once(':').unwrap_or((field, "0"));
    let thread = thread.parse().unwrap_or(0);
    match uuids.get(uuid) {
        Some((client, life)) => Who {
            client: client.clone(),
            life: *life,
            thread,
        },
        None => Who {
            client: uuid.into(),
            life: 0,
            thread,
        },
    }
}

/// One observation of a lock key, as either engine reads it.
pub(crate) struct Change {
    /// The hash's first field and its count (`None`: no key).
    pub(crate) first: Option<(Bytes, i64)>,
    /// Whether the key is a read-write lock in `read` mode.
    pub(crate) shared: bool,
    /// The key's PTTL.
    pub(crate) pttl: i64,
    /// Whether a client's command was what ran last.
    pub(crate) command: bool,
    /// Whether that command deletes (an unlock or force-unlock).
    pub(crate) deletes: bool,
}

impl Change {
    /// The `Server` record this observation makes, if the holder it names
    /// or the count differ from the last one recorded in `seen` (which it
    /// updates). A key that vanished after a command that deletes nothing
    /// (an acquire or renewal at the very instant of expiry) is recorded
    /// as expired: that is what freed it.
    pub(crate) fn apply(
        self,
        seen: &mut BTreeMap<LockName, Seen>,
        lock: &LockName,
        who_of: impl Fn(&str) -> Who,
        cause: ServerCause,
    ) -> Option<RecordKind> {
        let last = seen.get(lock);
        let (holder, count, field) = match self.first {
            Some((field, count)) => {
                let holder = match last {
                    Some(Seen {
                        holder: Some(who),
                        field: Some(f),
                        ..
                    }) if *f == field => who.clone(),
                    _ => who_of(&lockcore::lossy_text(&field)),
                };
                (Some(holder), count, Some(field))
            }
            None => (None, 0, None),
        };
        // A key never seen and still absent is no change: the first command
        // on it may leave it so (3.46+'s `EVALSHA` answered `NOSCRIPT`).
        let shared = self.shared && holder.is_some();
        let changed = match last {
            None => holder.is_some(),
            Some(s) => s.holder != holder || s.count != count || s.shared != shared,
        };
        let field_moved = last.is_some_and(|s| s.field != field);
        let record = changed.then(|| RecordKind::Server {
            lock: lock.clone(),
            holder: holder.clone(),
            count,
            shared,
            ttl_ms: self.pttl,
            cause: if self.command && holder.is_none() && !self.deletes {
                ServerCause::Expiry
            } else {
                cause
            },
        });
        if changed || field_moved {
            let seen_now = Seen {
                holder,
                count,
                shared,
                field,
            };
            seen.insert(lock.clone(), seen_now);
        }
        record
    }

    /// Whether it names the holder and count `last` named.
    pub(crate) fn same_as(&self, last: Option<&Seen>) -> bool {
        last.is_some_and(|s| match &self.first {
            Some((f, count)) => {
                s.field.as_ref() == Some(f) && s.count == *count && s.shared == self.shared
            }
            None => s.holder.is_none() && s.count == 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use lockcore::Release;

    use crate::engines::fast::world::World;
    use crate::{SwarmKinds, Usage, Workload};

    /// Reusing the reading of a lock key that nothing wrote since records
    /// the same history as reading every key after every command:
    /// explored seeds of old and new releases, misuse included, with
    /// every fault kind (restarts, failovers, clock jumps, deleted keys)
    /// and replicas.
    #[test]
    fn reusing_unchanged_readings_records_the_same() {
        let workloads = [
            Workload::default(),
            Workload {
                usage: Usage::Misuse,
                kinds: SwarmKinds::All,
                strategy: crate::Strategy::Uniform,
            },
        ];
        let mut reused = 0;
        for release in ["redisson", "3.8.0", "3.16.7", "3.46.0"] {
            let release: Release = release.parse().expect("a release");
            for workload in workloads {
                for seed in 0..25 {
                    let spec = crate::generate_with(seed, Some(release), workload);
                    let mut every = World::new(&spec).expect("an explored spec runs");
                    every.obs.reuse_reads = false;
                    let mut world = World::new(&spec).expect("an explored spec runs");
                    world.run_events();
                    every.run_events();
                    assert_eq!(every.obs.reused, 0);
                    reused += world.obs.reused;
                    let (a, b) = (&world.obs.records, &every.obs.records);
                    assert_eq!(a, b, "{release} seed {seed} {workload:?}");
                }
            }
        }
        assert!(reused > 1_000, "readings reused: {reused}");
    }
}
