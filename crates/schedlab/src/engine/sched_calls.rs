//! The scheduling calls a task makes on itself: sched_yield and
//! sched_setaffinity.

use super::task::TaskState;
use super::Sim;
use crate::counters::{Cause, Counter, Reason};
use crate::cpuset::CpuSet;
use crate::sched::cfs::weight_of_nice;
use crate::sched::rt_rq::RtParams;
use crate::workload::program::{RtSpec, SchedSpec};

impl Sim {
    /// The CPUs `cpusets[i]` of the workload names (None: every CPU).
    pub(super) fn cpuset_of(&self, i: u32) -> CpuSet {
        self.workload.cpusets[i as usize].unwrap_or_else(|| CpuSet::first_n(self.topo.ncpus()))
    }

    /// do_sched_yield: the era's yield_task_fair, then schedule() (which
    /// may pick the yielder again).
    pub(super) fn sched_yield(&mut self, cpu: usize, task: usize) {
        self.counters.count(Counter::Yields);
        if self.tasks[task].sched.rt.is_some() {
            // yield_task_rt: to the tail of its priority's list.
            self.cpus[cpu].rt.requeue_tail(task);
            self.schedule(cpu);
            return;
        }
        self.touch_rq(cpu);
        self.touch_task(task);
        let kind = self.policy.era.rules().yield_task;
        self.cpus[cpu].rq.yield_curr(task, &mut self.ents, kind);
        self.schedule(cpu);
    }

    /// __set_cpus_allowed_ptr: the task may now use `cpusets[i]`; running
    /// where it may not, it is moved (by the stopper, migration_cpu_stop)
    /// to the CPU the era picks from the new set.
    pub(super) fn set_affinity(&mut self, cpu: usize, task: usize, i: u32) {
        let set = self.cpuset_of(i);
        let stays = set.contains(cpu);
        self.affinity[task] = set;
        if stays {
            self.continue_or_preempt(cpu);
            return;
        }
        let dest = self.affinity_dest(cpu, task);
        self.touch_rq(cpu);
        self.put_prev(cpu, task);
        let level = self
            .domains
            .lowest_spanning(cpu, dest)
            .map_or("none", |d| d.level);
        self.counters.count(Counter::Migration {
            cause: Cause::Affinity,
            level,
        });
        self.migrate_queued(task, cpu, dest, Reason::SetAffinity);
        self.schedule(cpu);
    }

    /// Where set_cpus_allowed_ptr sends a task off its CPU: the first CPU
    /// of the new set (cpumask_any_and; v2.6.28, v4.15), or the next one
    /// after the last this CPU chose, wrapping (cpumask_any_and_distribute,
    /// v5.7+: v6.5, v6.12).
    fn affinity_dest(&mut self, cpu: usize, task: usize) -> usize {
        let set = self.affinity[task];
        let dest = if self.policy.era.rules().affinity_distribute {
            self.any_distribute(cpu, &set)
        } else {
            set.first()
        };
        dest.expect("a cpulist names a CPU")
    }

    /// cpumask_any_and_distribute as `this` CPU runs it: the CPU of `set`
    /// after the one it chose last (per CPU: distribute_cpu_mask_prev),
    /// wrapping; the first choice skips CPU 0.
    pub(crate) fn any_distribute(&mut self, this: usize, set: &CpuSet) -> Option<usize> {
        let prev = self.cpus[this].distribute_prev;
        let next = set.first_from(prev + 1).or_else(|| set.first())?;
        self.cpus[this].distribute_prev = next;
        Some(next)
    }

    /// The scheduling settings `task` runs with now.
    pub(super) fn sched_spec_of(&self, task: usize) -> SchedSpec {
        let t = &self.tasks[task];
        SchedSpec {
            nice: t.nice,
            rt: t.sched.rt.map(RtSpec::from),
        }
    }

    /// __sched_setscheduler on the running `task`: a new nice (the fair
    /// queue reweighted), a new RT priority (requeued: at its list's head
    /// when lowered, ENQUEUE_HEAD, then a pull), or a change of class
    /// (switched_from / switched_to). The CPU then picks again, as the
    /// kernel reschedules a running task whose priority changed.
    pub(super) fn set_scheduler(&mut self, cpu: usize, task: usize, s: SchedSpec) {
        let old = self.tasks[task].sched.rt;
        let new = s.rt.map(RtParams::from);
        self.tasks[task].nice = s.nice;
        let weight = weight_of_nice(s.nice);
        self.touch_rq(cpu);
        self.touch_task(task);
        match (old, new) {
            (None, None) => self.cpus[cpu]
                .rq
                .reweight_curr(task, &mut self.ents, weight),
            (Some(o), Some(n)) => {
                self.account_rt(cpu);
                let q = &mut self.cpus[cpu].rt;
                q.dequeue(task);
                if n.prio > o.prio {
                    q.enqueue_head(task, n.prio);
                } else {
                    q.enqueue(task, n.prio);
                }
                q.curr = Some(task);
                self.tasks[task].sched.rt = new;
                if n.prio > o.prio {
                    crate::sched::rt::pull_rt_task(self, cpu);
                }
            }
            (None, Some(_)) => {
                // switched_from_fair (detach_task_cfs_rq), then the RT queue.
                let rq = &mut self.cpus[cpu].rq;
                rq.dequeue_curr(task, &self.ents);
                rq.pelt
                    .detach(&self.ents[task].pelt, self.ents[task].weight);
                self.tasks[task].sched.rt = new;
                self.enqueue_rt(task, cpu);
                let q = &mut self.cpus[cpu].rt;
                q.curr = Some(task);
                q.exec_start_ns = self.now;
                self.tasks[task].state = TaskState::Running(cpu);
            }
            (Some(_), None) => {
                // switched_from_rt (a pull if the CPU's RT priority
                // dropped), then attached to the fair queue as it would be
                // on a wakeup (attach_task_cfs_rq, place_entity).
                self.dequeue_rt_curr(cpu, task);
                self.tasks[task].sched.rt = None;
                let e = &mut self.ents[task];
                e.weight = weight;
                e.pelt.reweight(weight);
                let rq = &mut self.cpus[cpu].rq;
                rq.pelt.attach(&self.ents[task].pelt, weight);
                rq.place(task, &mut self.ents, false, &self.policy);
                rq.enqueue(task, &mut self.ents);
                rq.set_curr(task, &mut self.ents, self.now);
            }
        }
        self.note_idle(cpu);
        self.schedule(cpu);
    }
}
