//! `read-entry-clears-queue` (Redisson 4.7.0, PR #7251, commit 8e1cd9b3a).
//!
//! "drop all thread id occurrences when read lock renewal stops":
//! `ReadLockEntry.addThreadId` appends the thread to `threadsQueue` on
//! every hold, and before 4.7.0 `removeThreadId` removed one occurrence
//! when the count reached 0. A reader that held K N times left N-1 stale
//! ids: the entry never emptied, the chain never stopped, and the stale
//! head, whose lockName and key prefix were gone, was sent with empty
//! words every round (3.44.0 to 3.52.x) or skipped (4.0.0+); either way
//! the client's other readers of K behind it were never renewed again.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "read-entry-clears-queue",
    since: Some(Version::new(4, 7, 0)),
    upstream: "PR #7251 (commit 8e1cd9b3a)",
    summary: "a reader's last unlock removes all its places in ReadLockEntry's queue, so a re-entrant reader leaves no stale head that blocks its siblings' renewal",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use super::super::read_lock_task::tests::{T1, T2, read_unlock};
    use crate::machine::harness::{Harness, release};
    use crate::{LockKind, Purpose, Value};

    /// Thread 1 reads K twice and leaves; thread 2 reads K. The lockNames
    /// sent over three rounds, each answered 1 when thread 2's is among
    /// them, else 0.
    fn renewals_after_reentrant_reader(version: &str) -> Vec<Vec<String>> {
        let mut h = Harness::short(release(version));
        h.acquire_kind(T1, "a", LockKind::Read);
        h.acquire_kind(T1, "a", LockKind::Read);
        read_unlock(&mut h, T1, "a", 0);
        read_unlock(&mut h, T1, "a", 1);
        h.acquire_kind(T2, "a", LockKind::Read);
        let mut sent = Vec::new();
        for _ in 0..3 {
            h.advance(1_000);
            let mut round = Vec::new();
            while let Some(output) = h.next() {
                if let crate::Output::Send {
                    request,
                    purpose: Purpose::Renew,
                    command,
                    ..
                } = output
                {
                    let words: Vec<String> = command[6..]
                        .iter()
                        .map(|w| String::from_utf8_lossy(w).into_owned())
                        .collect();
                    let held = words.iter().any(|w| w == "uuid-a:2");
                    h.reply(request, Value::Array(vec![Value::Int(i64::from(held))]));
                    round.extend(words);
                }
            }
            sent.push(round);
        }
        sent
    }

    /// 3.52.0 sends the stale head's empty lockName, 4.6.0 skips it: thread
    /// 2 is renewed by neither. 4.7.0 renews thread 2 every round.
    #[test]
    fn from_4_7_0_a_reentrant_reader_leaves_no_stale_head() {
        assert_eq!(renewals_after_reentrant_reader("3.52.0"), vec![vec![String::new()]; 3]);
        assert_eq!(renewals_after_reentrant_reader("4.6.0"), vec![Vec::<String>::new(); 3]);
        let own = vec!["1".to_owned(), "uuid-a:2".to_owned()];
        assert_eq!(renewals_after_reentrant_reader("4.7.0"), vec![own; 3]);
    }
}
