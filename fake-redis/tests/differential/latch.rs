//! The unlock latch's TTL refused (Redisson #7089, #5392), case by case:
//! the 3.24+ latched unlock script with a TTL that wrapped negative, one
//! of 0, 4.4.0's `Long.MAX_VALUE` cap and a TTL past a Java int, by `EVAL`
//! and `EVALSHA`, and `SET ... PX` with the same values outside a script.
//! Redis 7.0.15 refuses the script's last call, `SET latch ... PX <ttl>`,
//! with `ERR invalid expire time in 'set' command` and its `script: <sha>,
//! on @user_script:1.` suffix, after the `DEL` and `PUBLISH` (or the
//! count-down and `PEXPIRE`) already ran: Lua does not roll back. The
//! `EXISTS`/`HGET` after each script and the listener's messages show
//! which writes stayed.

use fake_redis::LockScript;

use crate::generate::{Cmd, words};

/// A command from its words.
fn cmd(w: &[&str]) -> Cmd {
    words(w.iter().map(|w| (*w).to_owned()).collect())
}

/// The latched unlock of field `f` on `lock`, publishing on `ch` (the
/// listener's channel), with `ttl` as `ARGV[5]`.
fn unlock(by_sha: bool, ttl: &str) -> Cmd {
    let script = LockScript::UnlockLatched;
    let sha = script.sha1();
    let (verb, body) = if by_sha {
        ("EVALSHA", sha.as_str())
    } else {
        ("EVAL", script.text())
    };
    cmd(&[
        verb, body, "3", "lock", "ch", "latch", "0", "30000", "f", "PUBLISH", ttl,
    ])
}

/// The TTLs Redisson's arithmetic can send: 3.48 to 4.3.x's wrapped
/// `(int)` cast (the history scenario's), 3.24.0 to 3.24.2's `PX 0` with
/// no retries, 4.4.0's cap, and a product past a Java int that 4.4.0
/// sends whole.
const TTLS: [&str; 4] = ["-609738368", "0", "9223372036854775807", "33750000000"];

/// One case per TTL and script call: a hold released (count 1) and a
/// hold counted down (count 2).
fn cases() -> Vec<Vec<Cmd>> {
    let mut all = Vec::new();
    for by_sha in [false, true] {
        for ttl in TTLS {
            for count in ["1", "2"] {
                all.push(vec![
                    cmd(&["HSET", "lock", "f", count]),
                    unlock(by_sha, ttl),
                    cmd(&["EXISTS", "lock"]),
                    cmd(&["HGET", "lock", "f"]),
                    cmd(&["EXISTS", "latch"]),
                ]);
            }
        }
    }
    all.push(
        TTLS.iter()
            .flat_map(|ttl| [cmd(&["SET", "k", "v", "PX", ttl]), cmd(&["EXISTS", "k"])])
            .chain([cmd(&["SET", "k", "v", "PX", "-5"])])
            .collect(),
    );
    all
}

/// Every case gives byte-identical replies and pub/sub messages on
/// fake-redis and redis-server 7.0.15, in RESP2 and RESP3: the refusal's
/// text and suffix, the lock deleted and published although the script
/// failed, the count-down kept, no latch left. A fake that rolled the
/// script back, checked the TTL before the `DEL`, or worded the error
/// otherwise fails it and prints both transcripts.
#[test]
fn a_refused_latch_ttl_fails_the_script_like_real_redis() {
    let (_real, _fake, mut pair) = crate::servers();
    for resp3 in [false, true] {
        for cmds in cases() {
            // EVALSHA needs the scripts loaded first.
            if let Err(e) = pair.run(resp3, true, &cmds) {
                panic!("{e}");
            }
        }
    }
    assert!(pair.compared > 150, "too few commands compared");
}
