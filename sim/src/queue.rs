//! The event queue: what happens next, in virtual-time order.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use crate::SimTime;

/// Pending events ordered by `(time, sequence number)`: two events due at
/// the same instant pop in the order they were pushed, so a run never
/// depends on the heap's internal layout.
#[derive(Debug)]
pub(crate) struct EventQueue<E> {
    heap: BinaryHeap<Reverse<Entry<E>>>,
    next_seq: u64,
}

#[derive(Debug)]
struct Entry<E> {
    at: SimTime,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub(crate) fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(64),
            next_seq: 0,
        }
    }

    /// Schedules `event` at `at`.
    pub(crate) fn push(&mut self, at: SimTime, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Reverse(Entry { at, seq, event }));
    }

    /// The earliest event, if any; ties go to the one pushed first.
    pub(crate) fn pop(&mut self) -> Option<(SimTime, E)> {
        self.heap.pop().map(|Reverse(e)| (e.at, e.event))
    }

    /// When the earliest event is due.
    pub(crate) fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|Reverse(e)| e.at)
    }

    /// How many events are pending.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
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
}
