//! The RT class in the engine: an RT task's queueing, accounting and
//! preemption, RR's time slice, and RT throttling's bandwidth period.
//! Where RT tasks go (placement, push, pull) is the scheduler's
//! (`sched::rt`); this carries it out.

use super::task::TaskState;
use super::{Event, Sim};
use crate::counters::{Counter, Reason};
use crate::policy::Feature;
use crate::sched::rt;
use crate::sched::rt_rq::{RR_TIMESLICE_NS, RT_PERIOD_NS};

impl Sim {
    /// Whether `task` is in the RT class.
    pub(crate) fn is_rt(&self, task: usize) -> bool {
        self.tasks[task].sched.rt.is_some()
    }

    /// The task running on `cpu`, of either class.
    pub(crate) fn curr_of(&self, cpu: usize) -> Option<usize> {
        self.cpus[cpu].rt.curr.or(self.cpus[cpu].rq.curr)
    }

    /// enqueue_task_rt: `task` is runnable on `cpu`'s RT queue.
    pub(super) fn enqueue_rt(&mut self, task: usize, cpu: usize) {
        let prio = self.tasks[task].sched.rt.expect("an RT task").prio;
        if self.tasks[task].cpu != cpu {
            self.tasks[task].migrations += 1;
            self.tasks[task].cpu = cpu;
        }
        self.cpus[cpu].rt.enqueue(task, prio);
        self.tasks[task].state = TaskState::Queued(cpu);
        self.note_idle(cpu);
        self.arm_rt_period();
    }

    /// The running RT task of `cpu` leaves its queue (blocks or exits);
    /// if the CPU's RT priority dropped below it, it pulls waiting RT
    /// tasks from crowded CPUs (need_pull_rt_task, pull_rt_task).
    pub(super) fn dequeue_rt_curr(&mut self, cpu: usize, task: usize) {
        self.account_rt(cpu);
        let prio = self.tasks[task].sched.rt.expect("an RT task").prio;
        self.cpus[cpu].rt.dequeue(task);
        self.note_idle(cpu);
        if self.cpus[cpu].rt.highest_prio() > prio {
            rt::pull_rt_task(self, cpu);
        }
    }

    /// task_woken_rt: a woken RT task that does not run at once, behind an
    /// RT task that cannot move or outranks it, makes its CPU push.
    pub(super) fn rt_woken(&mut self, cpu: usize, task: usize, preempted: bool) {
        let Some(p) = self.tasks[task].sched.rt else {
            return;
        };
        let Some(curr) = self.cpus[cpu].rt.curr else {
            return;
        };
        if preempted || self.cpus[cpu].need_resched || self.affinity[task].len() < 2 {
            return;
        }
        let c = self.tasks[curr].sched.rt.expect("an RT task").prio;
        if self.affinity[curr].len() < 2 || c <= p.prio {
            rt::push_rt_tasks(self, cpu);
        }
    }

    /// Moves queued RT `task` from `from`'s queue to `to`'s: a push or a
    /// sched_setaffinity by `from` (which reschedules `to` by IPI), or a
    /// pull by `to` itself.
    pub(super) fn migrate_rt(&mut self, task: usize, from: usize, to: usize, reason: Reason) {
        self.cpus[from].rt.dequeue(task);
        self.note_idle(from);
        self.enqueue_rt(task, to);
        self.trace_migrate(task, from, to, reason);
        let remote = (reason != Reason::RtPull).then_some(from);
        self.notify_enqueued(to, task, remote, false);
    }

