//! The event queue: what happens next, in virtual-time order.

use crate::SimTime;

/// Pending events ordered by `(time, order pushed)`: two events due at
/// the same instant pop in the order they were pushed, so a run never
/// depends on the queue's internal layout.
///
/// A radix heap on time: virtual time never runs backwards, so every time
/// pushed is at least the last one taken, and a time's bucket is the
/// highest bit in which it differs from that last time. A push appends
/// its slot to a bucket (no sifting); a pop takes the lowest non-empty
/// bucket (one bit search of a mask) and, when that bucket holds more than
/// one event at different times, spreads it over the buckets below, each
/// event moving down only as the clock nears it. A binary heap paid a
/// sift of several levels on every push and pop.
///
/// Ties need no sequence number in the key: a bucket is a first-in,
/// first-out list, and events due at one instant always share a bucket
/// (they differ from any `last` in the same bits), so they are appended,
/// spread and taken in push order. Keys of one 64-bit word, where a
/// (time, sequence) key took two, halve the arithmetic of every push
/// and pop; the order is exactly the sorted order, whatever the buckets'
/// layout.
///
/// The events wait in a slab whose slots are reused, and a bucket is a
/// list linked through its slots: filing and spreading move no event and
/// allocate nothing, and a run allocates slots only up to its peak.
#[derive(Debug)]
pub(crate) struct EventQueue<E> {
    /// The first slot of each bucket's list: `heads[i]` holds the events
    /// whose time's highest bit differing from `last` is bit `i - 1`,
    /// `heads[0]` those due at `last` itself.
    heads: [u32; BUCKETS],
    /// The last slot of each non-empty bucket's list, where a push goes.
    tails: [u32; BUCKETS],
    /// Bit `i % 64` of word `i / 64` set when bucket `i` is not empty
    /// (two words: a shift of a 128-bit mask by a variable amount costs a
    /// dozen instructions).
    filled: [u64; 2],
    /// The last time taken (popped, or the earliest of a spread bucket):
    /// no pending event is due before it.
    last: u64,
    slots: Vec<Slot<E>>,
    free: Vec<u32>,
}

/// 64 bits of time, plus bucket 0 for the events due at `last`.
const BUCKETS: usize = 65;

/// The end of a bucket's list.
const NONE: u32 = u32::MAX;

/// A pending event, when it is due (µs) and the next slot of its bucket.
#[derive(Debug)]
struct Slot<E> {
    at: u64,
    next: u32,
    event: Option<E>,
}

