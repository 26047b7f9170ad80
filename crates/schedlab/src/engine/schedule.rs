//! Switching CPUs between tasks: schedule and pick_next, the context
//! switch, preemption (at a segment's end, on wakeup), softirqs that
//! interrupt a segment, balancing before idling.

use super::cpu::{Acct, CpuState, Interrupted, SegKind};
use super::stats::TraceEvent;
use super::task::{Pending, TaskState};
use super::{Event, Sim};
use crate::cost::WORK_SCALE;
use crate::counters::Counter;
use crate::policy::Picker;

impl Sim {
    /// Continues the current task unless a reschedule is due.
    pub(crate) fn continue_or_preempt(&mut self, cpu: usize) {
        if self.cpus[cpu].need_resched {
            self.cpus[cpu].need_resched = false;
            self.schedule(cpu);
        } else {
            self.resume(cpu);
        }
    }

    /// Reschedules `cpu` now if its task is in user space, else at the end of
    /// its kernel segment.
    pub(crate) fn resched_local(&mut self, cpu: usize) {
        let c = &self.cpus[cpu];
        let Some(task) = self.curr_of(cpu) else {
            return;
        };
        if c.state != CpuState::Running {
            return;
        }
        match c.seg {
            Some(s) if s.kind == SegKind::User => {
                let left = self.stop_segment(cpu);
                self.tasks[task].compute_left += left;
                self.schedule(cpu);
            }
            _ => self.cpus[cpu].need_resched = true,
        }
    }

    /// Picks the next task on `cpu` (the current one, if any, goes back to
    /// the queue first) and switches to it, or idles.
    pub(crate) fn schedule(&mut self, cpu: usize) {
        self.cpus[cpu].need_resched = false;
        let prev = self.curr_of(cpu);
        self.touch_rq(cpu);
        if let Some(p) = prev {
            self.put_prev(cpu, p);
        }
        let mut next = self.pick_next(cpu);
        let mut balance_ns = 0;
        if next.is_none() {
            let newidle = self.sched_newidle_balance(cpu);
            balance_ns = newidle.cost_ns;
            if newidle.pulled {
                next = self.pick_next(cpu);
            }
        }
        match next {
            Some(n) => self.switch_to(cpu, prev, n, balance_ns),
            None if balance_ns > 0 => self.balance_before_idle(cpu, balance_ns),
            None => self.go_idle(cpu),
        }
    }

    /// The running `task` goes back to its queue, to be picked again or
    /// not (the fair queue brought up to date first, `touch_rq`).
    pub(super) fn put_prev(&mut self, cpu: usize, task: usize) {
        if self.is_rt(task) {
            // An RT task stays where it is in its list.
            self.account_rt(cpu);
            self.cpus[cpu].rt.curr = None;
        } else {
            self.touch_task(task);
            self.cpus[cpu].rq.put_prev(task, &self.ents);
        }
        self.tasks[task].state = TaskState::Queued(cpu);
    }

    /// Switches `cpu` from `prev` to `n`, after `kernel_ns` of kernel work
    /// the switch follows (a new-idle balance that pulled `n`).
    #[inline]
    pub(super) fn switch_to(&mut self, cpu: usize, prev: Option<usize>, n: usize, kernel_ns: u64) {
        self.touch_task(n);
        if self.is_rt(n) {
            let q = &mut self.cpus[cpu].rt;
            q.curr = Some(n);
            q.exec_start_ns = self.now;
        } else if prev == Some(n) && self.policy.era.rules().picker == Picker::Eevdf {
            self.cpus[cpu].rq.repick_curr(n, &self.ents);
        } else {
            self.cpus[cpu].rq.set_curr(n, &mut self.ents, self.now);
        }
        self.tasks[n].state = TaskState::Running(cpu);
        self.cpus[cpu].state = CpuState::Running;
        self.note_idle(cpu);
        if self.is_rt(n) {
            // The balance callback after picking an RT task: a crowded
            // CPU pushes the RT tasks waiting behind it.
            crate::sched::rt::push_rt_tasks(self, cpu);
        }
        if prev == Some(n) {
            self.resume(cpu);
            return;
        }
        self.counters.count(Counter::Switches);
        self.tasks[n].switches += 1;
        self.trace_event(TraceEvent::Switch {
            t: self.now,
            cpu,
            from: prev,
            to: Some(n),
        });
        let lazy_drop_ns = self.drop_idle_mm_ref(cpu);
        let mm = self.tasks[n].mm;
        let same = self.cpus[cpu].loaded_mm == Some(mm);
        self.cpus[cpu].loaded_mm = Some(mm);
        self.cpus[cpu].time.newidle_balance_ns += kernel_ns;
        let cost = self.cost.context_switch(same) + kernel_ns + lazy_drop_ns;
        self.start_segment(cpu, SegKind::Kernel, cost, Pending::SwitchIn);
    }

