//! Issue #52's MONITOR bar, replicated: a real primary with a real
//! replica (`--replicaof`), the client configured with one replica (a
//! master-slave or sentinel config, where Redisson follows each lock
//! script with `WAIT`), `lock()` then `unlock()`, as `MONITOR` on the
//! primary shows them; and the failover path: the unlock after a
//! switchover (Sentinel's own `SLAVEOF` transactions) on the demoted
//! primary, sent once (3.45.0) or retried (3.45.1+).
//!
//! The expected lists are Redisson's, written from `syncedEval` at each
//! tag (`CommandAsyncService`, and from 3.46.0 `CommandBatchService.
//! loadScripts`), not from lockcore, and lockcore's commands must be
//! exactly them: the `INFO` that gives each script's replica count
//! (`REPLICATION` before every one at 3.23.4, once while the count is
//! unknown from 3.27.0, `ALL` from 3.46.0), the `WAIT 1 1000` after each
//! script, 3.26.1-3.45.x's `WAIT 0 0` and the 3.46+ probe, 3.46+'s
//! `SCRIPT LOAD` before a batch of a script the client has not loaded on
//! the node and the batch's `EVALSHA`, the scripts, their keys and
//! arguments, the order. Not provable on Redis 7.0's `MONITOR`: `WAITAOF
//! 0 0 0`, the probe's second command, which 7.0 does not know (an
//! unknown command is refused before it runs, so `MONITOR` never shows
//! it).

use super::*;

/// `WAIT <replicas> <slavesSyncTimeout>`: the batch's last command
/// (`CommandBatchService`, `options.getSyncSlaves() > 0`), one replica and
/// Redisson's default 1 000 ms.
fn wait_one() -> Vec<Arg> {
    exact(&["WAIT", "1", "1000"])
}

/// A synced script's batch: `EVAL` (before 3.46.0: the script cache is
/// off), or 3.46.0+'s `EVALSHA` after the `SCRIPT LOAD` of a script the
/// client has not loaded on this node (`load`); then `WAIT`.
pub(super) fn synced(
    version: &str,
    script: &'static Script,
    rest: Vec<Arg>,
    load: bool,
) -> Vec<Vec<Arg>> {
    if version != "4.7.0" {
        let mut eval = vec![Arg::Word("EVAL"), Arg::Script(script)];
        eval.extend(rest);
        return vec![eval, wait_one()];
    }
    let mut evalsha = vec![Arg::Word("EVALSHA"), Arg::Word(script.sha1)];
    evalsha.extend(rest);
    let mut batch = Vec::new();
    if load {
        batch.push(vec![
            Arg::Word("SCRIPT"),
            Arg::Word("LOAD"),
            Arg::Script(script),
        ]);
    }
    batch.extend([evalsha, wait_one()]);
    batch
}

