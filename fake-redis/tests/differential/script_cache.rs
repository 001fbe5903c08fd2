//! A replica's script cache, against real `redis-server` 7.0 processes:
//! a script loaded and run on the primary never reaches the replica, so
//! once promoted (`REPLICAOF NO ONE`, as a failover does) it answers the
//! script's `EVALSHA` with `NOSCRIPT`. fake-redis's 7.0 says the same
//! (`RedisVersion::replicates_scripts`), which is why locksim gives the
//! replicas of a 7.0 or 7.2 deployment empty caches; Redis 6.2, which
//! propagated `SCRIPT LOAD`, cannot be run here (documented on the
//! method, from its source).

use std::sync::Arc;

use fake_redis::testing::RealRedis;
use fake_redis::{Engine, LockScript, RedisVersion, SystemClock};

use crate::replica_link::{ask, fake, until};
use crate::wire::Client;

#[test]
fn a_promoted_replica_has_none_of_the_primarys_scripts_like_a_real_one() {
    let primary = RealRedis::start_for_test();
    let port = primary.port().to_string();
    let replica = RealRedis::start_for_test_with(&["--replicaof", "127.0.0.1", &port]);
    let mut p = Client::connect(primary.addr());
    let mut r = Client::connect(replica.addr());
    let renew = LockScript::Renew;
    let sha = renew.sha1();
    let noscript = "-NOSCRIPT No matching script. Please use EVAL.\r\n";

    until(&mut p, &["INFO", "replication"], "first sync", |s| {
        s.contains("connected_slaves:1") && s.contains("state=online")
    });
    // Loaded and run on the primary, a write the replica acknowledges.
    assert_eq!(
        ask(&mut p, &["SCRIPT", "LOAD", renew.text()]),
        format!("${}\r\n{sha}\r\n", sha.len())
    );
    assert_eq!(ask(&mut p, &["HSET", "lock", "u:1", "1"]), ":1\r\n");
    let renewed = ask(&mut p, &["EVALSHA", &sha, "1", "lock", "30000", "u:1"]);
    assert_eq!(renewed, ":1\r\n");
    let synced = ask(&mut p, &["WAIT", "1", "10000"]);
    assert_eq!(synced, ":1\r\n", "the replica never acknowledged");

    // The replica has the key but not the script, and keeps it so once
    // promoted.
    assert_eq!(ask(&mut r, &["HGET", "lock", "u:1"]), "$1\r\n1\r\n");
    assert_eq!(ask(&mut r, &["SCRIPT", "EXISTS", &sha]), "*1\r\n:0\r\n");
    assert_eq!(ask(&mut r, &["REPLICAOF", "NO", "ONE"]), "+OK\r\n");
    let promoted = ask(&mut r, &["EVALSHA", &sha, "1", "lock", "30000", "u:1"]);
    assert_eq!(promoted, noscript);

    // fake-redis's 7.0: a replica's engine is left without the scripts,
    // and so answers as the promoted one did.
    assert!(!RedisVersion::V7_0.replicates_scripts());
    assert!(RedisVersion::V6_2.replicates_scripts());
    let mut e = Engine::new(Arc::new(SystemClock));
    let conn = e.connect();
    fake(&mut e, conn, &["HSET", "lock", "u:1", "1"]);
    let answer = fake(
        &mut e,
        conn,
        &["EVALSHA", &sha, "1", "lock", "30000", "u:1"],
    );
    assert_eq!(answer.as_deref(), Some(noscript));
    drop((replica, primary));
}
