//! `empty-chunk-completes` (Redisson 3.46.0, #6506, commit 9c1bdbf65).
//!
//! `LockTask.renew` (3.44.0 to 3.45.x) builds a chunk from the keys it
//! read, skipping each whose entry has no thread left (and, from 3.45.1,
//! each whose entry is gone), then routes the chunk by `keys.get(0)`. When
//! every key was skipped, the list is empty and `get(0)` throws
//! `IndexOutOfBoundsException`. In the round's first chunk that happens on
//! the timer's thread, inside `RenewalTask.run`, before the future whose
//! `whenComplete` sets the next round exists: nothing catches it, `running`
//! stays true, no round is ever set again and no later lock starts one,
//! until the map empties. Under `interleave` it takes a lock taken while
//! the round reads the map (not among the keys read) and an unlock whose
//! cancel then removes every entry the round read: the new lock is never
//! renewed. 3.46.0 completes the chunk instead.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "empty-chunk-completes",
    since: Some(Version::new(3, 46, 0)),
    upstream: "#6506",
    summary: "a batched round whose keys were all unlocked while it read the map ends quietly (3.44.0 to 3.45.x: an IndexOutOfBoundsException that stopped renewal of every lock of the client)",
    fixes: true,
};

#[cfg(test)]
mod tests {
    use crate::Value;
    use crate::machine::harness::{Harness, release};
    use crate::{Call, Purpose, ThreadId};

    /// t1 holds "a"; the round reads the key and pauses; t2 takes "b" (the
    /// chain runs, so it starts none) and t1 unlocks "a", whose entry goes
    /// while the map keeps "b"; the round goes on and finds nothing to
    /// renew among the keys it read. The renewals of "b" sent over the
    /// next rounds.
    fn renewals_of_b(version: &str) -> usize {
        let mut h = Harness::short(release(version));
        h.m.interleave(true);
        h.hold_steps = true;
        h.acquire(ThreadId(1), "a");
        h.advance(1_000);
        let paused = h.take_steps();
        assert_eq!(paused.len(), 1, "the round pauses once");
        h.acquire(ThreadId(2), "b");
        h.call(ThreadId(1), "a", Call::Unlock).unwrap();
        let unlock = h.expect(Purpose::Unlock);
        h.reply(unlock, Value::Int(1));
        for step in h.take_steps() {
            h.resume(step);
        }
        for step in paused {
            h.resume(step);
        }
        h.m.interleave(false);
        let mut renewals = 0;
        for _ in 0..4 {
            h.advance(1_000);
            while let Some(output) = h.next() {
                if let crate::Output::Send {
                    request,
                    purpose: Purpose::Renew,
                    ..
                } = output
                {
                    renewals += 1;
                    h.reply(request, Value::Array(vec![Value::Int(1)]));
                }
            }
        }
        renewals
    }

    /// 3.45.1 skips the removed "a", the chunk is empty, the round throws
    /// and "b" is never renewed; 3.46.0 ends the round and renews "b".
    #[test]
    fn from_3_46_0_an_empty_chunk_ends_the_round_quietly() {
        assert_eq!(renewals_of_b("3.45.1"), 0);
        assert!(renewals_of_b("3.46.0") >= 3);
    }
}