/// Redisson's commands for `lock()` then `unlock()` with one replica.
fn lock_unlock(version: &str) -> Vec<Vec<Arg>> {
    let info = |section| exact(&["INFO", section]);
    let acquire_args = exact(&["1", LOCK, DEFAULT_LEASE, FIELD_A]);
    let mut steps = Vec::new();
    match version {
        // redisson-3.23.4 CommandAsyncService.syncedEval: INFO
        // REPLICATION before every synced script, then the batch.
        "3.23.4" => {
            steps.push(info("REPLICATION"));
            steps.extend(synced(version, &ACQUIRE, acquire_args, true));
            steps.push(info("REPLICATION"));
            let args = [UNLOCK_MESSAGE, DEFAULT_LEASE, FIELD_A, PUBLISH];
            let rest = exact(&[&["2", LOCK, CHANNEL][..], &args].concat());
            steps.extend(synced(version, &UNLOCK_3_23, rest, true));
        }
        // redisson-3.44.0 CommandAsyncService.java:1010-1076: `WAIT 0 0`
        // while WAIT_SUPPORTED is unknown, INFO REPLICATION while the
        // entry's available slaves are unknown (-1), then the batch; the
        // unlock's batch reuses both.
        "3.44.0" => {
            steps.push(exact(&["WAIT", "0", "0"]));
            steps.push(info("REPLICATION"));
            steps.extend(synced(version, &ACQUIRE, acquire_args, true));
            let rest = latched_args(FIELD_A, DEFAULT_LEASE, Arg::Word("13500"));
            steps.extend(synced(version, &UNLOCK_LATCHED, rest, true));
            steps.push(del_latch());
        }
        // redisson-4.7.0 CommandAsyncService.syncedEval: the probe batch
        // `WAIT 0 0`, `WAITAOF 0 0 0` (7.0 refuses the second, unseen
        // here; the order WAITAOF, WAIT keeps WAIT), INFO ALL while the
        // available slaves are unknown, then the batch.
        _ => {
            steps.push(exact(&["WAIT", "0", "0"]));
            steps.push(info("ALL"));
            steps.extend(synced(version, &ACQUIRE, acquire_args, true));
            let rest = latched_args(FIELD_A, DEFAULT_LEASE, Arg::Between(16_000, 20_000));
            steps.extend(synced(version, &UNLOCK_LATCHED, rest, true));
            steps.push(del_latch());
        }
    }
    steps
}

/// A primary and its replica, the replica's first sync acknowledged.
pub(super) async fn primary_and_replica() -> (RealRedis, RealRedis) {
    // No wait for more replicas before the diskless sync (5 s by default).
    let primary = RealRedis::start_for_test_with(&["--repl-diskless-sync-delay", "0"]);
    let port = primary.port().to_string();
    // Diskless load: the replica writes no RDB file anywhere.
    let replica = RealRedis::start_for_test_with(&[
        "--replicaof",
        "127.0.0.1",
        &port,
        "--repl-diskless-load",
        "swapdb",
    ]);
    // A 7.0 primary streams nothing to a new replica before its first
    // REPLCONF ACK (up to a second after the sync): until a write is
    // acknowledged, a WAIT would count it out.
    let deadline = Instant::now() + WAIT;
    loop {
        let mut stream = TcpStream::connect(primary.addr()).await.unwrap();
        let sync = b"PUBLISH locksim:sync 1\r\nWAIT 1 50\r\n";
        stream.write_all(sync).await.unwrap();
        let mut replies = BufReader::new(stream);
        let (mut published, mut waited) = (String::new(), String::new());
        replies.read_line(&mut published).await.unwrap();
        replies.read_line(&mut waited).await.unwrap();
        if waited.trim_end() == ":1" {
            return (primary, replica);
        }
        assert!(Instant::now() < deadline, "the replica never synced");
    }
}

/// Under `version`, with one replica: `lock()` then `unlock()`; lockcore's
/// commands must be Redisson's.
async fn proves_replicated_lock_unlock(version: &str) {
    let expected = lock_unlock(version);
    // Redisson's list, for the failure message's reader.
    let full: Vec<String> = expected
        .iter()
        .map(|c| c.iter().map(Arg::render).collect::<Vec<_>>().join(" "))
        .collect();
    eprintln!(
        "--redisson {version} sends, replicated:\n{}",
        numbered(&full)
    );
    let (primary, _replica) = primary_and_replica().await;
    let mut monitor = Monitor::start(&primary).await;
    let config = with_replica(version);
    let a = client(&primary, UUID_A, config).await;
    let lock = a.lock(LOCK).unwrap();
    lock.lock(T1).await.unwrap();
    assert_eq!(lock.unlock(T1).await, Ok(true));
    let mut sent = Vec::new();
    monitor.collect(&mut sent, expected.len()).await;
    monitor.finish(&mut sent).await;
    assert_sequence(&format!("{version}, replicated"), &expected, &words(sent));
}