    /// A switch from the idle task drops its reference on the mm it kept
    /// loaded (finish_task_switch's mmdrop_lazy_tlb): the time to bring
    /// that mm's refcount line from the CPU that last wrote it. The same
    /// atomic on a line this CPU holds is in the measured switch costs.
    fn drop_idle_mm_ref(&mut self, cpu: usize) -> u64 {
        let c = &mut self.cpus[cpu];
        if !std::mem::take(&mut c.idle_mm_ref) {
            return 0;
        }
        let Some(lazy) = c.loaded_mm else {
            return 0;
        };
        match self.mms.write_count(lazy, cpu) {
            Some(from) => {
                self.counters.count(Counter::MmLineMoved);
                self.cost.atomic(&self.topo, Some(from), cpu)
            }
            None => 0,
        }
    }

    /// A CPU with nothing to run spends `ns` balancing (not idle meanwhile),
    /// then runs what was queued on it in that time, or idles.
    pub(super) fn balance_before_idle(&mut self, cpu: usize, ns: u64) {
        let now = self.now;
        let c = &mut self.cpus[cpu];
        c.state = CpuState::Balancing;
        c.time.newidle_balance_ns += ns;
        c.account(now, Some(Acct::Overhead));
        c.softirq_until = now + ns;
        c.gen += 1;
        let gen = c.gen;
        self.note_idle(cpu);
        self.queue.push(now + ns, Event::BalanceDone { cpu, gen });
    }

    pub(crate) fn balance_done(&mut self, cpu: usize) {
        let next = self.pick_next(cpu);
        match next {
            Some(n) => {
                self.touch_rq(cpu);
                self.switch_to(cpu, None, n, 0)
            }
            None => self.go_idle(cpu),
        }
    }

    /// A softirq takes `ns` of kernel time on a CPU running a task: the
    /// task's segment pauses and resumes when it returns (a reschedule
    /// asked for meanwhile happens then). Returns whether there was a
    /// segment to interrupt.
    pub(super) fn interrupt(&mut self, cpu: usize, ns: u64) -> bool {
        let Some(seg) = self.cpus[cpu].seg else {
            return false;
        };
        let task = self.curr_of(cpu).expect("a segment has a task");
        let left = self.stop_segment(cpu);
        if self.tasks[task].pending == Pending::IrqReturn {
            // Already in a softirq: it runs longer.
            self.start_work(
                cpu,
                SegKind::Kernel,
                left + ns * WORK_SCALE,
                0,
                Pending::IrqReturn,
            );
            return true;
        }
        let pending = std::mem::replace(&mut self.tasks[task].pending, Pending::None);
        self.cpus[cpu].interrupted = Some(Interrupted {
            kind: seg.kind,
            work: left,
            copy_share: seg.copy_share,
            pending,
        });
        self.start_segment(cpu, SegKind::Kernel, ns, Pending::IrqReturn);
        true
    }

    /// The softirq is done: a user segment gives way to a reschedule asked
    /// for meanwhile, anything else resumes where it was.
    pub(crate) fn irq_return(&mut self, cpu: usize, task: usize) {
        let Interrupted {
            kind,
            work,
            copy_share,
            pending,
        } = self.cpus[cpu]
            .interrupted
            .take()
            .expect("a softirq returns to what it interrupted");
        if kind == SegKind::User && self.cpus[cpu].need_resched {
            self.tasks[task].compute_left += work;
            self.tasks[task].pending = pending;
            self.cpus[cpu].need_resched = false;
            self.schedule(cpu);
        } else {
            self.start_work(cpu, kind, work, copy_share, pending);
        }
    }

    /// The queue's pick; a delayed task picked (EEVDF DELAY_DEQUEUE) leaves
    /// the queue then, and the pick is made again.
    pub(super) fn pick_next(&mut self, cpu: usize) -> Option<usize> {
        // The RT class before the fair one, unless throttled.
        if self.rt_runnable(cpu) {
            return self.cpus[cpu].rt.pick();
        }
        loop {
            let next = self.cpus[cpu].rq.pick(&self.ents, &self.policy, self.now);
            match next {
                Some(t) if self.ents[t].delayed => {
                    self.touch_task(t);
                    self.cpus[cpu]
                        .rq
                        .finish_delayed(t, &mut self.ents, &self.policy);
                    self.note_idle(cpu);
                }
                _ => return next,
            }
        }
    }

