//! The main paths of each read-write lock script, with the replies and
//! keys Redisson's read and write locks rely on (the property test in
//! `native_twins` proves the rest equal to Lua).

use bytes::Bytes;

use crate::engine::{args, bulk, engine_at};
use crate::{ConnId, Engine, LockScript, ManualClock, Response, Value};

const TA: &str = "{rw}:a:1:rwlock_timeout";
const TB: &str = "{rw}:b:1:rwlock_timeout";

fn eval(e: &mut Engine, c: ConnId, s: LockScript, words: &[&str]) -> Response {
    let mut a = vec!["EVAL", s.text()];
    a.extend(words);
    e.execute(c, args(&a))
}

/// Runs `s` by EVAL and returns its single reply.
fn run(e: &mut Engine, c: ConnId, s: LockScript, words: &[&str]) -> Value {
    let r = eval(e, c, s, words);
    assert_eq!(r.replies.len(), 1, "{r:?}");
    r.replies.into_iter().next().unwrap_or(Value::Nil)
}

fn setup() -> (Engine, ManualClock, ConnId) {
    engine_at(1_000_000)
}

fn read_lock(e: &mut Engine, c: ConnId, timeout: &str, field: &str, lease: &str) -> Value {
    let write = format!("{field}:write");
    let s = LockScript::ReadAcquire;
    run(e, c, s, &["2", "rw", timeout, lease, field, &write])
}

fn write_lock(e: &mut Engine, c: ConnId, field: &str, lease: &str) -> Value {
    run(e, c, LockScript::WriteAcquire, &["1", "rw", lease, field])
}

fn pttl(e: &mut Engine, c: ConnId, key: &str) -> Value {
    e.execute(c, args(&["PTTL", key])).replies.remove(0)
}

