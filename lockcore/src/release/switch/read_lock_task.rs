//! `read-lock-task` (Redisson 3.44.0, #6303, commit 597d604a3; the defect
//! is PR #6883's).
//!
//! 3.44.0 moved the read lock off `RLock`'s renewal onto `ReadLockTask`
//! (`machine/read_task.rs`): a chain of its own that renews every watchdog
//! read lock of the client in chunks, one EVAL per chunk. Its script
//! (read at tag redisson-3.44.0) loops over the hash's reader fields with
//! an inner `for i=counter, 1, -1` that shadows the outer pair index `i`,
//! so it extends `KEYS[i+1] .. ':' .. field .. ':rwlock_timeout:' .. i`
//! with `i` the hold number: for a count of 1 that is the first pair's
//! `{K}` (right for the first lock of the chunk, another lock's prefix for
//! the others), and for a count of 2 or more another pair's K or nil. Nil
//! fails the whole chunk ("attempt to concatenate field '?' (a nil
//! value)") after K's PEXPIRE ran: a re-entrant reader's K is renewed
//! every round, its timeout keys never, so once they expire the next read
//! unlock finds no live timeout and deletes K under the other readers
//! (as before #1604). The error ends the round; every entry is kept.
//!
//! From 3.44.0 a read unlock cancels in both chains: `ReadLockTask`'s
//! entry, and `super.cancelExpirationRenewal`'s in `LockTask` under the
//! raw name K, which is the write lock's entry.
//!
//! `read-renew-loop-fixed` (4.0.0) is the fix.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "read-lock-task",
    since: Some(Version::new(3, 44, 0)),
    upstream: "#6303 (commit 597d604a3)",
    summary: "read locks renew on ReadLockTask, their own batched chain, whose script reuses the outer loop variable: a re-entrant reader fails the chunk every round after K's PEXPIRE, and its timeout keys die",
    // Not a fix: it brought PR #6883's loop variable and PR #7251's queue.
    fixes: false,
};

#[cfg(test)]
pub(crate) mod tests {
    use crate::machine::harness::{Harness, release};
    use crate::script::LockScript;
    use crate::{Call, CallOutcome, Event, LockKind, LockName, Purpose, ThreadId, Value};

    pub(crate) const T1: ThreadId = ThreadId(1);
    pub(crate) const T2: ThreadId = ThreadId(2);

    pub(crate) fn read(name: &str) -> LockName {
        LockName::of_kind(name, LockKind::Read).unwrap()
    }

    /// Whether `word` names `script`: its text, or its SHA1 (3.46+).
    pub(crate) fn names(word: &str, script: LockScript) -> bool {
        word == script.text() || word == script.sha1()
    }

    /// The next renewal round's command, from the script text on.
    pub(crate) fn next_round(h: &mut Harness) -> (crate::RequestId, Vec<String>) {
        if let Some(at) = h.next_timer_at() {
            h.advance_to(at);
        }
        h.expect_send_of(Purpose::Renew)
    }

    /// `thread` unlocks `lock`'s read lock; Redis answers `reply`.
    pub(crate) fn read_unlock(h: &mut Harness, thread: ThreadId, lock: &str, reply: i64) {
        h.call_kind(thread, lock, LockKind::Read, Call::Unlock)
            .unwrap();
        let unlock = h.expect(Purpose::Unlock);
        h.reply(unlock, Value::Int(reply));
        let (_, result) = h.until_return(thread);
        assert!(matches!(result, Ok(CallOutcome::Unlocked { .. })), "{result:?}");
    }

    /// 3.44.0: two watchdog read locks are renewed by one EVAL of
    /// `ReadLockTask`'s script, `KEYS` (K, `{K}`) pairs in lock-name order,
    /// `ARGV` the lease and one lockName per lock; 3.43.0 renewed each on
    /// its own with the read renew script.
    #[test]
    fn from_3_44_0_read_locks_renew_in_one_chunk() {
        let mut h = Harness::short(release("3.44.0"));
        h.acquire_kind(T2, "b", LockKind::Read);
        h.acquire_kind(T1, "a", LockKind::Read);
        let (round, command) = next_round(&mut h);
        assert_eq!(command[1], LockScript::ReadRenewBatchShadowed.text());
        assert_eq!(
            &command[2..],
            ["4", "a", "{a}", "b", "{b}", "3000", "uuid-a:1", "uuid-a:2"]
        );
        h.reply(round, Value::Array(vec![Value::Int(1), Value::Int(1)]));
        assert_eq!(h.expect_event(), Event::Renewed { lock: read("a") });
        assert_eq!(h.expect_event(), Event::Renewed { lock: read("b") });
        let mut old = Harness::short(release("3.43.0"));
        old.acquire_kind(T1, "a", LockKind::Read);
        let (_, command) = next_round(&mut old);
        assert_eq!(command[1], LockScript::ReadRenew.text());
    }

    /// The chunk's error (the shadowed loop's) ends the round and keeps the
    /// entry: the next round sends the same chunk again.
    #[test]
    fn an_error_keeps_the_entry_for_the_next_round() {
        let mut h = Harness::short(release("3.44.0"));
        h.acquire_kind(T1, "a", LockKind::Read);
        let (round, first) = next_round(&mut h);
        let error = "ERR user_script:1: attempt to concatenate field '?' (a nil value)";
        h.reply(round, Value::Error(error.into()));
        h.expect_quiet();
        let (_, again) = next_round(&mut h);
        assert_eq!(first, again);
    }

    /// A read unlock cancels in both chains: the thread's write hold of
    /// the same K, renewed by `LockTask` under K, loses its renewal too,
    /// and nothing renews it after the read unlock (3.44.0 to 4.7.0).
    #[test]
    fn a_read_unlock_cancels_the_threads_write_renewal() {
        let mut h = Harness::short(release("4.7.0"));
        h.acquire_kind(T1, "a", LockKind::Write);
        h.acquire_call_kind(T1, "a", LockKind::Read, crate::machine::harness::lock_with_lease(60_000));
        let (round, command) = next_round(&mut h);
        assert_eq!(&command[2..], ["1", "a", "3000", "uuid-a:1:write"]);
        h.reply(round, Value::Array(vec![Value::Int(1)]));
        let write = LockName::of_kind("a", LockKind::Write).unwrap();
        assert_eq!(h.expect_event(), Event::Renewed { lock: write });
        read_unlock(&mut h, T1, "a", 1);
        h.advance(10_000);
        assert!(!h.sends().contains(&Purpose::Renew));
    }
}
