//! The event queue: ordered by (time, sequence number), so events at the
//! same instant run in the order they were scheduled and every run of one
//! experiment is identical.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// The running segment of a CPU ends (stale unless `gen` matches).
    SegmentDone { cpu: usize, gen: u64 },
    /// An idle CPU is woken (an IPI or a local interrupt).
    IdleKick { cpu: usize },
    /// A CPU finished leaving its idle state.
    IdleExitDone { cpu: usize, gen: u64 },
    /// A CPU finished balancing before idling (stale unless `gen` matches).
    BalanceDone { cpu: usize, gen: u64 },
    /// The scheduler tick.
    Tick { cpu: usize },
    /// A queued remote wakeup's IPI reaches its target.
    WakeArrive { cpu: usize, task: usize },
    /// A reschedule IPI reaches its target.
    Resched { cpu: usize },
    /// A sleeping task's timer fires (stale unless `gen` matches).
    Timer { task: usize, gen: u64 },
    /// A NOHZ idle-balance kick (4.15+) or nomination (2.6.28) reaches `cpu`.
    NohzKick { cpu: usize },
}

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(u64, u64, Event)>>,
    seq: u64,
}

impl EventQueue {
    pub fn push(&mut self, time: u64, event: Event) {
        self.seq += 1;
        self.heap.push(Reverse((time, self.seq, event)));
    }

    pub fn pop(&mut self) -> Option<(u64, Event)> {
        self.heap.pop().map(|Reverse((t, _, e))| (t, e))
    }

    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_insertion() {
        let mut q = EventQueue::default();
        q.push(5, Event::Tick { cpu: 1 });
        q.push(3, Event::Tick { cpu: 2 });
        q.push(5, Event::Tick { cpu: 0 });
        assert_eq!(q.pop(), Some((3, Event::Tick { cpu: 2 })));
        assert_eq!(q.pop(), Some((5, Event::Tick { cpu: 1 })));
        assert_eq!(q.pop(), Some((5, Event::Tick { cpu: 0 })));
        assert!(q.is_empty());
    }
}
