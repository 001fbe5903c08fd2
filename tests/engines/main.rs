//! The same scenario on the three engines: every built-in scenario the
//! turmoil engine can run, under every era, gives the same verdict on the
//! fast and turmoil engines, with each key event (an acquire, a let-go,
//! an expiry) within the comparison's stated tolerance (20 ms + four
//! one-way latencies; see `locksim::compare`); a few give the same
//! verdicts against a real `redis-server`.

use lockcore::Release;
use locksim::{Comparison, builtins};

mod masters;

/// Every pair agrees. The last disagreements and what settled them:
///
/// - network-drop and network-drop-30s (5 pairs): the fast engine dropped
///   what a partition cut off, turmoil delivered it at the heal; a real
///   kernel delivers it at its first retransmission after the heal, and
///   every engine now does (`sim`'s `retransmission`): in
///   network-drop-30s a renewal sent at 10.1 s lands at 35.5 s, after the
///   expiry; in network-drop one sent at 20.1 s lands at 45.5 s, before it.
/// - stw-pause under fenced: when A resumes, its work has ended and its
///   watchdog's timers are overdue. The fast engine runs them in the order
///   they fell due (A unlocks, then learns the lease was lost); turmoil
///   ran the lock's held-back inputs first. A thread whose work ends
///   during a pause now takes its turn among them (lockcore's
///   `RLock::resume_turn`, `RedissonClient::thaw`).
#[test]
fn fast_and_turmoil_agree_on_the_builtins() {
    let mut compared = 0;
    let mut refused = Vec::new();
    let mut failures = Vec::new();
    for scenario in builtins() {
        for era in Release::ERAS {
            let comparison = match Comparison::run(&scenario, None, Some(era), sim::Engine::Turmoil)
            {
                Ok(c) => c,
                Err(e) => {
                    let text = e.to_string();
                    assert!(
                        text.contains("turmoil engine cannot run"),
                        "{} under {era}: {text}",
                        scenario.name
                    );
                    refused.push(scenario.name.clone());
                    continue;
                }
            };
            compared += 1;
            if !comparison.agrees() {
                failures.push(format!(
                    "{} under {era}: disagrees\n{}",
                    scenario.name,
                    comparison.render()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // Every one of the documents' scenarios runs on both engines.
    assert!(refused.is_empty(), "turmoil refused {refused:?}");
    assert_eq!(compared, builtins().len() * Release::ERAS.len());
}

/// Redis restarts without persistence at 3 s while A waits for the lock
/// B holds: the key is gone, C takes the lock at 3.5 s and unlocks at
/// 6 s. A's client has lost its pub/sub connection; lockcore's transport
/// reconnects and the client subscribes again (Redisson's
/// `ConnectionWatchdog` re-attaches pub/sub channels), so C's unlock
/// message wakes A at 6 s, on both engines and against a real Redis. A
/// client that never resubscribed would sleep until its 30 s wait ran out.
const RESTART_WITH_WAITER: &str = r#"
name = "restart-with-waiter"
description = "Redis restarts while A waits; C's unlock after it wakes A."

[sim]
seed = 1
horizon_ms = 20000

[[sim.clients]]
name = "A"
[[sim.clients.threads]]
start_ms = 1000
steps = [{ step = "lock" }, { step = "unlock" }]

[[sim.clients]]
name = "B"
[[sim.clients.threads]]
steps = [{ step = "lock" }, { step = "work", ms = 10000 }, { step = "unlock" }]

[[sim.clients]]
name = "C"
[[sim.clients.threads]]
start_ms = 3500
steps = [{ step = "lock" }, { step = "work", ms = 2500 }, { step = "unlock" }]

[[sim.faults]]
fault = "redis-restart"
at_ms = 3000
"#;

/// When A first acquires, in ms.
fn a_acquires(comparison: &Comparison, engine: usize) -> f64 {
    locksim::key_events(&comparison.trials[engine].run.history)
        .into_iter()
        .find(|e| e.what.starts_with("A/t1 acquires"))
        .map(|e| e.at_ms)
        .unwrap_or_else(|| panic!("A never acquires\n{}", comparison.render()))
}

#[test]
fn a_waiter_resubscribes_after_a_redis_restart() {
    let scenario = locksim::Scenario::parse(RESTART_WITH_WAITER, "test").expect("parses");
    let comparison =
        Comparison::run(&scenario, None, None, sim::Engine::Turmoil).expect("turmoil runs it");
    assert!(comparison.agrees(), "{}", comparison.render());
    for engine in [0, 1] {
        let at = a_acquires(&comparison, engine);
        assert!(
            (6_000.0..6_300.0).contains(&at),
            "{at}\n{}",
            comparison.render()
        );
    }
    let real = sim::Engine::Redis(sim::RealRedis {
        target: sim::RedisTarget::Spawn,
        time_scale: REAL_SCALE,
    });
    let comparison = Comparison::run(&scenario, None, None, real).expect("redis runs it");
    let [fast, redis] = comparison.verdicts();
    assert_eq!(fast, redis, "{}", comparison.render());
    let at = a_acquires(&comparison, 1);
    assert!(
        (6_000.0..7_000.0).contains(&at),
        "{at}\n{}",
        comparison.render()
    );
}

/// The turmoil engine is deterministic: the same spec twice gives the
/// same history, byte for byte.
#[test]
fn turmoil_replays_byte_for_byte() {
    for name in ["stw-pause", "client-crash", "watchdog-serializes"] {
        let scenario = locksim::builtin(name).expect("built-in");
        let spec = scenario.spec(None, None);
        let a = sim::run_turmoil(&spec).expect("runs");
        let b = sim::run_turmoil(&spec).expect("runs");
        assert_eq!(a.history.hash(), b.history.hash(), "{name}");
    }
}

/// The time scale of the real-Redis comparisons: slow enough that a busy
/// test machine's scheduling stays within the checkers' bounds.
const REAL_SCALE: u64 = 5;

/// A few built-in scenarios against a real `redis-server` started by the
/// test (time-scaled): the same verdicts as the fast engine's, two of them
/// with a client's clock set ahead or slowed down, one with Redis's clock
/// jumping ahead, one with a partition. Fails with an install
/// hint when redis-server is missing.
#[test]
fn a_real_redis_gives_the_fast_engines_verdicts() {
    let real = sim::Engine::Redis(sim::RealRedis {
        target: sim::RedisTarget::Spawn,
        time_scale: REAL_SCALE,
    });
    let names = [
        "watchdog-serializes",
        "stw-pause",
        "key-deleted",
        "client-crash",
        "clock-skew",
        "clock-drift-slow",
        "clock-jump",
        // A partition: the proxy forwards the held renewal at the
        // retransmission's instant, 35.5 s, as the fast engine does.
        "network-drop-30s",
    ];
    // Two at a time: each against its own redis-server.
    let mut comparisons = Vec::new();
    for pair in names.chunks(2) {
        comparisons.extend(side_by_side(pair, true, |name| {
            let scenario = locksim::builtin(name).expect("built-in");
            Comparison::run(&scenario, None, None, real.clone())
                .unwrap_or_else(|e| panic!("{name}: {e}"))
        }));
    }
    for (name, comparison) in names.iter().zip(comparisons) {
        let [fast, redis] = comparison.verdicts();
        assert_eq!(fast, redis, "{name}\n{}", comparison.render());
        assert!(
            comparison.trials[1].run.history.len() > 5,
            "{name}: the real run recorded nothing\n{}",
            comparison.render()
        );
    }
}

/// An unreachable Redis is one clear error, soon, never a hang.
#[test]
fn an_unreachable_redis_is_a_clear_error() {
    let scenario = locksim::builtin("watchdog-serializes").expect("built-in");
    let real = sim::Engine::Redis(sim::RealRedis {
        target: sim::RedisTarget::Url("redis://127.0.0.1:1".to_owned()),
        time_scale: 10,
    });
    let error = locksim::Trial::run_on(&scenario, None, None, real)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(error.contains("cannot connect to 127.0.0.1:1"), "{error}");
    assert_eq!(error.lines().count(), 1, "{error}");
}

/// `locksim report --engine turmoil`: the scenarios turmoil can run are
/// run on it under every era, each timeline says which engine ran it, and
/// the README lists the scenarios left out with the engine's reason (here
/// a lossy link, which turmoil's TCP cannot give).
#[test]
fn a_report_on_turmoil_names_its_engine_and_what_it_left_out() {
    let lossy = locksim::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/engines/lossy-link.toml"
    ))
    .expect("a scenario file");
    let scenarios = [locksim::builtin("stw-pause").expect("built-in"), lossy];
    let engine = sim::Engine::Turmoil;
    let (matrix, refused) = locksim::run_matrix_on(&scenarios, &engine).expect("runs");
    assert_eq!(matrix.len(), 1);
    assert_eq!(matrix[0].1.len(), Release::ERAS.len());
    assert_eq!(refused.len(), 1);
    assert_eq!(refused[0].scenario, "lossy-link");
    assert!(
        refused[0].reason.starts_with("faults[0] (drop"),
        "{:?}",
        refused[0]
    );
    let files = locksim::report_files_on(&matrix, &[], &engine, &refused);
    let readme = &files
        .iter()
        .find(|f| f.path == "README.md")
        .expect("README")
        .contents;
    assert!(
        readme.contains("**Engine: turmoil** (`locksim report --engine turmoil`)"),
        "{readme}"
    );
    assert!(readme.contains("- `lossy-link`: "), "{readme}");
    let timeline = files
        .iter()
        .find(|f| f.path.starts_with("timelines/stw-pause."))
        .expect("a stw-pause timeline");
    assert!(
        timeline.contents.contains("engine    turmoil"),
        "{}",
        timeline.contents
    );
}

/// Shrinking and fix attribution run their experiments on the engine
/// that found the run. Under 3.43.0, redis-down (plus a latency window
/// that plays no part) is a defect on turmoil too, and the fix is named
/// as on the fast engine (3.44.0's batched renewal, Redisson #6303). The
/// plan shrinks to the outage alone, every candidate run on turmoil; it
/// shrinks further than the fast engine's would (875 ms still breaks):
/// the client's reconnection backoff (75, 150, 300, 600 ms) keeps it
/// disconnected past the renewal due at 10 s, which the fast engine,
/// with no backoff, does not model.
#[test]
fn shrinking_and_attribution_run_on_turmoil() {
    let release: Release = "3.43.0".parse().expect("a release");
    let mut spec = locksim::builtin("redis-down")
        .expect("built-in")
        .spec(None, Some(release));
    spec.faults
        .0
        .push(sim::Fault::Latency(sim::faults::Latency {
            client: "B".into(),
            at_ms: 2_000,
            duration_ms: 1_000,
            min_ms: 1,
            max_ms: 5,
        }));
    let engine = sim::Engine::Turmoil;
    let run = engine.run(&spec).expect("runs");
    let defects = locksim::defects_attributed(&spec, &run, &engine);
    let fast = locksim::defects_of(&spec, &sim::run(&spec).expect("runs"));
    assert_eq!(defects.len(), 1, "{defects:?}");
    let fix = defects[0].fixed_by.as_ref().expect("a fix is named");
    assert_eq!(fix.release, "3.44.0", "{fix:?}");
    assert_eq!(Some(fix), fast[0].fixed_by.as_ref());

    let invariant = defects[0].invariant;
    let shrunk = locksim::shrink_on(&spec, invariant, Some("defect"), 50, &engine);
    assert!(
        matches!(shrunk.spec.faults.0.as_slice(), [sim::Fault::RedisDown(_)]),
        "{:?}",
        shrunk.spec.faults
    );
    println!("{:?} in {} runs", shrunk.spec.faults, shrunk.runs);
    let broken = engine.run(&shrunk.spec).expect("runs").violations;
    assert!(
        broken.iter().any(|v| v.invariant == invariant),
        "{broken:?}"
    );
}

/// Every history scenario (Redisson's lock bugs, REDISSON.md §2) that the
/// turmoil engine can run gives the fast engine's verdicts and key events
/// under both its releases: the last one with the bug and the fix.
#[test]
fn fast_and_turmoil_agree_on_redissons_history() {
    let mut compared = 0;
    let mut failures = Vec::new();
    for scenario in locksim::history() {
        let Some(row) = scenario.history.as_ref() else {
            continue;
        };
        if sim::Engine::Turmoil
            .refuses(&scenario.spec(None, None))
            .is_some()
        {
            continue;
        }
        for release in row.releases() {
            let comparison = Comparison::run(&scenario, None, Some(release), sim::Engine::Turmoil)
                .unwrap_or_else(|e| panic!("{} under {release}: {e}", scenario.name));
            compared += 1;
            if !comparison.agrees() {
                failures.push(format!(
                    "{} under {release}\n{}",
                    scenario.name,
                    comparison.render()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(compared >= 24, "only {compared} compared");
}

/// Redisson #7089 on a real `redis-server`: under 4.3.1 the unlock latch's
/// TTL wraps negative, and Redis 7 itself refuses the script's `SET ...
/// PX <negative>` after the script's `DEL` and `PUBLISH` ran, so A gets an
/// error for an unlock that released the lock (B takes it), an error
/// raised inside the script (scripts-run); under 4.4.0
/// the TTL is a long and the unlock returns normally. The scenario's
/// settings wrap negative at this time scale too (its description says
/// why), so the real run must give the fast engine's verdicts.
#[test]
fn a_real_redis_refuses_the_wrapped_latch_ttl() {
    history_row_breaks_on_real_redis(
        "unlock-latch-ttl-overflows",
        &["false-unlock-error", "scripts-run"],
    );
}

/// Redisson #6618 on real `redis-server` 7.0 processes, a primary that
/// writes an AOF (`INFO`: `aof_enabled:1`) and a replica: 7.0 has no
/// `WAITAOF`. Under 3.47.0 the probe keeps both commands, every lock
/// script after the probe is followed by `WAITAOF 1 1 <timeout>`, and the real
/// server refuses it after the script ran: A's unlock releases the lock
/// and reports the refusal (false-unlock-error). Under 3.48.0 the refusal
/// reads as no `WAIT` and the scripts go out bare. The real run must give
/// the fast engine's verdicts, with the server's own refusal text.
#[test]
fn a_real_redis_refuses_waitaof_after_every_lock_script_6618() {
    let scenario = locksim::history_scenario("waitaof-refused-fails-every-lock-6618").expect("row");
    let comparisons = row_gives_on_real_redis_at(
        &scenario,
        &["false-unlock-error (defect)".to_owned()],
        REAL_SCALE,
    );
    let text = comparisons[0].trials[1].run.history.to_string();
    assert!(
        // The timeout, WAITAOF's third argument, is scaled to real time.
        text.contains("unlock -> ERROR transport error: ERR unknown command 'WAITAOF', with args beginning with: '1' '1' '"),
        "{text}"
    );
}

/// Redisson #1604 on a real `redis-server`: under 3.8.0 the watchdog
/// renews the read lock's hash but not the readers' `rwlock_timeout`
/// keys, so B's read unlock, seeing no live timeout key of A's, deletes
/// the lock and writer C takes it while A still reads; under 3.8.1 the
/// read renewal keeps A's keys alive and C waits. The real run must give
/// the fast engine's verdicts, reader-writer exclusion broken (a defect)
/// under the first release only; there A's own read unlock of the K that
/// C took and let go returns normally too (false-unlock-success, which
/// 3.8.0's read unlock answers for a missing K).
#[test]
fn a_real_redis_drops_an_unrenewed_read_lock() {
    history_row_breaks_on_real_redis(
        "read-lock-not-renewed-1604",
        &["reader-writer-exclusion", "false-unlock-success"],
    );
}

/// Redisson #1542 on a real `redis-server`: under 3.8.1 the write unlock
/// publishes 0 and client A's latch lets one of its three waiting readers
/// through; the other two sleep beside its shared hold (lost-wakeup, now
/// judged against the key's `read` mode, which the recorder reads from
/// the real server's keyspace as from fake-redis's); under 3.8.2 all
/// three wake. The real run must give the fast engine's verdicts.
#[test]
fn a_real_redis_wakes_one_reader_of_three() {
    history_row_breaks_on_real_redis("write-unlock-wakes-one-reader-1542", &["lost-wakeup"]);
}

/// Redisson #1606 on a real `redis-server`: under 3.8.1 A's multi-lock
/// leaves the lock whose acquire timed out (its script ran after the
/// partition), a later round re-enters it, and its watchdog renews it for
/// ever; under 3.8.2 the multi-lock unlocks it. The multi-lock's calls on
/// its locks are the thread's, on the real engine as on the fast one.
#[test]
fn a_real_redis_keeps_a_multi_locks_timed_out_lock_1606() {
    history_row_breaks_on_real_redis(
        "multi-lock-timeout-leaves-lock-1606",
        &["lock-left-behind", "renewal-after-unlock", "liveness"],
    );
}

/// Issue #47: the fair lock's history rows that no test above runs, on a
/// real `redis-server`, each breaking liveness under the affected release
/// only, with the fast engine's verdicts: #2099 (a crashed fair waiter's
/// deadline drifts) and #2883 (live fair waiters purged as stale). The
/// spin lock's rows (#5002, #4197) pin the network's latency at 1 ms,
/// which a real Redis's loopback cannot be told to keep; with its own
/// they do not break, on either engine.
#[test]
fn a_real_redis_breaks_the_fair_rows() {
    // The crashed waiter's place is kept by design (Redisson's answer to
    // #3254): the wait it costs is beyond the guarantee, and under 3.11.0
    // it lasts the horizon where 3.11.1's lapses in seconds (after the
    // fair lock's thread wait, which the real engine divides by its time
    // scale like every other duration).
    let scenario =
        locksim::history_scenario("fair-deadlines-drift-past-crashed-waiter-2099").expect("row");
    row_gives_on_real_redis(&scenario, &["liveness (beyond-guarantee)".to_owned()]);
    history_row_on_real_redis("fair-live-waiters-purged-as-stale-2883", "liveness");
}

/// Issue #47: #1604 through the async API. The row's readers and writer
/// call `lockAsync` (`async = true`): RedissonReadLock and
/// RedissonWriteLock inherit RedissonLock's async acquire, so the same
/// defect breaks reader-writer exclusion (and A's unlock of the lost
/// hold returns, false-unlock-success, as in the row) under 3.8.0 alone,
/// on the fast engine and on a real `redis-server` alike. A run whose async read lock
/// took `RLock`'s scripts (no timeout keys) would hold under 3.8.0.
#[test]
fn a_real_redis_drops_an_unrenewed_async_read_lock() {
    let mut scenario = locksim::history_scenario("read-lock-not-renewed-1604").expect("history");
    let steps = scenario.sim.clients.iter_mut().flat_map(|c| &mut c.threads);
    let mut moved = 0;
    for step in steps.flat_map(|t| &mut t.steps) {
        match step {
            sim::Step::ReadLock(s) => s.is_async = true,
            sim::Step::WriteLock(s) => s.is_async = true,
            _ => continue,
        }
        moved += 1;
    }
    assert_eq!(moved, 3);
    let broken = ["reader-writer-exclusion", "false-unlock-success"];
    row_breaks_on_real_redis(&scenario, &broken);
}

/// Redisson PR #6883 on a real `redis-server`: under 3.52.0 every
/// `ReadLockTask` chunk fails on reader A's count of 2 with Redis's own
/// Lua error, no timeout key is extended, and B's read unlock deletes the
/// lock under A; under 4.0.0 the renamed loop keeps A's keys alive and
/// writer C waits for A.
#[test]
fn a_real_redis_fails_the_shadowed_read_renewal() {
    history_row_on_real_redis(
        "reentrant-reader-renewal-fails-6883",
        "reader-writer-exclusion",
    );
}

/// Redisson PR #7251 on a real `redis-server`: under 4.6.0 t1's stale
/// queue head makes `ReadLockTask` skip the entry, so t2's read hold
/// expires and writer C takes the lock under it; under 4.7.0 t2 is
/// renewed until it unlocks.
#[test]
fn a_real_redis_drops_a_reader_behind_a_stale_head() {
    history_row_on_real_redis(
        "reentrant-reader-stale-head-7251",
        "reader-writer-exclusion",
    );
}

/// Redisson #2144 on a real `redis-server`: under 3.11.0 reader B's
/// acquire sets K's TTL to its own 1 s lease, K expires under reader A,
/// writer C takes the lock while A reads, and A's and B's unlocks of the
/// vanished K return normally; under 3.11.1 B keeps K's longer TTL and C
/// waits for A.
#[test]
fn a_real_redis_lets_a_short_reader_shorten_the_lock_2144() {
    history_row_breaks_on_real_redis(
        "reader-shortens-read-lock-2144",
        &["reader-writer-exclusion", "false-unlock-success"],
    );
}

/// Commit 1ce49b7a2 on a real `redis-server`: under 3.43.0 the write
/// unlock of a K that expired under its holder answers 1 and returns
/// normally; under 3.44.0 it answers nil and throws.
#[test]
fn a_real_redis_answers_an_expired_rw_unlock() {
    history_row_on_real_redis("rw-unlock-of-expired-lock-returns", "false-unlock-success");
}

/// Redisson PR #7098 on a real `redis-server`: under 4.3.1 reader B's
/// `ReadLockTask` extends crashed reader A's timeout key, and B's unlock
/// leaves K to it past A's lease (release-after-crash); under 4.4.0 A's
/// key expires with its lease and K with it.
#[test]
fn a_real_redis_keeps_a_dead_reader_for_another_client_7098() {
    history_row_on_real_redis("dead-reader-kept-alive-7098", "release-after-crash");
}

/// Redisson #5019 on a real `redis-server`, for the fair lock: under
/// 4.6.0 B's tryLock throws the response timeout of an attempt inside its
/// wait loop without `acquireFailed`, so its queue entry stays at the
/// head with a deadline 60 s away; A's unlock publishes to B's channel
/// and C, queued behind B, is told 0 and spins with the lock free until
/// that deadline (liveness), while B's throw breaks try-lock-answers;
/// under 4.7.0 `acquireFailed` removes B and A's unlock wakes C. The real
/// run must give the fast engine's verdicts.
#[test]
fn a_real_redis_keeps_a_fair_waiter_behind_a_dead_head() {
    history_row_breaks_on_real_redis(
        "fair-trylock-timeout-blocks-queue-5019",
        &["liveness", "try-lock-answers"],
    );
}

/// Redisson #5019's leftovers on a real `redis-server`: under 4.6.0 B's
/// tryLock throws from its wait loop without `acquireFailed`, and once A
/// has unlocked and nobody calls, Redis still keeps B's queue and
/// timeout-set entries, without a TTL (nothing-left-behind), while B's
/// throw breaks try-lock-answers; under 4.7.0 `acquireFailed` removes
/// them. The real run must give the fast engine's verdicts.
#[test]
fn a_real_redis_keeps_a_fair_waiters_entries_after_everyone_left() {
    history_row_breaks_on_real_redis(
        "fair-trylock-timeout-leaves-queue-5019",
        &["nothing-left-behind", "try-lock-answers"],
    );
}

/// Redisson #4705 on a real `redis-server`: under 3.31.0 B's queued
/// acquire is answered its own deadline − wait − now, which goes below 0
/// as A holds on, so B's `lock()` waits on its latch with no timer; A
/// crashes without an unlock message and B never wakes though A's key
/// expired (liveness); under 3.32.0 B is told A's PTTL and takes the lock
/// once it expired. The real run must give the fast engine's verdicts.
#[test]
fn a_real_redis_leaves_a_fair_waiter_waiting_untimed_4705() {
    history_row_on_real_redis("fair-negative-reply-untimed-wait-4705", "liveness");
}

/// Redisson #4153 on a real `redis-server`: with the fair lock's timeout
/// set deleted while B and C queue, under 3.30.0 A's unlock and B's next
/// attempt fail with Redis's own "attempt to compare nil with number"
/// and C waits on a lock no script can take (liveness); under 3.31.0 the
/// purge stops at the unscored head and B, then C, take the lock.
#[test]
fn a_real_redis_fails_every_fair_script_on_an_unscored_head_4153() {
    history_row_breaks_on_real_redis("fair-unscored-head-4153", &["liveness", "scripts-run"]);
}

/// Redisson #6434 on a real `redis-server`: with the timeout set deleted,
/// under 3.44.0 B's second enqueue fails with "attempt to perform
/// arithmetic on a nil value" on C's missing deadline and B's unscored
/// place blocks C for ever (liveness); under 3.45.0 B and C queue again
/// with the holder's PTTL and take the lock in turn.
#[test]
fn a_real_redis_fails_the_enqueue_behind_an_unscored_tail_6434() {
    history_row_breaks_on_real_redis("fair-unscored-tail-6434", &["liveness", "scripts-run"]);
}

/// Redisson PR #6488 on real `redis-server` processes, a primary and a
/// replica started by the engine: a switchover at 5 s promotes the
/// replica and demotes the primary with Sentinel's own transactions,
/// which close the clients' connections to it; A's client reconnects
/// (75 ms later) to the address it knows, now a replica, and its unlock at
/// about 5.5 s meets the replica's refusals. Under 3.45.0 the unlock
/// fails with the real server's `ERR WAIT cannot be used with replica
/// instances` (false-unlock-error); under 3.45.1 it is retried after the
/// retry interval, by when the clients have moved to the new primary, and
/// it runs. The real run must give the fast engine's verdicts. At time
/// scale 2: the reconnection must land in the 430 ms before the unlock
/// (215 real ms; an unlock sent while the client reconnects fails with
/// "reconnecting" instead). With the unlock at 5.1 s that window was
/// 20 real ms, and a loaded CI machine missed it.
#[test]
fn a_real_redis_fails_the_unlock_on_a_demoted_primary() {
    let name = "unlock-on-demoted-primary-fails";
    let scenario = locksim::history_scenario(name).expect("row");
    // Redis still names A holder: the guarantee's failure is the error.
    let broken = ["false-unlock-error (beyond-guarantee)".to_owned()];
    let comparisons = row_gives_on_real_redis_at(&scenario, &broken, 2);
    let text = comparisons[0].trials[1].run.history.to_string();
    assert!(
        text.contains(
            "unlock -> ERROR transport error: ERR WAIT cannot be used with replica instances"
        ),
        "{text}"
    );
}

/// Commit 32df429bd on real `redis-server` 7.0 processes: Sentinel's own
/// transactions demote the primary while A unlocks; the unlock's batch
/// loads its script on the demoted primary (`SCRIPT LOAD` is allowed on a
/// replica) and meets the replica's `WAIT` error, and its retry reaches
/// the promoted replica as the same `EVALSHA`. The real server answers
/// `NOSCRIPT`: Redis 7 replicates no `SCRIPT LOAD`, so a promoted replica
/// starts with an empty script cache, as the fake engines' do. Under
/// 3.47.0 the unlock fails with it. Two changes to the row, whose 7.2
/// the installed server is not: on 7.0 the probe's refused `WAITAOF`
/// sends A's first script bare, without the `INFO` that counts the
/// replica, so A locks and unlocks once first (its second lock reads the
/// count, and the unlock's batch then waits for the replica); and the
/// fixed release is not run, as on 7.0 3.48.0 sends every script bare
/// (`probe-prefix-match`). At time scale 2, as the #6488 row on the same
/// timing.
#[test]
fn a_real_redis_answers_noscript_to_a_batch_resent_to_a_promoted_replica() {
    let text = include_str!(
        "../../scenarios/history/unlock-resent-to-promoted-replica-noscript.toml"
    )
    .replace("version = \"7.2\"", "version = \"7.0\"")
    // B takes the lock at about 30 s, once A's key expired.
    .replace("horizon_ms = 120000", "horizon_ms = 40000")
    .replace(
        "  { step = \"lock\" },\n  { step = \"work\", ms = 5400 },",
        "  { step = \"lock\" },\n  { step = \"unlock\" },\n  { step = \"lock\" },\n  { step = \"work\", ms = 5300 },",
    );
    let scenario = locksim::Scenario::parse(&text, "on 7.0").expect("parses");
    assert_eq!(scenario.sim.clients[0].threads[0].steps.len(), 6);
    assert_eq!(scenario.sim.horizon_ms, 40_000);
    let real = sim::Engine::Redis(sim::RealRedis {
        target: sim::RedisTarget::Spawn,
        time_scale: 2,
    });
    let release: Release = "3.47.0".parse().unwrap();
    let comparison = Comparison::run(&scenario, None, Some(release), real)
        .unwrap_or_else(|e| panic!("{release}: {e}"));
    let [fast, redis] = comparison.verdicts();
    assert_eq!(fast, redis, "{}", comparison.render());
    assert_eq!(redis, ["false-unlock-error (beyond-guarantee)"]);
    let text = comparison.trials[1].run.history.to_string();
    assert!(
        text.contains("unlock -> ERROR transport error: NOSCRIPT No matching script"),
        "{text}"
    );
}

/// Redisson #4822 on real `redis-server` processes: the replica runs
/// `DEBUG SLEEP` for replication-drop's first 1.5 s, so the real `WAIT`
/// after A's acquire counts no replica within its (scaled) second and
/// lock() throws "None of slaves were synced". Under 3.19.3 A's key stays
/// and B waits past the end (lock-left-behind); under 3.20.0 the acquire
/// is rolled back and B takes the lock. The real run must give the fast
/// engine's verdicts.
#[test]
fn a_real_redis_leaves_an_unsynced_acquire_behind_4822() {
    let scenario = locksim::history_scenario("unsynced-acquire-keeps-lock").expect("row");
    // A was told its lock() failed: the key left is beyond the guarantee.
    row_gives_on_real_redis(
        &scenario,
        &["lock-left-behind (beyond-guarantee)".to_owned()],
    );
}

/// A failover on real processes: A holds the lock with the watchdog and
/// works 8 s, B waits from 1 s. At 3 s the primary's process is killed
/// (A's and B's connections close; B's wait goes on, its resubscription
/// failing until a primary is back); at 4 s the replica, which has A's
/// key (loopback replication, and every acquire waited for it), is
/// promoted, the proxies move to it and the old primary restarts as its
/// replica. A's renewals resume on the new primary, so B gets the lock
/// only after A's unlock, and every later `WAIT` counts the rejoined
/// replica. The real run must give the fast engine's verdicts.
const FAILOVER_WITH_WAITER: &str = r#"
name = "failover-with-waiter"
description = "The primary fails over while A holds the lock and B waits."

[sim]
seed = 1
horizon_ms = 30000

[sim.redis]
replicas = 1

[[sim.clients]]
name = "A"
[[sim.clients.threads]]
steps = [{ step = "lock" }, { step = "work", ms = 8000 }, { step = "unlock" }]

[[sim.clients]]
name = "B"
[[sim.clients.threads]]
start_ms = 1000
steps = [{ step = "lock" }, { step = "unlock" }]

[[sim.faults]]
fault = "failover"
at_ms = 3000
duration_ms = 1000
"#;

/// Redisson #6775 on real `redis-server` 7.0 processes: the replica's
/// relay holds its link for replication-drop's 2 s (the replica stays
/// connected), the primary is killed at 0.5 s and the replica promoted at
/// 1 s. Under 3.51.0 the probe reads the real refusal of `WAITAOF` as no
/// `WAIT`, A's acquire goes out bare and answers, the promoted replica
/// lacks the key (the shadow records it lost to the failover), and B
/// takes the lock while A works: a defect, as the server has `WAIT`.
/// Under 3.52.0 the primary's `INFO` counts the stalled replica, A's
/// acquire waits for it and fails with the primary. The real runs must
/// give the fast engine's verdicts. (Before the relay, the real engine
/// pointed the replica away, `INFO` counted none, and 3.52.0 lost the
/// lock here alone.)
#[test]
fn a_real_redis_loses_an_unsynced_lock_in_a_failover_6775() {
    let name = "failover-loses-unsynced-lock-6775";
    let scenario = locksim::history_scenario(name).expect("row");
    let comparisons = row_gives_on_real_redis_at(
        &scenario,
        &["mutual-exclusion (defect)".to_owned()],
        REAL_SCALE,
    );
    let text = comparisons[0].trials[1].run.history.to_string();
    assert!(
        text.contains("probe read: the server lacks WAIT, has WAITAOF"),
        "{text}"
    );
    assert!(text.contains("redisson:lock free (failover)"), "{text}");
    let text = comparisons[1].trials[1].run.history.to_string();
    assert!(text.contains("INFO read: 1 replica(s) connected"), "{text}");
    assert!(!text.contains("A/t1     lock -> acquired"), "{text}");
}

/// Redisson #6518 on real `redis-server` 7.0 processes, two replicas:
/// replica 1 pointed away for the first second (the primary frees it, and
/// `INFO` counts one replica), then its relay held from 3.9 s to 6 s
/// across its own promotion. Under 3.45.1 A's client keeps the count of
/// 1, its acquire at 3.9 s waits for replica 0 alone and answers, and the
/// promoted replica 1 lacks the key: C takes the lock while A works. Under
/// 3.46.0 A's failed `tryLock`, whose `WAIT 1` counted both replicas, has
/// it read `INFO` again: its acquire waits for both and fails with the
/// primary. The real runs must give the fast engine's verdicts.
///
/// In real time (scale 1): the `tryLock`'s `WAIT` counts both replicas
/// only if Redis holds both acknowledgements of its whole stream, which a
/// replica sends once a real second (`replicationCron`); a blocked `WAIT`
/// answers at the first `REPLCONF ACK` that meets it, so any faster scale
/// leaves the count to a race (measured: 3 of 6 at scale 10).
#[test]
fn a_real_redis_loses_a_lock_synced_to_too_few_replicas_6518() {
    let name = "replica-back-not-waited-for-6518";
    let scenario = locksim::history_scenario(name).expect("row");
    let comparisons =
        row_gives_on_real_redis_at(&scenario, &["mutual-exclusion (defect)".to_owned()], 1);
    let affected = comparisons[0].trials[1].run.history.to_string();
    assert!(
        affected.contains("A        INFO read: 1 replica(s) connected"),
        "{affected}"
    );
    assert!(
        affected.contains("redisson:lock free (failover)"),
        "{affected}"
    );
    let fixed = comparisons[1].trials[1].run.history.to_string();
    assert!(
        fixed.contains("A        INFO read: 2 replica(s) connected"),
        "{fixed}"
    );
}

/// Redisson #6867 / #7116 against a real one-node Redis Cluster holding
/// every slot (what a proxy in front of a cluster answers): under 4.7.0
/// the batched renewal's one `EVAL` over "orders" and "payments" is
/// refused with the real server's `CROSSSLOT` every round and B takes
/// "orders" under A; with PR #7114's slots each `EVAL` names one slot
/// and both locks stay renewed.
#[test]
fn a_real_cluster_refuses_the_cross_slot_renewal_6867() {
    let name = "proxy-renewal-crossslot-6867";
    let scenario = locksim::history_scenario(name).expect("row");
    let comparisons = row_gives_on_real_redis_at(
        &scenario,
        &["mutual-exclusion (defect)".to_owned()],
        REAL_SCALE,
    );
    let broken = comparisons[0].trials[1].run.history.to_string();
    assert!(
        broken.contains("renew -> error: CROSSSLOT Keys in request don't hash to the same slot"),
        "{broken}"
    );
    let fixed = comparisons[1].trials[1].run.history.to_string();
    assert!(!fixed.contains("CROSSSLOT"), "{fixed}");
}

/// A real three-master Redis Cluster started on loopback: under 4.7.0
/// master 2 paused by `CLIENT PAUSE` holds A's renewal round through
/// every retry, the round ends at its error, and the locks on masters 0
/// and 1 expire, so B takes "payments" under A; with a chain per slot
/// (locksim's proposal, not reported upstream) only the paused master's
/// lock is lost.
#[test]
fn a_real_cluster_loses_other_masters_locks_behind_a_paused_one() {
    let name = "cluster-paused-master-expires-other-masters-locks";
    let scenario = locksim::history_scenario(name).expect("row");
    let comparisons = row_gives_on_real_redis_at(
        &scenario,
        &["mutual-exclusion (defect)".to_owned()],
        REAL_SCALE,
    );
    let broken = comparisons[0].trials[1].run.history.to_string();
    assert!(broken.contains("payments free (expired)"), "{broken}");
    assert!(!broken.contains("MOVED"), "{broken}");
    let fixed = comparisons[1].trials[1].run.history.to_string();
    assert!(!fixed.contains("payments free (expired)"), "{fixed}");
}

/// Hash-tagged names behind a proxy: Redisson's `prefixName` keeps a
/// name's own tag unwrapped, so the channel and unlock latch of
/// "{inventory}orders" share its slot, and one client's locks of one tag
/// renew in one `EVAL` the proxy accepts. Under 4.7.0 the row's scenario
/// with tagged names is safe, nothing refused, on fast and on a real
/// one-node cluster (a channel wrapped in braces again would make each
/// unlock a cross-slot script there).
#[test]
fn hash_tagged_names_behind_a_proxy_are_never_refused() {
    let text = include_str!("../../scenarios/history/proxy-renewal-crossslot-6867.toml")
        .replace("lock = \"orders\"", "lock = \"{inventory}orders\"")
        .replace("lock = \"payments\"", "lock = \"{inventory}payments\"");
    let scenario = locksim::Scenario::parse(&text, "tagged").expect("parses");
    let real = sim::Engine::Redis(sim::RealRedis {
        target: sim::RedisTarget::Spawn,
        time_scale: REAL_SCALE,
    });
    let release: Release = "4.7.0".parse().expect("a release");
    let comparison = Comparison::run(&scenario, None, Some(release), real).expect("runs");
    let [fast, redis] = comparison.verdicts();
    assert!(
        fast.is_empty() && redis.is_empty(),
        "{}",
        comparison.render()
    );
    for trial in &comparison.trials {
        let history = trial.run.history.to_string();
        assert!(!history.contains("CROSSSLOT"), "{history}");
        assert!(
            history.contains("{inventory}orders held by B/t1"),
            "{history}"
        );
    }
}

#[test]
fn a_real_redis_fails_over_to_a_real_replica() {
    let scenario = locksim::Scenario::parse(FAILOVER_WITH_WAITER, "test").expect("parses");
    let real = sim::Engine::Redis(sim::RealRedis {
        target: sim::RedisTarget::Spawn,
        time_scale: REAL_SCALE,
    });
    for release in ["3.45.1", "4.7.0"] {
        let release: Release = release.parse().expect("a release");
        let comparison = Comparison::run(&scenario, None, Some(release), real.clone())
            .unwrap_or_else(|e| panic!("{release}: {e}"));
        let [fast, redis] = comparison.verdicts();
        let text = comparison.trials[1].run.history.to_string();
        assert_eq!(fast, redis, "{release}\n{}\n{text}", comparison.render());
        assert!(text.contains("failover 1000ms"), "{text}");
        assert!(
            text.contains("B/t1     lock -> acquired"),
            "{release}\n{text}"
        );
    }
}

/// The guide's managed endpoint (`docs/src/scenarios.in/
/// managed-endpoint.toml`) on real `redis-server` processes under 4.7.0:
/// the clients in single-server mode send no `WAIT` to the real primary,
/// whose replica's link is held, so the promoted replica lacks A's key
/// and B takes the lock while A works, a loss the failover explains; the
/// same clients configured with the replica (no `mode`) wait for it, and
/// nobody takes the lock under another. The real runs must give the fast
/// engine's verdicts.
#[test]
fn a_real_redis_loses_a_single_server_clients_lock_in_a_failover() {
    const ENDPOINT: &str = include_str!("../../docs/src/scenarios.in/managed-endpoint.toml");
    let real = sim::Engine::Redis(sim::RealRedis {
        target: sim::RedisTarget::Spawn,
        time_scale: REAL_SCALE,
    });
    let release: Release = "4.7.0".parse().expect("a release");
    let replicated = ENDPOINT.replace("mode = \"single\"\n", "");
    let runs = side_by_side(&[ENDPOINT.to_owned(), replicated], true, |text| {
        let scenario = locksim::Scenario::parse(text, "test").expect("parses");
        Comparison::run(&scenario, None, Some(release), real.clone()).expect("runs")
    });
    for (comparison, lost) in runs.iter().zip([true, false]) {
        let [fast, redis] = comparison.verdicts();
        let history = comparison.trials[1].run.history.to_string();
        assert_eq!(fast, redis, "{}\n{history}", comparison.render());
        assert_eq!(
            redis.contains(&"mutual-exclusion (beyond-guarantee)".to_owned()),
            lost,
            "{}\n{history}",
            comparison.render()
        );
        assert_eq!(!history.contains("WAIT"), lost, "{history}");
    }
}

/// [`FAILOVER_WITH_WAITER`] with two replicas, as a failover and as a
/// switchover: Sentinel's promotion reconfigures the other replica too
/// (and, in a switchover, the demoted primary), so each `WAIT 2` after it
/// counts both and every operation succeeds; the real runs give the fast
/// engine's verdicts (safe) and B takes the lock after A's unlock.
#[test]
fn a_real_redis_promotes_one_of_two_replicas() {
    let real = sim::Engine::Redis(sim::RealRedis {
        target: sim::RedisTarget::Spawn,
        time_scale: REAL_SCALE,
    });
    let two = FAILOVER_WITH_WAITER.replace("replicas = 1", "replicas = 2");
    let switchover = two.replace("fault = \"failover\"", "fault = \"switchover\"");
    for text in [two, switchover] {
        let scenario = locksim::Scenario::parse(&text, "test").expect("parses");
        let comparison = Comparison::run(&scenario, None, None, real.clone()).expect("runs");
        let [fast, redis] = comparison.verdicts();
        let history = comparison.trials[1].run.history.to_string();
        assert_eq!(fast, redis, "{}\n{history}", comparison.render());
        assert!(comparison.agrees(), "{}", comparison.render());
        assert!(!history.contains("ERROR"), "{history}");
        assert!(history.contains("B/t1     lock -> acquired"), "{history}");
    }
}

/// Runs history scenario `name` on a real `redis-server` under its row's
/// two releases: the real run must give the fast engine's verdicts, and
/// `invariant` broken as a defect under the affected release only.
fn history_row_on_real_redis(name: &str, invariant: &str) {
    history_row_breaks_on_real_redis(name, &[invariant]);
}

/// As [`history_row_on_real_redis`], for a defect that breaks each of
/// `invariants` (as defects, in any order) under the affected release.
fn history_row_breaks_on_real_redis(name: &str, invariants: &[&str]) {
    let scenario = locksim::history_scenario(name).expect("history");
    row_breaks_on_real_redis(&scenario, invariants);
}

/// As [`history_row_breaks_on_real_redis`], for a row's `scenario`.
fn row_breaks_on_real_redis(scenario: &locksim::Scenario, invariants: &[&str]) {
    let defects: Vec<String> = invariants.iter().map(|i| format!("{i} (defect)")).collect();
    row_gives_on_real_redis(scenario, &defects);
}

/// Runs a row's `scenario` under its affected and its fixed release on a
/// real `redis-server`: the fast engine's verdicts, and exactly `broken`
/// (each `invariant (cause)`) under the affected release only.
fn row_gives_on_real_redis(scenario: &locksim::Scenario, broken: &[String]) {
    row_gives_on_real_redis_at(scenario, broken, REAL_SCALE);
}

/// As [`row_gives_on_real_redis`] at time scale `scale`; the comparisons
/// under the affected and the fixed release.
fn row_gives_on_real_redis_at(
    scenario: &locksim::Scenario,
    broken: &[String],
    scale: u64,
) -> Vec<Comparison> {
    let real = sim::Engine::Redis(sim::RealRedis {
        target: sim::RedisTarget::Spawn,
        time_scale: scale,
    });
    let row = scenario.history.clone().expect("a history row");
    let mut expected = broken.to_vec();
    expected.sort();
    let releases = row.releases();
    // At the comparisons' own scale or slower the two releases run side
    // by side, each against its own redis-server (a real run mostly
    // sleeps); a faster scale leaves too little slack for a second run's
    // load.
    let runs = side_by_side(&releases, scale <= REAL_SCALE, |release| {
        Comparison::run(scenario, None, Some(*release), real.clone())
            .unwrap_or_else(|e| panic!("{release}: {e}"))
    });
    let mut comparisons = Vec::new();
    for ((release, affected), comparison) in releases.into_iter().zip([true, false]).zip(runs) {
        let [fast, redis] = comparison.verdicts();
        assert_eq!(fast, redis, "{release}\n{}", comparison.render());
        let mut got = redis.clone();
        got.sort();
        assert_eq!(
            got == expected,
            affected,
            "{release}\n{}",
            comparison.render()
        );
        comparisons.push(comparison);
    }
    comparisons
}

/// `run` of each of `items`, in their order: on a thread each when
/// `parallel` (a panic in one is re-raised here), else one after another.
fn side_by_side<T: Sync, R: Send>(
    items: &[T],
    parallel: bool,
    run: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    if !parallel {
        return items.iter().map(&run).collect();
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = items.iter().map(|item| scope.spawn(|| run(item))).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// Redisson #6510 on all three engines: the fenced lock's four holders
/// (tests/engines/fenced-token-key-left-6510.toml) get tokens 1, 2 and 4
/// from its token methods (3 went to `lock()`, which returns none), and
/// each engine leaves the token key `redisson_lock_token:{K}` without a
/// TTL, under 3.19.0 (the first release with the lock) and 4.7.0 (the
/// issue is open). A run whose engine lost an `INCR`, returned another
/// token or left no key would differ here.
#[test]
fn three_engines_leave_the_fenced_token_key() {
    let scenario = locksim::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/engines/fenced-token-key-left-6510.toml"
    ))
    .expect("a scenario file");
    let real = sim::Engine::Redis(sim::RealRedis {
        target: sim::RedisTarget::Spawn,
        time_scale: REAL_SCALE,
    });
    for release in ["3.19.0", "4.7.0"] {
        let release: Release = release.parse().unwrap();
        for engine in [sim::Engine::Fast, sim::Engine::Turmoil, real.clone()] {
            let trial = locksim::Trial::run_on(&scenario, None, Some(release), engine.clone())
                .unwrap_or_else(|e| panic!("{engine} under {release}: {e}"));
            assert!(
                trial.as_expected(),
                "{engine} under {release}: {:?}",
                trial.mismatches
            );
            let tokens: Vec<u64> = trial
                .run
                .history
                .records
                .iter()
                .filter_map(|r| match &r.kind {
                    sim::RecordKind::Return {
                        outcome: sim::Outcome::Acquired { token: Some(t) },
                        ..
                    } => Some(*t),
                    _ => None,
                })
                .collect();
            assert_eq!(tokens, [1, 2, 4], "{engine} under {release}");
            let left: Vec<&str> = trial.run.residue.iter().map(|r| r.key.as_str()).collect();
            assert_eq!(left, ["redisson_lock_token:{redisson:lock}"], "{engine}");
        }
    }
}

/// Issue 52 (4.7.0 seed 59496): a replica whose link came back with
/// nothing to catch up acknowledges no write, but a blocked `WAIT` asks
/// it to (`REPLCONF GETACK`). On a real `redis-server` pair the waiter's
/// `WAIT`s answer at once and it takes the lock when the key expires;
/// the fast and turmoil engines, which once let each `WAIT` block to its
/// timeout and woke the waiter late, now do the same.
#[test]
fn three_engines_answer_a_wait_after_a_replica_link_came_back() {
    let scenario = locksim::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/regression/harness/wait-after-a-replica-link-came-back.toml"
    ))
    .expect("a scenario file");
    let real = sim::Engine::Redis(sim::RealRedis {
        target: sim::RedisTarget::Spawn,
        time_scale: REAL_SCALE,
    });
    for engine in [sim::Engine::Fast, sim::Engine::Turmoil, real] {
        let trial = locksim::Trial::run_on(&scenario, None, None, engine.clone())
            .unwrap_or_else(|e| panic!("{engine}: {e}"));
        assert!(
            trial.as_expected() && trial.run.violations.is_empty(),
            "{engine}: {:?}\n{}",
            trial.mismatches,
            trial.run.history
        );
    }
}
