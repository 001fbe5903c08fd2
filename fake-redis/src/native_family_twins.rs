//! The proof that the lock family's native scripts (`native_fair`,
//! `native_fenced`, `native_spin`) equal their Lua texts: random call
//! sequences go to an engine running them natively and to one running
//! them in Lua, and after every call the replies, the published messages
//! and every key (type, contents with scores, TTL) must be the same.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::engine::{args, engine_at};
use crate::{ConnId, Engine, LockScript, Response, Value};

/// Every key the calls may touch, checked after each call.
const KEYS: &[&str] = &[
    "lock", "q", "t", "latch", "tok", "str", "ch:a:1", "ch:b:1", "ch:c:1",
];

// The pools a call's words are drawn from: mostly what Redisson sends,
// now and then a key of the wrong type or an argument that is no number
// (repeats weight the usual values).
const LOCK: &[&str] = &[
    "lock", "lock", "lock", "lock", "lock", "lock", "lock", "lock", "lock", "str", "q",
];
const QUEUE: &[&str] = &["q", "q", "q", "q", "q", "q", "q", "q", "q", "t", "str"];
const TIMEOUTS: &[&str] = &["t", "t", "t", "t", "t", "t", "t", "t", "t", "q"];
const LATCH: &[&str] = &["latch", "latch", "latch", "latch", "latch", "q", "tok"];
const TOKEN: &[&str] = &["tok", "tok", "tok", "tok", "tok", "lock", "str"];
const FIELD: &[&str] = &["a:1", "b:1", "c:1"];
const LEASE: &[&str] = &[
    "30000", "30000", "30000", "30000", "30000", "30000", "100", "0", "-5", "abc",
];
const WAIT: &[&str] = &[
    "30000", "30000", "30000", "5000", "5000", "5000", "0", "-5", "abc", "0.25", "1e17", "inf",
];
const NOW: &[&str] = &[
    "1000",
    "20000",
    "40000",
    "60000",
    "100000",
    "1000",
    "20000",
    "40000",
    "60000",
    "100000",
    "0",
    "-5",
    "abc",
    "0.5",
    "1e17",
    "nan",
    "1732790123456",
    "1732790123456",
];
const PUBLISH: &[&str] = &["PUBLISH", "PUBLISH", "publish", "nosuchcmd", "set"];
const STORED: &[&str] = &["1", "0", "x", "2.5"];