/// `--redisson 3.23.4` with a replica: each script in a batch followed
/// by `WAIT 1 1000` (3.16.7+), after the `INFO REPLICATION` that gives
/// its count (3.18.1+).
#[tokio::test]
async fn redisson_3_23_4_replicated_lock_unlock() {
    proves_replicated_lock_unlock("3.23.4").await;
}

/// `--redisson 3.44.0` with a replica: acquire and latched unlock, each
/// followed by `WAIT 1 1000`, then the latch's `DEL` (no WAIT: a plain
/// write), after the `WAIT 0 0` probe and one `INFO REPLICATION` (the
/// count is cached from 3.27.0).
#[tokio::test]
async fn redisson_3_44_0_replicated_lock_unlock() {
    proves_replicated_lock_unlock("3.44.0").await;
}

/// `--redisson 4.7.0` with a replica: the probe's `WAIT 0 0` first, then
/// acquire and latched unlock each followed by `WAIT 1 1000` (7.0 lacks
/// WAITAOF, so WAIT it is), after one `INFO ALL`, then the latch's
/// `DEL`; each batch's script as `EVALSHA`, after its `SCRIPT LOAD`.
#[tokio::test]
async fn redisson_4_7_0_replicated_lock_unlock() {
    proves_replicated_lock_unlock("4.7.0").await;
}

/// Sends Sentinel's `SLAVEOF` transaction (redis 7.0.15 sentinel.c,
/// `sentinelSendSlaveOf`) to `node`: `NO ONE`, or the primary on `port`.
async fn slave_of(node: SocketAddr, primary: Option<u16>) {
    let target = primary.map_or("NO ONE".to_owned(), |p| format!("127.0.0.1 {p}"));
    let text = format!(
        "MULTI\r\nSLAVEOF {target}\r\nCONFIG REWRITE\r\nCLIENT KILL TYPE normal\r\nCLIENT KILL TYPE pubsub\r\nEXEC\r\n"
    );
    let mut stream = TcpStream::connect(node).await.unwrap();
    stream.write_all(text.as_bytes()).await.unwrap();
    let mut replies = BufReader::new(stream);
    let mut line = String::new();
    // +OK, 5 QUEUED or errors, then EXEC's array header and 5 replies.
    for _ in 0..6 {
        line.clear();
        replies.read_line(&mut line).await.unwrap();
    }
}

/// Redisson's commands on the demoted primary for the unlock after a
/// switchover: the unlock's batch, sent `attempts` times. The script runs
/// on the replica and fails at its first write; the `WAIT` is refused
/// ("ERR WAIT cannot be used with replica instances"). Before 3.45.1
/// only errors beginning "WAIT" were a `RedisWaitException`, so the batch
/// fails at once; from 3.45.1 (commit 58947344d, CommandDecoder.java:414)
/// "ERR WAIT" is one too, a `RedisRetryException` that `RedisExecutor`
/// sends again after each retry pause until `retryAttempts` (3 in 3.x,
/// 4 in 4.x) run out.
fn demoted_unlock(version: &str, attempts: usize) -> Vec<Vec<Arg>> {
    demoted_unlock_with(version, attempts, DEFAULT_LEASE)
}

/// [`demoted_unlock`] of a lock held with the watchdog's `lease`.
pub(super) fn demoted_unlock_with(
    version: &str,
    attempts: usize,
    lease: &'static str,
) -> Vec<Vec<Arg>> {
    let ttl = match version {
        "4.7.0" => Arg::Between(16_000, 20_000),
        _ => Arg::Word("13500"),
    };
    let args = latched_args(FIELD_A, lease, ttl);
    let mut steps = Vec::new();
    for attempt in 0..attempts {
        // 4.7.0 loads the script once, before the batch's first send:
        // its resends reuse the `EVALSHA` (the demotion's `CLIENT KILL`
        // emptied the client's set, so the first send loads).
        steps.extend(synced(version, &UNLOCK_LATCHED, args.clone(), attempt == 0));
    }
    steps
}