fn fields(e: &Engine) -> Vec<(String, String)> {
    let text = |b: &Bytes| String::from_utf8_lossy(b).into_owned();
    e.hash_snapshot(b"rw")
        .map(|(f, _)| f.iter().map(|(k, v)| (text(k), text(v))).collect())
        .unwrap_or_default()
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// Readers share: each hold has its own timeout key, a re-entry a second
/// one, and K lives as long as the longest of its lease and what it had
/// left (3.11.1+; 3.8 set it to the new lease). A writer is refused with
/// K's TTL.
#[test]
fn readers_share_and_writers_wait() {
    let (mut e, clock, c) = setup();
    assert_eq!(read_lock(&mut e, c, TA, "a:1", "30000"), Value::Nil);
    clock.advance(1_000);
    assert_eq!(read_lock(&mut e, c, TB, "b:1", "30000"), Value::Nil);
    assert_eq!(read_lock(&mut e, c, TA, "a:1", "100"), Value::Nil);
    assert_eq!(
        fields(&e),
        pairs(&[("mode", "read"), ("a:1", "2"), ("b:1", "1")])
    );
    assert_eq!(pttl(&mut e, c, "rw"), Value::Int(30_000));
    assert_eq!(pttl(&mut e, c, &format!("{TA}:2")), Value::Int(100));
    assert_eq!(pttl(&mut e, c, &format!("{TA}:1")), Value::Int(29_000));
    assert_eq!(
        write_lock(&mut e, c, "w:write", "30000"),
        Value::Int(30_000)
    );
    let fixed = LockScript::ReadAcquireFixedLease;
    let words = ["2", "rw", TB, "100", "b:1", "b:1:write"];
    assert_eq!(run(&mut e, c, fixed, &words), Value::Nil);
    assert_eq!(pttl(&mut e, c, "rw"), Value::Int(100));
}

/// A writer re-enters by adding the lease to what K has left, may take
/// the read lock itself, and shuts other readers out.
#[test]
fn writer_reenters_and_reads() {
    let (mut e, clock, c) = setup();
    assert_eq!(write_lock(&mut e, c, "a:1:write", "1000"), Value::Nil);
    clock.advance(400);
    assert_eq!(write_lock(&mut e, c, "a:1:write", "1000"), Value::Nil);
    assert_eq!(pttl(&mut e, c, "rw"), Value::Int(1_600));
    assert_eq!(read_lock(&mut e, c, TB, "b:1", "30000"), Value::Int(1_600));
    assert_eq!(read_lock(&mut e, c, TA, "a:1", "30000"), Value::Nil);
    assert_eq!(
        fields(&e),
        pairs(&[("mode", "write"), ("a:1:write", "2"), ("a:1", "1")])
    );
}

/// A reader's unlock keeps K alive for the longest remaining reader's
/// timeout key; the last one deletes K and wakes the waiters. An unlock
/// of no lock answers 1 before 3.44, nil from 3.44; a latch replays.
#[test]
fn read_unlock_leaves_the_lock_to_remaining_readers() {
    let (mut e, clock, c) = setup();
    let sub = e.connect();
    e.execute(sub, args(&["SUBSCRIBE", "ch"]));
    read_lock(&mut e, c, TA, "a:1", "30000");
    clock.advance(5_000);
    read_lock(&mut e, c, TB, "b:1", "10000");
    let unlock = |e: &mut Engine, t: &str, f: &str, latch: &str| {
        let s = LockScript::ReadUnlockLatched;
        eval(
            e,
            c,
            s,
            &["5", "rw", "ch", t, "{rw}", latch, "0", f, "PUBLISH", "100"],
        )
    };
    let r = unlock(&mut e, TA, "a:1", "l1");
    assert_eq!(r.replies, vec![Value::Int(0)]);
    assert!(r.deliveries.is_empty());
    assert_eq!(pttl(&mut e, c, "rw"), Value::Int(10_000));
    assert_eq!(pttl(&mut e, c, &format!("{TA}:1")), Value::Int(-2));
    assert_eq!(unlock(&mut e, TA, "a:1", "l1").replies, vec![Value::Int(0)]);
    let r = unlock(&mut e, TB, "b:1", "l2");
    assert_eq!(r.replies, vec![Value::Int(1)]);
    let message = Value::Push(vec![bulk("message"), bulk("ch"), bulk("0")]);
    assert_eq!(r.deliveries, vec![(sub, message)]);
    assert_eq!(e.hash_snapshot(b"rw"), None);
    assert_eq!(unlock(&mut e, TB, "b:1", "l3").replies, vec![Value::Nil]);
    let one = LockScript::ReadUnlockLatchedOne;
    let words = [
        "5", "rw", "ch", TB, "{rw}", "l4", "0", "b:1", "PUBLISH", "100",
    ];
    assert_eq!(run(&mut e, c, one, &words), Value::Int(1));
}

/// The writer's last unlock leaves K to its own read hold (mode `read`)
/// or deletes it; a count above one only re-arms the lease.
#[test]
fn write_unlock_hands_over_to_the_writers_read_hold() {
    let (mut e, _clock, c) = setup();
    write_lock(&mut e, c, "a:1:write", "30000");
    write_lock(&mut e, c, "a:1:write", "30000");
    read_lock(&mut e, c, TA, "a:1", "30000");
    let s = LockScript::WriteUnlock;
    let words = ["2", "rw", "ch", "0", "30000", "a:1:write"];
    assert_eq!(run(&mut e, c, s, &words), Value::Int(0));
    assert_eq!(run(&mut e, c, s, &words), Value::Int(1));
    assert_eq!(fields(&e), pairs(&[("mode", "read"), ("a:1", "1")]));
    assert_eq!(run(&mut e, c, s, &words), Value::Nil);
    let force = LockScript::WriteForceUnlock;
    assert_eq!(
        run(&mut e, c, force, &["2", "rw", "ch", "0"]),
        Value::Int(0)
    );
    let force = LockScript::ReadForceUnlockPublishArg;
    let words = ["2", "rw", "ch", "0", "PUBLISH"];
    assert_eq!(run(&mut e, c, force, &words), Value::Int(1));
    assert_eq!(e.hash_snapshot(b"rw"), None);
}

/// The per-lock renewal extends K and every reader's timeout keys.
#[test]
fn read_renew_extends_every_readers_timeout_keys() {
    let (mut e, clock, c) = setup();
    read_lock(&mut e, c, TA, "a:1", "30000");
    read_lock(&mut e, c, TB, "b:1", "30000");
    clock.advance(10_000);
    let renew = LockScript::ReadRenew;
    let words = ["2", "rw", "{rw}", "30000", "a:1"];
    assert_eq!(run(&mut e, c, renew, &words), Value::Int(1));
    for key in ["rw", &format!("{TA}:1"), &format!("{TB}:1")] {
        assert_eq!(pttl(&mut e, c, key), Value::Int(30_000), "{key}");
    }
    let words = ["2", "rw", "{rw}", "30000", "c:1"];
    assert_eq!(run(&mut e, c, renew, &words), Value::Int(0));
}

/// PR #6883: before 4.0.0 the chunk's inner loop reuses `i`, so a reader
/// with a count of 2 makes it concatenate `KEYS[3]`, nil for a chunk of
/// one lock: the script fails after K's PEXPIRE, with no timeout key
/// extended. The fixed text extends both.
#[test]
fn shadowed_batch_fails_on_a_reentrant_reader_6883() {
    let (mut e, clock, c) = setup();
    read_lock(&mut e, c, TA, "a:1", "30000");
    read_lock(&mut e, c, TA, "a:1", "30000");
    clock.advance(10_000);
    let s = LockScript::ReadRenewBatchShadowed;
    let words = ["2", "rw", "{rw}", "30000", "a:1"];
    let expected = format!(
        "ERR user_script:1: attempt to concatenate field '?' (a nil value) script: {}, on @user_script:1.",
        s.sha1()
    );
    assert_eq!(run(&mut e, c, s, &words), Value::Error(expected));
    assert_eq!(pttl(&mut e, c, "rw"), Value::Int(30_000));
    assert_eq!(pttl(&mut e, c, &format!("{TA}:2")), Value::Int(20_000));
    let s = LockScript::ReadRenewBatch;
    assert_eq!(run(&mut e, c, s, &words), Value::Array(vec![Value::Int(1)]));
    assert_eq!(pttl(&mut e, c, &format!("{TA}:2")), Value::Int(30_000));
    assert_eq!(pttl(&mut e, c, &format!("{TA}:1")), Value::Int(30_000));
}

/// From 4.4.0 (PR #7098) a chunk renews only this client's named readers,
/// and K only when one of them holds; a count that is no number fails the
/// `for` as Lua does.
#[test]
fn own_batch_renews_only_named_readers() {
    let (mut e, clock, c) = setup();
    read_lock(&mut e, c, TA, "a:1", "30000");
    read_lock(&mut e, c, TB, "b:1", "30000");
    clock.advance(10_000);
    let s = LockScript::ReadRenewBatchOwn;
    let words = ["2", "rw", "{rw}", "30000", "1", "a:1"];
    assert_eq!(run(&mut e, c, s, &words), Value::Array(vec![Value::Int(1)]));
    assert_eq!(pttl(&mut e, c, &format!("{TA}:1")), Value::Int(30_000));
    assert_eq!(pttl(&mut e, c, &format!("{TB}:1")), Value::Int(20_000));
    let words = ["2", "rw", "{rw}", "30000", "1", "c:1"];
    assert_eq!(run(&mut e, c, s, &words), Value::Array(vec![Value::Int(0)]));
    let words = ["2", "rw", "{rw}", "30000", "x", "a:1"];
    let expected = format!(
        "ERR user_script:1: 'for' limit must be a number script: {}, on @user_script:1.",
        s.sha1()
    );
    assert_eq!(run(&mut e, c, s, &words), Value::Error(expected));
}

/// A counter Lua would loop on for most of its budget sends the script to
/// Lua; Redisson's counters, and scripts without such loops, stay native.
#[test]
fn only_runaway_loops_go_to_lua() {
    let (mut e, _clock, c) = setup();
    read_lock(&mut e, c, TA, "a:1", "30000");
    let keys = [Bytes::from_static(b"rw"), Bytes::from_static(b"{rw}")];
    let too_long =
        |e: &mut Engine, script| super::loops_too_long(&e.dbs[0], e.now(), script, &keys);
    assert!(!too_long(&mut e, LockScript::ReadRenew));
    for counter in ["1000001", "inf", "2e6"] {
        e.execute(c, args(&["HSET", "rw", "b:1", counter]));
        assert!(too_long(&mut e, LockScript::ReadRenew), "{counter}");
        assert!(too_long(&mut e, LockScript::ReadUnlock), "{counter}");
        assert!(!too_long(&mut e, LockScript::ReadAcquire), "{counter}");
    }
}