    /// update_curr_rt: the running RT task's time since it was last
    /// accounted counts against its CPU's RT bandwidth; past the runtime
    /// (after borrowing, under RT_RUNTIME_SHARE) the queue is throttled
    /// until the period ends. Returns whether it was throttled now.
    pub(super) fn account_rt(&mut self, cpu: usize) -> bool {
        let now = self.now;
        let q = &mut self.cpus[cpu].rt;
        let Some(curr) = q.curr else {
            return false;
        };
        let delta = now - q.exec_start_ns;
        q.exec_start_ns = now;
        q.rt_time_ns += delta;
        self.ents[curr].sum_exec_ns += delta;
        if q.throttled || q.rt_time_ns <= q.rt_runtime_ns {
            return false;
        }
        if self.policy.era.rules().rt_runtime_share_always
            || self.policy.features.has(Feature::RtRuntimeShare)
        {
            rt::borrow_runtime(self, cpu);
        }
        let q = &mut self.cpus[cpu].rt;
        if q.rt_time_ns <= q.rt_runtime_ns {
            return false;
        }
        q.throttled = true;
        self.counters.count(Counter::RtThrottled);
        true
    }

    /// The RT part of the tick (task_tick_rt): account the running RT
    /// task; an RR task whose slice is used goes behind its equals.
    /// Returns whether `cpu` must reschedule.
    pub(super) fn rt_tick(&mut self, cpu: usize) -> bool {
        let Some(curr) = self.cpus[cpu].rt.curr else {
            return false;
        };
        if self.account_rt(cpu) {
            return true;
        }
        if !self.tasks[curr].sched.rt.expect("an RT task").rr {
            return false;
        }
        let tick = self.policy.tunables.tick_ns();
        let t = &mut self.tasks[curr];
        t.rr_slice_ns = t.rr_slice_ns.saturating_sub(tick);
        if t.rr_slice_ns > 0 {
            return false;
        }
        t.rr_slice_ns = RR_TIMESLICE_NS;
        if !self.cpus[cpu].rt.has_peer(curr) {
            return false;
        }
        self.cpus[cpu].rt.requeue_tail(curr);
        true
    }

    /// check_preempt_curr across classes: an RT task preempts any fair
    /// task, and an RT task of lower priority (a higher number).
    pub(super) fn rt_preempts(&self, cpu: usize, task: usize) -> bool {
        let Some(p) = self.tasks[task].sched.rt else {
            return false;
        };
        match self.cpus[cpu].rt.curr {
            Some(curr) => p.prio < self.tasks[curr].sched.rt.expect("an RT task").prio,
            None => self.cpus[cpu].rq.curr.is_some(),
        }
    }

    /// The RT queue may run now: it has tasks and is not throttled.
    pub(super) fn rt_runnable(&self, cpu: usize) -> bool {
        let q = &self.cpus[cpu].rt;
        q.nr_running() > 0 && !q.throttled
    }

    /// The RT bandwidth period starts ticking with the first RT task.
    fn arm_rt_period(&mut self) {
        if !self.rt_period_armed {
            self.rt_period_armed = true;
            let next = (self.now / RT_PERIOD_NS + 1) * RT_PERIOD_NS;
            self.queue.push(next, Event::RtPeriod);
        }
    }

    /// sched_rt_period_timer / do_sched_rt_period_timer: each CPU's RT time
    /// is paid back by its runtime; a throttled queue with time left runs
    /// again (its CPU reschedules, or wakes).
    pub(crate) fn rt_period(&mut self) {
        let mut idle = true;
        for cpu in 0..self.cpus.len() {
            self.account_rt(cpu);
            let q = &mut self.cpus[cpu].rt;
            q.rt_time_ns = q.rt_time_ns.saturating_sub(q.rt_runtime_ns);
            if q.throttled && q.rt_time_ns < q.rt_runtime_ns {
                q.throttled = false;
                if let Some(t) = q.pick() {
                    self.notify_enqueued(cpu, t, None, false);
                }
            }
            let q = &self.cpus[cpu].rt;
            idle &= q.rt_time_ns == 0 && q.nr_running() == 0;
        }
        // With no RT time to pay back and no RT task, the timer stops.
        if idle {
            self.rt_period_armed = false;
        } else {
            self.queue.push(self.now + RT_PERIOD_NS, Event::RtPeriod);
        }
    }
}
