//! Redis executing a client's message, and sending what it produced.

use bytes::Bytes;
use fake_redis::Value;

use fake_redis::ConnId;

use crate::engines::fast::deployment::Owed;
use crate::engines::fast::server::ConnKind;
use crate::engines::fast::world::{Down, Ev, Up, World};
use lockcore::{LockKind, LockName, Purpose};

/// Runs `msg` from client life `(c, life)` on the engine: the reply goes
/// back on the client's link, pub/sub messages to their subscribers, and
/// the lock's new state is observed.
pub(crate) fn execute(world: &mut World<'_>, c: u32, life: u32, msg: Up) {
    run(world, c, life, msg);
    world.replicate();
}

fn run(world: &mut World<'_>, c: u32, life: u32, msg: Up) {
    let shard = msg.shard();
    let m = usize::from(shard);
    let now = world.now;
    match msg {
        Up::Command {
            request,
            purpose,
            lock,
            args,
            ..
        } => {
            let since = world.redis[m].server.keyspace_version();
            let (conn, resp) =
                world.redis[m]
                    .server
                    .execute_on(now, (c, life), ConnKind::Command, &args);
            let others = others_renewed(&lock, purpose, &args);
            match resp.replies.into_iter().next() {
                // The topology scan's `CLUSTER NODES` concerns no lock.
                Some(value) if purpose == Purpose::Scan => {
                    world.send_down(c, life, Down::Reply { request, value });
                }
                Some(value) => {
                    world.observe_command(&lock, c, purpose, since);
                    for other in &others {
                        world.observe_command(other, c, purpose, since);
                    }
                    world.send_down(c, life, Down::Reply { request, value });
                }
                // A WAIT that blocked, or a command queued behind one.
                None => world.redis[m].owe(
                    conn,
                    Owed {
                        client: (c, life),
                        request,
                        purpose,
                        lock,
                        since,
                        others,
                    },
                ),
            }
            deliver(world, shard, resp.deliveries);
            forward_published(world, shard, &resp.published);
            schedule_redis_tick(world, shard);
        }
        Up::Subscribe {
            request, channel, ..
        } => {
            let args = [Bytes::from_static(b"SUBSCRIBE"), Bytes::from(channel)];
            let resp = world.redis[m]
                .server
                .execute(now, (c, life), ConnKind::PubSub, &args);
            let value = resp.replies.into_iter().next().unwrap_or(Value::Nil);
            world.send_down(c, life, Down::Reply { request, value });
            // Redis timed out blocked clients before it ran the command:
            // their replies are owed to other connections.
            deliver(world, shard, resp.deliveries);
        }
        Up::Unsubscribe { channel, .. } => {
            let args = [Bytes::from_static(b"UNSUBSCRIBE"), Bytes::from(channel)];
            let resp = world.redis[m]
                .server
                .execute(now, (c, life), ConnKind::PubSub, &args);
            deliver(world, shard, resp.deliveries);
        }
    }
}

/// A cluster's bus carries each `PUBLISH` of master `from` to every other
/// master's subscribers, at once (`clusterPropagatePublish`): a waiter
/// subscribed on a slot's old master hears an unlock on its new one.
fn forward_published(world: &mut World<'_>, from: u16, published: &[(Bytes, Bytes)]) {
    for (channel, message) in published {
        for other in (0..world.redis.len() as u16).filter(|&m| m != from) {
            let resp = world.redis[usize::from(other)]
                .server
                .receive_published(channel, message);
            deliver(world, other, resp.deliveries);
        }
    }
}

/// The locks a batched renewal round (3.44+) renews besides `lock`, the
/// one it is routed by: its script touched their keys too, renewing them
/// or dropping them on expiry, and each is observed after it as its own
/// lock is. Observed on the routed lock alone, a key whose TTL a Redis
/// clock jump back had moved before its watched expiry ran out unrecorded,
/// and the holder's unlock after it was recorded as freeing it (4.7.0
/// seed 85093: a false unlock error the unlock never caused).
fn others_renewed(
    lock: &LockName,
    purpose: Purpose,
    args: &[Bytes],
) -> crate::engines::fast::renewal::Locks {
    if !crate::engines::fast::renewal::is_renewal(purpose) {
        return Default::default();
    }
    let mut locks = crate::engines::fast::renewal::renewal_locks(lock, args);
    locks.retain(|l| l != lock);
    locks
}

/// Sends what Redis produced for other connections than the caller's: a
/// reply it owed a command connection (a `WAIT` answering, and what was
/// queued behind it), or a pub/sub message.
///
/// Every command queued behind a `WAIT` ran before any of their replies is
/// paid, so each lock a client's commands touched is recorded once, after
/// them all: see [`Batch::purpose`] for whose doing the record is.
pub(crate) fn deliver(world: &mut World<'_>, shard: u16, deliveries: Vec<(ConnId, Value)>) {
    let master = usize::from(shard);
    let mut out = Vec::with_capacity(deliveries.len());
    let mut ran: Vec<Batch> = Vec::new();
    for (conn, value) in deliveries {
        let Some((to, to_life)) = world.redis[master].server.owner(conn) else {
            continue;
        };
        let down = match world.redis[master].pay(conn) {
            Some(owed) => {
                let request = owed.request;
                for other in &owed.others {
                    let lock = other.clone();
                    let owed = Owed {
                        lock,
                        others: Default::default(),
                        ..owed.clone()
                    };
                    match ran.iter_mut().find(|b| b.lock == owed.lock && b.c == to) {
                        Some(batch) => batch.add(&owed),
                        None => ran.push(Batch::new(owed, to)),
                    }
                }
                match ran.iter_mut().find(|b| b.lock == owed.lock && b.c == to) {
                    Some(batch) => batch.add(&owed),
                    None => ran.push(Batch::new(owed, to)),
                }
                Down::Reply { request, value }
            }
            None => {
                let value = crate::engines::fast::inprocess::lock_value(value);
                let Some((channel, payload)) = lockcore::parse_message(&value) else {
                    continue;
                };
                Down::Message { channel, payload }
            }
        };
        out.push((to, to_life, down));
    }
    for batch in ran {
        let purpose = batch.purpose(world);
        world.observe_command(&batch.lock, batch.c, purpose, batch.since);
    }
    for (to, to_life, down) in out {
        world.send_down(to, to_life, down);
    }
}

