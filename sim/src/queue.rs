//! The event queue: what happens next, in virtual-time order.

use crate::SimTime;

/// Pending events ordered by `(time, sequence number)`: two events due at
/// the same instant pop in the order they were pushed, so a run never
/// depends on the queue's internal layout.
///
/// A radix heap: virtual time never runs backwards, so every key pushed is
/// at least the last one taken, and a key's bucket is the highest bit in
/// which it differs from that last key. A push links its slot into a
/// bucket (no sifting); a pop takes the lowest non-empty bucket (one bit
/// search of a mask) and, when that bucket holds more than one key,
/// spreads it over the buckets below, each key moving down only as the
/// clock nears it. A binary heap paid a sift of several levels on every
/// push and pop. Keys are unique (time, then sequence number, in one
/// 128-bit number), so the order is exactly the sorted order, whatever
/// the buckets' layout.
///
/// The events wait in a slab whose slots are reused, and a bucket is a
/// list linked through its slots: filing and spreading move no event and
/// allocate nothing, and a run allocates slots only up to its peak.
#[derive(Debug)]
pub(crate) struct EventQueue<E> {
    /// The first slot of each bucket's list: `heads[i]` holds the keys
    /// whose highest bit differing from `last` is bit `i - 1`, `heads[0]`
    /// the key equal to `last` (at most one).
    heads: [u32; BUCKETS],
    /// Bit `i` set when bucket `i` is not empty.
    filled: [u64; 3],
    /// The last key taken (popped, or the minimum of a spread bucket): no
    /// pending key is below it.
    last: u128,
    slots: Vec<Slot<E>>,
    free: Vec<u32>,
    next_seq: u64,
}

/// 128 bits of key, plus bucket 0 for the key equal to `last`.
const BUCKETS: usize = 129;

/// The end of a bucket's list.
const NONE: u32 = u32::MAX;

/// A pending event, its place in line (its time, then its sequence
/// number, as one 128-bit number) and the next slot of its bucket.
#[derive(Debug)]
struct Slot<E> {
    order: u128,
    next: u32,
    event: Option<E>,
}

fn order_of(at: SimTime, seq: u64) -> u128 {
    (u128::from(at.0) << 64) | u128::from(seq)
}

fn time_of(order: u128) -> SimTime {
    SimTime((order >> 64) as u64)
}

/// The bucket of `key` when the last key taken is `last` (`key >= last`).
fn bucket_of(key: u128, last: u128) -> usize {
    (128 - (key ^ last).leading_zeros()) as usize
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub(crate) fn new() -> Self {
        EventQueue {
            heads: [NONE; BUCKETS],
            filled: [0; 3],
            last: 0,
            slots: Vec::with_capacity(64),
            free: Vec::new(),
            next_seq: 0,
        }
    }

    /// Schedules `event` at `at`.
    pub(crate) fn push(&mut self, at: SimTime, event: E) {
        let order = order_of(at, self.next_seq);
        self.next_seq += 1;
        let slot = Slot {
            order,
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
        if order < self.last {
            // Scheduled before the last event taken: the world never does
            // this (time only moves forward), but the order stays exact if
            // it did.
            self.rebase(order);
        }
        self.file(slot);
    }

    /// The earliest event, if any; ties go to the one pushed first.
    pub(crate) fn pop(&mut self) -> Option<(SimTime, E)> {
        let mut i = self.lowest_filled()?;
        let mut head = self.heads[i];
        if i > 0 && self.slots.get(head as usize)?.next != NONE {
            self.spread(i);
            i = 0;
            head = self.heads[0];
        }
        // The lowest bucket holds one key, the minimum. Taking it from a
        // bucket above 0 moves `last` there without refiling the rest:
        // every other key differs from it in a higher bit than `i`, as it
        // did from the old `last`.
        let slot = self.slots.get_mut(head as usize)?;
        self.heads[i] = NONE;
        self.filled[i / 64] &= !(1 << (i % 64));
        self.last = slot.order;
        let at = time_of(slot.order);
        let event = slot.event.take()?;
        self.free.push(head);
        Some((at, event))
    }

    /// Spreads bucket `i` (more than one key) over the buckets below it:
    /// `last` becomes its minimum, which lands alone in bucket 0.
    fn spread(&mut self, i: usize) {
        let head = self.heads[i];
        let mut min = u128::MAX;
        let mut at = head;
        while let Some(slot) = self.slots.get(at as usize) {
            min = min.min(slot.order);
            at = slot.next;
        }
        self.last = min;
        self.heads[i] = NONE;
        self.filled[i / 64] &= !(1 << (i % 64));
        let mut at = head;
        while let Some(slot) = self.slots.get(at as usize) {
            let next = slot.next;
            self.file(at);
            at = next;
        }
    }

    /// Refiles every key against a new, lower `last`. Kept out of line:
    /// the world never calls for it, and its code would only crowd the
    /// instruction cache around every push.
    #[cold]
    #[inline(never)]
    fn rebase(&mut self, last: u128) {
        let mut pending = Vec::new();
        for i in 0..BUCKETS {
            let mut at = self.heads[i];
            while let Some(slot) = self.slots.get(at as usize) {
                pending.push(at);
                at = slot.next;
            }
            self.heads[i] = NONE;
        }
        self.filled = [0; 3];
        self.last = last;
        for at in pending {
            self.file(at);
        }
    }

    /// Links `slot` into the bucket its key belongs to.
    fn file(&mut self, slot: u32) {
        let Some(s) = self.slots.get_mut(slot as usize) else {
            return;
        };
        let i = bucket_of(s.order, self.last);
        s.next = self.heads[i];
        self.heads[i] = slot;
        self.filled[i / 64] |= 1 << (i % 64);
    }

    fn lowest_filled(&self) -> Option<usize> {
        self.filled
            .iter()
            .enumerate()
            .find(|(_, word)| **word != 0)
            .map(|(w, word)| w * 64 + word.trailing_zeros() as usize)
    }

    /// The keys pending, bucket by bucket.
    #[cfg(test)]
    fn keys(&self) -> Vec<u128> {
        let mut keys = Vec::new();
        for &head in &self.heads {
            let mut at = head;
            while let Some(slot) = self.slots.get(at as usize) {
                keys.push(slot.order);
                at = slot.next;
            }
        }
        keys
    }

    /// When the earliest event is due.
    #[cfg(test)]
    pub(crate) fn peek_time(&self) -> Option<SimTime> {
        self.keys().into_iter().min().map(time_of)
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

    /// Ties at one instant keep push order (the sequence number), which is
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
