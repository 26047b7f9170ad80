//! The RT class's data (kernel/sched/rt.c, sched.h): a task's RT
//! parameters, each CPU's queue of runnable RT tasks by priority and its
//! bandwidth, and the class's constants. Where RT tasks go is `rt`.
//!
//! Priorities are the kernel's: 0 is the highest, an rt_priority of r is
//! 99 - r.

use crate::workload::program::{RtPolicy, RtSpec};

/// One priority level past the lowest RT priority (MAX_RT_PRIO).
pub const MAX_RT_PRIO: u8 = 100;
/// SCHED_RR's time slice (RR_TIMESLICE: 100 ms).
pub const RR_TIMESLICE_NS: u64 = 100_000_000;
/// sched_rt_period_us and sched_rt_runtime_us, the distributions' default.
pub const RT_PERIOD_NS: u64 = 1_000_000_000;
pub const RT_RUNTIME_NS: u64 = 950_000_000;

/// An RT task's class parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtParams {
    /// Kernel priority: 99 - rt_priority (0 the highest).
    pub prio: u8,
    /// SCHED_RR (a time slice among equals), else SCHED_FIFO.
    pub rr: bool,
}

impl RtParams {
    pub fn new(rt_priority: u8, rr: bool) -> Self {
        debug_assert!((1..=99).contains(&rt_priority));
        RtParams {
            prio: 99 - rt_priority,
            rr,
        }
    }
}

/// The task language's RT class as the scheduler's parameters, and back.
impl From<RtSpec> for RtParams {
    fn from(s: RtSpec) -> Self {
        RtParams::new(s.priority, s.policy == RtPolicy::Rr)
    }
}

impl From<RtParams> for RtSpec {
    fn from(r: RtParams) -> Self {
        RtSpec {
            policy: if r.rr { RtPolicy::Rr } else { RtPolicy::Fifo },
            priority: 99 - r.prio,
        }
    }
}

/// A CPU's RT run queue (rt_rq): its runnable RT tasks, the running one
/// among them as the kernel keeps it, in priority then arrival order, and
/// its bandwidth (RT throttling) for the current period.
#[derive(Debug, Clone)]
pub struct RtRq {
    /// (prio, place, task), sorted: each priority's list, head first (a
    /// place below zero was put at the head).
    queue: Vec<(u8, i64, usize)>,
    arrivals: i64,
    /// The RT task running, if one is.
    pub curr: Option<usize>,
    /// When `curr`'s run time was last accounted (update_curr_rt).
    pub exec_start_ns: u64,
    /// RT run time this period, and what it may use (sched_rt_runtime,
    /// which RT_RUNTIME_SHARE lends between CPUs).
    pub rt_time_ns: u64,
    pub rt_runtime_ns: u64,
    /// Out of runtime until the period ends: its tasks are not picked.
    pub throttled: bool,
}

impl Default for RtRq {
    fn default() -> Self {
        RtRq {
            queue: Vec::new(),
            arrivals: 0,
            curr: None,
            exec_start_ns: 0,
            rt_time_ns: 0,
            rt_runtime_ns: RT_RUNTIME_NS,
            throttled: false,
        }
    }
}

impl RtRq {
    /// Enqueues at the tail of its priority's list.
    pub fn enqueue(&mut self, task: usize, prio: u8) {
        self.arrivals += 1;
        self.insert((prio, self.arrivals, task));
    }

    /// Enqueues at the head of its priority's list (ENQUEUE_HEAD: a
    /// running task whose priority was lowered keeps its turn).
    pub fn enqueue_head(&mut self, task: usize, prio: u8) {
        self.arrivals += 1;
        self.insert((prio, -self.arrivals, task));
    }

    fn insert(&mut self, item: (u8, i64, usize)) {
        let at = self.queue.partition_point(|&x| x < item);
        self.queue.insert(at, item);
    }

    pub fn dequeue(&mut self, task: usize) {
        let at = self
            .queue
            .iter()
            .position(|&(_, _, t)| t == task)
            .expect("an RT task dequeued where it is queued");
        self.queue.remove(at);
        if self.curr == Some(task) {
            self.curr = None;
        }
    }

    /// requeue_task_rt: to the tail of its priority's list (a yield, an
    /// RR slice's end).
    pub fn requeue_tail(&mut self, task: usize) {
        let prio = self.prio_of(task).expect("queued");
        let curr = self.curr;
        self.dequeue(task);
        self.enqueue(task, prio);
        self.curr = curr;
    }

    fn prio_of(&self, task: usize) -> Option<u8> {
        self.queue
            .iter()
            .find(|&&(_, _, t)| t == task)
            .map(|&(p, _, _)| p)
    }

    pub fn nr_running(&self) -> usize {
        self.queue.len()
    }

    /// pick_next_rt_entity: the head of the highest priority's list.
    pub fn pick(&self) -> Option<usize> {
        self.queue.first().map(|&(_, _, t)| t)
    }

    /// rt_rq->highest_prio.curr: the highest priority queued (MAX_RT_PRIO
    /// when none).
    pub fn highest_prio(&self) -> u8 {
        self.queue.first().map_or(MAX_RT_PRIO, |&(p, _, _)| p)
    }

    /// rt_rq->highest_prio.next: the highest priority of the tasks queued
    /// and not running (the pushable ones' best).
    pub fn next_prio(&self) -> u8 {
        self.waiting().next().map_or(MAX_RT_PRIO, |(p, _)| p)
    }

    /// Queued and not running, best first.
    pub fn waiting(&self) -> impl Iterator<Item = (u8, usize)> + '_ {
        self.queue
            .iter()
            .filter(move |&&(_, _, t)| Some(t) != self.curr)
            .map(|&(p, _, t)| (p, t))
    }

    /// Whether another task shares `task`'s priority (an RR slice's end
    /// requeues it only then).
    pub fn has_peer(&self, task: usize) -> bool {
        let Some(p) = self.prio_of(task) else {
            return false;
        };
        self.queue.iter().any(|&(q, _, t)| q == p && t != task)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_queue_picks_by_priority_then_arrival_and_requeues_to_its_lists_tail() {
        let mut rq = RtRq::default();
        rq.enqueue(1, 50);
        rq.enqueue(2, 10);
        rq.enqueue(3, 50);
        assert_eq!(rq.pick(), Some(2));
        assert_eq!((rq.highest_prio(), rq.nr_running()), (10, 3));
        rq.curr = Some(2);
        assert_eq!(rq.next_prio(), 50, "the running task is not waiting");
        assert!(!rq.has_peer(2) && rq.has_peer(1));
        rq.dequeue(2);
        assert_eq!(rq.curr, None);
        rq.curr = Some(1);
        rq.requeue_tail(1);
        assert_eq!(rq.pick(), Some(3), "1 went behind its equal");
        assert_eq!(rq.curr, Some(1), "still running until the switch");
        assert_eq!(RtParams::new(99, false).prio, 0);
        assert_eq!(RtParams::new(1, true).prio, 98);
    }
}
