//! The proof that the lock scripts' native twins (`native`, `native_rw`)
//! are their Lua texts: random calls of every known script, with good and
//! hostile `KEYS`/`ARGV`, go to one engine that runs them natively and one
//! that runs them in Lua (`lock_scripts_in_lua`), time moving alike; after
//! every call the replies, the published messages and the whole keyspace
//! (values, field order, expiries) must match.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

use crate::db::Entry;
use crate::engine::{args, engine_at};
use crate::{ConnId, Engine, LockScript, ManualClock};

/// The two engines, their clocks, the caller and a subscriber of `ch`.
struct Twins {
    native: Engine,
    lua: Engine,
    clocks: [ManualClock; 2],
    caller: ConnId,
}

impl Twins {
    fn new() -> Twins {
        let (native, clock_n, caller) = engine_at(1_000);
        let (mut lua, clock_l, _) = engine_at(1_000);
        lua.state.lock_scripts_in_lua = true;
        let mut twins = Twins {
            native,
            lua,
            clocks: [clock_n, clock_l],
            caller,
        };
        let subscriber = twins.native.connect();
        twins.lua.connect();
        for engine in [&mut twins.native, &mut twins.lua] {
            engine.execute(subscriber, args(&["SUBSCRIBE", "ch"]));
            engine.execute(caller, args(&["SET", "str", "x"]));
        }
        twins
    }

    fn advance(&self, ms: u64) {
        for clock in &self.clocks {
            clock.advance(ms);
        }
    }

    /// Sends `words` to both and compares everything they show.
    fn both(&mut self, words: &[&str]) -> Result<(), TestCaseError> {
        let a = self.native.execute(self.caller, args(words));
        let b = self.lua.execute(self.caller, args(words));
        prop_assert_eq!(&a, &b, "{:?}", words);
        prop_assert_eq!(keyspace(&self.native), keyspace(&self.lua), "{:?}", words);
        Ok(())
    }
}

/// Every live key of database 0 with its value and expiry.
fn keyspace(e: &Engine) -> Vec<(Vec<u8>, Entry)> {
    e.dbs[0]
        .live_entries(e.now())
        .map(|(k, entry)| (k.to_vec(), entry.clone()))
        .collect()
}