/// The bucket of time `at` when the last time taken is `last` (`at >=
/// last`).
fn bucket_of(at: u64, last: u64) -> usize {
    (64 - (at ^ last).leading_zeros()) as usize
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub(crate) fn new() -> Self {
        EventQueue {
            heads: [NONE; BUCKETS],
            tails: [NONE; BUCKETS],
            filled: [0; 2],
            last: 0,
            slots: Vec::with_capacity(64),
            free: Vec::new(),
        }
    }

    /// Schedules `event` at `at`.
    pub(crate) fn push(&mut self, at: SimTime, event: E) {
        let slot = Slot {
            at: at.0,
            next: NONE,
            event: Some(event),
        };
        let slot = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                // A run holds far fewer than 2^32 pending events: validation
                // bounds its threads, faults and steps.
                u32::try_from(self.slots.len() - 1).unwrap_or(NONE)
            }
        };
        if at.0 < self.last {
            // Scheduled before the last event taken: the world never does
            // this (time only moves forward), but the order stays exact if
            // it did.
            self.rebase(at.0);
        }
        self.append(slot);
    }

    /// The earliest event, if any; ties go to the one pushed first.
    pub(crate) fn pop(&mut self) -> Option<(SimTime, E)> {
        let mut i = match self.filled {
            [0, 0] => return None,
            [0, high] => 64 + high.trailing_zeros() as usize,
            [low, _] => low.trailing_zeros() as usize,
        };
        if i > 0 && self.slots.get(self.heads[i] as usize)?.next != NONE {
            self.spread(i);
            i = 0;
        }
        // The lowest bucket's head is the earliest event: bucket 0 holds
        // only events due at `last`, in push order, and a bucket above 0
        // that reaches here holds one event. Taking that one moves `last`
        // to it without refiling the rest: every other time differs from
        // it in a higher bit than `i`, as it did from the old `last`.
        let head = self.heads[i];
        let slot = self.slots.get_mut(head as usize)?;
        self.heads[i] = slot.next;
        if slot.next == NONE {
            self.filled[i / 64] &= !(1 << (i % 64));
        }
        self.last = slot.at;
        let at = SimTime(slot.at);
        let event = slot.event.take()?;
        self.free.push(head);
        Some((at, event))
    }

    /// Spreads bucket `i` (more than one event) over the buckets below
    /// it: `last` becomes its earliest time, whose events land in bucket
    /// 0 in the order they were pushed.
    fn spread(&mut self, i: usize) {
        let head = self.heads[i];
        let mut min = u64::MAX;
        let mut at = head;
        while let Some(slot) = self.slots.get(at as usize) {
            min = min.min(slot.at);
            at = slot.next;
        }
        self.last = min;
        self.heads[i] = NONE;
        self.filled[i / 64] &= !(1 << (i % 64));
        let mut at = head;
        while let Some(slot) = self.slots.get(at as usize) {
            let next = slot.next;
            self.append(at);
            at = next;
        }
    }

    /// Refiles every event against a new, earlier `last`, bucket by bucket
    /// and each list in order (events due at one instant share a bucket,
    /// so they keep their order). Kept out of line: the world never calls
    /// for it, and its code would only crowd the instruction cache around
    /// every push.
    #[cold]
    #[inline(never)]
    fn rebase(&mut self, last: u64) {
        let mut pending = Vec::new();
        for i in 0..BUCKETS {
            let mut at = self.heads[i];
            while let Some(slot) = self.slots.get(at as usize) {
                pending.push(at);
                at = slot.next;
            }
            self.heads[i] = NONE;
        }
        self.filled = [0; 2];
        self.last = last;
        for at in pending {
            self.append(at);
        }
    }

    /// Appends `slot` to the bucket its time belongs to.
    fn append(&mut self, slot: u32) {
        let Some(s) = self.slots.get_mut(slot as usize) else {
            return;
        };
        s.next = NONE;
        let i = bucket_of(s.at, self.last);
        if self.heads[i] == NONE {
            self.heads[i] = slot;
            self.filled[i / 64] |= 1 << (i % 64);
        } else if let Some(tail) = self.slots.get_mut(self.tails[i] as usize) {
            tail.next = slot;
        }
        self.tails[i] = slot;
    }

    /// The keys pending, bucket by bucket.
    #[cfg(test)]
    fn keys(&self) -> Vec<u64> {
        let mut keys = Vec::new();
        for &head in &self.heads {
            let mut at = head;
            while let Some(slot) = self.slots.get(at as usize) {
                keys.push(slot.at);
                at = slot.next;
            }
        }
        keys
    }

    /// When the earliest event is due.
    #[cfg(test)]
    pub(crate) fn peek_time(&self) -> Option<SimTime> {
        self.keys().into_iter().min().map(SimTime)
    }

    /// How many events are pending.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.keys().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Events pushed out of order come out by time: the engine jumps from
    /// one event to the next, whatever order they were scheduled in.
    #[test]
    fn pops_in_time_order() {
        let mut q = EventQueue::new();
        q.push(SimTime(30), "c");
        q.push(SimTime(10), "a");
        q.push(SimTime(20), "b");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![(SimTime(10), "a"), (SimTime(20), "b"), (SimTime(30), "c")]
        );
    }

    /// Ties at one instant keep push order, which is
    /// what makes two runs of one seed identical.
    #[test]
    fn ties_keep_push_order() {
        let mut q = EventQueue::new();
        for i in 0..100 {
            q.push(SimTime(5), i);
        }
        q.push(SimTime(1), -1);
        assert_eq!(q.pop(), Some((SimTime(1), -1)));
        for i in 0..100 {
            assert_eq!(q.pop(), Some((SimTime(5), i)));
        }
        assert_eq!(q.pop(), None);
    }

    /// Time jumps: an event 40 s away is the next one, with nothing in
    /// between to step through.
    #[test]
    fn time_jumps_to_the_next_event() {
        let mut q = EventQueue::new();
        q.push(SimTime::from_ms(40_000), ());
        assert_eq!(q.len(), 1);
        assert_eq!(q.peek_time(), Some(SimTime::from_ms(40_000)));
        assert_eq!(q.pop(), Some((SimTime::from_ms(40_000), ())));
        assert_eq!(q.peek_time(), None);
    }

    proptest::proptest! {
        /// Any interleaving of pushes and pops comes out as a sorted list
        /// by (time, push order) would: the buckets are the queue's
        /// business, the order is the run's. Times mostly move forward
        /// from the last pop (as the world's do), sometimes sit on it,
        /// and now and then go back before it.
        #[test]
        fn pops_as_a_sorted_list_would(ops in proptest::collection::vec((0u8..8, 0u64..5_000), 1..400)) {
            let mut q = EventQueue::new();
            let mut model: Vec<(u64, usize)> = Vec::new();
            let mut now = 0u64;
            for (n, (op, delta)) in ops.into_iter().enumerate() {
                match op {
                    0..=1 => {
                        model.sort();
                        let want = (!model.is_empty()).then(|| model.remove(0));
                        let got = q.pop().map(|(at, id)| (at.0, id));
                        proptest::prop_assert_eq!(got, want);
                        if let Some((at, _)) = got {
                            now = at;
                        }
                    }
                    2 => {
                        let at = now.saturating_sub(delta);
                        q.push(SimTime(at), n);
                        model.push((at, n));
                    }
                    3 => {
                        q.push(SimTime(now), n);
                        model.push((now, n));
                    }
                    _ => {
                        q.push(SimTime(now + delta % 64), n);
                        model.push((now + delta % 64, n));
                    }
                }
                proptest::prop_assert_eq!(q.len(), model.len());
            }
            model.sort();
            let rest: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(at, id)| (at.0, id)).collect();
            proptest::prop_assert_eq!(rest, model);
        }
    }
}
