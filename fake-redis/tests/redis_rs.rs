//! A real client library against both servers: redis-rs (the `redis`
//! crate) with default options opens a connection to a real
//! `redis-server` 7.0.15 and to fake-redis, runs the same session on each,
//! and every reply (or error text) must be identical.
//!
//! The session covers what a user of the library does: its typed commands,
//! a pipeline, a `MULTI`/`EXEC` transaction (`pipe().atomic()`), an
//! optimistic `WATCH` transaction (`redis::transaction`), pub/sub, and a
//! script-based locks through `redis::Script` (the library's
//! EVALSHA-then-EVAL path): Redisson's lock (acquire, a contender refused,
//! extend, release with its unlock message, a second release refused),
//! which fake-redis runs natively, and a token lock (SET NX PX, extend and
//! release by small scripts of its own), which runs in fake-redis's Lua.

use std::sync::Arc;

use fake_redis::testing::RealRedis;
use fake_redis::{BackgroundServer, Engine, LockScript, SharedEngine, SystemClock};
use redis::{Commands, Connection, RedisResult, Value};

/// One reply as comparable text.
fn show(r: RedisResult<Value>) -> String {
    match r {
        Ok(v) => format!("{v:?}"),
        Err(e) => format!("error: {e}"),
    }
}

fn lock_script(script: LockScript) -> redis::Script {
    redis::Script::new(script.text())
}

fn commands(con: &mut Connection, log: &mut Vec<String>) {
    let _: RedisResult<()> = redis::cmd("FLUSHALL").query(con);
    log.push(show(con.set("s", "10")));
    log.push(show(con.incr("s", 5)));
    log.push(show(con.decr("s", 3)));
    log.push(show(con.incr("s", 1.5)));
    log.push(show(con.get("s")));
    log.push(show(con.get("missing")));
    log.push(show(con.set_nx("s", "x")));
    log.push(show(con.mset(&[("a", "1"), ("b", "2")])));
    log.push(show(con.mget(&["a", "b", "missing"])));
    log.push(show(con.expire("a", 100)));
    log.push(show(con.ttl("a")));
    log.push(show(con.persist("a")));
    log.push(show(con.hset("h", "f", "v")));
    log.push(show(con.hset_multiple("h", &[("g", "1"), ("k", "2")])));
    log.push(show(con.hincr("h", "g", 41)));
    log.push(show(con.hgetall("h")));
    log.push(show(con.hkeys("h")));
    log.push(show(con.hdel("h", "f")));
    log.push(show(con.lpush("l", &["a", "b"])));
    log.push(show(con.rpush("l", "c")));
    log.push(show(con.lrange("l", 0, -1)));
    log.push(show(con.lpop("l", None)));
    log.push(show(con.llen("l")));
    log.push(show(con.key_type("h")));
    log.push(show(con.rename("b", "c")));
    log.push(show(con.exists(&["a", "b", "c"])));
    log.push(show(con.get("h")));
    log.push(show(redis::cmd("NOSUCHCOMMAND").arg("x").query(con)));
    log.push(show(redis::cmd("SELECT").arg(3).query(con)));
    log.push(show(con.get("s")));
    log.push(show(redis::cmd("SELECT").arg(0).query(con)));
}

fn pipelines(con: &mut Connection, log: &mut Vec<String>) {
    let plain: RedisResult<Value> = redis::pipe()
        .set("p", 1)
        .incr("p", 2)
        .get("p")
        .hset("ph", "f", "v")
        .hget("ph", "f")
        .query(con);
    log.push(show(plain));
    let atomic: RedisResult<Value> = redis::pipe()
        .atomic()
        .set("t", "a")
        .incr("p", 1)
        .get("t")
        .query(con);
    log.push(show(atomic));
    // The optimistic transaction: WATCH, read, MULTI/EXEC.
    let counter: RedisResult<i64> = redis::transaction(con, &["w"], |con, pipe| {
        let old: Option<i64> = con.get("w")?;
        pipe.set("w", old.unwrap_or(0) + 7)
            .ignore()
            .get("w")
            .query(con)
            .map(|r: Option<(i64,)>| r.map(|(v,)| v))
    });
    log.push(format!("{counter:?}"));
}