/// Runs `cases` random sequences of (command, then time moves by).
fn run(cases: u32, strategy: impl Strategy<Value = Vec<(Vec<String>, u64)>>) {
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&strategy, |calls| {
        let mut twins = Twins::new();
        for (words, advance) in &calls {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            twins.both(&words)?;
            twins.advance(*advance);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// The publish command a script is given: Redisson's, in either case,
/// or a command Redis does not know.
fn publish(pick: &str) -> &'static str {
    match pick {
        "ok" => "PUBLISH",
        "0" => "publish",
        _ => "nosuchcmd",
    }
}

/// `EVAL text numkeys keys... argv...`, `numkeys` right (`ok`) or not.
fn eval(script: LockScript, numkeys: &str, keys: &[String], argv: &[String]) -> Vec<String> {
    let n = if numkeys == "ok" {
        keys.len().to_string()
    } else {
        numkeys.to_owned()
    };
    let mut words = vec!["EVAL".to_owned(), script.text().to_owned(), n];
    words.extend(keys.iter().chain(argv).cloned());
    words
}

/// `RLock`'s scripts (two lock keys, a counter, good and bad leases).
#[test]
fn native_twins_equal_lua() {
    let call = (
        prop::sample::select(&LockScript::RLOCK[..]),
        prop::sample::select(&["lock", "lock2", "ctr"][..]),
        prop::sample::select(&["30000", "100", "0", "-5", "abc", "1.5"][..]),
        prop::sample::select(&["a:1", "b:1"][..]),
        prop::sample::select(&["ok", "0", "3"][..]),
    )
        .prop_map(|(script, key, lease, field, numkeys)| {
            let s = |w: &[&str]| w.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
            let (keys, argv) = match script {
                LockScript::Unlock => (s(&[key, "ch"]), s(&["0", lease, field])),
                LockScript::ForceUnlock => (s(&[key, "ch"]), s(&["0"])),
                LockScript::AcquireFenced => (s(&[key, "ctr"]), s(&[lease, field])),
                LockScript::RenewBatch => (s(&[key, "lock2"]), s(&[lease, field, "a:1"])),
                LockScript::UnlockPublishArg => {
                    (s(&[key, "ch"]), s(&["0", lease, field, publish(numkeys)]))
                }
                LockScript::ForceUnlockPublishArg => (s(&[key, "ch"]), s(&["0", publish(numkeys)])),
                _ => (s(&[key]), s(&[lease, field])),
            };
            eval(script, numkeys, &keys, &argv)
        });
    run(64, prop::collection::vec((call, 0u64..50_000), 1..24));
}

/// One call of a read-write lock script, with the key shapes lockcore
/// sends (`kind/read.rs`, `kind/write.rs`): the lock `K` (or a string,
/// `str`), `{K}` and `{K}:<uuid>:<tid>:rwlock_timeout`, the channel, a
/// latch; fields of two clients (a reader's field now and then its
/// writer's); leases good and bad.
#[derive(Debug, Clone)]
struct RwCall {
    script: LockScript,
    lock: &'static str,
    other: &'static str,
    field: &'static str,
    other_field: &'static str,
    lease: &'static str,
    names: &'static str,
    numkeys: &'static str,
    latch: &'static str,
}

impl RwCall {
    fn words(&self) -> Vec<String> {
        let s = |w: &[&str]| w.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        let (k, field, lease) = (self.lock, self.field, self.lease);
        let write = format!("{field}:write");
        let braced = format!("{{{k}}}");
        let timeout = format!("{braced}:{field}:rwlock_timeout");
        let other = format!("{{{}}}", self.other);
        let publish = publish(self.numkeys);
        let (keys, argv) = match self.script {
            LockScript::ReadAcquireFixedLease | LockScript::ReadAcquire => {
                (s(&[k, &timeout]), s(&[lease, field, &write]))
            }
            LockScript::ReadRenew => (s(&[k, &braced]), s(&[lease, field])),
            LockScript::ReadRenewBatchShadowed | LockScript::ReadRenewBatch => (
                s(&[k, &braced, self.other, &other]),
                s(&[lease, field, self.other_field]),
            ),
            // Per pair a count of lockNames and the names; a count that
            // is no number, or runs past ARGV, is tried too.
            LockScript::ReadRenewBatchOwn => {
                let mut argv = s(&[lease, self.names, field, self.other_field]);
                argv.extend(s(&["1", self.other_field]));
                (s(&[k, &braced, self.other, &other]), argv)
            }
            LockScript::ReadUnlock => (s(&[k, "ch", &timeout, &braced]), s(&["0", field])),
            LockScript::ReadUnlockPublishArg => {
                (s(&[k, "ch", &timeout, &braced]), s(&["0", field, publish]))
            }
            LockScript::ReadUnlockLatchedOne | LockScript::ReadUnlockLatched => (
                s(&[k, "ch", &timeout, &braced, self.latch]),
                s(&["0", field, publish, lease]),
            ),
            LockScript::ReadForceUnlock | LockScript::WriteForceUnlock => {
                (s(&[k, "ch"]), s(&["0"]))
            }
            LockScript::ReadForceUnlockPublishArg | LockScript::WriteForceUnlockPublishArg => {
                (s(&[k, "ch"]), s(&["0", publish]))
            }
            LockScript::WriteAcquire => (s(&[k]), s(&[lease, &write])),
            LockScript::WriteUnlock => (s(&[k, "ch"]), s(&["0", lease, &write])),
            LockScript::WriteUnlockPublishArg => (s(&[k, "ch"]), s(&["0", lease, &write, publish])),
            // The write unlocks with their latch.
            _ => (
                s(&[k, "ch", self.latch]),
                s(&["0", lease, &write, publish, lease]),
            ),
        };
        eval(self.script, self.numkeys, &keys, &argv)
    }
}

fn rw_call() -> impl Strategy<Value = Vec<String>> {
    let pick = |items: &'static [&'static str]| prop::sample::select(items);
    (
        (
            0..LockScript::RW.len(),
            pick(&["rw", "rw", "rw", "rw2", "str"]),
            pick(&["rw2", "rw", "str"]),
            pick(&["a:1", "a:1", "b:1", "a:1:write"]),
            pick(&["b:1", "a:1", "c:1"]),
        ),
        (
            pick(&["30000", "30000", "100", "0", "-5", "abc", "1.5", "1e3"]),
            pick(&["1", "1", "2", "0", "abc", "2.5", "9"]),
            pick(&["ok", "ok", "ok", "ok", "ok", "0", "1", "3"]),
            pick(&["latch", "latch2", "str", "rw"]),
        ),
    )
        .prop_map(
            |((i, lock, other, field, other_field), (lease, names, numkeys, latch))| {
                RwCall {
                    script: LockScript::RW[i],
                    lock,
                    other,
                    field,
                    other_field,
                    lease,
                    names,
                    numkeys,
                    latch,
                }
                .words()
            },
        )
}

/// A hand-made change between calls: a counter that is no integer, a
/// mode the scripts do not write, a timeout key, a latch, a deletion.
fn meddling() -> impl Strategy<Value = Vec<String>> {
    let pick = |items: &'static [&'static str]| prop::sample::select(items);
    (
        pick(&["rw", "rw2"]),
        pick(&["a:1", "b:1", "mode", "a:1:write"]),
        pick(&[
            "2.5", "abc", "3", "-1", "0x2", " 2", "write", "read", "other",
        ]),
        0..5usize,
    )
        .prop_map(|(k, field, value, kind)| {
            let words: Vec<String> = match kind {
                0 | 1 => vec!["HSET".into(), k.into(), field.into(), value.into()],
                2 => vec![
                    "SET".into(),
                    format!("{{{k}}}:{field}:rwlock_timeout:1"),
                    "1".into(),
                    "PX".into(),
                    "40000".into(),
                ],
                3 => vec!["SET".into(), "latch".into(), value.into()],
                _ => vec!["DEL".into(), k.into()],
            };
            words
        })
}

/// `RReadWriteLock`'s nineteen scripts: each is called a few hundred times
/// across the cases, over locks that readers and writers of two clients
/// share, with hostile arguments and meddled keys in between.
#[test]
fn read_write_twins_equal_lua() {
    let step = prop_oneof![8 => rw_call(), 2 => meddling()];
    run(400, prop::collection::vec((step, 0u64..20_000), 1..60));
}