/// The commands of one client on one lock whose replies came together.
struct Batch {
    lock: LockName,
    c: u32,
    /// The first command's purpose, and an unlock's among them, if any.
    first: Purpose,
    frees: Option<Purpose>,
    /// The keyspace's version before the first of them ran.
    since: u64,
}

impl Batch {
    fn new(owed: Owed, c: u32) -> Batch {
        let frees = is_unlock(owed.purpose).then_some(owed.purpose);
        Batch {
            lock: owed.lock,
            c,
            first: owed.purpose,
            frees,
            since: owed.since,
        }
    }

    fn add(&mut self, owed: &Owed) {
        if self.frees.is_none() && is_unlock(owed.purpose) {
            self.frees = Some(owed.purpose);
        }
        self.since = self.since.min(owed.since);
    }

    /// Whose doing the lock's new state is recorded as. A key the commands
    /// left gone was freed by the unlock among them, unless Redis dropped
    /// it on expiry as they ran (4.7.0 seed 12599: an unlock queued behind
    /// a renewal's `WAIT` was recorded as the key expiring, because the
    /// renewal's reply came first; named for the unlock whatever happened,
    /// a key whose TTL ran out while a `WAIT` held the connection was
    /// recorded as unlocked). Otherwise the first command's, as one
    /// observation per reply recorded it (an unlock's, when the key
    /// expired, is recorded as the expiry: see [`World::observe_command`]).
    fn purpose(&self, world: &mut World<'_>) -> Purpose {
        let Some(frees) = self.frees else {
            return self.first;
        };
        if is_unlock(self.first) {
            return self.first;
        }
        let key = self.lock.with_kind(LockKind::Lock);
        let now = world.now;
        let server = &mut world.master_of(key.as_str()).server;
        let gone = server.view(now, key.as_str()).first.is_none();
        if gone && !server.expired_since(key.as_str(), self.since) {
            frees
        } else {
            self.first
        }
    }
}

fn is_unlock(p: Purpose) -> bool {
    matches!(p, Purpose::Unlock | Purpose::ForceUnlock)
}

/// Redis answers what its blocked clients are owed now (timeouts due, and
/// `WAIT`s whose replicas acknowledged), then looks at the next timeout.
pub(crate) fn redis_tick(world: &mut World<'_>, shard: u16) {
    let master = usize::from(shard);
    world.redis[master].tick_at = None;
    // One client at a time, each observed after its commands ran: with
    // every client served first, a change one client's queued command
    // made was recorded as the work of whichever was delivered first (an
    // unlock that found the key gone "ran" another client's acquire,
    // fenced seed 78041).
    loop {
        let resp = world.redis[master].server.tick_one(world.now);
        if resp.deliveries.is_empty() {
            break;
        }
        deliver(world, shard, resp.deliveries);
    }
    // Commands queued behind a WAIT that answered ran just now, and Redis
    // streams their writes to the replicas as it runs them; left for the
    // next client message, a renewal's own WAIT timed out on a replica
    // that had not been sent its write (explored seed 3733, 3.44.0).
    world.replicate();
    schedule_redis_tick(world, shard);
}

/// Wakes master `shard` at its earliest blocked client's timeout, if any.
fn schedule_redis_tick(world: &mut World<'_>, shard: u16) {
    let redis = &mut world.redis[usize::from(shard)];
    let Some(at) = redis.server.next_deadline() else {
        return;
    };
    let at = at.max(world.now);
    if redis.tick_at != Some(at) {
        redis.tick_at = Some(at);
        world.queue.push(at, Ev::RedisTick(shard));
    }
}

#[cfg(test)]
mod tests {
    use crate::faults::ReplicationDrop;
    use crate::run::tests::{client, critical, spec, thread};
    use crate::{Fault, FaultPlan, run};

    /// Under 4.7.0 with a replica whose replication stalls, A's renewal
    /// at about 1.1 s is a batch with a `WAIT` that blocks A's connection
    /// for its 1 s timeout; A's unlock at about 1.6 s waits behind it
    /// and runs when it answers, at about 2.1 s, long before the 3 s TTL
    /// the renewal set runs out. The record must name the unlock: naming
    /// the renewal, whose reply came first, said the key expired (4.7.0
    /// seed 12599).
    #[test]
    fn an_unlock_queued_behind_a_wait_is_recorded_as_the_unlock() {
        let mut s = spec(vec![client("A", vec![thread(100, critical(1_500))])]);
        s.profile = "4.7.0".parse().expect("a release");
        s.watchdog_timeout_ms = 3_000;
        s.horizon_ms = 20_000;
        s.redis.replicas = 1;
        s.faults = FaultPlan(vec![Fault::ReplicationDrop(ReplicationDrop {
            at_ms: 500,
            duration_ms: 5_000,
            replica: None,
        })]);
        let r = run(&s).expect("valid");
        let text = r.history.to_string();
        assert!(text.contains("renew redisson:lock"), "{text}");
        let freed: Vec<&str> = text.lines().filter(|l| l.contains(" free (")).collect();
        assert_eq!(freed.len(), 1, "{text}");
        assert!(freed[0].contains("free (unlock by A)"), "{text}");
    }
}
