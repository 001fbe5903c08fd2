//! Redis executing a client's message, and sending what it produced.

use bytes::Bytes;
use fake_redis::Value;

use fake_redis::ConnId;

use crate::engines::fast::deployment::Owed;
use crate::engines::fast::server::ConnKind;
use crate::engines::fast::world::{Down, Ev, Up, World};

/// Runs `msg` from client life `(c, life)` on the engine: the reply goes
/// back on the client's link, pub/sub messages to their subscribers, and
/// the lock's new state is observed.
pub(crate) fn execute(world: &mut World<'_>, c: u32, life: u32, msg: Up) {
    run(world, c, life, msg);
    world.replicate();
}

fn run(world: &mut World<'_>, c: u32, life: u32, msg: Up) {
    match msg {
        Up::Command {
            request,
            purpose,
            lock,
            args,
        } => {
            let (conn, resp) =
                world
                    .redis
                    .server
                    .execute_on(world.now, (c, life), ConnKind::Command, &args);
            match resp.replies.into_iter().next() {
                Some(value) => {
                    world.observe_command(&lock, c, purpose);
                    world.send_down(c, life, Down::Reply { request, value });
                }
                // A WAIT that blocked, or a command queued behind one.
                None => world.redis.owe(
                    conn,
                    Owed {
                        client: (c, life),
                        request,
                        purpose,
                        lock,
                    },
                ),
            }
            deliver(world, resp.deliveries);
            schedule_redis_tick(world);
        }
        Up::Subscribe { request, channel } => {
            let args = [Bytes::from_static(b"SUBSCRIBE"), Bytes::from(channel)];
            let resp = world
                .redis
                .server
                .execute(world.now, (c, life), ConnKind::PubSub, &args);
            let value = resp.replies.into_iter().next().unwrap_or(Value::Nil);
            world.send_down(c, life, Down::Reply { request, value });
            // Redis timed out blocked clients before it ran the command:
            // their replies are owed to other connections.
            deliver(world, resp.deliveries);
        }
        Up::Unsubscribe { channel } => {
            let args = [Bytes::from_static(b"UNSUBSCRIBE"), Bytes::from(channel)];
            let resp = world
                .redis
                .server
                .execute(world.now, (c, life), ConnKind::PubSub, &args);
            deliver(world, resp.deliveries);
        }
    }
}

/// Sends what Redis produced for other connections than the caller's: a
/// reply it owed a command connection (a `WAIT` answering, and what was
/// queued behind it), or a pub/sub message.
pub(crate) fn deliver(world: &mut World<'_>, deliveries: Vec<(ConnId, Value)>) {
    for (conn, value) in deliveries {
        let Some((to, to_life)) = world.redis.server.owner(conn) else {
            continue;
        };
        if let Some(Owed {
            request,
            purpose,
            lock,
            ..
        }) = world.redis.pay(conn)
        {
            world.observe_command(&lock, to, purpose);
            world.send_down(to, to_life, Down::Reply { request, value });
        } else if let Some((channel, payload)) =
            lockcore::parse_message(&crate::engines::fast::inprocess::lock_value(value))
        {
            world.send_down(to, to_life, Down::Message { channel, payload });
        }
    }
}

/// Redis answers what its blocked clients are owed now (timeouts due, and
/// `WAIT`s whose replicas acknowledged), then looks at the next timeout.
pub(crate) fn redis_tick(world: &mut World<'_>) {
    world.redis.tick_at = None;
    // One client at a time, each observed after its commands ran: with
    // every client served first, a change one client's queued command
    // made was recorded as the work of whichever was delivered first (an
    // unlock that found the key gone "ran" another client's acquire,
    // fenced seed 78041).
    loop {
        let resp = world.redis.server.tick_one(world.now);
        if resp.deliveries.is_empty() {
            break;
        }
        deliver(world, resp.deliveries);
    }
    // Commands queued behind a WAIT that answered ran just now, and Redis
    // streams their writes to the replicas as it runs them; left for the
    // next client message, a renewal's own WAIT timed out on a replica
    // that had not been sent its write (explored seed 3733, 3.44.0).
    world.replicate();
    schedule_redis_tick(world);
}

/// Wakes Redis at its earliest blocked client's timeout, if any.
fn schedule_redis_tick(world: &mut World<'_>) {
    let Some(at) = world.redis.server.next_deadline() else {
        return;
    };
    let at = at.max(world.now);
    if world.redis.tick_at != Some(at) {
        world.redis.tick_at = Some(at);
        world.queue.push(at, Ev::RedisTick);
    }
}
