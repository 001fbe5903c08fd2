//! The keys and arguments of the lock family's scripts (`RFairLock`,
//! `RFencedLock`, `RSpinLock`) in the generated script calls, so the
//! native forms meet real Redis's Lua on the same calls.

use fake_redis::LockScript;

/// The fair lock's queue and timeout set: keys no other generated command
/// reads, so a score computed from a PTTL (which may differ by a
/// millisecond between the two servers) shows only through the scripts'
/// integer replies, which are compared with the timing tolerance.
const QUEUE: &str = "fq";
const TIMEOUTS: &str = "ft";
/// The client's `currentTimeMillis`: fixed, so the purge's comparisons
/// are the same on both servers.
const NOW: &str = "100000";

/// `KEYS` and `ARGV` for `script`: `k1` the lock, `k2` the token or latch
/// key (now and then another type), `lease` also the wait, `field` the
/// caller, `publish` the publish command.
pub(crate) fn keys_and_args(
    script: LockScript,
    k1: String,
    k2: String,
    lease: String,
    field: String,
    publish: String,
) -> (Vec<String>, Vec<String>) {
    let s = |t: &str| t.to_owned();
    let fair = |k1: String| vec![k1, s(QUEUE), s(TIMEOUTS)];
    match script {
        LockScript::FairAcquireFailed => (vec![s(QUEUE), s(TIMEOUTS)], vec![field, lease]),
        LockScript::FairTryAcquire => (fair(k1), vec![lease.clone(), field, s(NOW), lease]),
        LockScript::FairAcquire | LockScript::FairAcquireUnscoredLast => {
            (fair(k1), vec![lease.clone(), field, lease, s(NOW)])
        }
        LockScript::FairUnlock => {
            let mut keys = fair(k1);
            keys.extend([s("ch"), k2]);
            let argv = vec![s("0"), lease.clone(), field, s(NOW), publish, lease];
            (keys, argv)
        }
        LockScript::FairForceUnlock => {
            let mut keys = fair(k1);
            keys.push(s("ch"));
            (keys, vec![s("0"), s(NOW), publish])
        }
        LockScript::SpinUnlockLatched => (vec![k1, k2], vec![lease.clone(), field, lease]),
        LockScript::SpinForceUnlock => (vec![k1], vec![]),
        LockScript::FencedAcquire | LockScript::FencedAcquireToken => {
            (vec![k1, k2], vec![lease, field])
        }
        // The spin lock's acquire and unlock; the `RLock` scripts have
        // arms of their own in `generate`.
        _ => (vec![k1], vec![lease, field]),
    }
}