fn pick(pool: &[&'static str], sel: u8) -> &'static str {
    pool[usize::from(sel) % pool.len()]
}

/// `KEYS` and `ARGV` of one call of `script`, drawn with `s`.
fn words(script: LockScript, s: &[u8; 8]) -> (Vec<&'static str>, Vec<&'static str>) {
    let (lock, queue, timeouts) = (pick(LOCK, s[0]), pick(QUEUE, s[1]), pick(TIMEOUTS, s[2]));
    let (field, lease, wait, now) = (
        pick(FIELD, s[3]),
        pick(LEASE, s[4]),
        pick(WAIT, s[5]),
        pick(NOW, s[6]),
    );
    match script {
        LockScript::FairAcquireFailed | LockScript::FairAcquireFailedHead => {
            (vec![queue, timeouts], vec![field, wait])
        }
        LockScript::FairTryAcquire | LockScript::FairTryAcquireUncheckedPurge => {
            (vec![lock, queue, timeouts], vec![lease, field, now, wait])
        }
        LockScript::FairTryAcquireLegacy => (vec![lock, queue, timeouts], vec![lease, field, now]),
        LockScript::FairAcquire
        | LockScript::FairAcquireUnscoredLast
        | LockScript::FairAcquireUncheckedPurge
        | LockScript::FairAcquireOwnDeadline => {
            (vec![lock, queue, timeouts], vec![lease, field, wait, now])
        }
        // Up to 3.11.0 `ARGV[3]` is now + the wait: another time.
        LockScript::FairAcquireFromHead => (
            vec![lock, queue, timeouts],
            vec![lease, field, pick(NOW, s[7]), now],
        ),
        LockScript::FairUnlockLegacy => (
            vec![lock, queue, timeouts, "ch"],
            vec!["0", lease, field, now],
        ),
        LockScript::FairUnlockPublishArg => (
            vec![lock, queue, timeouts, "ch"],
            vec!["0", lease, field, now, pick(PUBLISH, s[7])],
        ),
        LockScript::FairForceUnlockLegacy => (vec![lock, queue, timeouts, "ch"], vec!["0", now]),
        LockScript::FairUnlock | LockScript::FairUnlockLatchedUncheckedPurge => (
            vec![lock, queue, timeouts, "ch", pick(LATCH, s[7])],
            vec!["0", lease, field, now, pick(PUBLISH, s[7] / 8), "500"],
        ),
        LockScript::FairForceUnlock | LockScript::FairForceUnlockPublishArg => (
            vec![lock, queue, timeouts, "ch"],
            vec!["0", now, pick(PUBLISH, s[7])],
        ),
        LockScript::FencedAcquire | LockScript::FencedAcquireToken => {
            (vec![lock, pick(TOKEN, s[7])], vec![lease, field])
        }
        LockScript::SpinUnlockLatched => (vec![lock, pick(LATCH, s[7])], vec![lease, field, "500"]),
        LockScript::SpinForceUnlock => (vec![lock], vec![]),
        _ => (vec![lock], vec![lease, field]),
    }
}

/// One step: a script call (`EVAL`, or `EVALSHA` now and then, which
/// meets `NOSCRIPT` until the text was run), with its keys or arguments
/// now and then cut short (so `KEYS[i]` or `ARGV[i]` is `nil`).
fn script_call(script: LockScript, s: &[u8; 8], shape: u8) -> Vec<String> {
    let (mut keys, mut argv) = words(script, s);
    match shape % 16 {
        0 => {
            keys.pop();
        }
        1 => {
            argv.pop();
        }
        _ => {}
    }
    let sha = script.sha1();
    let head = if shape % 16 == 2 {
        ["EVALSHA", sha.as_str()]
    } else {
        ["EVAL", script.text()]
    };
    let mut out: Vec<String> = head.iter().map(|w| (*w).to_owned()).collect();
    out.push(keys.len().to_string());
    out.extend(keys.iter().chain(&argv).map(|w| (*w).to_owned()));
    out
}

/// One hostile step: a queue entry without a score, a score for a thread
/// not queued, a latch or string key holding a value, a count that is no
/// integer, or a key gone.
fn setup_call(kind: usize, s: &[u8; 8]) -> Vec<String> {
    let field = pick(FIELD, s[3]);
    let words: Vec<&str> = match kind % 5 {
        0 => vec!["RPUSH", "q", field],
        1 => vec!["ZADD", "t", pick(NOW, s[6] % 11), field],
        2 => vec![
            "SET",
            pick(&["latch", "str", "tok"], s[7]),
            pick(STORED, s[4]),
        ],
        3 => vec!["HSET", "lock", field, pick(STORED, s[4])],
        _ => vec!["DEL", pick(KEYS, s[0])],
    };
    words.iter().map(|w| (*w).to_owned()).collect()
}

/// What a client can see of `key`: its type, TTL and contents (scores
/// included).
fn key_state(e: &mut Engine, observer: ConnId, key: &str) -> Vec<Response> {
    let mut run = |w: &[&str]| e.execute(observer, args(w));
    let kind = run(&["TYPE", key]);
    let contents = match kind.replies.first() {
        Some(Value::Simple(t)) if t == "hash" => run(&["HGETALL", key]),
        Some(Value::Simple(t)) if t == "list" => run(&["LRANGE", key, "0", "-1"]),
        Some(Value::Simple(t)) if t == "zset" => run(&["ZRANGE", key, "0", "-1", "WITHSCORES"]),
        _ => run(&["GET", key]),
    };
    vec![kind, run(&["PTTL", key]), contents]
}

/// A pair of engines: natively and in Lua; each with a subscriber to
/// every channel and an observer connection.
struct Twins {
    native: Engine,
    lua: Engine,
    clocks: [crate::ManualClock; 2],
    caller: ConnId,
    observer: ConnId,
}

impl Twins {
    fn new() -> Twins {
        let (mut native, clock_n, caller) = engine_at(1_000);
        let (mut lua, clock_l, _) = engine_at(1_000);
        lua.state.lock_scripts_in_lua = true;
        let mut observer = caller;
        for e in [&mut native, &mut lua] {
            let subscriber = e.connect();
            e.execute(subscriber, args(&["PSUBSCRIBE", "*"]));
            observer = e.connect();
        }
        Twins {
            native,
            lua,
            clocks: [clock_n, clock_l],
            caller,
            observer,
        }
    }

    /// Runs `words` on both, after `advance` ms; a difference is the
    /// failure's text.
    fn step(&mut self, advance: u64, words: &[String]) -> Result<(), TestCaseError> {
        for clock in &self.clocks {
            clock.advance(advance);
        }
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let a = self.native.execute(self.caller, args(&words));
        let b = self.lua.execute(self.caller, args(&words));
        let shown = || format!("{:?}", &words[..words.len().min(12)]);
        prop_assert_eq!(&a, &b, "reply or messages differ: {}", shown());
        for key in KEYS {
            let n = key_state(&mut self.native, self.observer, key);
            let l = key_state(&mut self.lua, self.observer, key);
            prop_assert_eq!(n, l, "key {} differs after {}", key, shown());
        }
        Ok(())
    }
}

/// `RFairLock`'s, `RFencedLock`'s and `RSpinLock`'s native scripts equal
/// their Lua texts, call for call: sequences of their scripts (every era's)
/// (three threads, times around the queued deadlines, waits of 0, large,
/// negative, fractional or no number, queue entries without a score,
/// keys of the wrong type, `KEYS` or `ARGV` cut short, publish commands
/// Redis does not know) and hostile writes between them. A native that
/// computed a deadline in integers, formatted a score as Lua's `%.14g`,
/// missed a side effect made before a failing call or worded a runtime
/// error differently fails here.
#[test]
fn family_natives_equal_lua() {
    let step = (
        0usize..LockScript::FAMILY.len() + 3,
        any::<[u8; 8]>(),
        any::<u8>(),
        prop::sample::select(&[0u64, 0, 1, 100, 5_000, 20_000][..]),
    );
    let mut runner = TestRunner::new(Config {
        cases: 256,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&prop::collection::vec(step, 1..64), |steps| {
        let mut twins = Twins::new();
        for (kind, s, shape, advance) in steps {
            let words = match LockScript::FAMILY.get(kind) {
                Some(script) => script_call(*script, &s, shape),
                None => setup_call(usize::from(shape), &s),
            };
            twins.step(advance, &words)?;
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// The fair lock's Lua runtime errors, natively, word for word as
/// redis-server 7.0.15 gave them for the same calls: 3.32 to 3.44's
/// acquire behind a queued thread without a score (arithmetic on nil, the
/// "attempt to compare nil with number" family fixed in 3.45.0), and a
/// purge given a time that is no number (a comparison with nil).
#[test]
fn fair_runtime_errors_are_luas() {
    let (mut e, _clock, c) = engine_at(1_000);
    let sha = LockScript::FairAcquireUnscoredLast.sha1();
    e.execute(c, args(&["HSET", "lock", "a:1", "1"]));
    e.execute(c, args(&["RPUSH", "q", "b:1"]));
    let acquire = |e: &mut Engine, script: LockScript, now: &str| {
        let words = [
            "EVAL",
            script.text(),
            "3",
            "lock",
            "q",
            "t",
            "30000",
            "c:1",
            "5000",
            now,
        ];
        e.execute(c, args(&words)).replies
    };
    assert_eq!(
        acquire(&mut e, LockScript::FairAcquireUnscoredLast, "1000"),
        vec![Value::error(format!(
            "ERR user_script:1: attempt to perform arithmetic on a nil value script: {sha}, on @user_script:1."
        ))]
    );
    // 3.45.0's text checks the score first: c:1 is queued behind b:1.
    assert_eq!(
        acquire(&mut e, LockScript::FairAcquire, "1000"),
        vec![Value::Int(-1)]
    );
    e.execute(c, args(&["LPOP", "q"]));
    let sha = LockScript::FairAcquire.sha1();
    assert_eq!(
        acquire(&mut e, LockScript::FairAcquire, "abc"),
        vec![Value::error(format!(
            "ERR user_script:1: attempt to compare number with nil script: {sha}, on @user_script:1."
        ))]
    );
    // A force unlock without the channel key: the lock is deleted, then
    // the channel's name cannot be made.
    let sha = LockScript::FairForceUnlock.sha1();
    let words = [
        "EVAL",
        LockScript::FairForceUnlock.text(),
        "3",
        "lock",
        "q",
        "t",
        "0",
        "1000",
        "PUBLISH",
    ];
    assert_eq!(
        e.execute(c, args(&words)).replies,
        vec![Value::error(format!(
            "ERR user_script:1: attempt to concatenate field '?' (a nil value) script: {sha}, on @user_script:1."
        ))]
    );
    assert_eq!(e.hash_snapshot(b"lock"), None);
}

/// #4153: before 3.31.0 every fair-lock script's purge compares a queue
/// head's score without checking it has one, so while the head has no
/// score the acquire, the unlock and the force unlock all fail with Lua's
/// comparison error, natively word for word as Lua gives it (the text
/// redis-server 7.0.15 sends, `ERR user_script:1: ... script: <sha>, on
/// @user_script:1.`); 3.31.0's acquire stops the purge there and queues.
#[test]
fn fair_purge_before_3_31_fails_on_a_head_without_a_score_4153() {
    let (mut e, _clock, c) = engine_at(1_000);
    e.execute(c, args(&["HSET", "lock", "a:1", "1"]));
    e.execute(c, args(&["RPUSH", "q", "b:1"]));
    let compare = |script: LockScript| {
        Value::error(format!(
            "ERR user_script:1: attempt to compare nil with number script: {}, on @user_script:1.",
            script.sha1()
        ))
    };
    let run = |e: &mut Engine, script: LockScript, keys: &[&str], argv: &[&str]| {
        let count = keys.len().to_string();
        let mut words = vec!["EVAL", script.text(), count.as_str()];
        words.extend_from_slice(keys);
        words.extend_from_slice(argv);
        e.execute(c, args(&words)).replies
    };
    let (k3, k4) = (["lock", "q", "t"], ["lock", "q", "t", "ch"]);
    for (script, keys, argv) in [
        (
            LockScript::FairAcquireFromHead,
            &k3[..],
            &["30000", "c:1", "6000", "1000"][..],
        ),
        (
            LockScript::FairAcquireUncheckedPurge,
            &k3,
            &["30000", "c:1", "5000", "1000"],
        ),
        (
            LockScript::FairTryAcquireLegacy,
            &k3,
            &["30000", "c:1", "1000"],
        ),
        (
            LockScript::FairUnlockLegacy,
            &k4,
            &["0", "30000", "a:1", "1000"],
        ),
        (
            LockScript::FairForceUnlockPublishArg,
            &k4,
            &["0", "1000", "PUBLISH"],
        ),
    ] {
        assert_eq!(
            run(&mut e, script, keys, argv),
            vec![compare(script)],
            "{script:?}"
        );
    }
    assert!(
        e.hash_snapshot(b"lock").is_some(),
        "the failed scripts left K"
    );
    // 3.31.0: the purge stops at b:1; c:1 queues behind it from K's PTTL,
    // and b:1's missing score is read as none (PTTL of K, no expiry: -1).
    let argv = ["30000", "c:1", "5000", "1000"];
    assert_eq!(
        run(&mut e, LockScript::FairAcquireOwnDeadline, &k3, &argv),
        vec![Value::error(format!(
            "ERR user_script:1: attempt to perform arithmetic on a nil value script: {}, on @user_script:1.",
            LockScript::FairAcquireOwnDeadline.sha1()
        ))]
    );
}