fn script_lock(con: &mut Connection, listener: &mut Connection, log: &mut Vec<String>) {
    let _: RedisResult<()> = redis::cmd("SCRIPT").arg("FLUSH").query(con);
    let mut pubsub = listener.as_pubsub();
    pubsub.subscribe("lock-channel").expect("subscribe");
    let acquire = lock_script(LockScript::Acquire);
    let renew = lock_script(LockScript::Renew);
    let unlock = lock_script(LockScript::Unlock);
    let owner = "uuid-1:1";
    log.push(show(acquire.key("lock").arg(30_000).arg(owner).invoke(con)));
    // A contender gets the remaining lease in ms: a moment apart on the two
    // servers, so only its range is compared.
    let contended: RedisResult<i64> = acquire.key("lock").arg(30_000).arg("uuid-2:1").invoke(con);
    log.push(format!(
        "contended within lease: {}",
        contended.is_ok_and(|ms| (25_000..=30_000).contains(&ms))
    ));
    log.push(show(renew.key("lock").arg(60_000).arg(owner).invoke(con)));
    log.push(show(con.ttl("lock")));
    log.push(show(
        unlock
            .key("lock")
            .key("lock-channel")
            .arg(0)
            .arg(30_000)
            .arg(owner)
            .invoke(con),
    ));
    let message = pubsub.get_message().expect("unlock message");
    log.push(format!(
        "message on {}: {:?}",
        message.get_channel_name(),
        message.get_payload::<String>()
    ));
    log.push(show(
        unlock
            .key("lock")
            .key("lock-channel")
            .arg(0)
            .arg(30_000)
            .arg(owner)
            .invoke(con),
    ));
    log.push(show(con.exists("lock")));
    token_lock(con, log);
}

/// The lock redis-rs users and lock libraries write themselves: acquire
/// with `SET NX PX`, extend and release with small Lua scripts that check
/// the token (these run in fake-redis's Lua).
fn token_lock(con: &mut Connection, log: &mut Vec<String>) {
    let extend = redis::Script::new(
        "if redis.call('get', KEYS[1]) == ARGV[1] then \
         return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end",
    );
    let release = redis::Script::new(
        "if redis.call('get', KEYS[1]) == ARGV[1] then \
         return redis.call('del', KEYS[1]) else return 0 end",
    );
    let set_nx = |con: &mut Connection, token: &str| {
        show(
            redis::cmd("SET")
                .arg("simple")
                .arg(token)
                .arg("NX")
                .arg("PX")
                .arg(30_000)
                .query(con),
        )
    };
    log.push(set_nx(con, "token"));
    log.push(set_nx(con, "other"));
    log.push(show(
        extend.key("simple").arg("other").arg(60_000).invoke(con),
    ));
    log.push(show(
        extend.key("simple").arg("token").arg(60_000).invoke(con),
    ));
    log.push(show(con.ttl("simple")));
    log.push(show(release.key("simple").arg("other").invoke(con)));
    log.push(show(release.key("simple").arg("token").invoke(con)));
    log.push(show(con.exists("simple")));
    log.push(show(
        redis::Script::new("return redis.call('nosuch')").invoke::<Value>(con),
    ));
}

/// The whole session against `url`, as a log of replies.
fn session(url: &str) -> Vec<String> {
    let client = redis::Client::open(url).expect("client");
    let mut con = client.get_connection().expect("connect");
    let mut listener = client.get_connection().expect("connect listener");
    let mut log = Vec::new();
    commands(&mut con, &mut log);
    pipelines(&mut con, &mut log);
    script_lock(&mut con, &mut listener, &mut log);
    log
}

/// redis-rs with default options gets identical replies from both
/// servers for its commands, pipelines, transactions and a Redisson-script
/// lock. A reply type, value or error text that differs (or a command the
/// fake does not know, which redis-rs would report as an error) fails the
/// comparison; the session's length guards against it stopping early.
#[test]
fn redis_rs_sees_the_same_server() {
    let real = RealRedis::start_for_test();
    let fake = BackgroundServer::start(SharedEngine::new(Engine::new(Arc::new(SystemClock))))
        .expect("start fake-redis");
    let want = session(&real.url());
    let got = session(&format!("redis://{}", fake.addr()));
    assert!(want.len() > 50, "session too short: {want:?}");
    for (i, (w, g)) in want.iter().zip(&got).enumerate() {
        assert_eq!(w, g, "step {i} differs");
    }
    assert_eq!(want.len(), got.len());
}
