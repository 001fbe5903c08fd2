//! What Redisson's 3.46+ WAIT/WAITAOF probe and its `INFO ALL` read of
//! a server, against redis-server 7.0.15 with AOF off and on: `WAIT 0 0`
//! before and after a write, the probe's `WAITAOF 0 0 0` and the lock's
//! `WAITAOF 1 1 1000` refused as unknown commands (7.0 has no WAITAOF;
//! the single-quoted text that Redisson 3.47.0's backtick rule misses,
//! #6618), and `INFO`'s `aof_enabled`. The 6.2 and 7.2 texts, which no
//! installed server can show, are pinned by `fake-redis/src/version.rs`
//! and `src/waitaof.rs` with the Redis source lines they come from.

use std::sync::Arc;

use fake_redis::testing::RealRedis;
use fake_redis::{BackgroundServer, Engine, RedisVersion, SharedEngine, SystemClock};

use crate::wire::{Client, show};

/// The `aof_enabled:` line of an `INFO persistence` reply.
fn aof_line(frames: &[Vec<u8>]) -> String {
    let text = String::from_utf8_lossy(&frames[0]).into_owned();
    text.split("\r\n")
        .find(|l| l.starts_with("aof_enabled:"))
        .unwrap_or("no aof_enabled line")
        .to_owned()
}

/// Both servers with AOF `on` or off, the fake answering as 7.0.
fn servers(on: bool) -> (RealRedis, BackgroundServer) {
    // Its AOF files go to the server's own directory, removed on drop.
    let real = if on {
        RealRedis::start_for_test_with(&["--appendonly", "yes"])
    } else {
        RealRedis::start_for_test()
    };
    let mut engine = Engine::new(Arc::new(SystemClock));
    engine.set_version(RedisVersion::V7_0);
    engine.set_appendonly(on);
    let fake = BackgroundServer::start(SharedEngine::new(engine)).expect("start fake-redis");
    (real, fake)
}

/// Every reply byte for byte, and `aof_enabled` equal, with AOF off and
/// on. A fake that knew WAITAOF under 7.0, quoted it otherwise, answered
/// `WAIT 0 0` with anything but 0, or reported AOF wrongly fails here and
/// prints both replies.
#[test]
fn the_probe_and_aof_read_like_redis_7_0() {
    let commands: [&[&str]; 5] = [
        &["WAIT", "0", "0"],
        &["WAITAOF", "0", "0", "0"],
        &["SET", "k", "v"],
        &["WAIT", "0", "0"],
        &["WAITAOF", "1", "1", "1000"],
    ];
    for on in [false, true] {
        let (real, fake) = servers(on);
        let mut r = Client::connect(real.addr());
        let mut f = Client::connect(fake.addr());
        for words in commands {
            let args: Vec<Vec<u8>> = words.iter().map(|w| w.as_bytes().to_vec()).collect();
            let (a, b) = (r.roundtrip(&args).unwrap(), f.roundtrip(&args).unwrap());
            assert_eq!(
                a.iter().map(|x| show(x)).collect::<Vec<_>>(),
                b.iter().map(|x| show(x)).collect::<Vec<_>>(),
                "{words:?} with appendonly {on}"
            );
        }
        let info = vec![b"INFO".to_vec(), b"persistence".to_vec()];
        let (a, b) = (r.roundtrip(&info).unwrap(), f.roundtrip(&info).unwrap());
        assert_eq!(aof_line(&a), aof_line(&b), "appendonly {on}");
        assert_eq!(aof_line(&b), format!("aof_enabled:{}", u8::from(on)));
    }
}