/// Under `version`, with one replica: A takes the lock on the primary;
/// the replica is promoted and the primary demoted with Sentinel's own
/// transactions, which close A's connections; A's client reconnects to
/// the address it knows, now a replica (it has no sentinel manager to
/// move it), and unlocks there once reconnected. `MONITOR` on the
/// demoted primary must show Redisson's commands, and the unlock fail
/// with the replica's error ([`demoted_unlock_error`]).
async fn proves_unlock_on_demoted_primary(version: &str, attempts: usize) {
    let expected = demoted_unlock(version, attempts);
    assert_eq!(expected.iter().filter(|c| is_wait(c)).count(), attempts);
    let (primary, replica) = primary_and_replica().await;
    let config = with_replica(version);
    let a = client(&primary, UUID_A, config).await;
    let lock = a.lock(LOCK).unwrap();
    lock.lock(T1).await.unwrap();
    slave_of(replica.addr(), None).await;
    slave_of(primary.addr(), Some(replica.port())).await;
    // Opened after the demotion, whose CLIENT KILL would close it.
    let mut monitor = Monitor::start(&primary).await;
    // Past the client's first reconnection (75 ms): lockcore's transport
    // fails a command sent while it reconnects ("reconnecting"), where
    // Redisson's pool would open another connection.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let unlocked = lock.unlock(T1).await;
    let error = format!("{unlocked:?}");
    assert!(
        error.contains(demoted_unlock_error(version)),
        "{version}: {error}"
    );
    let mut sent = Vec::new();
    monitor.collect(&mut sent, expected.len()).await;
    monitor.finish(&mut sent).await;
    let label = format!("{version}, unlock on a demoted primary");
    assert_sequence(&label, &expected, &words(sent));
}

/// What the unlock on a demoted primary fails with once its attempts run
/// out: the batch's last error, the `WAIT`'s, until 3.45.x; its first,
/// the script's `READONLY`, from 3.46.0 (commit 31e255d0f,
/// `batch-first-error`), which 3.27.1+ retries too (#5396).
pub(super) fn demoted_unlock_error(version: &str) -> &'static str {
    let release: lockcore::Release = version.parse().unwrap();
    if release.has(lockcore::Switch::BatchFirstError) {
        "READONLY You can't write against a read only replica."
    } else {
        "ERR WAIT cannot be used with replica instances"
    }
}

pub(super) fn is_wait(command: &[Arg]) -> bool {
    matches!(command.first(), Some(Arg::Word("WAIT")))
}

/// `--redisson 3.45.0`: the unlock's batch (`EVAL`, `WAIT 1 1000`) once,
/// failing with the replica's `WAIT` error (Redisson PR #6488's defect).
#[tokio::test]
async fn redisson_3_45_0_unlock_on_a_demoted_primary() {
    proves_unlock_on_demoted_primary("3.45.0", 1).await;
}

/// `--redisson 3.45.1`: the same batch sent four times, 1.5 s apart,
/// before the unlock fails (Redisson would have moved to the new primary
/// on `+switch-master` meanwhile; lockcore's client has no sentinel
/// manager, so here every retry meets the demoted primary).
#[tokio::test]
async fn redisson_3_45_1_unlock_on_a_demoted_primary() {
    proves_unlock_on_demoted_primary("3.45.1", 4).await;
}

/// `--redisson 4.7.0`: the batch five times (`retryAttempts` 4), after
/// pauses of `EqualJitterDelay(1 s, 2 s)`, as `EVALSHA` after one `SCRIPT
/// LOAD` of the unlock script on the demoted primary, failing with the
/// script's `READONLY` (the batch's first error).
#[tokio::test]
async fn redisson_4_7_0_unlock_on_a_demoted_primary() {
    proves_unlock_on_demoted_primary("4.7.0", 5).await;
}

/// The release's defaults with one replica, as a master-slave or
/// Sentinel config gives Redisson.
fn with_replica(version: &str) -> Config {
    Config::builder()
        .release(version.parse::<Release>().unwrap())
        .replicas(1)
        .build()
        .unwrap()
}
