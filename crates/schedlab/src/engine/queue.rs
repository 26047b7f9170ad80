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
    /// The RT bandwidth period ends (sched_rt_period_timer).
    RtPeriod,
}

/// An event as the heap holds it: 32 bytes, ordered by one 128-bit key
/// (time, then sequence number), so a sift moves and compares less than
/// a `(u64, u64, Event)` of 40 bytes compared field by field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    key: u128,
    kind: u8,
    a: u32,
    b: u64,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// CPU and task numbers are far below 2^32 (crate::limits).
fn narrow(n: usize) -> u32 {
    debug_assert!(u32::try_from(n).is_ok(), "{n} does not fit an event");
    n as u32
}

impl Entry {
    fn new(time: u64, seq: u64, e: Event) -> Self {
        let (kind, a, b) = match e {
            Event::SegmentDone { cpu, gen } => (0, narrow(cpu), gen),
            Event::IdleKick { cpu } => (1, narrow(cpu), 0),
            Event::IdleExitDone { cpu, gen } => (2, narrow(cpu), gen),
            Event::BalanceDone { cpu, gen } => (3, narrow(cpu), gen),
            Event::Tick { cpu } => (4, narrow(cpu), 0),
            Event::WakeArrive { cpu, task } => (5, narrow(cpu), task as u64),
            Event::Resched { cpu } => (6, narrow(cpu), 0),
            Event::Timer { task, gen } => (7, narrow(task), gen),
            Event::NohzKick { cpu } => (8, narrow(cpu), 0),
            Event::RtPeriod => (9, 0, 0),
        };
        Entry {
            key: (time as u128) << 64 | seq as u128,
            kind,
            a,
            b,
        }
    }

    fn time(&self) -> u64 {
        (self.key >> 64) as u64
    }

    fn event(&self) -> Event {
        let (a, b) = (self.a as usize, self.b);
        match self.kind {
            0 => Event::SegmentDone { cpu: a, gen: b },
            1 => Event::IdleKick { cpu: a },
            2 => Event::IdleExitDone { cpu: a, gen: b },
            3 => Event::BalanceDone { cpu: a, gen: b },
            4 => Event::Tick { cpu: a },
            5 => Event::WakeArrive {
                cpu: a,
                task: b as usize,
            },
            6 => Event::Resched { cpu: a },
            7 => Event::Timer { task: a, gen: b },
            8 => Event::NohzKick { cpu: a },
            _ => Event::RtPeriod,
        }
    }
}

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<Entry>>,
    seq: u64,
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, time: u64, event: Event) {
        self.seq += 1;
        self.heap.push(Reverse(Entry::new(time, self.seq, event)));
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        self.heap.pop().map(|Reverse(e)| (e.time(), e.event()))
    }

    #[inline]
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse(e)| e.time())
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

    #[test]
    fn every_event_comes_out_as_it_went_in() {
        let all = [
            Event::SegmentDone {
                cpu: 7,
                gen: u64::MAX,
            },
            Event::IdleKick { cpu: 1 },
            Event::IdleExitDone { cpu: 2, gen: 3 },
            Event::BalanceDone { cpu: 4, gen: 5 },
            Event::Tick { cpu: 6 },
            Event::WakeArrive {
                cpu: 8,
                task: 9_999,
            },
            Event::Resched { cpu: 10 },
            Event::Timer { task: 11, gen: 12 },
            Event::NohzKick { cpu: 4_095 },
        ];
        let mut q = EventQueue::default();
        for (i, e) in all.iter().enumerate() {
            q.push(u64::MAX - 10 + i as u64, *e);
        }
        for (i, e) in all.iter().enumerate() {
            assert_eq!(q.pop(), Some((u64::MAX - 10 + i as u64, *e)));
        }
    }

    proptest::proptest! {
        /// Whatever the pushes and pops interleaved, each pop is the
        /// earliest event queued, the first pushed among equal times.
        #[test]
        fn pops_in_time_then_push_order(ops in proptest::collection::vec((0u64..50, proptest::bool::ANY), 0..400)) {
            let mut q = EventQueue::default();
            let mut model: Vec<(u64, usize)> = Vec::new();
            for (i, (time, pop)) in ops.into_iter().enumerate() {
                if pop {
                    let want = model.iter().copied().min();
                    if let Some(w) = want {
                        model.retain(|&k| k != w);
                    }
                    let got = q.pop().map(|(t, e)| match e {
                        Event::Timer { task, .. } => (t, task),
                        other => panic!("pushed timers only, popped {other:?}"),
                    });
                    proptest::prop_assert_eq!(got, want);
                } else {
                    q.push(time, Event::Timer { task: i, gen: 0 });
                    model.push((time, i));
                }
                proptest::prop_assert_eq!(q.len(), model.len());
            }
        }
    }
}
