//! Redis executing a client's message, and sending what it produced.

use bytes::Bytes;
use fake_redis::Value;

use crate::server::ConnKind;
use crate::world::{Down, Up, World};

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
            let resp = world
                .redis
                .server
                .execute(world.now, (c, life), ConnKind::Command, args);
            let value = resp.replies.into_iter().next().unwrap_or(Value::Nil);
            world.observe_command(&lock, c, purpose);
            world.send_down(c, life, Down::Reply { request, value });
            for (conn, value) in resp.deliveries {
                let Some((to, to_life)) = world.redis.server.owner(conn) else {
                    continue;
                };
                if let Some((channel, payload)) =
                    lockcore::parse_message(&lockcore::Value::from(value))
                {
                    world.send_down(to, to_life, Down::Message { channel, payload });
                }
            }
        }
        Up::Subscribe { request, channel } => {
            let args = vec![Bytes::from_static(b"SUBSCRIBE"), Bytes::from(channel)];
            let resp = world
                .redis
                .server
                .execute(world.now, (c, life), ConnKind::PubSub, args);
            let value = resp.replies.into_iter().next().unwrap_or(Value::Nil);
            world.send_down(c, life, Down::Reply { request, value });
        }
        Up::Unsubscribe { channel } => {
            let args = vec![Bytes::from_static(b"UNSUBSCRIBE"), Bytes::from(channel)];
            world
                .redis
                .server
                .execute(world.now, (c, life), ConnKind::PubSub, args);
        }
    }
}