    /// The tick's balancing ran `ns` on `cpu`: a running task waits for it;
    /// an idle CPU is busy in it (a pull or a wakeup is noticed after it); a
    /// CPU already balancing before idling balances longer.
    pub(super) fn charge_softirq(&mut self, cpu: usize, ns: u64) {
        if ns == 0 {
            return;
        }
        let now = self.now;
        let charged = match self.cpus[cpu].state {
            CpuState::Running => self.interrupt(cpu, ns),
            CpuState::Idle => {
                let c = &mut self.cpus[cpu];
                c.softirq_until = c.softirq_until.max(now) + ns;
                c.idle_softirq_ns += ns;
                true
            }
            // Its time already counts as the idle exit's overhead.
            CpuState::ExitingIdle => false,
            CpuState::Balancing => {
                let c = &mut self.cpus[cpu];
                c.softirq_until = c.softirq_until.max(now) + ns;
                c.gen += 1;
                let (at, gen) = (c.softirq_until, c.gen);
                self.queue.push(at, Event::BalanceDone { cpu, gen });
                true
            }
        };
        if charged {
            self.cpus[cpu].time.tick_balance_ns += ns;
        }
    }

    /// Brings a run queue's accounting (curr's runtime, PELT) up to now,
    /// as the kernel's update_curr and update_load_avg do at an enqueue, a
    /// dequeue, a switch or a tick.
    pub(crate) fn touch_rq(&mut self, cpu: usize) {
        let now = self.now;
        let rq = &mut self.cpus[cpu].rq;
        rq.update_curr(&mut self.ents, now, &self.policy);
        rq.update_load(now);
    }

    /// Like [`Self::touch_rq`] for a queue the kernel only reads (a
    /// wakeup's CPU selection): its signals decay to now, but the load of
    /// tasks that left it by wakeup stays until the queue's own update.
    pub(crate) fn sync_rq(&mut self, cpu: usize) {
        let now = self.now;
        let rq = &mut self.cpus[cpu].rq;
        rq.update_curr(&mut self.ents, now, &self.policy);
        rq.decay_load(now);
    }

    /// Brings a task's PELT signals up to now, under its current state;
    /// returns whether its averages moved (a period boundary was crossed),
    /// which makes its next UTIL_EST sample count (cfs_se_util_change).
    #[inline]
    pub(crate) fn touch_task(&mut self, task: usize) -> bool {
        let (on_rq, runnable, running) = match self.tasks[task].state {
            TaskState::Running(_) => (1, 1, true),
            TaskState::Queued(_) => (1, 1, false),
            // A delayed task (EEVDF) is still on its queue: its load counts,
            // but it is not runnable (se_runnable, v6.12.y).
            _ if self.ents[task].delayed => (1, 0, false),
            _ => (0, 0, false),
        };
        let e = &mut self.ents[task];
        let moved = e.pelt.update(self.now, on_rq, runnable, running, e.weight);
        if moved {
            e.util_est.unchanged = false;
        }
        moved
    }

    /// Wakeup preemption: whether the woken `task` should preempt `cpu`'s
    /// current task (the scheduler decides, and sets the buddies).
    pub(crate) fn check_preempt_wakeup(&mut self, cpu: usize, task: usize, sync: bool) -> bool {
        let Some(curr) = self.curr_of(cpu) else {
            return false;
        };
        if curr == task {
            return false;
        }
        if self.is_rt(task) || self.is_rt(curr) {
            return self.rt_preempts(cpu, task);
        }
        self.touch_rq(cpu);
        if self.cpus[cpu].need_resched {
            // "We can come here with TIF_NEED_RESCHED already set": the
            // buddies are marked, then check_preempt_wakeup returns.
            self.cpus[cpu]
                .rq
                .mark_wakeup_buddies(curr, task, &self.ents, &self.policy);
            return false;
        }
        let overlap = crate::sched::wakeup_overlap_preempts(
            &self.policy,
            sync,
            &self.tasks[curr].sched,
            &self.tasks[task].sched,
        );
        self.cpus[cpu]
            .rq
            .check_preempt_wakeup(curr, task, &self.ents, &self.policy, overlap)
    }
}
