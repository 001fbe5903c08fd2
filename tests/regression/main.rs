//! Regression seeds: every entry of `seeds.toml` (explored seeds that show
//! a real behaviour, or a reported defect) is replayed and must give the
//! same verdict, exactly the same broken invariants, and the same history
//! hash. A change to lockcore, fake-redis or sim that alters any of these
//! runs fails here, naming the seed and the command that shows it.

mod upstream;

use locksim::Corpus;

const SEEDS: &str = include_str!("seeds.toml");

fn corpus() -> Corpus {
    Corpus::parse(SEEDS, "tests/regression/seeds.toml").unwrap_or_else(|e| panic!("{e}"))
}

/// Each entry replays to the outcome it records. An entry marked BUG
/// records the defective outcome on purpose: its failure here means the
/// defect changed (or was fixed) and the entry must be revisited.
#[test]
fn every_seed_gives_its_recorded_outcome() {
    let mut failures = Vec::new();
    for case in corpus().cases {
        let mismatches = case.check();
        if !mismatches.is_empty() {
            failures.push(format!(
                "seed {} under {} ({}):\n  {}",
                case.seed,
                case.profile,
                case.replay_command(),
                mismatches.join("\n  ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The corpus is not empty, every entry explains itself, and no seed and
/// profile appears twice (a duplicate would hide a stale entry).
#[test]
fn corpus_is_well_formed() {
    let cases = corpus().cases;
    assert!(cases.len() >= 5, "only {} entries", cases.len());
    let mut seen = std::collections::BTreeSet::new();
    for c in &cases {
        assert!(!c.note.trim().is_empty(), "seed {} has no note", c.seed);
        assert!(
            seen.insert((c.seed, c.profile)),
            "seed {} under {} twice",
            c.seed,
            c.profile
        );
    }
}

/// Issue 12's corpus: each defect `locksim explore` found, shrunk to a
/// scenario file (`explore --save`) that names the verdict and the cause
/// it must give. Files, not seeds: a change to the generator leaves them
/// as they are; a change to the lock or the oracle that alters one fails
/// here, naming the file.
#[test]
fn every_shrunk_finding_gives_its_verdict_and_cause() {
    let (dir, files) = scenario_files("findings");
    assert!(
        files.len() >= 10,
        "only {} findings in {}",
        files.len(),
        dir.display()
    );
    let mut failures = Vec::new();
    for path in &files {
        let name = path.display().to_string();
        let scenario = locksim::load(&name).unwrap_or_else(|e| panic!("{e}"));
        let trial = locksim::Trial::run(&scenario, None, None).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            !trial.expected.defects.is_empty(),
            "{name} expects no defect"
        );
        if !trial.as_expected() {
            failures.push(format!("{name}: {:?}", trial.mismatches));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The upstream issue and release of the fix a defect is attributed to.
fn fix_of(d: &locksim::Defect) -> Option<(String, String)> {
    (d.fixed_by.as_ref()).map(|f| (f.upstream.clone(), f.release.clone()))
}

/// The defects of shrunk finding `file` (in `regression/findings/`), each
/// signed and attributed as explore does.
fn finding_defects(file: &str) -> Vec<locksim::Defect> {
    let name = format!("{}/regression/findings/{file}", env!("CARGO_MANIFEST_DIR"));
    let scenario = locksim::load(&name).unwrap_or_else(|e| panic!("{e}"));
    let trial = locksim::Trial::run(&scenario, None, None).unwrap_or_else(|e| panic!("{e}"));
    locksim::defects_of(&scenario.spec(None, None), &trial.run)
}

/// Each defect of shrunk finding `file`, as its invariant, whether no
/// fix removes it, and the open upstream issue whose path names it.
fn open_paths_named(file: &str) -> Vec<(&'static str, bool, Option<&'static str>)> {
    finding_defects(file)
        .iter()
        .map(|d| {
            let open = d.open_issue.map(|o| o.upstream);
            (d.invariant.name(), d.fixed_by.is_none(), open)
        })
        .collect()
}

/// Each defect of shrunk finding `file`, as its invariant and the open
/// upstream issue whose path names it.
fn open_issues_named(file: &str) -> Vec<(&'static str, Option<&'static str>)> {
    finding_defects(file)
        .iter()
        .map(|d| (d.invariant.name(), d.open_issue.map(|o| o.upstream)))
        .collect()
}

/// A defect open upstream with no fix is named by the path the run took,
/// Redisson #4109 (an acquire that timed out on the client ran on Redis):
/// seed 76079 under `fenced`, shrunk, is its lost wake-up: the count the
/// holder did not know of kept the key after its one unlock, the key
/// expired with no unlock message, and a waiter slept out its whole wait;
/// the path is the holder's, not the waiter's. Seed 89456: a re-entrant
/// acquire times out before its script runs, which runs later all the
/// same, and the lock is left behind. Seed 24462: a tryLock times out, the
/// thread tries again, and both scripts run while the second is out (x1,
/// x2 at once), so one unlock leaves a count. 4.7.0 seed 56801: a fair
/// tryLock's timed-out attempt ran, and #5019's catch answers false
/// without undoing the hold. 4.7.0 seed 206060, written small: a
/// re-entrant `lock()` timed out under a partition and ran after the
/// thread's next call, an unlock, was sent. (Seed 11638, a tryLock that timed
/// out after its script ran, stopped breaking when 3.46's script cache
/// came in: after its Redis restart the renewal's `NOSCRIPT` round trip
/// moves every later step.)
#[test]
fn a_timed_out_acquire_that_ran_names_redisson_4109() {
    for (file, invariant) in [
        (
            "explored-76079-fenced-lost-wakeup-defect.toml",
            "lost-wakeup",
        ),
        (
            "explored-89456-fenced-lock-left-behind-defect.toml",
            "lock-left-behind",
        ),
        (
            "explored-24462-fenced-lock-left-behind-defect.toml",
            "lock-left-behind",
        ),
        (
            "explored-56801-4-7-0-fair-trylock-false-after-it-ran.toml",
            "lock-left-behind",
        ),
        (
            "reentrant-lock-ran-after-the-threads-next-unlock.toml",
            "lock-left-behind",
        ),
    ] {
        let named = open_issues_named(file);
        assert_eq!(named, [(invariant, Some("#4109"))], "{file}");
    }
}

/// Read-write lock waiters asleep while they could have the lock, which
/// `lost-wakeup` judges since it reads the key's `read` mode, each named
/// by its path (4.7.0, shrunk):
/// - #3891 (open upstream): seed 2724, an async waiter between its
///   attempt and its listener misses the read-write message, for which
///   `LockPubSub` keeps no permit;
/// - not reported upstream: seed 3485, a reader's count-down unlock
///   shortens K's TTL below what a waiting writer read, and K expires
///   with no message.
///
/// And a write holder that had re-entered (not reported upstream): each
/// re-entry adds its lease to K's TTL, so K outlives a crash by the sum
/// of the leases (seed 90584, release-after-crash), and a waiter that
/// read the longer TTL sleeps past K's expiry after a count-down unlock
/// set it back to one lease without a message (seed 231422,
/// lost-wakeup). And a read lock's renewal that sets K's TTL to the
/// watchdog timeout under another reader's longer lease (not reported
/// upstream), seen by a waiting writer: K expires with no message
/// before the TTL the writer read (seed 426553, lost-wakeup).
#[test]
fn read_write_paths_name_their_issues() {
    for (file, invariant, upstream, path) in [
        (
            "explored-2724-4-7-0-rw-async-waiter-misses-message.toml",
            "lost-wakeup",
            "#3891",
            "LockPubSub releases one permit per thread already waiting",
        ),
        (
            "explored-3485-4-7-0-rw-count-down-shortens-ttl.toml",
            "lost-wakeup",
            "unreported",
            "a reader's unlock that left other readers shortened K's TTL",
        ),
        (
            "explored-90584-4-7-0-crashed-write-reentry-adds-lease.toml",
            "release-after-crash",
            "unreported",
            "crashed before its next renewal keeps K for the sum of its leases",
        ),
        (
            "explored-231422-4-7-0-write-count-down-shortens-ttl.toml",
            "lost-wakeup",
            "unreported",
            "the holder's count-down unlock set it back to one lease",
        ),
        (
            "explored-426553-4-7-0-read-renewal-shortens-waiters-ttl.toml",
            "lost-wakeup",
            "unreported",
            "a read lock's renewal set K's TTL to the watchdog timeout",
        ),
    ] {
        let defects = finding_defects(file);
        let named: Vec<_> = defects
            .iter()
            .map(|d| (d.invariant.name(), d.open_issue.map(|o| o.upstream)))
            .collect();
        assert_eq!(named, [(invariant, Some(upstream))], "{file}");
        let took = defects[0].open_issue.map_or("", |o| o.path);
        assert!(took.contains(path), "{file}: {took}");
    }
}

/// A client's renewal entry renews its first thread (not reported
/// upstream): 4.7.0 seed 1235191, shrunk. Someone deletes the key under
/// C/t2, which works on; C/t1 takes the lock and joins the entry behind
/// t2; the next round renews t2's missing field (0) and only drops it,
/// and t1's key expires before the round after, which an interleave
/// window held back, renews it. Named by that path, not left unnamed.
#[test]
fn a_stale_first_thread_in_the_renewal_entry_is_named() {
    let file = "explored-1235191-4-7-0-stale-first-thread-renewed.toml";
    let defects = finding_defects(file);
    assert!(!defects.is_empty(), "{file}: no defect");
    for d in &defects {
        assert_eq!(d.invariant.name(), "mutual-exclusion", "{file}");
        let path = d.open_issue.map(|o| (o.upstream, o.path));
        assert!(
            path.is_some_and(|(u, p)| u == "unreported"
                && p.contains("stayed first in its client's renewal entry")),
            "{file}: {path:?}"
        );
    }
}

/// An `RLock` unlock message wakes one waiting thread per client (not
/// reported upstream): 4.7.0 seed 526918, shrunk. B's unlock wakes A/t1,
/// which loses the lock to C and gives up; A/t2, not woken, sleeps on
/// B's TTL after C's key expires with no message. Named by that path,
/// not left unnamed.
#[test]
fn a_waiter_the_one_permit_did_not_wake_is_named() {
    let file = "explored-526918-4-7-0-one-permit-stale-ttl.toml";
    let defects = finding_defects(file);
    assert!(!defects.is_empty(), "{file}: no defect");
    for d in &defects {
        assert_eq!(d.invariant.name(), "lost-wakeup", "{file}");
        let path = d.open_issue.map(|o| (o.upstream, o.path));
        assert!(
            path.is_some_and(|(u, p)| u == "unreported" && p.contains("one permit per message")),
            "{file}: {path:?}"
        );
    }
}

/// Fair-lock liveness defects no fix removes, each named by the open
/// upstream issue whose path the run took:
/// - #4595: a waiter whose acquire fails after its script queued it keeps
///   its place (3.43.0 seed 3096, written small): `lock()` never sends
///   `acquireFailed`, so the waiter behind it waits out the place's
///   deadline with the lock free, and the queue outlives every thread;
///   the crash form is excused instead (`losses/fair-crashed-waiter-...`).
///   4.7.0 seed 9640, shrunk, is the timeout form: delayed replies time
///   lock() calls out after their scripts queued them, and its violation
///   cites Redis's record of the key (matched by key, not by name).
/// - #3829: a waiter whose queue entry Redis lost is queued again by its
///   next attempt inside `lock()`'s loop and told the last waiter's
///   deadline − now (5 minutes and more), which it sleeps out on its
///   latch. 4.7.0 seed 34197, shrunk: a second restart loses the queue
///   again, so no unlock publishes to it; seed 23817, shrunk: it heads
///   the queue but misses the unlock message while it resubscribes after
///   an outage. Before #3829 was named, both were defects nothing
///   explained.
/// - #3730: the key expires with no unlock message while threads wait
///   behind one another, each told the other's deadline − now. 4.7.0
///   seed 51417, shrunk: rolled-back acquires queue C's threads again,
///   and D's unknown count keeps the key until it expires.
#[test]
fn fair_queue_paths_name_their_open_issues() {
    let liveness = |upstream| vec![("liveness", Some(upstream))];
    for (file, expected) in [
        (
            "fair-interrupted-waiter-keeps-its-place.toml",
            liveness("#4595"),
        ),
        (
            "explored-9640-4-7-0-fair-timed-out-waiters-keep-their-places.toml",
            liveness("#4595"),
        ),
        // A's unlock after Redis lost its key answers 1 (the fair unlock
        // script's missing-key branch, not reported upstream).
        (
            "explored-34197-4-7-0-fair-requeued-waiter-sleeps.toml",
            vec![
                ("liveness", Some("#3829")),
                ("false-unlock-success", Some("unreported")),
            ],
        ),
        (
            "explored-23817-4-7-0-fair-requeued-head-misses-unlock.toml",
            liveness("#3829"),
        ),
        (
            "explored-51417-4-7-0-fair-expired-holder-waiters-sleep.toml",
            liveness("#3730"),
        ),
    ] {
        let named = open_issues_named(file);
        assert_eq!(named, expected, "{file}");
    }
}

/// Shrunk findings no fix removes that are named as open paths, each
/// with the invariant it breaks:
/// - seed 113 under 4.7.0: a spin lock's `tryLock(wait)` still throws a
///   response timeout from inside its back-off loop (#5019's fix is in
///   `RedissonLock.tryLock`; `RedissonSpinLock` has a loop of its own),
///   which no upstream issue reports;
/// - seed 4927 under 4.7.0: a fair lock's `tryLock(wait)` whose
///   `acquireFailed` times out after the wait ran out throws (#5019's fix
///   retries `acquireFailed` but lets its last timeout escape): #5019's
///   own case, open upstream;
/// - seed 20907 under 4.7.0: the same script called by #5019's own catch
///   of a timed-out attempt in the loop, 10.6 s into a 19.3 s wait.
#[test]
fn open_try_lock_paths_are_named() {
    for (file, upstream) in [
        ("explored-113-4-7-0-spin-try-lock-throws.toml", "unreported"),
        (
            "explored-4927-4-7-0-fair-acquire-failed-times-out.toml",
            "#5019",
        ),
        (
            "explored-20907-4-7-0-fair-loop-timeout-acquire-failed-throws.toml",
            "#5019",
        ),
    ] {
        let named = open_paths_named(file);
        let want = [("try-lock-answers", true, Some(upstream))];
        assert_eq!(named, want, "{file}");
    }
}

/// Seed 633698 under 4.7.0, shrunk: a spin lock's `lock()` interrupted
/// while its acquire was on the wire. The script takes the lock after
/// the thread gave up, and the interrupt's cancel reaches the future
/// the watchdog's callback hangs on (a spin lock's acquire is outside
/// the retry wrapper in every release), so the key lives out its lease
/// with no holder: the open path of a hold its thread does not know of
/// (#4109), not #7272's watchdog, which PR #7277 would fix.
#[test]
fn an_interrupted_spin_lock_whose_script_ran_is_named() {
    let named = open_paths_named("explored-633698-4-7-0-spin-interrupted-lock-ran.toml");
    let want = [("lock-left-behind", true, Some("#4109"))];
    assert_eq!(named, want);
}

/// A fair lock's queue that a failover gave back with the place of a
/// thread that had taken the lock (its dequeue had not reached the
/// replica) holds the waiters behind it until that place's deadline,
/// with the lock free: #4595's path (open upstream), reached through
/// Redis (found from 4.7.0 seed 98382, directed).
#[test]
fn a_fair_place_a_failover_restored_is_named_4595() {
    let named = open_paths_named("fair-place-restored-by-a-failover.toml");
    let want = [("liveness", true, Some("#4595"))];
    assert_eq!(named, want);
}

/// 4.7.0 seed 448875 (`locksim explore --redisson 4.7.0 --from 400000
/// --seeds 100000`): A/t1 took and released the fair lock at 12.2 s
/// during a replication stall, and a switchover at 14.25 s promoted a
/// replica whose queue still had A/t1's place; the key itself was free
/// on both, so Redis's record of it did not change. P/t1 waits behind
/// the place to the horizon with the lock free. The path looked for the
/// promotion in Redis's record of the key only, and the run was a
/// defect no fix or open issue named.
#[test]
fn a_fair_place_a_switchover_restored_is_named_4595_448875() {
    let (spec, run) = explored_470_configured_with_replicas(448875);
    let named: Vec<_> = locksim::defects_of(&spec, &run)
        .iter()
        .map(|d| (d.invariant.name(), d.open_issue.map(|o| o.upstream)))
        .collect();
    assert_eq!(named, [("liveness", Some("#4595"))], "{}", run.history);
}

/// 4.7.0 seed 391140 (`locksim explore --redisson 4.7.0 --from 300000
/// --seeds 100000`, its directed arm): A/t1 holds twice; a switchover
/// makes the Redis 6.2 primary a replica, which refuses both count-down
/// unlocks (`ERR Error running script … -READONLY …`, not retried from
/// 3.46.0), and the second cancels the renewal while A/t1 still holds:
/// the key expires and P takes it. The failed-unlock rule knew only
/// timeouts and lost connections as a fault's, and called it a defect.
#[test]
fn an_unlock_refused_by_a_demoted_primary_is_the_faults_391140() {
    let (_, run) = explored_470(391140, sim::Strategy::Directed);
    assert_no_defect(&run);
}

/// A fair lock's unlock of a key that expired under its holder returns
/// normally (`false-unlock-success`), at 4.7.0 as at every release:
/// `RedissonFairLock`'s unlock script answers 1 when K does not exist,
/// which `RLock`'s stopped doing in 3.10.6 (#2018) and the read-write
/// lock's in 3.44.0. No fix removes it, and the finding is named as a
/// path no upstream issue reports (found from 4.7.0 seed 935).
#[test]
fn a_fair_unlock_of_an_expired_lock_is_named_as_unreported() {
    let named = open_paths_named("fair-unlock-of-expired-lock-returns.toml");
    let want = [("false-unlock-success", true, Some("unreported"))];
    assert_eq!(named, want);
}

/// Seed 28028 under 4.7.0, shrunk: a watchdog reader's renewal sets K's
/// TTL to the watchdog timeout under a reader with a longer lease
/// (`ReadLockTask`'s `pexpire KEYS[i] ARGV[1]`; #2144's fix, 3.11.1, keeps
/// the longer TTL in the acquire only), the renewals stop in a pause, and
/// K expires inside the other reader's lease: a writer gets in. No fix
/// removes it, and it is named as a path not reported upstream.
#[test]
fn a_read_renewal_that_shortens_a_longer_lease_is_named() {
    let file = "explored-28028-4-7-0-read-renewal-shortens-the-lease.toml";
    let named: Vec<_> = finding_defects(file)
        .iter()
        .map(|d| {
            let open = d.open_issue.map(|o| (o.upstream, o.path));
            (d.invariant.name(), d.fixed_by.is_none(), open)
        })
        .collect();
    assert_eq!(named.len(), 1, "{file}: {named:?}");
    let (invariant, unfixed, open) = named[0];
    assert_eq!((invariant, unfixed), ("reader-writer-exclusion", true));
    let (upstream, path) = open.unwrap_or_else(|| panic!("{file}: not named"));
    assert_eq!(upstream, "unreported");
    assert!(path.contains("read lock's renewal"), "{path}");
}

/// A defect no upstream issue reports is named by its path too. Seed
/// 100816 under 4.7.0 (directed), shrunk: a count-down unlock whose
/// `WAIT` synced no replica is tried again, and each attempt's handler takes a count off
/// the renewal entry (`RedissonBaseLock.unlockAsync0` inside
/// `ServiceManager.execute`), so renewal stops under a thread that still
/// holds the lock.
/// Seed 25489 is the same path when every attempt's `WAIT` fails and the
/// unlock throws `NoSyncedSlavesException` after Redis counted down.
#[test]
fn a_retried_count_down_unlock_is_named_as_unreported() {
    for file in [
        "explored-100816-4-7-0-mutual-exclusion-defect.toml",
        "explored-25489-4-7-0-mutual-exclusion-defect.toml",
    ] {
        let named: Vec<_> = finding_defects(file)
            .iter()
            .map(|d| {
                let open = d.open_issue.map(|o| (o.upstream, o.status()));
                (d.invariant.name(), d.fixed_by.is_none(), open)
            })
            .collect();
        let status = "not reported upstream".to_owned();
        assert_eq!(
            named,
            [("mutual-exclusion", true, Some(("unreported", status)))],
            "{file}"
        );
    }
}

/// Seeds 10 and 5 under `redisson` (3.23.4), shrunk: an unlock whose WAIT
/// counts no replica during a replication stall is retried (3.20.1+),
/// misses the latch its first attempt would have left, and reports "not
/// locked by current thread": Redisson #6651, fixed in 3.52.0, named
/// although the fix works only with 3.24's latch, which 3.23.4 lacks.
/// Seed 5's run is not reproduced by 3.52.0 at all (its timer tick moves
/// the renewals and the key expires before the unlock), so only the
/// controlled pair on 3.23.4 (with the latch and retry, without and with
/// the kept request id) names the fix.
#[test]
fn an_unsynced_unlock_retry_names_redisson_6651() {
    for file in [
        "explored-10-redisson-false-unlock-error-defect.toml",
        "explored-5-redisson-false-unlock-error-defect.toml",
    ] {
        let named: Vec<_> = finding_defects(file)
            .iter()
            .map(|d| (d.invariant.name(), fix_of(d)))
            .collect();
        assert_eq!(
            named,
            [(
                "false-unlock-error",
                Some(("#6651".to_owned(), "3.52.0".to_owned()))
            )],
            "{file}"
        );
    }
}

/// A fix is named only where it makes the difference. Seed 402 under
/// 3.8.0, shrunk, renews after the last unlock (an interrupted acquire's
/// late reply, Redisson #7272): 3.12.1's nil-unlock-cancels (#2515) avoids
/// it on 3.8.0, but 3.12.1, which has it, still shows it, so #7272's
/// proposed fix is named. Seed 37338 under 3.44.0, shrunk, is #6844's race,
/// which the newest release does not reproduce (its timer tick is random
/// from 3.49): the newest release with 3.44.0's tick, without and with
/// 4.4.0's atomic-renewal-map, names it. Seed 2 under `redisson-legacy`
/// (3.8.0), shrunk: a resent unlock finds the lock gone; the unlock latch
/// (#4871, 3.24.0) and the end of resends (#6144, 3.37.0) each prevent
/// it, and the newest release with 3.8.0's tick and no WAIT, without the
/// end of resends, shows it without the latch and not with it. Seed 39485
/// under 3.27.1, shrunk: an unlock message handled while an async
/// waiter's callback had not registered its listener yet (#5761, 3.28.0).
/// Seed 10697 under 3.13.6, shrunk: a renewal's error stopped the chain
/// but kept the entry, and a sibling's later lock joined it and was never
/// renewed (#3194, 3.14.0). Seed 80894 under 3.45.1, shrunk: a batched round whose only key was
/// unlocked while it read the map throws on its empty chunk, and the lock
/// taken meanwhile is never renewed (#6506, 3.46.0).
#[test]
fn a_fix_is_named_where_it_makes_the_difference() {
    for (file, invariant, upstream, release) in [
        (
            "explored-402-3-8-0-renewal-after-unlock-defect.toml",
            "renewal-after-unlock",
            "#7272 (PR #7277, unmerged)",
            "no release",
        ),
        (
            "explored-37338-3-44-0-mutual-exclusion-defect.toml",
            "mutual-exclusion",
            "#6844",
            "4.4.0",
        ),
        (
            "explored-2-redisson-legacy-false-unlock-error-defect.toml",
            "false-unlock-error",
            "#4871",
            "3.24.0",
        ),
        (
            "explored-39485-3-27-1-lost-wakeup-defect.toml",
            "lost-wakeup",
            "#5761",
            "3.28.0",
        ),
        (
            "explored-10697-3-13-6-mutual-exclusion-defect.toml",
            "mutual-exclusion",
            "#3194",
            "3.14.0",
        ),
        (
            "explored-80894-3-45-1-mutual-exclusion-defect.toml",
            "mutual-exclusion",
            "#6506",
            "3.46.0",
        ),
    ] {
        let named: Vec<_> = finding_defects(file)
            .iter()
            .filter(|d| d.invariant.name() == invariant)
            .map(fix_of)
            .collect();
        let want = Some((upstream.to_owned(), release.to_owned()));
        assert_eq!(named, [want], "{file}: {invariant}");
    }
}

/// Redisson #6026 (fixed in 3.46.0 by PR #6541): a Sentinel client whose
/// primary restarted while it had a subscription in use keeps the closed
/// pub/sub connection as one with free slots, and no subscription works
/// again. The history row `sentinel-restart-stops-pubsub-6026` under
/// 3.45.0: long after the restart (past a lease, so the oracle blames no
/// fault), B's contended `lock()` sleeps through A's unlock (a lost
/// wake-up the oracle calls a defect) and throws Redisson's "Unable to
/// acquire subscription lock after 7500ms"; explore's attribution, which
/// replays the run under each fix the release lacks, names #6026. Under
/// 3.46.0 the same run has no defect. A machine that resubscribed in
/// Sentinel mode before 3.46, or never after it, fails here.
#[test]
fn a_sentinel_restart_that_stops_pubsub_names_redisson_6026() {
    let scenario = locksim::history_scenario("sentinel-restart-stops-pubsub-6026")
        .expect("the #6026 history row");
    let release = |v: &str| -> lockcore::Release { v.parse().unwrap_or_else(|e| panic!("{e}")) };
    let broken = release("3.45.0");
    let trial =
        locksim::Trial::run(&scenario, None, Some(broken)).unwrap_or_else(|e| panic!("{e}"));
    let subscription_timeout = trial.run.history.records.iter().any(|r| {
        matches!(&r.kind, sim::RecordKind::Return { outcome: sim::Outcome::Error { message, .. }, .. }
            if message.starts_with("transport error: Unable to acquire subscription lock after 7500ms"))
    });
    assert!(
        subscription_timeout,
        "B's lock() did not time out subscribing"
    );
    let named: Vec<_> = locksim::defects_of(&scenario.spec(None, Some(broken)), &trial.run)
        .iter()
        .map(|d| (d.invariant.name(), fix_of(d)))
        .collect();
    assert_eq!(
        named,
        [(
            "lost-wakeup",
            Some(("#6026".to_owned(), "3.46.0".to_owned()))
        )]
    );
    let fixed = locksim::Trial::run(&scenario, None, Some(release("3.46.0")))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        fixed.run.violations.is_empty(),
        "{:?}",
        fixed.run.violations
    );
}

/// Violations the oracle once called defects that a fault explains (the
/// harness's false positives), each a scenario file whose expectation
/// says it breaks and is no defect: a change to the oracle that calls one
/// a defect again fails here, naming the file.
#[test]
fn every_explained_loss_stays_explained() {
    assert_no_defect_in("losses", true);
}

/// Runs that the oracle called defects because the simulator itself was
/// wrong (the harness's bugs), each shrunk to a scenario file that names
/// the bug and expects what the fixed simulator gives: a change that
/// brings one back fails here, naming the file.
#[test]
fn every_harness_bug_stays_fixed() {
    assert_no_defect_in("harness", false);
}

/// Issue 48's oracle classes: each file in `tests/regression/oracle/` is
/// a run of a class the oracle once misjudged (a call hung after an
/// outage excused by it, ...), written to show that class, with what
/// each release it names must give (`[expect.release."V"]`): the verdict,
/// and exactly the defects the fixed oracle finds where the lock is at
/// fault (none where the release fixed it). A
/// change to a checker or the oracle that misjudges one again fails
/// here, naming the file and the release.
#[test]
fn every_oracle_class_stays_judged() {
    let (dir, files) = scenario_files("oracle");
    assert!(!files.is_empty(), "no scenario in {}", dir.display());
    let mut failures = Vec::new();
    for path in &files {
        let name = path.display().to_string();
        let scenario = locksim::load(&name).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            scenario.expect.release.len() >= 2,
            "{name}: a class shows on one release and not on another"
        );
        for release in scenario.expect.release.keys() {
            let release: lockcore::Release = release.parse().unwrap_or_else(|e| panic!("{e}"));
            let trial = locksim::Trial::run(&scenario, None, Some(release))
                .unwrap_or_else(|e| panic!("{e}"));
            // Exactly the defects expected: a release that fixed the
            // class shows none, and no other rule hides the class.
            let mut defects: Vec<_> = (trial.run.violations.iter())
                .filter(|v| v.cause == sim::Cause::Defect)
                .map(|v| v.invariant)
                .collect();
            defects.sort();
            defects.dedup();
            let mut expected = trial.expected.defects.clone();
            expected.sort();
            if !trial.as_expected() || defects != expected {
                failures.push(format!(
                    "{name} under {release}: {:?}, defects {defects:?}",
                    trial.mismatches
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every scenario file of `tests/regression/<sub>` gives what it expects
/// and no defect (and breaks an invariant, if `violates`).
fn assert_no_defect_in(sub: &str, violates: bool) {
    let (dir, files) = scenario_files(sub);
    assert!(!files.is_empty(), "no scenario in {}", dir.display());
    let mut failures = Vec::new();
    for path in &files {
        let name = path.display().to_string();
        let scenario = locksim::load(&name).unwrap_or_else(|e| panic!("{e}"));
        let trial = locksim::Trial::run(&scenario, None, None).unwrap_or_else(|e| panic!("{e}"));
        let defects = locksim::defects_of(&scenario.spec(None, None), &trial.run);
        let broke = !trial.run.violations.is_empty();
        if broke != violates || !defects.is_empty() || !trial.as_expected() {
            failures.push(format!(
                "{name}: {} violation(s), defects {:?}, mismatches {:?}",
                trial.run.violations.len(),
                defects
                    .iter()
                    .map(|d| d.invariant.name())
                    .collect::<Vec<_>>(),
                trial.mismatches
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The scenario files in `tests/regression/<sub>`, sorted, and the
/// directory.
fn scenario_files(sub: &str) -> (std::path::PathBuf, Vec<std::path::PathBuf>) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("regression")
        .join(sub);
    let files = toml_files(&dir);
    (dir, files)
}

/// The `.toml` files in `dir`, sorted.
fn toml_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    files
}

/// 4.7.0 seed 8302 (`locksim explore --redisson 4.7.0 --kinds all`):
/// a reader's first `tryLock` took 114 ms against the lost-wakeup bound
/// of 109 ms while the key was free, because its client asked first
/// (the probe, then `INFO`; since issue 52 also the batch's `SCRIPT
/// LOAD`): round trips before its first attempt, not a wake-up lost. A
/// wait is now judged from its first acquire's send (the history's
/// `acquire-sent` record), and the run is safe. (Its attribution once
/// panicked in the read-write wake-up path, 64a7b7d; explore must still
/// attribute whatever the run breaks.)
#[test]
fn a_waiters_setup_round_trips_are_not_a_lost_wakeup_8302() {
    let workload = sim::Workload {
        usage: sim::Usage::Correct,
        kinds: sim::SwarmKinds::All,
        strategy: sim::Strategy::Uniform,
    };
    let release: lockcore::Release = "4.7.0".parse().expect("a release");
    let spec = locksim::explored_spec_with(8302, Some(release), workload);
    let run = sim::run(&spec).expect("the explored spec runs");
    assert!(
        !run.violations
            .iter()
            .any(|v| v.invariant == sim::Invariant::LostWakeup),
        "{}",
        run.history
    );
    let sent = run
        .history
        .records
        .iter()
        .any(|r| matches!(r.kind, sim::RecordKind::AcquireSent { .. }));
    assert!(sent, "no acquire-sent record");
    let _ = locksim::defects_of(&spec, &run);
}

/// 4.7.0 seed 84095 (`locksim explore --redisson 4.7.0 --seeds 100000`,
/// before `readonly-retried` and `batch-first-error` were modelled, so
/// run here without them: with them, C's unlock on the demoted 6.2
/// primary fails at once and the run takes another path): A's client
/// read `INFO` during a switchover, counted no connected replica and
/// kept the count, so its acquire at 12.2 s went without `WAIT`; a
/// failover at 12.4 s promoted the replica, whose replication had
/// stalled since C's hold, and Redis gave the key back to C's older hold
/// instead of freeing it. The zero-count path (not reported upstream)
/// once asked for a failover that freed the key, and the run was a
/// defect no fix or open issue named; a key given to an older holder is
/// lost as surely.
#[test]
fn a_zero_count_failover_to_an_older_holder_names_its_path_84095() {
    let release = release_470()
        .without(lockcore::Switch::ReadonlyRetried)
        .without(lockcore::Switch::BatchFirstError);
    let (spec, run) = explored(84095, release, sim::Strategy::Uniform, None);
    assert_zero_count_named(&spec, &run);
}

/// 4.7.0 seed 108190 (`locksim explore --redisson 4.7.0 --from 100000
/// --seeds 100000`): B's client read 0 connected replicas while both
/// were down and kept the count; B/t1's fenced lock at 49.57 s went
/// without `WAIT` during a replication stall, and a failover at 49.94 s
/// promoted a replica without it. The zero-count path compared Redis's
/// record of the key with the fenced hold as lock names, which differ in
/// kind, never found the failover, and the defect went unnamed.
#[test]
fn a_zero_count_fenced_lock_names_its_path_108190() {
    let (spec, run) = explored_470_configured_with_replicas(108190);
    assert_zero_count_named(&spec, &run);
}

/// 4.7.0 seed 40695 (`locksim explore --redisson 4.7.0 --seeds 100000`,
/// its PCT arm): a failover refused two of B's renewal rounds (their
/// first command, the script's `SCRIPT LOAD`), at 16.71 s and 20.10 s,
/// and the third fell due after the key's expiry at 23.35 s: beyond the
/// guarantee. The refused-round rule set the next round a third of the
/// lease after the refused send, not after its refusal came back, missed
/// the second, and called the expiry a defect.
#[test]
fn a_round_refused_a_delay_after_its_send_is_the_faults_40695() {
    let (_, run) = explored_470(40695, sim::Strategy::Pct);
    assert_no_defect(&run);
}

/// 4.7.0 seed 121968 (`locksim explore --redisson 4.7.0 --from 100000
/// --seeds 100000`): B's client counted 0 connected replicas and kept
/// the count; B/t1's acquire ran unsynced at 19.42 s, and a failover
/// 1.4 ms later promoted a replica without the key before the reply
/// reached the thread: B/t1 learned of a hold Redis had already lost.
/// The zero-count path once looked for the failover after the hold was
/// learned, and such a run was a defect no fix or open issue named
/// (first seen as seed 100255's branch `50555:7`, whose history the
/// READONLY retry of 3.27.1 has since changed).
///
/// The seed is pinned as the file its draw gave before explore's cluster
/// draw made it a cluster (`pinned/`), generated again and checked to
/// replay the same history, byte for byte, on the code before the draw.
#[test]
fn a_zero_count_key_lost_before_its_reply_names_its_path_121968() {
    let text = include_str!("pinned/explored-121968-4-7-0-zero-count-key-lost.toml");
    let scenario = locksim::Scenario::parse(text, "pinned 121968").expect("parses");
    let spec = scenario.spec(None, None);
    let run = sim::run(&spec).expect("the pinned spec runs");
    assert_zero_count_named(&spec, &run);
}

/// 4.7.0 seed 92802: a 5 s failover refused D's resubscription 52 ms
/// before its watchdog's round, then that round and the next; the round
/// after fell due past the expiry. The refused-round rule once took the
/// `SUBSCRIBE` for the round and called the expiry a defect.
#[test]
fn a_refused_resubscription_is_not_the_round_92802() {
    let (_, run) = explored_470(92802, sim::Strategy::Uniform);
    let causes: Vec<_> = (run.violations.iter())
        .filter(|v| v.invariant == sim::Invariant::MutualExclusion)
        .map(|v| v.cause.clone())
        .collect();
    assert!(
        !causes.is_empty() && causes.iter().all(|c| *c != sim::Cause::Defect),
        "{causes:?}\n{}",
        run.history
    );
}

/// 3.23.4 seed 2897 (`locksim explore --redisson 3.23.4 --seeds 100000`):
/// D/t1 and D/t2 hold the read lock; D/t2's unlock runs on Redis at
/// 10.41 s and cuts the key's TTL to D/t1's remaining 669 ms, and the
/// watchdog's round 4 ms later renews the entry's first thread, D/t2,
/// whose field is gone: 0, and 3.23.4 cancels the whole entry before
/// D/t2's reply has taken it off. The key expires under D/t1 and A takes
/// the write lock. The stale-first-thread path compared Redis's record of
/// the key (an `RLock`) with the read lock's renewal by name, never
/// matched, and the run was a defect no fix or open issue named.
#[test]
fn a_sibling_readers_unlock_in_flight_stales_the_first_thread_2897() {
    let (defects, run) = defects_3234(2897, sim::Invariant::ReaderWriterExclusion);
    let named: Vec<_> = defects
        .iter()
        .map(|d| d.open_issue.map(|o| o.path))
        .collect();
    assert!(
        !named.is_empty()
            && named.iter().all(
                |p| p.is_some_and(|p| p.contains("stayed first in its client's renewal entry"))
            ),
        "{named:?}\n{}",
        run.history
    );
}

/// 3.23.4 seed 43619 (`locksim explore --redisson 3.23.4 --seeds
/// 100000`): A's red lock unlocks `redisson:lock3` inside a Redis pause;
/// the unlock times out, is resent, and finds the lock its first attempt
/// freed: a false unlock error, #4871's. With the latch alone the
/// client's `retryAttempts` (1,462,531,864) wraps the latch's `int` TTL
/// and Redis refuses the latched script (#5392, #7089), so the latch
/// seemed to remove nothing and no fix was named;
/// the latch is now tried with its TTL's repairs (`Switch::repaired_by`).
#[test]
fn a_fix_is_tried_with_the_repairs_of_its_own_faults_43619() {
    let (defects, run) = defects_3234(43619, sim::Invariant::FalseUnlockError);
    let named: Vec<_> = defects
        .iter()
        .map(|d| d.fixed_by.as_ref().map(|f| f.switch.clone()))
        .collect();
    assert_eq!(named, [Some("unlock-latch".to_owned())], "{}", run.history);
}

/// The defects of `invariant` in seed `seed` of explore's uniform arm
/// under 3.23.4, attributed, and the run.
fn defects_3234(seed: u64, invariant: sim::Invariant) -> (Vec<locksim::Defect>, sim::Run) {
    let release = "3.23.4".parse().expect("a release");
    let (spec, run) = explored(seed, release, sim::Strategy::Uniform, None);
    let mut defects = locksim::defects_of(&spec, &run);
    defects.retain(|d| d.invariant == invariant);
    (defects, run)
}

/// The guide's `multi-unlock.toml`: under 4.7.0 the multi-lock's
/// `unlock()` stops at `a`, whose key was deleted, and `b` stays held for
/// ever: both defects name the path not reported upstream. Under 3.27.1
/// every unlock is sent, and nothing breaks.
#[test]
fn a_multi_locks_unlock_that_stopped_at_an_error_is_named() {
    let text = include_str!("../../docs/src/scenarios.in/multi-unlock.toml");
    let scenario = locksim::Scenario::parse(text, "multi-unlock.toml").expect("the guide's file");
    let run = |release: &str| {
        let release = Some(release.parse().expect("a release"));
        let trial = locksim::Trial::run(&scenario, None, release).expect("it runs");
        assert!(trial.as_expected(), "{:?}", trial.mismatches);
        let spec = scenario.spec(None, release);
        let paths: Vec<_> = locksim::defects_of(&spec, &trial.run)
            .iter()
            .map(|d| (d.invariant, d.open_issue.map(|o| o.path)))
            .collect();
        paths
    };
    let named = run("4.7.0");
    assert!(
        named.len() == 2
            && named
                .iter()
                .all(|(_, p)| p.is_some_and(|p| p.contains("stopped at a lock whose unlock threw"))),
        "{named:?}"
    );
    assert_eq!(run("3.27.1"), []);
}

/// Seed `seed` of explore's `strategy` arm under 4.7.0 (the default
/// workload), and its run.
fn explored_470(seed: u64, strategy: sim::Strategy) -> (sim::SimSpec, sim::Run) {
    explored(seed, release_470(), strategy, None)
}

/// Seed `seed` of explore's uniform arm under 4.7.0 with its clients
/// configured with the replicas, as explore drew it before it drew
/// managed endpoints (single-server clients on a Redis with replicas,
/// which send no `WAIT`): the seeds that use it drew one since, which
/// takes away the `WAIT` their paths need. The endpoint is its own draw,
/// so the rest of the spec is as it was.
fn explored_470_configured_with_replicas(seed: u64) -> (sim::SimSpec, sim::Run) {
    let mut spec = explored_spec(seed, release_470(), sim::Strategy::Uniform, None);
    for c in &mut spec.clients {
        if c.mode == Some(lockcore::ServerMode::Single) {
            c.mode = None;
        }
    }
    let run = sim::run(&spec).expect("the explored spec runs");
    (spec, run)
}

fn release_470() -> lockcore::Release {
    "4.7.0".parse().expect("a release")
}

/// Seed `seed` of explore's `strategy` arm under `release`, on branch
/// `path` when given, and its run.
fn explored(
    seed: u64,
    release: lockcore::Release,
    strategy: sim::Strategy,
    path: Option<&str>,
) -> (sim::SimSpec, sim::Run) {
    let spec = explored_spec(seed, release, strategy, path);
    let run = sim::run(&spec).expect("the explored spec runs");
    (spec, run)
}

/// The spec of [`explored`]'s run.
fn explored_spec(
    seed: u64,
    release: lockcore::Release,
    strategy: sim::Strategy,
    path: Option<&str>,
) -> sim::SimSpec {
    let workload = sim::Workload {
        strategy,
        ..Default::default()
    };
    let spec = locksim::explored_spec_with(seed, Some(release), workload);
    match path {
        Some(path) => {
            let path: sim::BranchPath = path.parse().expect("a branch path");
            sim::branch::branch(spec, &path).expect("the branch replays")
        }
        None => spec,
    }
}

/// No violation of the run is a defect.
fn assert_no_defect(run: &sim::Run) {
    let defects: Vec<_> = (run.violations.iter())
        .filter(|v| v.cause == sim::Cause::Defect)
        .map(|v| v.to_string())
        .collect();
    assert!(defects.is_empty(), "{defects:?}\n{}", run.history);
}

/// Every mutual exclusion the run breaks is a defect named as the
/// zero-count path (a client that read 0 replicas never waits again).
fn assert_zero_count_named(spec: &sim::SimSpec, run: &sim::Run) {
    let named: Vec<_> = locksim::defects_of(spec, run)
        .iter()
        .filter(|d| d.invariant == sim::Invariant::MutualExclusion)
        .map(|d| d.open_issue.map(|o| o.path))
        .collect();
    let zero_count = |p: &Option<&str>| p.is_some_and(|p| p.starts_with("the client read 0"));
    assert!(
        !named.is_empty() && named.iter().all(zero_count),
        "{named:?}"
    );
}
