//! The event queue: what happens next, in virtual-time order.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::SimTime;

/// Pending events ordered by `(time, sequence number)`: two events due at
/// the same instant pop in the order they were pushed, so a run never
/// depends on the heap's internal layout.
///
/// The heap holds small keys (time, sequence, slot); the events themselves
/// wait in a slab whose slots are reused, so sifting moves 32 bytes rather
/// than whole events, and a run allocates slots only up to its peak.
#[derive(Debug)]
pub(crate) struct EventQueue<E> {
    heap: BinaryHeap<Due>,
    slots: Vec<Option<E>>,
    free: Vec<u32>,
    next_seq: u64,
}

/// An event's place in line: its time, then its sequence number, as one
/// 128-bit number (compared in two instructions, without the branch per
/// field that comparing them in turn takes: every push and pop compares
/// a few times per level of the heap), and its slot.
#[derive(Debug, Clone, Copy)]
struct Due {
    order: u128,
    slot: u32,
}

impl Due {
    fn new(at: SimTime, seq: u64, slot: u32) -> Due {
        Due {
            order: (u128::from(at.0) << 64) | u128::from(seq),
            slot,
        }
    }

    fn at(self) -> SimTime {
        SimTime((self.order >> 64) as u64)
    }
}

impl Ord for Due {
    /// Reversed, so the max-heap pops the earliest. Sequence numbers are
    /// unique: the slot never decides.
    fn cmp(&self, other: &Self) -> Ordering {
        other.order.cmp(&self.order)
    }
}

impl PartialEq for Due {
    /// As [`Ord`] has it: by the order alone.
    fn eq(&self, other: &Self) -> bool {
        self.order == other.order
    }
}

impl Eq for Due {}

impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub(crate) fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(64),
            slots: Vec::with_capacity(64),
            free: Vec::new(),
            next_seq: 0,
        }
    }

    /// Schedules `event` at `at`.
    pub(crate) fn push(&mut self, at: SimTime, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(event);
                slot
            }
            None => {
                self.slots.push(Some(event));
                // A run holds far fewer than 2^32 pending events: validation
                // bounds its threads, faults and steps.
                u32::try_from(self.slots.len() - 1).unwrap_or(u32::MAX)
            }
        };
        self.heap.push(Due::new(at, seq, slot));
    }

    /// The earliest event, if any; ties go to the one pushed first.
    pub(crate) fn pop(&mut self) -> Option<(SimTime, E)> {
        let due = self.heap.pop()?;
        let event = self.slots.get_mut(due.slot as usize)?.take()?;
        self.free.push(due.slot);
        Some((due.at(), event))
    }

    /// When the earliest event is due.
    #[cfg(test)]
    pub(crate) fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|due| due.at())
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
